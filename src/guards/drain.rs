//! `rollout.drain`: refuses a grace period shorter than drain + shutdown, and a
//! PodDisruptionBudget allowing 0 unavailable (`maxUnavailable` 0, or `minAvailable`
//! at least the workload's fewest pods); scale-in faster than the drain window is a
//! warning. A pod killed before its drain window and shutdown end cuts its open
//! streams; a budget that allows no pod to be unavailable blocks every node drain; an
//! autoscaler removing pods faster than they drain cuts streams on several pods at
//! once. At install time `values.schema.json` gives intervals: `drainSeconds` and
//! `shutdownSeconds` at most the plan's, `terminationGracePeriodSeconds` at least their
//! sum; an enabled budget's `maxUnavailable` is not 0 or `0%`, and its `minAvailable`
//! is below `replicaCount` (or the enabled autoscaler's `minReplicas`), enumerated over
//! every count a plan allows.

use super::typed_values::TypedWorkloads;
use super::{Finding, Severity};
use crate::model::{ApiValues, DisruptionBudget, IntOrString};
use crate::spec::Spec;
use crate::values::{whole_u64, WholeNumbers};
use serde::Deserialize;
use serde_json::Value;

/// The rule on every api workload, and on the PodDisruptionBudget of every workload
/// that has one.
pub fn check(spec: &Spec, values: &Value, typed: &TypedWorkloads) -> Vec<Finding> {
    let mut out: Vec<Finding> = typed
        .api()
        .flat_map(|(name, api)| drain(name, api))
        .collect();
    for (name, workload) in spec.workloads.all() {
        let class = workload.class();
        if !class.can_serve() {
            continue;
        }
        let Some(raw) = values.get("workloads").and_then(|w| w.get(name)) else {
            continue;
        };
        let Ok(w) = Disruptable::deserialize(WholeNumbers(raw)) else {
            continue;
        };
        if !w.enabled || !w.pod_disruption_budget.enabled {
            continue;
        }
        // The fewest pods: the first autoscaler on owns the count.
        let fewest = class
            .autoscalers()
            .iter()
            .find_map(|key| {
                let s = raw.get(*key)?;
                let on = s.get("enabled") == Some(&Value::Bool(true));
                on.then(|| s.get("minReplicas").and_then(whole_u64))?
            })
            .unwrap_or(u64::from(w.replica_count));
        out.extend(disruption_budget(name, &w.pod_disruption_budget, fewest));
    }
    out
}

/// What the PodDisruptionBudget check reads of a workload.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Disruptable {
    enabled: bool,
    #[serde(default)]
    replica_count: u32,
    pod_disruption_budget: DisruptionBudget,
}

/// An enabled PodDisruptionBudget lets at least one of the workload's `fewest` pods
/// be evicted, or it blocks every node drain.
fn disruption_budget(name: &str, pdb: &DisruptionBudget, fewest: u64) -> Vec<Finding> {
    let base = format!("workloads.{name}.podDisruptionBudget");
    let min = u64::from(pdb.min_available);
    if min > 0 {
        if min < fewest {
            return vec![];
        }
        return vec![Finding {
            rule: "rollout.drain",
            severity: Severity::Error,
            path: format!("{base}.minAvailable"),
            message: format!(
                "a PodDisruptionBudget that keeps {min} of {fewest} pod(s) available lets none be evicted: it blocks every node drain"
            ),
            arithmetic: Some(format!("minAvailable {min} >= fewest pods {fewest}")),
            hint: format!(
                "set `{base}.minAvailable` below {fewest} (or 0 to use `maxUnavailable`)"
            ),
        }];
    }
    let blocks = match &pdb.max_unavailable {
        IntOrString::Int(n) => *n <= 0,
        IntOrString::Str(s) => s
            .trim_end_matches('%')
            .trim()
            .parse::<f64>()
            .is_ok_and(|p| p <= 0.0),
    };
    if !blocks {
        return vec![];
    }
    vec![Finding {
        rule: "rollout.drain",
        severity: Severity::Error,
        path: format!("{base}.maxUnavailable"),
        message:
            "a PodDisruptionBudget that allows no pod to be unavailable blocks every node drain"
                .into(),
        arithmetic: None,
        hint: format!("set `{base}.maxUnavailable` to 1 or more"),
    }]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, places, values, with};
    use serde_json::json;

    /// The rule on `values`, its api workloads read as the registry reads them.
    fn check(spec: &Spec, values: &Value) -> Vec<Finding> {
        super::check(spec, values, &TypedWorkloads::read(spec, values))
    }

    /// The defaults: a 30 s drain, 30 s to shut down, a 60 s grace period, a budget
    /// allowing one pod down, no autoscaler.
    fn api() -> ApiValues {
        ApiValues::default()
    }

    fn paths(findings: &[Finding]) -> Vec<String> {
        findings.iter().map(|f| f.path.clone()).collect()
    }

    #[test]
    fn a_grace_period_equal_to_drain_plus_shutdown_is_enough() {
        let api = api();
        assert_eq!(
            api.drain_seconds + api.shutdown_seconds,
            api.termination_grace_period_seconds
        );
        assert_eq!(drain("web", &api), []);
    }

    #[test]
    fn a_grace_period_one_second_short_is_refused_with_the_sum() {
        let api = ApiValues {
            drain_seconds: 300,
            shutdown_seconds: 30,
            termination_grace_period_seconds: 329,
            ..api()
        };
        let findings = drain("web", &api);
        assert_eq!(findings.len(), 1);
        let f = &findings[0];
        assert_eq!(f.rule, "rollout.drain");
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(f.path, "workloads.web.terminationGracePeriodSeconds");
        assert_eq!(
            f.arithmetic.as_deref(),
            Some("drainSeconds 300 + shutdownSeconds 30 = 330 > terminationGracePeriodSeconds 329")
        );
        assert_eq!(
            f.hint,
            "set `workloads.web.terminationGracePeriodSeconds` to at least 330"
        );
    }

    #[test]
    fn a_grace_period_above_the_sum_passes() {
        let api = ApiValues {
            drain_seconds: 10,
            shutdown_seconds: 20,
            termination_grace_period_seconds: 31,
            ..api()
        };
        assert_eq!(drain("web", &api), []);
    }

    #[test]
    fn the_sum_of_the_largest_integers_does_not_overflow() {
        let api = ApiValues {
            drain_seconds: u32::MAX,
            shutdown_seconds: u32::MAX,
            termination_grace_period_seconds: u32::MAX,
            ..api()
        };
        let findings = drain("web", &api);
        assert_eq!(
            paths(&findings),
            ["workloads.web.terminationGracePeriodSeconds"]
        );
        assert!(findings[0].hint.ends_with(" 8589934590"), "{}", findings[0]);
    }

    #[test]
    fn a_disabled_workload_is_not_checked() {
        let api = ApiValues {
            enabled: false,
            termination_grace_period_seconds: 0,
            ..api()
        };
        assert_eq!(drain("web", &api), []);
    }

    fn budget(max_unavailable: IntOrString, min_available: u32) -> DisruptionBudget {
        DisruptionBudget {
            enabled: true,
            max_unavailable,
            min_available,
        }
    }

    #[test]
    fn a_budget_allowing_no_pod_down_blocks_a_drain() {
        for blocking in [
            IntOrString::Int(0),
            IntOrString::Int(-1),
            IntOrString::Str("0%".into()),
            IntOrString::Str("0 %".into()),
        ] {
            let findings = disruption_budget("web", &budget(blocking.clone(), 0), 3);
            assert_eq!(
                paths(&findings),
                ["workloads.web.podDisruptionBudget.maxUnavailable"],
                "{blocking:?}"
            );
            assert_eq!(findings[0].severity, Severity::Error);
        }
    }

    #[test]
    fn a_budget_allowing_one_pod_or_one_percent_down_passes() {
        for allowing in [
            IntOrString::Int(1),
            IntOrString::Str("1%".into()),
            IntOrString::Str("25%".into()),
        ] {
            assert_eq!(
                disruption_budget("web", &budget(allowing.clone(), 0), 3),
                [],
                "{allowing:?}"
            );
        }
    }

    #[test]
    fn min_available_equal_to_the_fewest_pods_blocks_and_one_less_passes() {
        let findings = disruption_budget("web", &budget(IntOrString::Int(1), 3), 3);
        assert_eq!(
            paths(&findings),
            ["workloads.web.podDisruptionBudget.minAvailable"]
        );
        assert_eq!(findings[0].severity, Severity::Error);
        assert_eq!(
            findings[0].arithmetic.as_deref(),
            Some("minAvailable 3 >= fewest pods 3")
        );
        assert_eq!(
            disruption_budget("web", &budget(IntOrString::Int(1), 2), 3),
            []
        );
        // One pod: any minimum blocks it; the largest minimum too.
        assert_eq!(
            disruption_budget("web", &budget(IntOrString::Int(1), 1), 1).len(),
            1
        );
        assert_eq!(
            disruption_budget("web", &budget(IntOrString::Int(1), u32::MAX), 1).len(),
            1
        );
        // Zero pods: a minimum of one blocks.
        assert_eq!(
            disruption_budget("web", &budget(IntOrString::Int(1), 1), 0).len(),
            1
        );
    }

    #[test]
    fn min_available_replaces_max_unavailable() {
        // `maxUnavailable: 0` is not rendered when `minAvailable` is set.
        assert_eq!(
            disruption_budget("web", &budget(IntOrString::Int(0), 1), 2),
            []
        );
    }

    #[test]
    fn check_reads_budgets_of_every_class_with_the_autoscalers_minimum() {
        let spec = example("agent-platform");
        let v = |pairs: &[(&str, Value)]| with(values(&spec, None), pairs);
        // A worker's budget, off by default.
        let on = [
            (
                "workloads.temporal.podDisruptionBudget.enabled",
                json!(true),
            ),
            (
                "workloads.temporal.podDisruptionBudget.minAvailable",
                json!(2.0),
            ),
            ("workloads.temporal.replicaCount", json!(2.0)),
        ];
        assert_eq!(check(&spec, &v(&on[1..])), []);
        assert_eq!(
            places(&check(&spec, &v(&on))),
            [(
                "rollout.drain",
                "workloads.temporal.podDisruptionBudget.minAvailable".to_string()
            )]
        );
        // The HPA's minimum counts instead of `replicaCount`.
        let mut hpa = on.to_vec();
        hpa.push(("workloads.temporal.autoscaling.enabled", json!(true)));
        hpa.push(("workloads.temporal.autoscaling.minReplicas", json!(3.0)));
        assert_eq!(check(&spec, &v(&hpa)), []);
        // The api's KEDA minimum, when only KEDA is on.
        let keda = [
            ("workloads.api.podDisruptionBudget.minAvailable", json!(1.0)),
            ("workloads.api.keda.enabled", json!(true)),
            ("workloads.api.keda.minReplicas", json!(1.0)),
            ("workloads.api.replicaCount", json!(5.0)),
        ];
        assert_eq!(check(&spec, &v(&keda)).len(), 1);
        // A disabled budget or workload is not checked.
        let mut off = on.to_vec();
        off.push(("workloads.temporal.enabled", json!(false)));
        assert_eq!(check(&spec, &v(&off)), []);
    }

    fn scaling(hpa: bool, keda: bool, period_seconds: u32) -> ApiValues {
        let mut api = ApiValues {
            drain_seconds: 300,
            termination_grace_period_seconds: 330,
            ..api()
        };
        api.autoscaling.enabled = hpa;
        api.keda.enabled = keda;
        api.autoscaling.scale_down.period_seconds = period_seconds;
        api
    }

    #[test]
    fn scale_in_faster_than_the_drain_is_a_warning_under_either_autoscaler() {
        for (hpa, keda) in [(true, false), (false, true)] {
            let findings = drain("web", &scaling(hpa, keda, 299));
            assert_eq!(
                paths(&findings),
                ["workloads.web.autoscaling.scaleDown.periodSeconds"]
            );
            let f = &findings[0];
            assert_eq!(f.severity, Severity::Warning);
            assert_eq!(
                f.arithmetic.as_deref(),
                Some("periodSeconds 299 < drainSeconds 300")
            );
        }
    }

    #[test]
    fn scale_in_as_slow_as_the_drain_or_slower_passes() {
        assert_eq!(drain("web", &scaling(true, false, 300)), []);
        assert_eq!(drain("web", &scaling(true, false, 301)), []);
    }

    #[test]
    fn without_an_autoscaler_the_scale_in_period_is_not_checked() {
        assert_eq!(drain("web", &scaling(false, false, 1)), []);
    }

    #[test]
    fn check_reads_every_api_workload_from_values() {
        let spec = example("agent-platform");
        assert_eq!(check(&spec, &values(&spec, None)), []);
        let short = with(
            values(&spec, None),
            &[("workloads.api.terminationGracePeriodSeconds", json!(59.0))],
        );
        assert_eq!(
            places(&check(&spec, &short)),
            [(
                "rollout.drain",
                "workloads.api.terminationGracePeriodSeconds".to_string()
            )]
        );
    }
}
