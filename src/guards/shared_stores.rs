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
        && match class {
            WorkloadClass::Migrate => false,
            WorkloadClass::Api => replicas > 1.0 || on("autoscaling") || on("keda"),
            _ => replicas > 1.0,
        }
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
