//! Presets: the built-in ones (`presets/*.yaml`, applicable to any spec) and the
//! spec's own, which override or add. Each resolves to a values overlay.

use crate::spec::Spec;
use crate::values::merge_user_values;
use crate::values::{resolve_values, ValuesError};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A built-in preset file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct BuiltinPreset {
    description: String,
    #[serde(default)]
    classes: BTreeMap<String, Map<String, Value>>,
    #[serde(default)]
    values: Map<String, Value>,
    /// The backend every shared store of the spec gets.
    #[serde(default)]
    shared_store_backend: Option<String>,
}

/// The built-in presets, by name, as shipped in `presets/`.
const BUILTIN: &[(&str, &str)] = &[
    (
        "autoscaling",
        include_str!("../../presets/autoscaling.yaml"),
    ),
    ("scale-out", include_str!("../../presets/scale-out.yaml")),
];

/// A preset resolved for a spec.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    /// What it does and why.
    pub description: String,
    /// The values overlay.
    pub values: Map<String, Value>,
}

/// The names of the built-in presets.
pub fn builtin_preset_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

fn expand_builtin(spec: &Spec, text: &str) -> Preset {
    // The files are the project's own and parsed in tests; a broken one is a bug.
    let builtin: BuiltinPreset = serde_saphyr::from_str(text).unwrap_or(BuiltinPreset {
        description: String::new(),
        classes: BTreeMap::new(),
        values: Map::new(),
        shared_store_backend: None,
    });
    let mut workloads = Map::new();
    for (name, workload) in spec.workloads.all() {
        if let Some(overlay) = builtin.classes.get(workload.class().name()) {
            workloads.insert(name.to_string(), Value::Object(overlay.clone()));
        }
    }
    let mut values = builtin.values.clone();
    if let Some(backend) = &builtin.shared_store_backend {
        let stores: Map<String, Value> = spec
            .shared_stores()
            .into_iter()
            .map(|name| (name.to_string(), serde_json::json!({"backend": backend})))
            .collect();
        if !stores.is_empty() {
            merge_user_values(
                &mut values,
                Map::from_iter([("stores".to_string(), Value::Object(stores))]),
            );
        }
    }
    if !workloads.is_empty() {
        merge_user_values(
            &mut values,
            Map::from_iter([("workloads".to_string(), Value::Object(workloads))]),
        );
    }
    Preset {
        description: builtin.description,
        values,
    }
}

/// Puts every shared store of the spec on `backend` in a values overlay.
fn set_shared_store_backend(spec: &Spec, values: &mut Map<String, Value>, backend: &str) {
    let stores: Map<String, Value> = spec
        .shared_stores()
        .into_iter()
        .map(|name| (name.to_string(), serde_json::json!({ "backend": backend })))
        .collect();
    if !stores.is_empty() {
        merge_user_values(
            values,
            Map::from_iter([("stores".to_string(), Value::Object(stores))]),
        );
    }
}

/// Every preset of the spec: built-ins first, then the spec's own merged over a
/// built-in of the same name or added.
pub fn all_presets(spec: &Spec) -> BTreeMap<String, Preset> {
    let mut presets: BTreeMap<String, Preset> = BUILTIN
        .iter()
        .map(|(name, text)| (name.to_string(), expand_builtin(spec, text)))
        .collect();
    for (name, preset) in &spec.presets {
        let mut values = Map::new();
        if let Some(backend) = preset.shared_store_backend {
            let backend = match backend {
                crate::model::StoreBackend::Memory => "memory",
                crate::model::StoreBackend::Redis => "redis",
            };
            set_shared_store_backend(spec, &mut values, backend);
        }
        merge_user_values(&mut values, preset.values.clone());
        match presets.get_mut(name) {
            Some(existing) => {
                merge_user_values(&mut existing.values, values);
                if !preset.description.is_empty() {
                    existing.description = preset.description.clone();
                }
            }
            None => {
                presets.insert(
                    name.clone(),
                    Preset {
                        description: preset.description.clone(),
                        values,
                    },
                );
            }
        }
    }
    // Each preset is a checked plan of the install-time contract, and its values file
    // names it.
    for (name, preset) in presets.iter_mut() {
        preset.values.insert(
            crate::values::presets::PLAN_KEY.to_string(),
            Value::String(name.clone()),
        );
    }
    presets
}

/// The name of the render of the chart's own defaults, beside the presets.
pub const DEFAULT_PRESET: &str = "default";

/// The presets of a spec (built-in and its own), by name.
pub fn presets(spec: &Spec) -> BTreeMap<String, Preset> {
    all_presets(spec)
}

/// Resolves the values of one preset (`None`: the chart's defaults) over the spec.
pub fn preset_values(spec: &Spec, preset: Option<&str>) -> Result<Value, ValuesError> {
    let all = presets(spec);
    let overlay = match preset {
        None => None,
        Some(name) => Some(
            &all.get(name)
                .ok_or_else(|| ValuesError::UnknownPreset {
                    name: name.to_string(),
                    known: all.keys().cloned().collect(),
                })?
                .values,
        ),
    };
    Ok(resolve_values(spec, overlay, &[]))
}

/// The values key that names the plan the values are checked against.
pub const PLAN_KEY: &str = "capacityPlan";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_files_parse() {
        for (name, text) in BUILTIN {
            let parsed: Result<BuiltinPreset, _> = serde_saphyr::from_str(text);
            assert!(parsed.is_ok(), "presets/{name}.yaml: {parsed:?}");
        }
    }
}
