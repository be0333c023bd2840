//! Presets: the built-in ones (`presets/*.yaml`), which a spec uses by naming them
//! with `builtin: true`, and the spec's own. Each resolves to a values overlay.
//!
//! A built-in preset may mark counts as ceilings to be fitted to the spec's budgets
//! ([`Preset::fit`]); that needs the capacity formula, a later stage, so the presets
//! every other stage uses are `capacity::fit::presets`, which applies the fit to
//! these [`declared_presets`].

use crate::spec::Spec;
use crate::values::merge_user_values;
use crate::values::ValuesError;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A built-in preset file.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BuiltinPreset {
    description: String,
    #[serde(default)]
    classes: BTreeMap<String, Map<String, Value>>,
    #[serde(default)]
    values: Map<String, Value>,
    /// The backend every shared store of the spec gets.
    #[serde(default)]
    shared_store_backend: Option<String>,
    /// `classes.api.autoscaling.maxReplicas` is a ceiling: each api workload's
    /// maximum is fitted to the budgets unless the spec's entry sets it.
    #[serde(default)]
    fit_max_replicas: bool,
}

/// The built-in presets, by name: each is shipped as `presets/<name>.yaml` and read
/// as the JSON `build.rs` writes of it (`$OUT_DIR/presets/<name>.json`), which parses
/// in a tenth of the instructions: `render` reads them at each run.
const BUILTIN: &[(&str, &str)] = &[
    (
        "autoscaling",
        include_str!(concat!(env!("OUT_DIR"), "/presets/autoscaling.json")),
    ),
    (
        "scale-out",
        include_str!(concat!(env!("OUT_DIR"), "/presets/scale-out.json")),
    ),
];

/// A preset resolved for a spec.
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    /// What it does and why.
    pub description: String,
    /// The values overlay.
    pub values: Map<String, Value>,
    /// The api workloads whose `autoscaling.maxReplicas` in [`Preset::values`] is a
    /// ceiling still to be lowered to the largest count that fits the budgets.
    pub fit: Vec<FitTarget>,
}

/// One `workloads.<workload>.autoscaling.maxReplicas` to fit to the budgets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FitTarget {
    /// The api workload.
    pub workload: String,
    /// The built-in maximum: the fitted count is at most this.
    pub ceiling: u64,
    /// `minReplicas` as the spec's own entry sets it: the fitted maximum is never
    /// below it (a conflict is left for the capacity guard to explain). `None`: the
    /// built-in `minReplicas`, lowered to the fitted maximum when above it.
    pub spec_min_replicas: Option<u64>,
}

/// Each built-in preset's file, parsed once per process: a `render` expands the
/// presets more than once. The files are the project's own and parsed in tests; a
/// broken one would be a bug, and reads as an empty preset.
pub fn builtin_presets() -> &'static [(&'static str, BuiltinPreset)] {
    static PARSED: std::sync::OnceLock<Vec<(&'static str, BuiltinPreset)>> =
        std::sync::OnceLock::new();
    PARSED.get_or_init(|| {
        BUILTIN
            .iter()
            .map(|(name, json)| {
                let parsed = serde_json::from_str(json).unwrap_or(BuiltinPreset {
                    description: String::new(),
                    classes: BTreeMap::new(),
                    values: Map::new(),
                    shared_store_backend: None,
                    fit_max_replicas: false,
                });
                (*name, parsed)
            })
            .collect()
    })
}

/// The names of the built-in presets.
pub fn builtin_preset_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _)| *n).collect()
}

/// The number at `path` in a values map, if it is one.
fn number_at(values: &Map<String, Value>, path: &[&str]) -> Option<u64> {
    let (last, parents) = path.split_last()?;
    let mut map = values;
    for key in parents {
        map = map.get(*key)?.as_object()?;
    }
    map.get(*last)?.as_f64().map(|n| n.max(0.0) as u64)
}

fn expand_builtin(spec: &Spec, builtin: &BuiltinPreset, own: &Map<String, Value>) -> Preset {
    let mut workloads = Map::new();
    for (name, workload) in spec.workloads.all() {
        if let Some(overlay) = builtin.classes.get(workload.class().name()) {
            workloads.insert(name.to_string(), Value::Object(overlay.clone()));
        }
    }
    let mut values = builtin.values.clone();
    if let Some(backend) = &builtin.shared_store_backend {
        set_shared_store_backend(spec, &mut values, backend);
    }
    if !workloads.is_empty() {
        merge_user_values(
            &mut values,
            Map::from_iter([("workloads".to_string(), Value::Object(workloads))]),
        );
    }
    let mut fit = Vec::new();
    let ceiling = builtin
        .classes
        .get("api")
        .and_then(|api| number_at(api, &["autoscaling", "maxReplicas"]));
    if let (true, Some(ceiling)) = (builtin.fit_max_replicas, ceiling) {
        for name in spec.workloads.api.keys() {
            let path = |key| ["workloads", name.as_str(), "autoscaling", key];
            let switched_off = own
                .get("workloads")
                .and_then(|w| w.get(name.as_str()))
                .and_then(|w| w.get("autoscaling"))
                .and_then(|a| a.get("enabled"))
                == Some(&Value::Bool(false));
            if number_at(own, &path("maxReplicas")).is_none() && !switched_off {
                fit.push(FitTarget {
                    workload: name.clone(),
                    ceiling,
                    spec_min_replicas: number_at(own, &path("minReplicas")),
                });
            }
        }
    }
    Preset {
        description: builtin.description.clone(),
        values,
        fit,
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

/// Every preset of the spec as declared: the built-in ones it names with
/// `builtin: true` with its entry merged over them, and its own. Counts a built-in
/// preset fits to the budgets are still at their ceiling ([`Preset::fit`]); every
/// stage after `capacity` uses `capacity::fit::presets` instead.
pub fn declared_presets(spec: &Spec) -> BTreeMap<String, Preset> {
    let mut presets = BTreeMap::new();
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
        let builtin = builtin_presets()
            .iter()
            .find(|(n, _)| preset.builtin && n == name)
            .map(|(_, builtin)| expand_builtin(spec, builtin, &values));
        let resolved = match builtin {
            Some(mut base) => {
                merge_user_values(&mut base.values, values);
                if !preset.description.is_empty() {
                    base.description = preset.description.clone();
                }
                base
            }
            None => Preset {
                description: preset.description.clone(),
                values,
                fit: Vec::new(),
            },
        };
        presets.insert(name.clone(), resolved);
    }
    // Each preset is a checked plan of the install-time contract, and its values file
    // names it.
    for (name, preset) in presets.iter_mut() {
        preset
            .values
            .insert(PLAN_KEY.to_string(), Value::String(name.clone()));
    }
    presets
}

/// The name of the render of the chart's own defaults, beside the presets.
pub const DEFAULT_PRESET: &str = "default";

/// Resolves the values of one preset of `presets` (`None`: the chart's defaults) over
/// the spec.
pub fn resolve_preset(
    spec: &Spec,
    presets: &BTreeMap<String, Preset>,
    preset: Option<&str>,
) -> Result<Value, ValuesError> {
    resolve_preset_over(&crate::values::default_values_map(spec), presets, preset)
}

/// [`resolve_preset`] over the chart's defaults already built.
pub fn resolve_preset_over(
    defaults: &Map<String, Value>,
    presets: &BTreeMap<String, Preset>,
    preset: Option<&str>,
) -> Result<Value, ValuesError> {
    let overlay = match preset {
        None => None,
        Some(name) => Some(
            &presets
                .get(name)
                .ok_or_else(|| ValuesError::UnknownPreset {
                    name: name.to_string(),
                    known: presets.keys().cloned().collect(),
                })?
                .values,
        ),
    };
    Ok(crate::values::resolve_values_over(defaults, overlay, &[]))
}

/// The values key that names the plan the values are checked against.
pub const PLAN_KEY: &str = "capacityPlan";

#[cfg(test)]
mod tests {
    use super::*;

    /// Each file of `presets/` is a built-in preset that parses, and the JSON
    /// `build.rs` wrote of it, which the binary reads, parses as the same preset.
    #[test]
    fn builtin_files_parse_and_their_json_is_the_same_preset() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("presets");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        let named: Vec<String> = BUILTIN.iter().map(|(n, _)| format!("{n}.yaml")).collect();
        assert_eq!(files, named, "every file of presets/ is a built-in preset");
        for (name, json) in BUILTIN {
            let yaml = std::fs::read_to_string(dir.join(format!("{name}.yaml"))).unwrap();
            let parsed: Result<BuiltinPreset, _> = serde_saphyr::from_str(&yaml);
            let Ok(parsed) = parsed else {
                panic!("presets/{name}.yaml: {parsed:?}");
            };
            assert!(!parsed.description.is_empty(), "{name}");
            assert!(!parsed.classes.is_empty(), "{name}");
            let from_json: BuiltinPreset = serde_json::from_str(json).unwrap();
            assert_eq!(from_json, parsed, "{name}");
            let (_, read) = builtin_presets().iter().find(|(n, _)| n == name).unwrap();
            assert_eq!(read, &parsed, "{name}");
        }
    }

    #[test]
    fn the_spec_knows_every_builtin_name() {
        assert_eq!(builtin_preset_names(), crate::spec::BUILTIN_PRESETS);
    }

    fn spec(presets: &str) -> Spec {
        let text = format!(
            "chart: {{name: t, version: 1.0.0, appVersion: '1', description: x}}\n\
             image: {{repository: example/t}}\n\
             workloads: {{api: {{web: {{}}, admin: {{}}, ops: {{}}}}}}\n{presets}"
        );
        crate::spec::load_spec(&text, "t.yaml").unwrap()
    }

    #[test]
    fn builtin_presets_are_used_only_when_named() {
        assert!(declared_presets(&spec("")).is_empty());
        let all = declared_presets(&spec("presets: {autoscaling: {builtin: true}, mine: {}}"));
        assert_eq!(all.keys().collect::<Vec<_>>(), ["autoscaling", "mine"]);
        assert!(all["mine"].fit.is_empty());
        let web = &all["autoscaling"].values["workloads"]["web"]["autoscaling"];
        assert_eq!(web["maxReplicas"], 12, "the ceiling, before the fit");
    }

    #[test]
    fn a_maximum_the_spec_sets_or_an_autoscaler_it_turns_off_is_not_fitted() {
        let all = declared_presets(&spec(
            "presets:\n  autoscaling:\n    builtin: true\n    values:\n      workloads:\n        web: {autoscaling: {maxReplicas: 20, minReplicas: 4}}\n        admin: {autoscaling: {minReplicas: 2}}\n        ops: {autoscaling: {enabled: false}}\n",
        ));
        let preset = &all["autoscaling"];
        assert_eq!(
            preset.fit,
            [FitTarget {
                workload: "admin".into(),
                ceiling: 12,
                spec_min_replicas: Some(2),
            }]
        );
        assert_eq!(
            preset.values["workloads"]["web"]["autoscaling"]["maxReplicas"],
            20
        );
    }
}
