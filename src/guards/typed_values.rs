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
use crate::values::integral_numbers;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The typed values of one workload, or `None` if they do not fit the type (the
/// values schema is checked before the guards, so that does not happen in practice).
pub fn workload_values<T: DeserializeOwned>(values: &Value, name: &str) -> Option<T> {
    let raw = values.get("workloads")?.get(name)?;
    serde_json::from_value(integral_numbers(raw)).ok()
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
    let raw = value?;
    let e = serde_json::from_value::<T>(integral_numbers(raw)).err()?;
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
