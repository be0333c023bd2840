//! `rollout.drain`: refuses a grace period shorter than drain + shutdown, and a
//! PodDisruptionBudget allowing 0 unavailable; scale-in faster than the drain window
//! is a warning. A pod killed before its drain window and shutdown end cuts its open
//! streams; a budget that allows no pod to be unavailable blocks every node drain; an
//! autoscaler removing pods faster than they drain cuts streams on several pods at
//! once. At install time `values.schema.json` gives intervals: `drainSeconds` and
//! `shutdownSeconds` at most the plan's, `terminationGracePeriodSeconds` at least their
//! sum; an enabled budget's `maxUnavailable` is not 0 or `0%`.

use super::typed_values::api_workloads;
use super::{Finding, Severity};
use crate::model::{ApiValues, IntOrString};
use crate::spec::Spec;
use serde_json::Value;

/// The rule on every api workload.
pub fn check(spec: &Spec, values: &Value) -> Vec<Finding> {
    api_workloads(spec, values)
        .into_iter()
        .flat_map(|(name, api)| drain(name, &api))
        .collect()
}

/// `rollout.drain`: the grace period covers the drain window and the shutdown; the
/// PodDisruptionBudget never blocks a node drain; scale-in is not faster than the drain.
fn drain(name: &str, api: &ApiValues) -> Vec<Finding> {
    let mut out = Vec::new();
    let base = format!("workloads.{name}");
    if !api.enabled {
        return out;
    }
    let needed = u64::from(api.drain_seconds) + u64::from(api.shutdown_seconds);
    if u64::from(api.termination_grace_period_seconds) < needed {
        out.push(Finding {
            rule: "rollout.drain",
            severity: Severity::Error,
            path: format!("{base}.terminationGracePeriodSeconds"),
            message: format!(
                "a pod is killed after {} s, before its drain window and shutdown end; open streams are cut",
                api.termination_grace_period_seconds
            ),
            arithmetic: Some(format!(
                "drainSeconds {} + shutdownSeconds {} = {needed} > terminationGracePeriodSeconds {}",
                api.drain_seconds, api.shutdown_seconds, api.termination_grace_period_seconds
            )),
            hint: format!("set `{base}.terminationGracePeriodSeconds` to at least {needed}"),
        });
    }
    let pdb = &api.pod_disruption_budget;
    let blocks = match &pdb.max_unavailable {
        IntOrString::Int(n) => *n <= 0,
        IntOrString::Str(s) => s
            .trim_end_matches('%')
            .trim()
            .parse::<f64>()
            .is_ok_and(|p| p <= 0.0),
    };
    if pdb.enabled && blocks {
        out.push(Finding {
            rule: "rollout.drain",
            severity: Severity::Error,
            path: format!("{base}.podDisruptionBudget.maxUnavailable"),
            message:
                "a PodDisruptionBudget that allows no pod to be unavailable blocks every node drain"
                    .into(),
            arithmetic: None,
            hint: format!("set `{base}.podDisruptionBudget.maxUnavailable` to 1 or more"),
        });
    }
    let autoscaled = api.autoscaling.enabled || api.keda.enabled;
    let down = &api.autoscaling.scale_down;
    if autoscaled && down.period_seconds < api.drain_seconds {
        out.push(Finding {
            rule: "rollout.drain",
            severity: Severity::Warning,
            path: format!("{base}.autoscaling.scaleDown.periodSeconds"),
            message: format!(
                "scale-in removes up to {} pod(s) every {} s while each removed pod drains for {} s; streams on several pods are cut at once",
                down.pods, down.period_seconds, api.drain_seconds
            ),
            arithmetic: Some(format!("periodSeconds {} < drainSeconds {}", down.period_seconds, api.drain_seconds)),
            hint: format!("set `{base}.autoscaling.scaleDown.periodSeconds` to at least {}", api.drain_seconds),
        });
    }
    out
}
