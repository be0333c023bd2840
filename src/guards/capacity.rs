//! `capacity.postgres` and `capacity.redis`: refuse peak PostgreSQL connections across
//! a rollout above `maxConnections` - `reserve`, and peak Redis clients above a
//! server's `maxClients` or the declared total. During a rollout the old pods, the
//! surge pods and the retiring generations all hold their pools at once; a peak above
//! the budget makes new pods fail to connect exactly when they are needed. The formula
//! lives in [`crate::capacity`]; this guard turns its findings into guard findings. At
//! install time `values.schema.json` bounds the values by a checked plan
//! (`capacityPlan`, the defaults or a preset): replicas, autoscaler maxima, surge,
//! processes per pod, allocation sizes, retiring generations, reservations and the
//! reserve at most the plan's, `maxConnections` and each Redis server's `maxClients`
//! (0: unchecked) at least the plan's peak (plus the reserve), features and workloads
//! the plan has off stay off.
//!
//! Both rules come from one computation; each rule's check keeps its own findings.

use super::{Finding, Severity};
use crate::capacity::{Capacity, CapacityReport};
use crate::expr::EvalError;
use crate::spec::Spec;
use serde_json::Value;

/// `capacity.postgres`, and a capacity input that cannot be evaluated.
pub fn check_postgres(spec: &Spec, values: &Value) -> Vec<Finding> {
    only("capacity.postgres", capacity_findings(spec, values))
}

/// `capacity.redis`.
pub fn check_redis(spec: &Spec, values: &Value) -> Vec<Finding> {
    only("capacity.redis", capacity_findings(spec, values))
}

/// The findings of `rule` among both capacity rules' findings.
pub fn only(rule: &str, findings: Vec<Finding>) -> Vec<Finding> {
    findings.into_iter().filter(|f| f.rule == rule).collect()
}

/// `capacity.postgres` and `capacity.redis`: the peak connections of every workload
/// across a rollout fit the declared budgets. One computation serves both rules.
pub fn capacity_findings(spec: &Spec, values: &Value) -> Vec<Finding> {
    let capacity = Capacity::of(spec, values);
    capacity_findings_over(&capacity, capacity.report().as_ref())
}

/// [`capacity_findings`] over a formula and its report already computed (`generate`
/// writes the same report into `capacity/<preset>.txt`).
pub fn capacity_findings_over(
    capacity: &Capacity<'_>,
    report: Result<&CapacityReport, &EvalError>,
) -> Vec<Finding> {
    let findings = match report
        .map_err(EvalError::clone)
        .and_then(|r| capacity.findings(r))
    {
        Ok(findings) => findings,
        Err(e) => {
            return vec![Finding {
                rule: "capacity.postgres",
                severity: Severity::Error,
                path: "dependencyCapacity".into(),
                message: format!("the capacity inputs cannot be evaluated: {e}"),
                arithmetic: None,
                hint: "check the workloads' replica counts, surge and allocation sizes".into(),
            }]
        }
    };
    findings
        .into_iter()
        .map(|f| Finding {
            rule: f.rule,
            severity: Severity::Error,
            path: if f.rule == "capacity.postgres" {
                "dependencyCapacity.postgres".into()
            } else {
                "dependencyCapacity.redis".into()
            },
            message: f.message,
            arithmetic: Some(format!(
                "peak processes = (max pods + surge pods + max pods x retiring generations) x processes per pod\n{}",
                f.arithmetic
            )),
            hint: f.hint,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, places, values, with};
    use serde_json::json;

    fn gateway(changes: &[(&str, Value)]) -> (Vec<Finding>, Vec<Finding>) {
        let spec = example("llm-gateway");
        let v = with(values(&spec, None), changes);
        (check_postgres(&spec, &v), check_redis(&spec, &v))
    }

    /// The gateway's default peak: its PostgreSQL connections and its Redis clients on
    /// the `critical` server.
    fn peaks() -> (u64, u64) {
        let spec = example("llm-gateway");
        let report = crate::capacity::capacity_report(&spec, &values(&spec, None)).unwrap();
        let critical = report
            .redis_servers
            .iter()
            .find(|(name, _)| name == "critical")
            .unwrap()
            .1
            .peak;
        (report.postgres.peak, critical)
    }

    #[test]
    fn the_examples_and_their_presets_fit() {
        for name in ["agent-platform", "llm-gateway"] {
            let spec = example(name);
            let mut all = vec![values(&spec, None)];
            all.extend(
                crate::capacity::fit::presets(&spec)
                    .keys()
                    .map(|p| values(&spec, Some(p))),
            );
            for v in all {
                assert_eq!(check_postgres(&spec, &v), [], "{name}");
                assert_eq!(check_redis(&spec, &v), [], "{name}");
            }
        }
    }

    #[test]
    fn a_postgres_budget_met_exactly_passes_and_one_less_is_refused() {
        let (peak, _) = peaks();
        let reserve = 16;
        let exact = peak + reserve;
        let (postgres, redis) = gateway(&[(
            "dependencyCapacity.postgres.maxConnections",
            json!(exact as f64),
        )]);
        assert_eq!((postgres, redis), (vec![], vec![]));
        let (postgres, redis) = gateway(&[(
            "dependencyCapacity.postgres.maxConnections",
            json!((exact - 1) as f64),
        )]);
        assert_eq!(redis, []);
        assert_eq!(
            places(&postgres),
            [(
                "capacity.postgres",
                "dependencyCapacity.postgres".to_string()
            )]
        );
        let f = &postgres[0];
        assert_eq!(f.severity, Severity::Error);
        let arithmetic = f.arithmetic.as_deref().unwrap();
        assert!(
            arithmetic.starts_with("peak processes = (max pods + surge pods + max pods x retiring generations) x processes per pod\n"),
            "{arithmetic}"
        );
        assert!(arithmetic.lines().count() > 1);
    }

    #[test]
    fn a_redis_server_over_its_clients_is_refused_as_redis_only() {
        let (_, critical) = peaks();
        let (postgres, redis) = gateway(&[(
            "dependencyCapacity.redis.servers.critical.maxClients",
            json!(critical as f64),
        )]);
        assert_eq!((postgres, redis), (vec![], vec![]));
        let (postgres, redis) = gateway(&[(
            "dependencyCapacity.redis.servers.critical.maxClients",
            json!((critical - 1) as f64),
        )]);
        assert_eq!(postgres, []);
        assert_eq!(
            places(&redis),
            [("capacity.redis", "dependencyCapacity.redis".to_string())]
        );
        assert_eq!(redis[0].severity, Severity::Error);
    }

    #[test]
    fn inputs_that_cannot_be_evaluated_are_a_postgres_finding_only() {
        let (postgres, redis) = gateway(&[("dependencyCapacity.retiringGenerations", json!("x"))]);
        assert_eq!(redis, []);
        assert_eq!(
            places(&postgres),
            [("capacity.postgres", "dependencyCapacity".to_string())]
        );
        assert!(postgres[0]
            .message
            .starts_with("the capacity inputs cannot be evaluated: "));
    }
}
