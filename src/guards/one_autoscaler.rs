//! `autoscaling.one-autoscaler`: refuses an HPA and a KEDA ScaledObject on one
//! workload, and `minReplicas` above `maxReplicas` (the api's autoscalers, a pool's or
//! worker's HPA). Two autoscalers would fight over the replica count, each undoing the
//! other's scaling, and an autoscaler whose minimum is above its maximum is refused by
//! Kubernetes. At install time `values.schema.json`
//! says `not` both `enabled`, and min <= max enumerated over every `maxReplicas` a plan
//! allows.

use super::{Finding, Severity};
use crate::spec::Spec;
use crate::values::WholeNumbers;
use serde::Deserialize;
use serde_json::Value;

/// An autoscaler's switch and bounds, as the values state them.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Scaler {
    enabled: bool,
    min_replicas: u32,
    max_replicas: u32,
}

/// The rule on every enabled workload whose class has an autoscaler (the api's HPA
/// and KEDA ScaledObject, a pool's or worker's HPA).
pub fn check(spec: &Spec, values: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    for (name, workload) in spec.workloads.all() {
        let Some(raw) = values.get("workloads").and_then(|w| w.get(name)) else {
            continue;
        };
        if raw.get("enabled") != Some(&Value::Bool(true)) {
            continue;
        }
        let scalers: Vec<(&str, Scaler)> = workload
            .class()
            .autoscalers()
            .iter()
            .filter_map(|key| {
                let scaler = Scaler::deserialize(WholeNumbers(raw.get(*key)?)).ok()?;
                Some((*key, scaler))
            })
            .collect();
        out.extend(one_autoscaler(name, &scalers));
    }
    out
}

/// `autoscaling.one-autoscaler`: never two autoscalers on one workload; each one's
/// minimum within its maximum.
fn one_autoscaler(name: &str, scalers: &[(&str, Scaler)]) -> Vec<Finding> {
    let mut out = Vec::new();
    let base = format!("workloads.{name}");
    let on: Vec<&str> = scalers
        .iter()
        .filter(|(_, s)| s.enabled)
        .map(|(key, _)| *key)
        .collect();
    if on.len() > 1 {
        out.push(Finding {
            rule: "autoscaling.one-autoscaler",
            severity: Severity::Error,
            path: base.clone(),
            message: "both an HPA (`autoscaling.enabled`) and a KEDA ScaledObject (`keda.enabled`) are on; they would fight over the replica count".into(),
            arithmetic: None,
            hint: format!("turn one off: `{base}.keda.enabled=false` or `{base}.autoscaling.enabled=false`"),
        });
    }
    for (key, s) in scalers {
        let (min, max) = (s.min_replicas, s.max_replicas);
        if s.enabled && min > max {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, places, values, with};
    use serde_json::json;

    fn api(hpa: (bool, u32, u32), keda: (bool, u32, u32)) -> Vec<(&'static str, Scaler)> {
        let scaler = |(enabled, min_replicas, max_replicas)| Scaler {
            enabled,
            min_replicas,
            max_replicas,
        };
        vec![("autoscaling", scaler(hpa)), ("keda", scaler(keda))]
    }

    fn paths(findings: &[Finding]) -> Vec<String> {
        findings.iter().map(|f| f.path.clone()).collect()
    }

    #[test]
    fn one_autoscaler_or_none_passes() {
        for (hpa, keda) in [(false, false), (true, false), (false, true)] {
            assert_eq!(one_autoscaler("web", &api((hpa, 2, 6), (keda, 2, 6))), []);
        }
    }

    #[test]
    fn an_hpa_and_a_scaled_object_together_are_refused() {
        let findings = one_autoscaler("web", &api((true, 2, 6), (true, 2, 6)));
        assert_eq!(paths(&findings), ["workloads.web"]);
        assert_eq!(findings[0].rule, "autoscaling.one-autoscaler");
        assert_eq!(findings[0].severity, Severity::Error);
    }

    #[test]
    fn minimum_equal_to_maximum_passes() {
        assert_eq!(one_autoscaler("web", &api((true, 3, 3), (false, 2, 6))), []);
        assert_eq!(one_autoscaler("web", &api((false, 2, 6), (true, 1, 1))), []);
    }

    #[test]
    fn minimum_one_above_maximum_is_refused_for_either_autoscaler() {
        let findings = one_autoscaler("web", &api((true, 4, 3), (false, 2, 6)));
        assert_eq!(paths(&findings), ["workloads.web.autoscaling"]);
        assert_eq!(
            findings[0].message,
            "`minReplicas` 4 is above `maxReplicas` 3"
        );
        assert_eq!(
            findings[0].hint,
            "set `workloads.web.autoscaling.maxReplicas` to at least 4"
        );
        let findings = one_autoscaler("web", &api((false, 2, 6), (true, u32::MAX, 1)));
        assert_eq!(paths(&findings), ["workloads.web.keda"]);
    }

    #[test]
    fn the_order_of_an_autoscaler_that_is_off_is_not_checked() {
        assert_eq!(
            one_autoscaler("web", &api((false, 9, 1), (false, 9, 1))),
            []
        );
    }

    #[test]
    fn a_disabled_workload_is_not_checked() {
        let spec = example("agent-platform");
        let off = with(
            values(&spec, None),
            &[
                ("workloads.api.enabled", json!(false)),
                ("workloads.api.autoscaling.enabled", json!(true)),
                ("workloads.api.keda.enabled", json!(true)),
            ],
        );
        assert_eq!(check(&spec, &off), []);
    }

    #[test]
    fn a_worker_hpa_minimum_above_its_maximum_is_refused() {
        let spec = example("agent-platform");
        let hpa = |min: f64| {
            with(
                values(&spec, None),
                &[
                    ("workloads.temporal.autoscaling.enabled", json!(true)),
                    ("workloads.temporal.autoscaling.minReplicas", json!(min)),
                    ("workloads.temporal.autoscaling.maxReplicas", json!(3.0)),
                ],
            )
        };
        assert_eq!(check(&spec, &hpa(3.0)), []);
        assert_eq!(
            places(&check(&spec, &hpa(4.0))),
            [(
                "autoscaling.one-autoscaler",
                "workloads.temporal.autoscaling".to_string()
            )]
        );
    }

    #[test]
    fn check_reads_every_api_workload_from_values() {
        let spec = example("agent-platform");
        assert_eq!(check(&spec, &values(&spec, Some("keda"))), []);
        let both = with(
            values(&spec, Some("keda")),
            &[("workloads.api.autoscaling.enabled", json!(true))],
        );
        assert_eq!(
            places(&check(&spec, &both)),
            [("autoscaling.one-autoscaler", "workloads.api".to_string())]
        );
    }
}
