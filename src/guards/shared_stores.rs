//! `replicas.shared-stores`: refuses a shared store in pod memory while a workload can
//! run more than one pod, and Redis stores without `storeRedis.url`. A store the spec
//! classifies `shared` (sessions, rate limits, caches whose entries must agree) kept
//! in each pod's memory makes pods disagree as soon as there are two; a non-fatal
//! store is a warning. At install time `values.schema.json` says, by `if`/`then`:
//! `replicaCount` >= 2 or an autoscaler on requires every fatal shared store on
//! `redis`, and a store on `redis` requires a non-empty `storeRedis.url`.

use super::{Finding, Severity};
use crate::spec::{Spec, WorkloadClass};
use serde_json::Value;

/// Whether a workload can run more than one pod, from its resolved values.
fn runs_several_pods(values: &Value, name: &str, class: WorkloadClass) -> bool {
    let w = values.get("workloads").and_then(|w| w.get(name));
    let get = |k: &str| w.and_then(|w| w.get(k));
    let enabled = get("enabled").and_then(Value::as_bool).unwrap_or(false);
    let replicas = get("replicaCount").and_then(Value::as_f64).unwrap_or(0.0);
    let on = |k: &str| {
        get(k)
            .and_then(|a| a.get("enabled"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    enabled
        && class != WorkloadClass::Migrate
        && (replicas > 1.0 || class.autoscalers().iter().any(|key| on(key)))
}

/// `replicas.shared-stores`: a workload that can run more than one pod needs every
/// shared store on Redis (a non-fatal store: a warning), and a Redis URL.
pub fn check(spec: &Spec, values: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    let several: Vec<&str> = spec
        .workloads
        .all()
        .into_iter()
        .filter(|(n, w)| runs_several_pods(values, n, w.class()))
        .map(|(n, _)| n)
        .collect();
    let backend = |store: &str| {
        values
            .get("stores")
            .and_then(|s| s.get(store))
            .and_then(|s| s.get("backend"))
            .and_then(Value::as_str)
            .unwrap_or("memory")
            .to_string()
    };
    if !several.is_empty() {
        let who = several
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ");
        for (name, store) in &spec.stores {
            if store.class != crate::model::StoreClass::Shared || backend(name) == "redis" {
                continue;
            }
            out.push(Finding {
                rule: "replicas.shared-stores",
                severity: if store.fatal { Severity::Error } else { Severity::Warning },
                path: format!("stores.{name}.backend"),
                message: format!(
                    "the shared store `{name}` keeps its state in each pod's memory while {who} can run more than one pod: pods would disagree{}",
                    if store.fatal { "" } else { " (reported, not fatal)" }
                ),
                arithmetic: None,
                hint: format!("set `stores.{name}.backend=redis`, or run one pod"),
            });
        }
    }
    let uses_redis = spec.shared_stores().iter().any(|s| backend(s) == "redis");
    let url = values
        .get("storeRedis")
        .and_then(|r| r.get("url"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if uses_redis && url.is_empty() {
        out.push(Finding {
            rule: "replicas.shared-stores",
            severity: Severity::Error,
            path: "storeRedis.url".into(),
            message: "shared stores are on Redis but no Redis URL is set".into(),
            arithmetic: None,
            hint: "set `storeRedis.url`, e.g. `redis://valkey:6379`".into(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, values, with};
    use serde_json::json;

    /// The agent platform's ten shared stores, all in memory by default; one of them,
    /// `tool-effect-journal`, is not fatal.
    fn check_with(changes: &[(&str, Value)]) -> Vec<Finding> {
        let spec = example("agent-platform");
        check(&spec, &with(values(&spec, None), changes))
    }

    fn reported_stores(findings: &[Finding]) -> Vec<String> {
        let mut stores: Vec<String> = findings
            .iter()
            .filter_map(|f| f.path.strip_prefix("stores.")?.strip_suffix(".backend"))
            .map(str::to_string)
            .collect();
        stores.sort();
        stores
    }

    const SHARED: [&str; 10] = [
        "a2a-tasks",
        "abuse-throttles",
        "e2b-quota",
        "guardrail-procedure-state",
        "mcp-oauth",
        "mcp-registry",
        "resumable-streams",
        "sandbox-files",
        "studio-approvals",
        "tool-effect-journal",
    ];

    #[test]
    fn one_pod_everywhere_keeps_stores_in_memory() {
        assert_eq!(check_with(&[]), []);
        assert_eq!(
            check_with(&[("workloads.api.replicaCount", json!(1.0))]),
            []
        );
        assert_eq!(
            check_with(&[("workloads.api.replicaCount", json!(0.0))]),
            []
        );
        assert_eq!(
            check_with(&[("workloads.jobs.replicaCount", json!(0.0))]),
            []
        );
    }

    #[test]
    fn two_api_pods_report_every_shared_store_and_only_those() {
        let findings = check_with(&[("workloads.api.replicaCount", json!(2.0))]);
        assert_eq!(reported_stores(&findings), SHARED);
        for f in &findings {
            assert_eq!(f.rule, "replicas.shared-stores");
            let fatal = f.path != "stores.tool-effect-journal.backend";
            let expected = if fatal {
                Severity::Error
            } else {
                Severity::Warning
            };
            assert_eq!(f.severity, expected, "{f}");
            assert_eq!(f.message.ends_with("(reported, not fatal)"), !fatal, "{f}");
            assert!(
                f.message.contains("while `api` can run more than one pod"),
                "{f}"
            );
        }
    }

    #[test]
    fn an_autoscaler_on_one_api_pod_counts_as_several_pods() {
        for key in ["autoscaling", "keda"] {
            let path = format!("workloads.api.{key}.enabled");
            assert_eq!(
                reported_stores(&check_with(&[(&path, json!(true))])),
                SHARED,
                "{key}"
            );
        }
    }

    #[test]
    fn a_worker_hpa_counts_as_several_pods_and_jobs_have_no_autoscaler() {
        let findings = check_with(&[("workloads.temporal.autoscaling.enabled", json!(true))]);
        assert_eq!(reported_stores(&findings), SHARED);
        assert!(findings[0].message.contains("while `temporal` can"));
        // An `autoscaling` block on a class without one is not read.
        assert_eq!(
            check_with(&[("workloads.jobs.autoscaling", json!({"enabled": true}))]),
            []
        );
    }

    #[test]
    fn two_pods_of_another_workload_count_but_one_does_not() {
        let findings = check_with(&[("workloads.jobs.replicaCount", json!(2.0))]);
        assert_eq!(reported_stores(&findings), SHARED);
        assert!(findings[0].message.contains("while `jobs` can"));
        assert_eq!(
            check_with(&[("workloads.jobs.replicaCount", json!(1.0))]),
            []
        );
    }

    #[test]
    fn a_disabled_workload_and_the_migration_job_do_not_count() {
        assert_eq!(
            check_with(&[
                ("workloads.api.enabled", json!(false)),
                ("workloads.api.replicaCount", json!(3.0)),
                ("workloads.api.autoscaling.enabled", json!(true)),
            ]),
            []
        );
        assert_eq!(
            check_with(&[("workloads.migrate.replicaCount", json!(2.0))]),
            []
        );
    }

    #[test]
    fn a_store_on_redis_is_not_reported() {
        let findings = check_with(&[
            ("workloads.api.replicaCount", json!(2.0)),
            ("stores.a2a-tasks.backend", json!("redis")),
        ]);
        assert_eq!(reported_stores(&findings), SHARED[1..]);
    }

    #[test]
    fn stores_on_redis_need_a_redis_url() {
        let url = "storeRedis.url";
        assert_eq!(check_with(&[(url, json!(""))]), []);
        assert_eq!(
            check_with(&[("stores.a2a-tasks.backend", json!("redis"))]),
            []
        );
        let findings = check_with(&[
            (url, json!("")),
            ("stores.a2a-tasks.backend", json!("redis")),
        ]);
        assert_eq!(findings.len(), 1);
        assert_eq!(
            (
                findings[0].rule,
                findings[0].path.as_str(),
                findings[0].severity
            ),
            ("replicas.shared-stores", url, Severity::Error)
        );
    }
}
