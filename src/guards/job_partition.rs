//! `jobs.partition`: refuses a scheduled job that runs in no workload or in two, for
//! some combination of pools. A job in no workload silently never runs; a job in two
//! runs twice (an unlocked job in every replica). The proof is in [`super::partition`];
//! this guard reads the scheduling and the enabled workloads from values and hands them
//! over. At install time `values.schema.json` fixes `scheduling` (jobs, pools,
//! allow-lists) by `const`, and refuses the api/jobs on-off combinations that would
//! leave a job without an owner.

use super::partition::{check_registry, prove_partition, Pool};
use super::{Finding, Severity};
use crate::spec::{Spec, WorkloadClass};
use serde_json::Value;

/// `jobs.partition`: for every combination of enabled pools, every scheduled job runs in
/// exactly one workload (proved structurally), and the registry is consistent.
pub fn check(spec: &Spec, values: &Value) -> Vec<Finding> {
    let scheduling: crate::model::Scheduling = values
        .get("scheduling")
        .and_then(|s| serde_json::from_value(s.clone()).ok())
        .unwrap_or_default();
    let pools: Vec<Pool> = scheduling
        .pools
        .iter()
        .map(|(name, p)| Pool {
            name: name.clone(),
            jobs: p.jobs.clone(),
            allowed: p.allowed.clone(),
        })
        .collect();
    let enabled = |class: WorkloadClass| {
        spec.workloads
            .all()
            .into_iter()
            .filter(|(_, w)| w.class() == class)
            .any(|(n, _)| {
                values
                    .get("workloads")
                    .and_then(|w| w.get(n))
                    .and_then(|w| w.get("enabled"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
            })
    };
    let mut findings = check_registry(&scheduling.jobs, &pools);
    findings.extend(prove_partition(
        &scheduling.jobs,
        &pools,
        enabled(WorkloadClass::Api),
        enabled(WorkloadClass::Jobs),
    ));
    findings
        .into_iter()
        .map(|f| Finding {
            rule: f.rule,
            severity: Severity::Error,
            path: f.path,
            message: f.message,
            arithmetic: None,
            hint: f.hint,
        })
        .collect()
}
