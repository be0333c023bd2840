//! Each budget of a preset with what uses it: one part per workload and per
//! reservation, the peak, the limit and the budget. The capacity figures
//! (`capacity/<preset>.svg`), the record `diff` compares (`capacity/<preset>.json`) and
//! the review's capacity table are drawn from it.

use crate::capacity::{CapacityReport, Total, WorkloadLoad};
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

/// Every budget of `report`, which must come from `compute_capacity(loads, budgets)`:
/// PostgreSQL, each Redis server in report order, then the Redis total.
#[must_use]
pub fn budget_uses(
    report: &CapacityReport,
    loads: &[WorkloadLoad],
    budgets: &crate::capacity::Budgets,
) -> Vec<BudgetUse> {
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
    postgres.reservations = budgets
        .postgres_reservations
        .iter()
        .filter(|(_, v)| *v > 0)
        .map(|(n, v)| part(n, *v))
        .collect();
    out.push(postgres);
    for (server, total) in &report.redis_servers {
        let mut redis = BudgetUse::new(
            format!("redis.{server}"),
            format!("Redis `{server}`"),
            "clients",
            total,
        );
        redis.workloads = report
            .workloads
            .iter()
            .zip(loads)
            .map(|(row, load)| {
                let per_process: u64 = load
                    .redis
                    .iter()
                    .filter(|a| &a.server == server)
                    .fold(0, |sum, a| sum.saturating_add(a.clients));
                part(&row.name, row.peak_processes.saturating_mul(per_process))
            })
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
    out
}

/// The budgets of one preset's resolved values.
pub fn preset_budget_uses(
    spec: &crate::spec::Spec,
    values: &serde_json::Value,
) -> Result<Vec<BudgetUse>, crate::expr::EvalError> {
    let (loads, budgets) = crate::capacity::formula::capacity_inputs(spec, values)?;
    let report = crate::capacity::compute_capacity(&loads, &budgets);
    Ok(budget_uses(&report, &loads, &budgets))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::{compute_capacity, Budgets, RedisAllocation, RedisServerBudget, Surge};

    fn load(name: &str, replicas: u64, pg: u64, redis: &[(&str, u64)]) -> WorkloadLoad {
        WorkloadLoad {
            name: name.into(),
            class: "api".into(),
            enabled: replicas > 0,
            replicas,
            autoscaler_max: None,
            surge: Surge::Pods(1),
            processes_per_pod: 1,
            postgres: vec![("main".into(), pg)],
            redis: redis
                .iter()
                .map(|(s, c)| RedisAllocation {
                    name: format!("on-{s}"),
                    server: s.to_string(),
                    clients: *c,
                })
                .collect(),
        }
    }

    #[test]
    fn every_budget_adds_up_to_its_peak() {
        let loads = vec![
            load("api", 2, 10, &[("critical", 4), ("cache", 2)]),
            load("worker", 1, 5, &[("critical", 1)]),
            load("off", 0, 7, &[("cache", 9)]),
        ];
        let budgets = Budgets {
            retiring_generations: 1,
            postgres_max_connections: 100,
            postgres_reserve: 10,
            postgres_reservations: vec![("operators".into(), 3), ("none".into(), 0)],
            redis_max_connections: 500,
            redis_reserved_clients: 7,
            redis_servers: vec![
                RedisServerBudget {
                    name: "critical".into(),
                    max_clients: Some(40),
                    reserved_clients: 2,
                },
                RedisServerBudget {
                    name: "cache".into(),
                    max_clients: None,
                    reserved_clients: 0,
                },
            ],
        };
        let report = compute_capacity(&loads, &budgets);
        let uses = budget_uses(&report, &loads, &budgets);
        let keys: Vec<&str> = uses.iter().map(|u| u.key.as_str()).collect();
        assert_eq!(keys, ["postgres", "redis.critical", "redis.cache", "redis"]);
        for u in &uses {
            let sum: u64 = u
                .workloads
                .iter()
                .chain(&u.reservations)
                .map(|p| p.value)
                .sum();
            assert_eq!(sum, u.peak, "{}", u.key);
            assert_eq!(u.workloads.len(), 3, "every workload, zeros too");
        }
        // api: (2 + 1 + 2) x 10 = 50; worker (1 + 1 + 1) x 5 = 15; operators 3.
        assert_eq!(uses[0].peak, 68);
        assert_eq!(uses[0].budget, Some(90));
        assert_eq!(uses[0].headroom(), Some(22));
        assert_eq!(uses[0].reservations, [part("operators", 3)]);
        // critical: 5 x 4 + 3 x 1 + 2 reserved = 25 of 40.
        assert_eq!(uses[1].workloads[0], part("api", 20));
        assert_eq!(uses[1].peak, 25);
        assert_eq!(uses[2].budget, None);
        assert_eq!(uses[2].headroom(), None);
        assert_eq!(uses[3].peak, 5 * 6 + 3 + 7);
    }

    #[test]
    fn an_undeclared_budget_is_unused() {
        let loads = vec![load("api", 1, 10, &[])];
        let budgets = Budgets {
            retiring_generations: 1,
            postgres_max_connections: 100,
            ..Budgets::default()
        };
        let report = compute_capacity(&loads, &budgets);
        let uses = budget_uses(&report, &loads, &budgets);
        let used: Vec<&str> = uses
            .iter()
            .filter(|u| u.is_used())
            .map(|u| u.key.as_str())
            .collect();
        assert_eq!(used, ["postgres"]);
    }
}
