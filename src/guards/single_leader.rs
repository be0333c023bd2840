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
