//! `rollout.strategy`: refuses a `maxSurge` or `maxUnavailable` Kubernetes refuses
//! (`12.5%`, `-5%`, `"2"`, 1.5), or both 0. A rolling update with such a value is
//! rejected by the API server at install time, or, with both 0, could never replace a
//! pod; a PodDisruptionBudget's `maxUnavailable` must have the same form. At install
//! time `values.schema.json` checks the form by pattern and bound (a whole number or
//! `N%`, `maxUnavailable` at most `100%`, never both 0) and lets `maxSurge` add at
//! most the plan's surge pods.

use super::{Finding, Severity};
use crate::expr::ValuePath;
use crate::spec::{Spec, WorkloadClass};
use serde_json::Value;

/// `rollout.strategy`: `maxSurge` and `maxUnavailable` are what Kubernetes accepts (a
/// whole number, or `N%`; `maxUnavailable` at most `100%`) and never both 0; a
/// PodDisruptionBudget's `maxUnavailable` likewise.
pub fn check(spec: &Spec, values: &Value) -> Vec<Finding> {
    use crate::model::{int_or_percent, IntOrPercent};
    let mut out = Vec::new();
    let bad = |path: String, raw: &Value, max_percent: u64| {
        Finding {
        rule: "rollout.strategy",
        severity: Severity::Error,
        path: path.clone(),
        message: format!(
            "{} is not a whole number or a percentage from `0%` to `{max_percent}%`; Kubernetes refuses it",
            crate::expr::gojson::to_go_json(raw)
        ),
        arithmetic: None,
        hint: format!("set `{path}` to a count such as 1 or a percentage such as `25%`"),
    }
    };
    for (name, workload) in spec.workloads.all() {
        if workload.class() == WorkloadClass::Migrate {
            continue;
        }
        let w = ValuePath::new(["workloads", name]);
        let mut parsed: Vec<Option<IntOrPercent>> = Vec::new();
        for (key, max_percent) in [("maxSurge", 999), ("maxUnavailable", 100)] {
            let path = w.child("rollingUpdate").child(key);
            let Some(raw) = path.lookup(values) else {
                parsed.push(None);
                continue;
            };
            let value = int_or_percent(raw, max_percent);
            if value.is_none() {
                out.push(bad(path.to_string(), raw, max_percent));
            }
            parsed.push(value);
        }
        if let [Some(surge), Some(unavailable)] = parsed[..] {
            if surge.is_zero() && unavailable.is_zero() {
                out.push(Finding {
                    rule: "rollout.strategy",
                    severity: Severity::Error,
                    path: format!("workloads.{name}.rollingUpdate"),
                    message: "`maxSurge` and `maxUnavailable` are both 0: a rollout could never replace a pod, and Kubernetes refuses it".into(),
                    arithmetic: None,
                    hint: format!("set `workloads.{name}.rollingUpdate.maxSurge` to 1"),
                });
            }
        }
        let pdb = w.child("podDisruptionBudget").child("maxUnavailable");
        if let Some(raw) = pdb.lookup(values) {
            if int_or_percent(raw, 100).is_none() {
                out.push(bad(pdb.to_string(), raw, 100));
            }
        }
    }
    out
}
