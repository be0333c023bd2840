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
use crate::spec::Spec;
use serde_json::Value;

/// `capacity.postgres`, and a capacity input that cannot be evaluated.
pub fn check_postgres(spec: &Spec, values: &Value) -> Vec<Finding> {
    only("capacity.postgres", capacity(spec, values))
}

/// `capacity.redis`.
pub fn check_redis(spec: &Spec, values: &Value) -> Vec<Finding> {
    only("capacity.redis", capacity(spec, values))
}

fn only(rule: &str, findings: Vec<Finding>) -> Vec<Finding> {
    findings.into_iter().filter(|f| f.rule == rule).collect()
}

/// `capacity.postgres` and `capacity.redis`: the peak connections of every workload
/// across a rollout fit the declared budgets.
fn capacity(spec: &Spec, values: &Value) -> Vec<Finding> {
    let (loads, budgets) = match crate::capacity::formula::capacity_inputs(spec, values) {
        Ok(inputs) => inputs,
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
    let report = crate::capacity::compute_capacity(&loads, &budgets);
    crate::capacity::capacity_findings(&report, &loads, &budgets)
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
