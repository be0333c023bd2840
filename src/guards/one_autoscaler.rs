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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, places, values, with};
    use serde_json::json;

    fn api(hpa: (bool, u32, u32), keda: (bool, u32, u32)) -> ApiValues {
        let mut api = ApiValues::default();
        (
            api.autoscaling.enabled,
            api.autoscaling.min_replicas,
            api.autoscaling.max_replicas,
        ) = hpa;
        (
            api.keda.enabled,
            api.keda.min_replicas,
            api.keda.max_replicas,
        ) = keda;
        api
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
        let api = ApiValues {
            enabled: false,
            ..api((true, 9, 1), (true, 9, 1))
        };
        assert_eq!(one_autoscaler("web", &api), []);
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
