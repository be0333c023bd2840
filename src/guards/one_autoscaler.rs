//! `autoscaling.one-autoscaler`: refuses an HPA and a KEDA ScaledObject on one
//! workload, and `minReplicas` above `maxReplicas`. Two autoscalers would fight over
//! the replica count, each undoing the other's scaling, and an autoscaler whose minimum
//! is above its maximum is refused by Kubernetes. At install time `values.schema.json`
//! says `not` both `enabled`, and min <= max enumerated over every `maxReplicas` a plan
//! allows.

use super::typed_values::api_workloads;
use super::{Finding, Severity};
use crate::model::ApiValues;
use crate::spec::Spec;
use serde_json::Value;

/// The rule on every api workload.
pub fn check(spec: &Spec, values: &Value) -> Vec<Finding> {
    api_workloads(spec, values)
        .into_iter()
        .flat_map(|(name, api)| one_autoscaler(name, &api))
        .collect()
}

/// `autoscaling.one-autoscaler`: never an HPA and a ScaledObject for one workload;
/// minimum within maximum.
fn one_autoscaler(name: &str, api: &ApiValues) -> Vec<Finding> {
    let mut out = Vec::new();
    let base = format!("workloads.{name}");
    if !api.enabled {
        return out;
    }
    if api.autoscaling.enabled && api.keda.enabled {
        out.push(Finding {
            rule: "autoscaling.one-autoscaler",
            severity: Severity::Error,
            path: base.clone(),
            message: "both an HPA (`autoscaling.enabled`) and a KEDA ScaledObject (`keda.enabled`) are on; they would fight over the replica count".into(),
            arithmetic: None,
            hint: format!("turn one off: `{base}.keda.enabled=false` or `{base}.autoscaling.enabled=false`"),
        });
    }
    for (key, on, min, max) in [
        (
            "autoscaling",
            api.autoscaling.enabled,
            api.autoscaling.min_replicas,
            api.autoscaling.max_replicas,
        ),
        (
            "keda",
            api.keda.enabled,
            api.keda.min_replicas,
            api.keda.max_replicas,
        ),
    ] {
        if on && min > max {
            out.push(Finding {
                rule: "autoscaling.one-autoscaler",
                severity: Severity::Error,
                path: format!("{base}.{key}"),
                message: format!("`minReplicas` {min} is above `maxReplicas` {max}"),
                arithmetic: None,
                hint: format!("set `{base}.{key}.maxReplicas` to at least {min}"),
            });
        }
    }
    out
}
