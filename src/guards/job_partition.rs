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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, places, values, with};
    use serde_json::json;

    fn check_with(changes: &[(&str, Value)]) -> Vec<Finding> {
        let spec = example("agent-platform");
        check(&spec, &with(values(&spec, None), changes))
    }

    #[test]
    fn the_defaults_and_every_preset_partition_the_jobs() {
        let spec = example("agent-platform");
        assert_eq!(check(&spec, &values(&spec, None)), []);
        for preset in crate::capacity::fit::presets(&spec).keys() {
            assert_eq!(check(&spec, &values(&spec, Some(preset))), [], "{preset}");
        }
    }

    #[test]
    fn without_the_jobs_workload_only_the_job_the_api_must_not_run_runs_nowhere() {
        let findings = check_with(&[("workloads.jobs.enabled", json!(false))]);
        assert_eq!(
            places(&findings),
            [("jobs.partition", "scheduling.jobs[12]".to_string())]
        );
        let f = &findings[0];
        assert_eq!(
            (f.severity, f.arithmetic.as_deref()),
            (Severity::Error, None)
        );
        assert!(f.message.contains("`KnowledgeReembedJobRunner`"), "{f}");
        assert!(
            f.message.ends_with("the api never runs it (`apiExcluded`)"),
            "{f}"
        );
    }

    #[test]
    fn without_the_jobs_workload_and_the_api_every_job_may_run_nowhere() {
        let findings = check_with(&[
            ("workloads.jobs.enabled", json!(false)),
            ("workloads.api.enabled", json!(false)),
        ]);
        assert_eq!(findings.len(), 16, "{findings:#?}");
        assert!(findings[8].message.contains("`AgentJobSweeper`"));
        assert!(findings[8].message.ends_with("the api is disabled"));
    }

    #[test]
    fn a_pool_naming_an_unknown_job_is_refused() {
        let findings = check_with(&[("scheduling.pools.webhooks.jobs", json!(["NoSuchJob"]))]);
        assert!(
            places(&findings).contains(&(
                "jobs.partition",
                "scheduling.pools.webhooks.jobs[0]".to_string()
            )),
            "{findings:#?}"
        );
    }
}
