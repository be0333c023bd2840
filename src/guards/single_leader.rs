//! `pool.single-leader`: refuses a pool with more than one replica and neither leader
//! election nor claiming. A pool runs its jobs in every replica unless the replicas
//! elect a leader (failover) or claim each job (parallel), so a second replica would
//! run every job twice. An HPA whose `maxReplicas` is 2 or more counts as more than
//! one replica. At install time `values.schema.json` says, by `if`/`then`:
//! `replicaCount` >= 2, or an HPA on with `maxReplicas` >= 2, requires
//! `leaderElection` or `claiming`.

use super::typed_values::TypedWorkloads;
use super::{Finding, Severity};
use crate::spec::Spec;
use serde_json::Value;

/// `pool.single-leader`: a pool with more than one replica needs leader election or
/// per-job claiming. The pools are `typed`'s (those whose values fit the model).
pub fn check(_spec: &Spec, _values: &Value, typed: &TypedWorkloads) -> Vec<Finding> {
    let mut out = Vec::new();
    for (name, pool) in typed.pools() {
        let hpa = &pool.autoscaling;
        let (replicas, path) = if hpa.enabled {
            (
                hpa.max_replicas,
                format!("workloads.{name}.autoscaling.maxReplicas"),
            )
        } else {
            (pool.replica_count, format!("workloads.{name}.replicaCount"))
        };
        if pool.enabled && replicas > 1 && !pool.leader_election && !pool.claiming {
            out.push(Finding {
                rule: "pool.single-leader",
                severity: Severity::Error,
                path,
                message: format!(
                    "the pool `{name}` runs up to {replicas} replicas with neither leader election nor claiming: its jobs would run in every replica"
                ),
                arithmetic: None,
                hint: format!("set `workloads.{name}.leaderElection=true` (failover) or `workloads.{name}.claiming=true` (parallel), or one replica"),
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

    /// The rule on `values`, its pools read as the registry reads them.
    fn check(spec: &Spec, values: &Value) -> Vec<Finding> {
        super::check(spec, values, &TypedWorkloads::read(spec, values))
    }

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

    fn ingest_hpa(max: f64, replicas: f64, leader: bool) -> Vec<Finding> {
        let spec = example("agent-platform");
        let v = with(
            values(&spec, None),
            &[
                ("workloads.ingest.enabled", json!(true)),
                ("workloads.ingest.replicaCount", json!(replicas)),
                ("workloads.ingest.autoscaling.enabled", json!(true)),
                ("workloads.ingest.autoscaling.minReplicas", json!(1.0)),
                ("workloads.ingest.autoscaling.maxReplicas", json!(max)),
                ("workloads.ingest.leaderElection", json!(leader)),
                ("workloads.ingest.claiming", json!(false)),
            ],
        );
        check(&spec, &v)
    }

    #[test]
    fn an_hpa_up_to_two_replicas_needs_leader_election_and_one_does_not() {
        assert_eq!(ingest_hpa(1.0, 1.0, false), []);
        let findings = ingest_hpa(2.0, 1.0, false);
        assert_eq!(
            places(&findings),
            [(
                "pool.single-leader",
                "workloads.ingest.autoscaling.maxReplicas".to_string()
            )]
        );
        assert!(
            findings[0].message.contains("up to 2 replicas"),
            "{}",
            findings[0].message
        );
        assert_eq!(ingest_hpa(2.0, 1.0, true), []);
        // The HPA owns the replica count: a stale replicaCount does not count.
        assert_eq!(ingest_hpa(1.0, 5.0, false), []);
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
            findings[0].message.contains("runs up to 2 replicas"),
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
