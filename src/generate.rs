//! The whole generation, in memory: spec in, every output file out.
//!
//! `generate` writes what this returns; `check` compares it with what is on disk.
//! Both use this one path, so a check can never disagree with a generate.

use crate::chart::{build_chart, ChartInputs, TemplateError};
use crate::expr::EvalError;
use crate::objects::build_objects;
use crate::render::{render_manifests, Release};
use crate::schema::values_schema;
use crate::spec::Spec;
use crate::values::{check_values_schema, default_values, resolve_values, ValuesError};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Output files by path relative to the output folder.
pub type OutputFiles = BTreeMap<String, String>;

/// The name of the render of the chart's own defaults, beside the presets.
pub const DEFAULT_PRESET: &str = "default";

/// Generation failed; nothing is written.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// A preset's values break the values schema.
    #[error(transparent)]
    Values(#[from] ValuesError),
    /// A preset's values cannot be rendered.
    #[error("preset `{preset}`: {source}")]
    Render { preset: String, source: EvalError },
    /// An internal template failed.
    #[error(transparent)]
    Template(#[from] TemplateError),
}

/// The presets of a spec, by name.
pub fn presets(spec: &Spec) -> BTreeMap<String, Map<String, Value>> {
    spec.presets.clone()
}

/// Resolves the values of one preset (`None`: the chart's defaults) over the spec.
pub fn preset_values(spec: &Spec, preset: Option<&str>) -> Result<Value, ValuesError> {
    let all = presets(spec);
    let overlay = match preset {
        None => None,
        Some(name) => Some(all.get(name).ok_or_else(|| ValuesError::UnknownPreset {
            name: name.to_string(),
            known: all.keys().cloned().collect(),
        })?),
    };
    Ok(resolve_values(spec, overlay, &[]))
}

/// Generates the chart (under `chart/`) and the render of the defaults and of every
/// preset (under `rendered/`).
pub fn generate_outputs(spec: &Spec) -> Result<OutputFiles, GenerateError> {
    let docs = build_objects(spec);
    let defaults = default_values(spec);
    let schema = values_schema(spec);
    let presets = presets(spec);
    let chart = build_chart(&ChartInputs {
        spec,
        docs: &docs,
        default_values: &defaults,
        values_schema: &schema,
        presets: &presets,
    })?;
    let mut out = OutputFiles::new();
    for (path, text) in chart {
        out.insert(format!("chart/{path}"), text);
    }
    let release = Release::default();
    let mut names: Vec<Option<&str>> = vec![None];
    names.extend(presets.keys().map(|k| Some(k.as_str())));
    for name in names {
        let label = name.unwrap_or(DEFAULT_PRESET);
        let values = preset_values(spec, name)?;
        check_values_schema(&values, &schema, &format!("preset `{label}`"))?;
        let text = render_manifests(spec, &docs, &values, &release).map_err(|source| {
            GenerateError::Render {
                preset: label.to_string(),
                source,
            }
        })?;
        out.insert(format!("rendered/{label}.yaml"), text);
    }
    Ok(out)
}
