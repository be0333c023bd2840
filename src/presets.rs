//! Presets: the built-in ones (`presets/*.yaml`, applicable to any spec) and the
//! spec's own, which override or add. Each resolves to a values overlay.

use crate::spec::{PresetSpec, Spec};
use crate::values::merge_user_values;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A built-in preset file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BuiltinPreset {
    description: String,
    #[serde(default)]
    classes: BTreeMap<String, Map<String, Value>>,
    #[serde(default)]
    values: Map<String, Value>,
}

/// The built-in presets, by name, as shipped in `presets/`.
const BUILTIN: &[(&str, &str)] = &[
    ("autoscaling", include_str!("../presets/autoscaling.yaml")),
    ("scale-out", include_str!("../presets/scale-out.yaml")),
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
    });
    let mut workloads = Map::new();
    for (name, workload) in spec.workloads.all() {
        if let Some(overlay) = builtin.classes.get(workload.class().name()) {
            workloads.insert(name.to_string(), Value::Object(overlay.clone()));
        }
    }
    let mut values = builtin.values.clone();
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

/// Every preset of the spec: built-ins first, then the spec's own merged over a
/// built-in of the same name or added.
pub fn all_presets(spec: &Spec) -> BTreeMap<String, Preset> {
    let mut presets: BTreeMap<String, Preset> = BUILTIN
        .iter()
        .map(|(name, text)| (name.to_string(), expand_builtin(spec, text)))
        .collect();
    for (
        name,
        PresetSpec {
            description,
            values,
        },
    ) in &spec.presets
    {
        match presets.get_mut(name) {
            Some(existing) => {
                merge_user_values(&mut existing.values, values.clone());
                if !description.is_empty() {
                    existing.description = description.clone();
                }
            }
            None => {
                presets.insert(
                    name.clone(),
                    Preset {
                        description: description.clone(),
                        values: values.clone(),
                    },
                );
            }
        }
    }
    presets
}

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
