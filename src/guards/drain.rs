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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, places, values, with};
    use serde_json::json;

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

    fn with_budget(enabled: bool, max_unavailable: IntOrString) -> ApiValues {
        let mut api = api();
        api.pod_disruption_budget.enabled = enabled;
        api.pod_disruption_budget.max_unavailable = max_unavailable;
        api
    }

    #[test]
    fn a_budget_allowing_no_pod_down_blocks_a_drain() {
        for blocking in [
            IntOrString::Int(0),
            IntOrString::Int(-1),
            IntOrString::Str("0%".into()),
            IntOrString::Str("0 %".into()),
        ] {
            let findings = drain("web", &with_budget(true, blocking.clone()));
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
                drain("web", &with_budget(true, allowing.clone())),
                [],
                "{allowing:?}"
            );
        }
    }

    #[test]
    fn a_disabled_budget_is_not_checked() {
        assert_eq!(drain("web", &with_budget(false, IntOrString::Int(0))), []);
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
