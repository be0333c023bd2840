//! `pool.single-leader`: refuses a pool with more than one replica and neither leader
//! election nor claiming. A pool runs its jobs in every replica unless the replicas
//! elect a leader (failover) or claim each job (parallel), so a second replica would
//! run every job twice. At install time `values.schema.json` says, by `if`/`then`:
//! `replicaCount` >= 2 requires `leaderElection` or `claiming`.

use super::typed_values::workload_values;
use super::{Finding, Severity};
use crate::spec::Spec;
use serde_json::Value;

/// `pool.single-leader`: a pool with more than one replica needs leader election or
/// per-job claiming.
pub fn check(spec: &Spec, values: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    for name in spec.workloads.pool.keys() {
        let Some(pool) = workload_values::<crate::model::PoolValues>(values, name) else {
            continue;
        };
        if pool.enabled && pool.replica_count > 1 && !pool.leader_election && !pool.claiming {
            out.push(Finding {
                rule: "pool.single-leader",
                severity: Severity::Error,
                path: format!("workloads.{name}.replicaCount"),
                message: format!(
                    "the pool `{name}` runs {} replicas with neither leader election nor claiming: its jobs would run in every replica",
                    pool.replica_count
                ),
                arithmetic: None,
                hint: format!("set `workloads.{name}.leaderElection=true` (failover) or `workloads.{name}.claiming=true` (parallel), or `replicaCount=1`"),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, places, values, with};
    use serde_json::json;

    fn ingest(enabled: bool, replicas: f64, leader: bool, claiming: bool) -> Vec<Finding> {
        let spec = example("agent-platform");
        let v = with(
            values(&spec, None),
            &[
                ("workloads.ingest.enabled", json!(enabled)),
                ("workloads.ingest.replicaCount", json!(replicas)),
                ("workloads.ingest.leaderElection", json!(leader)),
                ("workloads.ingest.claiming", json!(claiming)),
            ],
        );
        check(&spec, &v)
    }

    #[test]
    fn one_replica_needs_neither_leader_election_nor_claiming() {
        assert_eq!(ingest(true, 1.0, false, false), []);
        assert_eq!(ingest(true, 0.0, false, false), []);
    }

    #[test]
    fn two_replicas_without_either_are_refused() {
        let findings = ingest(true, 2.0, false, false);
        assert_eq!(
            places(&findings),
            [(
                "pool.single-leader",
                "workloads.ingest.replicaCount".to_string()
            )]
        );
        assert_eq!(findings[0].severity, Severity::Error);
        assert!(
            findings[0].message.contains("runs 2 replicas"),
            "{}",
            findings[0]
        );
    }

    #[test]
    fn the_largest_replica_count_is_refused_too() {
        assert_eq!(ingest(true, 2147483647.0, false, false).len(), 1);
    }

    #[test]
    fn leader_election_or_claiming_allows_several_replicas() {
        assert_eq!(ingest(true, 2.0, true, false), []);
        assert_eq!(ingest(true, 2.0, false, true), []);
        assert_eq!(ingest(true, 2.0, true, true), []);
    }

    #[test]
    fn a_disabled_pool_is_not_checked() {
        assert_eq!(ingest(false, 2.0, false, false), []);
    }

    #[test]
    fn the_presets_pass() {
        let spec = example("agent-platform");
        for preset in ["ingest-pool", "ingest-failover", "all-pools"] {
            assert_eq!(check(&spec, &values(&spec, Some(preset))), [], "{preset}");
        }
    }
}
