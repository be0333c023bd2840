//! Each budget of a preset with what uses it: one part per workload and per
//! reservation, the peak, the limit and the budget. The capacity figures
//! (`capacity/<preset>.svg`), the record `diff` compares (`capacity/<preset>.json`) and
//! the review's capacity table are drawn from it.

use crate::capacity::{Capacity, CapacityReport, Total};
use crate::expr::EvalError;
use serde::{Deserialize, Serialize};

/// One contribution to a peak.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Part {
    /// A workload's name, or a reservation's.
    pub name: String,
    /// Connections or clients at peak.
    pub value: u64,
}

/// One budget: PostgreSQL, a Redis server, or the Redis total.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BudgetUse {
    /// Stable key: `postgres`, `redis.<server>` or `redis`.
    pub key: String,
    /// For people: `PostgreSQL`, `Redis` + the server in backticks, `Redis total`.
    pub label: String,
    /// `connections` or `clients`.
    pub unit: String,
    /// Every workload, in the report's order (0 for one that uses nothing here).
    pub workloads: Vec<Part>,
    /// Declared reservations counted in the peak (omitted when 0).
    pub reservations: Vec<Part>,
    /// Workloads plus reservations.
    pub peak: u64,
    /// The declared limit (`None`: not checked).
    pub limit: Option<u64>,
    /// Kept free below the limit.
    pub reserve: u64,
    /// `limit - reserve`: the peak must not exceed it (`None`: not checked).
    pub budget: Option<u64>,
}

impl BudgetUse {
    fn new(key: String, label: String, unit: &str, total: &Total) -> Self {
        BudgetUse {
            key,
            label,
            unit: unit.to_string(),
            workloads: Vec::new(),
            reservations: Vec::new(),
            peak: total.peak,
            limit: total.limit,
            reserve: total.reserve,
            budget: total.budget,
        }
    }

    /// Whether the spec uses this budget at all: a PostgreSQL or Redis total with no
    /// limit declared and nothing counted against it is left out of figures and tables.
    #[must_use]
    pub fn is_used(&self) -> bool {
        self.key.starts_with("redis.") || self.peak > 0 || self.limit.is_some_and(|l| l > 0)
    }

    /// `budget - peak` (negative when exceeded); `None` when not checked.
    #[must_use]
    pub fn headroom(&self) -> Option<i128> {
        self.budget.map(|b| i128::from(b) - i128::from(self.peak))
    }
}

fn part(name: &str, value: u64) -> Part {
    Part {
        name: name.to_string(),
        value,
    }
}

/// Every budget of `report`, which must be `capacity.report()`: PostgreSQL, each Redis
/// server in report order, then the Redis total. The parts are the terms the report
/// sums (a test holds each equal to its expression evaluated).
pub fn budget_uses(
    capacity: &Capacity<'_>,
    report: &CapacityReport,
) -> Result<Vec<BudgetUse>, EvalError> {
    let exprs = &capacity.exprs;
    let mut out = Vec::new();
    let mut postgres = BudgetUse::new(
        "postgres".into(),
        "PostgreSQL".into(),
        "connections",
        &report.postgres,
    );
    postgres.workloads = report
        .workloads
        .iter()
        .map(|r| part(&r.name, r.postgres))
        .collect();
    for (name, expr) in &exprs.postgres_reservations {
        let value = capacity.number(expr)?;
        if value > 0 {
            postgres.reservations.push(part(name, value));
        }
    }
    out.push(postgres);
    for (i, (server, total)) in report.redis_servers.iter().enumerate() {
        let mut redis = BudgetUse::new(
            format!("redis.{server}"),
            format!("Redis `{server}`"),
            "clients",
            total,
        );
        // Each workload's term of the server's total, as the report summed it.
        redis.workloads = report
            .workloads
            .iter()
            .map(|r| part(&r.name, r.redis_by_server.get(i).copied().unwrap_or(0)))
            .collect();
        if total.reservations > 0 {
            redis.reservations = vec![part("reserved", total.reservations)];
        }
        out.push(redis);
    }
    let mut redis = BudgetUse::new(
        "redis".into(),
        "Redis total".into(),
        "clients",
        &report.redis_total,
    );
    redis.workloads = report
        .workloads
        .iter()
        .map(|r| part(&r.name, r.redis))
        .collect();
    if report.redis_total.reservations > 0 {
        redis.reservations = vec![part("reserved", report.redis_total.reservations)];
    }
    out.push(redis);
    Ok(out)
}

/// The budgets of one preset's resolved values.
pub fn preset_budget_uses(
    spec: &crate::spec::Spec,
    values: &serde_json::Value,
) -> Result<Vec<BudgetUse>, EvalError> {
    let capacity = Capacity::of(spec, values);
    let report = capacity.report()?;
    budget_uses(&capacity, &report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::fit::preset_values;
    use crate::spec::load_spec;

    fn gateway() -> crate::spec::Spec {
        let text = include_str!("../../examples/llm-gateway/shipshape.yaml");
        load_spec(text, "llm-gateway").unwrap()
    }

    #[test]
    fn every_budget_adds_up_to_its_peak_and_matches_the_report() {
        let spec = gateway();
        let values = preset_values(&spec, Some("production")).unwrap();
        let capacity = Capacity::of(&spec, &values);
        let report = capacity.report().unwrap();
        let uses = budget_uses(&capacity, &report).unwrap();
        let keys: Vec<&str> = uses.iter().map(|u| u.key.as_str()).collect();
        assert_eq!(keys, ["postgres", "redis.cache", "redis.critical", "redis"]);
        for u in &uses {
            let sum: u64 = u
                .workloads
                .iter()
                .chain(&u.reservations)
                .map(|p| p.value)
                .sum();
            assert_eq!(sum, u.peak, "{}", u.key);
            assert_eq!(
                u.workloads.len(),
                report.workloads.len(),
                "every workload, zeros too"
            );
            assert!(u.is_used(), "{}", u.key);
        }
        assert_eq!(uses[0].peak, report.postgres.peak);
        assert_eq!(uses[0].budget, report.postgres.budget);
        let reserved: Vec<&str> = uses[0]
            .reservations
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(reserved, ["migrations", "operators"]);
        assert_eq!(
            uses[0].headroom(),
            report
                .postgres
                .budget
                .map(|b| i128::from(b) - i128::from(report.postgres.peak))
        );
        // The critical server's parts are each workload's clients on it alone.
        let critical: u64 = uses[2].workloads.iter().map(|p| p.value).sum();
        let total: u64 = uses[3].workloads.iter().map(|p| p.value).sum();
        assert!(critical > 0 && critical < total, "{critical} of {total}");
    }

    /// Each Redis server's part of a workload is its expression evaluated, for every
    /// example and preset, and with values that saturate.
    #[test]
    fn a_servers_parts_are_their_expressions() {
        for (name, spec) in crate::capacity::tests::example_specs() {
            let mut presets: Vec<Option<String>> = vec![None];
            presets.extend(crate::capacity::fit::presets(&spec).into_keys().map(Some));
            for preset in presets {
                let mut values = preset_values(&spec, preset.as_deref()).unwrap();
                for huge in [false, true] {
                    if huge {
                        for (w, _) in spec.workloads.all() {
                            values["workloads"][w]["processesPerPod"] = serde_json::json!(9.0e18);
                        }
                    }
                    let capacity = Capacity::of(&spec, &values);
                    let report = capacity.report().unwrap();
                    let uses = budget_uses(&capacity, &report).unwrap();
                    for (server, _) in &report.redis_servers {
                        let key = format!("redis.{server}");
                        let used = uses.iter().find(|u| u.key == key).unwrap();
                        for (w, part) in capacity.exprs.workloads.iter().zip(&used.workloads) {
                            let expected =
                                capacity.number(&w.redis_connections(Some(server))).unwrap();
                            assert_eq!(part.value, expected, "{name} {preset:?} {key} {}", w.name);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn an_undeclared_redis_total_is_unused() {
        let spec = load_spec(
            "chart: {name: t, version: 1.0.0, appVersion: \"1\", description: t}\nimage: {repository: x}\nworkloads:\n  api:\n    web:\n      postgres:\n        main: {size: 3}\n",
            "t",
        )
        .unwrap();
        let values = preset_values(&spec, None).unwrap();
        let uses = preset_budget_uses(&spec, &values).unwrap();
        assert_eq!(uses.len(), 2);
        assert!(uses[0].is_used());
        assert!(!uses[1].is_used(), "{:?}", uses[1]);
        assert_eq!(uses[0].peak, 9, "(1 + 1 + 1) x 3");
    }
}
