//! The whole generation, in memory: spec in, every output file out.
//!
//! `generate` writes what this returns; `check` compares it with what is on disk.
//! Both use this one path, so a check can never disagree with a generate.

use crate::backends::helm::{build_chart, ChartInputs, TemplateError};
use crate::backends::native::{render_manifests, Release};
use crate::capacity::{capacity_report, format_table};
use crate::contract::schema::values_schema;
use crate::expr::EvalError;
use crate::guards::{check_guards, Finding, Severity};
use crate::objects::build_objects;
use crate::spec::Spec;
use crate::values::presets::{preset_values, presets, DEFAULT_PRESET};
use crate::values::{check_values_schema, default_values, ValuesError};
use std::collections::BTreeMap;

/// Output files by path relative to the output folder.
pub type OutputFiles = BTreeMap<String, String>;

/// Generation failed; nothing is written.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// A preset's values break the values schema.
    #[error(transparent)]
    Values(#[from] ValuesError),
    /// Guards refused presets.
    #[error(
        "guards refused {} preset(s):\n{}",
        count_presets(findings),
        format_findings(findings)
    )]
    Guards { findings: Vec<(String, Finding)> },
    /// A preset's values cannot be rendered.
    #[error("preset `{preset}`: {source}")]
    Render { preset: String, source: EvalError },
    /// An internal template failed.
    #[error(transparent)]
    Template(#[from] TemplateError),
}

fn count_presets(findings: &[(String, Finding)]) -> usize {
    let names: std::collections::BTreeSet<&String> = findings.iter().map(|(p, _)| p).collect();
    names.len()
}

/// Findings, one block each, labelled with the presets they occur in (a finding
/// shared by several presets is printed once).
pub fn format_findings(findings: &[(String, Finding)]) -> String {
    let mut grouped: Vec<(Vec<&str>, &Finding)> = Vec::new();
    for (preset, finding) in findings {
        match grouped.iter_mut().find(|(_, f)| *f == finding) {
            Some((presets, _)) => presets.push(preset),
            None => grouped.push((vec![preset.as_str()], finding)),
        }
    }
    grouped
        .iter()
        .map(|(presets, f)| {
            let label = if presets.len() == 1 {
                "preset"
            } else {
                "presets"
            };
            let names: Vec<String> = presets.iter().map(|p| format!("`{p}`")).collect();
            format!("{label} {}: {f}", names.join(", "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn schema_finding(v: crate::values::SchemaViolation) -> Finding {
    Finding {
        rule: "values.schema",
        severity: Severity::Error,
        path: v.path,
        message: v.message,
        arithmetic: None,
        hint: "change the value so that `values.schema.json` accepts it".into(),
    }
}

/// Everything generation produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    /// Output files by path.
    pub files: OutputFiles,
    /// Warning-level findings, by preset.
    pub warnings: Vec<(String, Finding)>,
}

/// Generates the chart (under `chart/`), the render of the defaults and of every
/// preset (under `rendered/`) and their capacity reports (under `capacity/`).
pub fn generate_outputs(spec: &Spec) -> Result<Generated, GenerateError> {
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
    let mut findings: Vec<(String, Finding)> = Vec::new();
    let mut names: Vec<Option<&str>> = vec![None];
    names.extend(presets.keys().map(|k| Some(k.as_str())));
    for name in names {
        let label = name.unwrap_or(DEFAULT_PRESET);
        let values = preset_values(spec, name)?;
        let guard_findings = check_guards(spec, &values);
        if let Err(ValuesError::Schema { violations, .. }) =
            check_values_schema(&values, &schema, &format!("preset `{label}`"))
        {
            // The schema's own findings, unless a guard explains the same rule better. A
            // preset's plan bounds come from its own values, so when a guard refuses the
            // preset they only repeat the guard.
            let guard_errors = guard_findings.iter().any(|f| f.severity == Severity::Error);
            for v in violations {
                let explained = guard_findings
                    .iter()
                    .any(|f| v.message.starts_with(&format!("refused by {}:", f.rule)))
                    || (guard_errors && v.message.starts_with("refused by capacity.plan:"));
                if !explained {
                    findings.push((label.to_string(), schema_finding(v)));
                }
            }
            // The schema already says why such values do not fit the types.
            findings.extend(
                guard_findings
                    .into_iter()
                    .filter(|f| f.rule != "values.types")
                    .map(|f| (label.to_string(), f)),
            );
            continue;
        }
        findings.extend(guard_findings.into_iter().map(|f| (label.to_string(), f)));
        let text = render_manifests(spec, &docs, &values, &release).map_err(|source| {
            GenerateError::Render {
                preset: label.to_string(),
                source,
            }
        })?;
        out.insert(format!("rendered/{label}.yaml"), text);
        let report = capacity_report(spec, &values).map_err(|source| GenerateError::Render {
            preset: label.to_string(),
            source,
        })?;
        out.insert(format!("capacity/{label}.txt"), format_table(&report));
    }
    let (errors, warnings): (Vec<_>, Vec<_>) = findings
        .into_iter()
        .partition(|(_, f)| f.severity == Severity::Error);
    if !errors.is_empty() {
        return Err(GenerateError::Guards { findings: errors });
    }
    Ok(Generated {
        files: out,
        warnings,
    })
}
