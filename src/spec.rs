//! Stage 1, load spec: `shipshape.yaml` into typed structs.
//!
//! The spec is written in the values model's own types ([`crate::model`]): a
//! workload entry in the spec is that workload's default values. Parsing rejects
//! unknown and duplicate keys and wrong types with the file, line and column, and
//! suggests the closest key for a misspelt one.

use crate::model::{
    ApiValues, ConfigFileValues, ImageValues, JobsValues, LocalObjectReference, MigrateValues,
    PoolValues, ServiceAccountValues, WorkerValues,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The whole description of a platform.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Spec {
    /// Chart metadata (`Chart.yaml`).
    pub chart: ChartMeta,
    /// The one container image every workload runs.
    pub image: ImageValues,
    /// Image pull secrets of every pod.
    #[serde(default)]
    pub image_pull_secrets: Vec<LocalObjectReference>,
    /// The ServiceAccount the pods run as.
    #[serde(default)]
    pub service_account: ServiceAccountValues,
    /// Where the application's configuration file is mounted.
    #[serde(default)]
    pub config_file: ConfigFileValues,
    /// The application's configuration, rendered into a ConfigMap whose checksum rolls
    /// the pods that read it.
    #[serde(default)]
    pub config: Map<String, Value>,
    /// The workloads, grouped by class, each named.
    pub workloads: Workloads,
    /// Kubernetes versions `shipshape validate` checks every preset against.
    #[serde(default = "default_kubernetes_versions")]
    pub kubernetes_versions: Vec<String>,
    /// Named values overlays: each becomes `values-<name>.yaml` in the chart and is
    /// checked and rendered into the golden files on its own. A preset named like a
    /// built-in one (`scale-out`, `autoscaling`) is merged over it.
    #[serde(default)]
    pub presets: BTreeMap<String, PresetSpec>,
}

/// A named values overlay of the spec.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PresetSpec {
    /// What the preset turns on and why (the chart README prints it).
    #[serde(default)]
    pub description: String,
    /// The values overlay, merged over the chart's defaults as Helm merges `-f` files.
    #[serde(default)]
    pub values: Map<String, Value>,
}

fn default_kubernetes_versions() -> Vec<String> {
    vec!["1.28.0".into(), "1.31.0".into()]
}

/// `Chart.yaml` fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChartMeta {
    /// Chart name (a DNS label).
    #[schemars(regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"))]
    pub name: String,
    /// Chart version (SemVer 2).
    pub version: String,
    /// Version of the application; the default image tag.
    pub app_version: String,
    /// One sentence on what the chart deploys.
    pub description: String,
    /// The project's home page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
}

/// Workloads by class. Names are unique across classes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Workloads {
    /// Workloads of class `api`.
    pub api: BTreeMap<String, ApiValues>,
    /// Workloads of class `jobs`.
    pub jobs: BTreeMap<String, JobsValues>,
    /// Workloads of class `pool`.
    pub pool: BTreeMap<String, PoolValues>,
    /// Workloads of class `worker`.
    pub worker: BTreeMap<String, WorkerValues>,
    /// Workloads of class `migrate`.
    pub migrate: BTreeMap<String, MigrateValues>,
}

/// The five workload classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WorkloadClass {
    Api,
    Jobs,
    Pool,
    Worker,
    Migrate,
}

impl WorkloadClass {
    /// The class's name in the spec.
    pub fn name(self) -> &'static str {
        match self {
            WorkloadClass::Api => "api",
            WorkloadClass::Jobs => "jobs",
            WorkloadClass::Pool => "pool",
            WorkloadClass::Worker => "worker",
            WorkloadClass::Migrate => "migrate",
        }
    }
}

/// A reference to one workload of the spec, whatever its class.
#[derive(Clone, Copy, Debug)]
pub enum WorkloadRef<'a> {
    Api(&'a ApiValues),
    Jobs(&'a JobsValues),
    Pool(&'a PoolValues),
    Worker(&'a WorkerValues),
    Migrate(&'a MigrateValues),
}

impl WorkloadRef<'_> {
    /// The workload's class.
    pub fn class(&self) -> WorkloadClass {
        match self {
            WorkloadRef::Api(_) => WorkloadClass::Api,
            WorkloadRef::Jobs(_) => WorkloadClass::Jobs,
            WorkloadRef::Pool(_) => WorkloadClass::Pool,
            WorkloadRef::Worker(_) => WorkloadClass::Worker,
            WorkloadRef::Migrate(_) => WorkloadClass::Migrate,
        }
    }

    /// The workload's default values as JSON.
    pub fn to_values(&self) -> Value {
        let v = match self {
            WorkloadRef::Api(w) => serde_json::to_value(w),
            WorkloadRef::Jobs(w) => serde_json::to_value(w),
            WorkloadRef::Pool(w) => serde_json::to_value(w),
            WorkloadRef::Worker(w) => serde_json::to_value(w),
            WorkloadRef::Migrate(w) => serde_json::to_value(w),
        };
        v.unwrap_or(Value::Null)
    }
}

impl Workloads {
    /// Every workload as `(name, workload)`, sorted by name.
    pub fn all(&self) -> Vec<(&str, WorkloadRef<'_>)> {
        let mut all: Vec<(&str, WorkloadRef<'_>)> = Vec::new();
        all.extend(
            self.api
                .iter()
                .map(|(n, w)| (n.as_str(), WorkloadRef::Api(w))),
        );
        all.extend(
            self.jobs
                .iter()
                .map(|(n, w)| (n.as_str(), WorkloadRef::Jobs(w))),
        );
        all.extend(
            self.pool
                .iter()
                .map(|(n, w)| (n.as_str(), WorkloadRef::Pool(w))),
        );
        all.extend(
            self.worker
                .iter()
                .map(|(n, w)| (n.as_str(), WorkloadRef::Worker(w))),
        );
        all.extend(
            self.migrate
                .iter()
                .map(|(n, w)| (n.as_str(), WorkloadRef::Migrate(w))),
        );
        all.sort_by(|a, b| a.0.cmp(b.0));
        all
    }
}

/// A spec that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// The YAML does not parse into the spec's types.
    #[error("{file}:{line}:{column}: {message}{hint}")]
    Parse {
        file: String,
        line: u64,
        column: u64,
        message: String,
        /// Empty, or a line starting with a newline ("did you mean ...").
        hint: String,
    },
    /// The spec parses but breaks a rule of its own.
    #[error("{file}: `{path}`: {message}\n  hint: {hint}")]
    Invalid {
        file: String,
        path: String,
        message: String,
        hint: String,
    },
}

/// Parses and checks a spec. `file` names the source in error messages.
pub fn load_spec(text: &str, file: &str) -> Result<Spec, SpecError> {
    let options = serde_saphyr::Options::default();
    let spec: Spec = serde_saphyr::from_str_with_options(text, options).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((0, 0));
        let message = plain_message(&e.without_snippet().to_string());
        let hint = suggestion(&message)
            .map(|s| format!("\n  hint: did you mean `{s}`?"))
            .unwrap_or_default();
        SpecError::Parse {
            file: file.to_string(),
            line,
            column,
            message,
            hint,
        }
    })?;
    check_spec(&spec, file)?;
    Ok(spec)
}

/// serde-saphyr prints `error: line L column C: message at line L, column C`; keep
/// the message, in the project's own words where serde's are terse.
pub fn plain_message(rendered: &str) -> String {
    let first = rendered.lines().next().unwrap_or(rendered);
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let message = match first.split_once(": ") {
        Some((head, rest)) if head.starts_with("line ") => rest,
        _ => first,
    };
    let message = match message.rfind(" at line ") {
        Some(i) => &message[..i],
        None => message,
    };
    if let Some(rest) = message.strip_prefix("duplicate mapping key: ") {
        let key = rest.split(',').next().unwrap_or(rest);
        return format!("duplicate key `{key}`: a key may appear once in a mapping");
    }
    match message {
        "invalid u32" | "invalid u16" | "invalid u64" => {
            "expected a whole number, 0 or more".to_string()
        }
        "invalid i64" | "invalid i32" => "expected a whole number".to_string(),
        "invalid boolean" => "expected `true` or `false`".to_string(),
        other => other.to_string(),
    }
}

/// For "unknown field `x`, expected one of `a`, `b`", the closest expected name.
fn suggestion(message: &str) -> Option<String> {
    let rest = message
        .strip_prefix("unknown field `")
        .or_else(|| message.strip_prefix("unknown variant `"))?;
    let (unknown, expected) = rest.split_once('`')?;
    let candidates: Vec<&str> = expected
        .split(|c: char| c == '`' || c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty() && *s != "expected" && *s != "one" && *s != "of")
        .collect();
    closest(unknown, &candidates)
}

/// The candidate most similar to `word`, if any is reasonably close.
pub fn closest(word: &str, candidates: &[&str]) -> Option<String> {
    candidates
        .iter()
        .map(|c| (strsim::jaro_winkler(word, c), *c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c.to_string())
}

fn is_dns_label(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.starts_with(|c: char| c.is_ascii_lowercase())
        && !s.ends_with('-')
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

fn check_spec(spec: &Spec, file: &str) -> Result<(), SpecError> {
    let invalid = |path: String, message: String, hint: &str| SpecError::Invalid {
        file: file.to_string(),
        path,
        message,
        hint: hint.to_string(),
    };
    if !is_dns_label(&spec.chart.name, 53) {
        return Err(invalid(
            "chart.name".into(),
            format!("`{}` is not a valid chart name", spec.chart.name),
            "use lowercase letters, digits and `-`, starting with a letter, at most 53 characters",
        ));
    }
    if !is_semver(&spec.chart.version) {
        return Err(invalid(
            "chart.version".into(),
            format!("`{}` is not a SemVer 2 version", spec.chart.version),
            "write MAJOR.MINOR.PATCH, e.g. `0.1.0`",
        ));
    }
    let mut seen: BTreeMap<&str, WorkloadClass> = BTreeMap::new();
    let workloads = spec.workloads.all();
    if workloads.is_empty() {
        return Err(invalid(
            "workloads".into(),
            "the spec declares no workload".into(),
            "add one, e.g. `workloads: {api: {api: {}}}`",
        ));
    }
    for (name, workload) in &workloads {
        let class = workload.class();
        let path = format!("workloads.{}.{name}", class.name());
        if !is_dns_label(name, 30) {
            return Err(invalid(
                path,
                format!("`{name}` is not a valid workload name"),
                "use lowercase letters, digits and `-`, starting with a letter, at most 30 characters",
            ));
        }
        if let Some(other) = seen.insert(name, class) {
            return Err(invalid(
                path,
                format!(
                    "`{name}` is already the name of a workload of class `{}`",
                    other.name()
                ),
                "workload names are unique across classes: rename one",
            ));
        }
    }
    for name in spec.presets.keys() {
        if !is_dns_label(name, 40) {
            return Err(invalid(
                format!("presets.{name}"),
                format!("`{name}` is not a valid preset name"),
                "use lowercase letters, digits and `-`, starting with a letter",
            ));
        }
    }
    Ok(())
}

fn is_semver(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars().all(|c| c.is_ascii_digit())
                && (p.len() == 1 || !p.starts_with('0'))
        })
        && v[core.len()..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.'))
}
