//! `values.types`: refuses values that do not fit the typed model, since the guards
//! could not check them. Every other guard reads the values through the model's types;
//! a value that does not deserialize (a count above 2147483647, a fraction where a
//! whole number belongs, a string where a number belongs) would make a guard fall back
//! to a default, a budget read as 0, say, and pass what it should refuse. This rule
//! reports such values instead. At install time `values.schema.json` bounds every
//! integer by 2147483647 and checks percentages by pattern, so every value Helm
//! accepts fits the types.
//!
//! [`workload_values`] and [`api_workloads`], the typed reads the other guards use,
//! live here beside the rule that makes them safe.

use super::{Finding, Severity};
use crate::model::ApiValues;
use crate::spec::{Spec, WorkloadClass};
use crate::values::WholeNumbers;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The typed values of one workload, read in place through [`WholeNumbers`], or
/// `None` if they do not fit the type (the values schema is checked before the
/// guards, so that does not happen in practice).
pub fn workload_values<T: DeserializeOwned>(values: &Value, name: &str) -> Option<T> {
    T::deserialize(WholeNumbers(values.get("workloads")?.get(name)?)).ok()
}

/// Every api workload whose values fit [`ApiValues`], in the spec's order.
pub fn api_workloads<'a>(spec: &'a Spec, values: &Value) -> Vec<(&'a str, ApiValues)> {
    spec.workloads
        .all()
        .into_iter()
        .filter(|(_, workload)| workload.class() == WorkloadClass::Api)
        .filter_map(|(name, _)| Some((name, workload_values::<ApiValues>(values, name)?)))
        .collect()
}

fn fits<T: DeserializeOwned>(path: &str, value: Option<&Value>) -> Option<Finding> {
    let e = T::deserialize(WholeNumbers(value?)).err()?;
    Some(Finding {
        rule: "values.types",
        severity: Severity::Error,
        path: path.to_string(),
        message: format!("the values do not fit the chart's types ({e}); the guards cannot check them"),
        arithmetic: None,
        hint: "use whole numbers from 0 to 2147483647 for counts and sizes, and the documented forms elsewhere (`values.schema.json` says which)".into(),
    })
}

/// `values.types`: every part of the values the guards read deserializes into its
/// typed model, so no guard falls back to a default (a budget read as 0, say).
pub fn check(spec: &Spec, values: &Value) -> Vec<Finding> {
    use crate::model::{
        DependencyCapacity, JobsValues, MigrateValues, PoolValues, PostgresPooler, Scheduling,
        SharedStoreValues, StartupSettings, WorkerValues,
    };
    let mut out = Vec::new();
    for (name, workload) in spec.workloads.all() {
        let path = format!("workloads.{name}");
        let raw = values.get("workloads").and_then(|w| w.get(name));
        if raw.is_none() {
            out.push(Finding {
                rule: "values.types",
                severity: Severity::Error,
                path: path.clone(),
                message: "the workload's values are missing".into(),
                arithmetic: None,
                hint: format!("keep `{path}` (a `null` deletes it)"),
            });
            continue;
        }
        out.extend(match workload.class() {
            WorkloadClass::Api => fits::<ApiValues>(&path, raw),
            WorkloadClass::Jobs => fits::<JobsValues>(&path, raw),
            WorkloadClass::Pool => fits::<PoolValues>(&path, raw),
            WorkloadClass::Worker => fits::<WorkerValues>(&path, raw),
            WorkloadClass::Migrate => fits::<MigrateValues>(&path, raw),
        });
    }
    out.extend(fits::<DependencyCapacity>(
        "dependencyCapacity",
        values.get("dependencyCapacity"),
    ));
    out.extend(fits::<Scheduling>("scheduling", values.get("scheduling")));
    out.extend(fits::<PostgresPooler>(
        "postgresPooler",
        values.get("postgresPooler"),
    ));
    out.extend(
        fits::<std::collections::BTreeMap<String, SharedStoreValues>>(
            "stores",
            values.get("stores"),
        ),
    );
    if spec.startup_settings.is_some() {
        out.extend(fits::<StartupSettings>(
            "startupSettings",
            values.get("startupSettings"),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, places, values, with};
    use serde_json::json;

    fn at(path: &str) -> Vec<(&'static str, String)> {
        vec![("values.types", path.to_string())]
    }

    #[test]
    fn the_examples_and_their_presets_fit() {
        for name in ["agent-platform", "llm-gateway"] {
            let spec = example(name);
            assert_eq!(check(&spec, &values(&spec, None)), [], "{name}");
            for preset in crate::capacity::fit::presets(&spec).keys() {
                assert_eq!(
                    check(&spec, &values(&spec, Some(preset))),
                    [],
                    "{name} {preset}"
                );
            }
        }
    }

    #[test]
    fn a_workload_of_any_class_that_does_not_fit_is_reported() {
        let spec = example("agent-platform");
        for name in ["api", "jobs", "ingest", "temporal", "migrate"] {
            for bad in [json!(-1.0), json!(1.5), json!(4294967296.0), json!("2")] {
                let path = format!("workloads.{name}.processesPerPod");
                let findings = check(&spec, &with(values(&spec, None), &[(&path, bad.clone())]));
                assert_eq!(
                    places(&findings),
                    at(&format!("workloads.{name}")),
                    "{path} {bad}"
                );
                assert_eq!(findings[0].severity, Severity::Error);
                assert!(findings[0]
                    .message
                    .starts_with("the values do not fit the chart's types ("));
            }
        }
    }

    #[test]
    fn the_largest_u32_fits_the_types() {
        let spec = example("agent-platform");
        let v = with(
            values(&spec, None),
            &[("workloads.api.processesPerPod", json!(4294967295.0))],
        );
        assert_eq!(check(&spec, &v), []);
    }

    #[test]
    fn a_missing_workload_is_reported() {
        let spec = example("agent-platform");
        let mut v = values(&spec, None);
        v["workloads"].as_object_mut().unwrap().remove("jobs");
        let findings = check(&spec, &v);
        assert_eq!(places(&findings), at("workloads.jobs"));
        assert_eq!(findings[0].message, "the workload's values are missing");
        assert_eq!(
            findings[0].hint,
            "keep `workloads.jobs` (a `null` deletes it)"
        );
    }

    #[test]
    fn every_section_the_guards_read_is_checked() {
        for (example_name, path, bad) in [
            (
                "agent-platform",
                "dependencyCapacity.retiringGenerations",
                json!(-1.0),
            ),
            ("agent-platform", "scheduling.jobs", json!("all")),
            ("agent-platform", "postgresPooler.enabled", json!("yes")),
            ("agent-platform", "stores.a2a-tasks.backend", json!("disk")),
            ("llm-gateway", "startupSettings.foreground", json!(1.0)),
        ] {
            let spec = example(example_name);
            let findings = check(&spec, &with(values(&spec, None), &[(path, bad)]));
            let section = path.split('.').next().unwrap();
            assert_eq!(places(&findings), at(section), "{path}");
        }
    }

    #[test]
    fn startup_settings_are_not_read_when_the_spec_has_none() {
        let spec = example("agent-platform");
        let v = with(values(&spec, None), &[("startupSettings", json!(1.0))]);
        assert_eq!(check(&spec, &v), []);
    }

    #[test]
    fn workload_values_reads_one_workload_typed_or_not_at_all() {
        let spec = example("agent-platform");
        let v = with(
            values(&spec, None),
            &[("workloads.api.replicaCount", json!(3.0))],
        );
        let api: ApiValues = workload_values(&v, "api").unwrap();
        assert_eq!(api.replica_count, 3);
        assert_eq!(workload_values::<ApiValues>(&v, "nowhere"), None);
        let bad = with(v, &[("workloads.api.replicaCount", json!(-3.0))]);
        assert_eq!(workload_values::<ApiValues>(&bad, "api"), None);
    }

    #[test]
    fn api_workloads_are_the_api_class_only_with_their_values() {
        let spec = example("agent-platform");
        let v = with(
            values(&spec, None),
            &[("workloads.api.drainSeconds", json!(45.0))],
        );
        let apis = api_workloads(&spec, &v);
        assert_eq!(apis.len(), 1);
        assert_eq!(apis[0].0, "api");
        assert_eq!(apis[0].1.drain_seconds, 45);
        let bad = with(v, &[("workloads.api.drainSeconds", json!(-1.0))]);
        assert!(api_workloads(&spec, &bad).is_empty());
    }
}
