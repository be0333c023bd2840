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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, places, values, with};
    use serde_json::json;

    fn findings(changes: &[(&str, Value)]) -> Vec<(&'static str, String)> {
        let spec = example("agent-platform");
        places(&check(&spec, &with(values(&spec, None), changes)))
    }

    fn at(path: &str) -> Vec<(&'static str, String)> {
        vec![("rollout.strategy", path.to_string())]
    }

    #[test]
    fn the_defaults_pass() {
        assert_eq!(findings(&[]), []);
    }

    #[test]
    fn counts_and_percentages_kubernetes_refuses_are_refused() {
        for key in ["maxSurge", "maxUnavailable"] {
            let path = format!("workloads.api.rollingUpdate.{key}");
            for bad in [
                json!("12.5%"),
                json!("-5%"),
                json!("2"),
                json!(1.5),
                json!(-1.0),
            ] {
                assert_eq!(findings(&[(&path, bad.clone())]), at(&path), "{bad}");
            }
        }
    }

    #[test]
    fn max_unavailable_stops_at_100_percent_and_max_surge_does_not() {
        let unavailable = "workloads.jobs.rollingUpdate.maxUnavailable";
        assert_eq!(findings(&[(unavailable, json!("100%"))]), []);
        assert_eq!(findings(&[(unavailable, json!("101%"))]), at(unavailable));
        let surge = "workloads.jobs.rollingUpdate.maxSurge";
        assert_eq!(findings(&[(surge, json!("101%"))]), []);
        assert_eq!(findings(&[(surge, json!("999%"))]), []);
        assert_eq!(findings(&[(surge, json!("1000%"))]), at(surge));
    }

    #[test]
    fn the_message_prints_the_value_as_helm_does() {
        let spec = example("agent-platform");
        let v = with(
            values(&spec, None),
            &[("workloads.api.rollingUpdate.maxSurge", json!("2"))],
        );
        let f = &check(&spec, &v)[0];
        assert_eq!(
            f.message,
            "\"2\" is not a whole number or a percentage from `0%` to `999%`; Kubernetes refuses it"
        );
        assert_eq!(f.severity, Severity::Error);
    }

    #[test]
    fn both_zero_is_refused_and_one_of_them_zero_passes() {
        let surge = "workloads.temporal.rollingUpdate.maxSurge";
        let unavailable = "workloads.temporal.rollingUpdate.maxUnavailable";
        for (s, u) in [
            (json!(0.0), json!(0.0)),
            (json!("0%"), json!(0.0)),
            (json!(0.0), json!("0%")),
        ] {
            assert_eq!(
                findings(&[(surge, s), (unavailable, u)]),
                at("workloads.temporal.rollingUpdate")
            );
        }
        assert_eq!(
            findings(&[(surge, json!(0.0)), (unavailable, json!(1.0))]),
            []
        );
        assert_eq!(
            findings(&[(surge, json!(1.0)), (unavailable, json!(0.0))]),
            []
        );
    }

    #[test]
    fn a_budget_max_unavailable_must_have_the_same_form() {
        let pdb = "workloads.api.podDisruptionBudget.maxUnavailable";
        assert_eq!(findings(&[(pdb, json!("100%"))]), []);
        assert_eq!(findings(&[(pdb, json!("101%"))]), at(pdb));
        assert_eq!(findings(&[(pdb, json!("one"))]), at(pdb));
    }

    #[test]
    fn a_migration_job_has_no_rolling_update_to_check() {
        assert_eq!(
            findings(&[("workloads.migrate.rollingUpdate", json!({"maxSurge": "x"}))]),
            []
        );
    }
}
