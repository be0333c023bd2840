//! Stage 1, load spec: `shipshape.yaml` into typed structs.
//!
//! The spec is written in the values model's own types ([`crate::model`]): a
//! workload entry in the spec is that workload's default values. Parsing rejects
//! unknown and duplicate keys and wrong types with the file, line and column, and
//! suggests the closest key for a misspelt one.

use crate::model::{
    ApiValues, ConfigFileValues, DependencyCapacity, ImageValues, JobsValues, LocalObjectReference,
    ManagedEnv, MigrateValues, PoolValues, PostgresAllocation, PostgresPooler, RedisAllocation,
    Scheduling, ServiceAccountValues, StoreClass, StoreRedis, StoreSpec, WorkerValues,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

mod cross_checks;
mod cut;
pub mod limits;
pub mod messages;
pub mod starter;
#[cfg(test)]
pub(crate) mod testing;

use cross_checks::{check_bundled, check_takeover};

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
    /// Feature flags that turn connection allocations on (the gateway's outboxes).
    #[serde(default)]
    pub features: BTreeMap<String, bool>,
    /// How each feature flag reaches the application (an env var, a key of the startup
    /// settings section): required for every flag an allocation depends on.
    #[serde(default)]
    pub feature_switches: BTreeMap<String, crate::model::FeatureSwitch>,
    /// The declared connection budgets every preset must fit.
    #[serde(default)]
    pub dependency_capacity: DependencyCapacity,
    /// The servers the chart can run for evaluation (default values; presets turn them
    /// on). Their limits are the declared budgets.
    #[serde(default)]
    pub bundled: crate::model::BundledValues,
    /// Every piece of per-process state of the application, classified.
    #[serde(default)]
    pub stores: BTreeMap<String, StoreSpec>,
    /// Make unsafe replica findings fatal at boot (rendered as `managedEnv.replicaStrict`).
    #[serde(default)]
    pub replica_strict: bool,
    /// The Redis server shared stores use.
    #[serde(default)]
    pub store_redis: StoreRedis,
    /// The keys the application reads from a Secret, each as the env var of its name.
    #[serde(default)]
    pub secrets: crate::model::SecretsSpec,
    /// Scheduled jobs and pools.
    #[serde(default)]
    pub scheduling: Scheduling,
    /// Names of the environment variables the chart manages.
    #[serde(default)]
    pub managed_env: ManagedEnv,
    /// The PgBouncer in front of PostgreSQL, if any.
    #[serde(default)]
    pub postgres_pooler: PostgresPooler,
    /// The application's startup settings, written into its configuration file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_settings: Option<crate::model::StartupSettings>,
    /// The workloads, grouped by class, each named.
    pub workloads: Workloads,
    /// Taking over a release of a hand-written chart: per workload, the object name
    /// and the selector labels of the old chart, so `helm upgrade` patches its objects
    /// in place (a Deployment's selector cannot change).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub takeover: BTreeMap<String, crate::model::naming::WorkloadTakeover>,
    /// Relaxations of the Pod Security "restricted" profile, per workload, each with
    /// its reason (`security.restricted`).
    #[serde(default)]
    pub security: crate::model::SecuritySpec,
    /// Kubernetes versions `shipshape validate` checks every preset against.
    #[serde(default = "default_kubernetes_versions")]
    pub kubernetes_versions: Vec<String>,
    /// Named values overlays: each becomes `values-<name>.yaml` in the chart and is
    /// checked and rendered into the golden files on its own. The built-in presets
    /// (`scale-out`, `autoscaling`) are used only when named here with `builtin: true`;
    /// the entry's values are merged over the built-in one.
    #[serde(default)]
    pub presets: BTreeMap<String, PresetSpec>,
}

/// The names of the built-in presets (`presets/*.yaml`), which a spec uses by naming
/// them with `builtin: true`.
pub const BUILTIN_PRESETS: &[&str] = &["autoscaling", "scale-out"];

/// A named values overlay of the spec.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PresetSpec {
    /// Use the built-in preset of this name (`scale-out`, `autoscaling`), with this
    /// entry's values merged over it. Built-in presets are used only when a spec says
    /// so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub builtin: bool,
    /// What the preset turns on and why (the chart README prints it).
    #[serde(default)]
    pub description: String,
    /// The values overlay, merged over the chart's defaults as Helm merges `-f` files.
    #[serde(default)]
    pub values: Map<String, Value>,
    /// Set every shared store's backend (`redis` before a second replica).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_store_backend: Option<crate::model::StoreBackend>,
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

    /// The autoscalers the class can have, by values key, in the order the replica
    /// count is taken from: `autoscaling` (an HPA) and, for the api, `keda`.
    pub fn autoscalers(self) -> &'static [&'static str] {
        match self {
            WorkloadClass::Api => &["autoscaling", "keda"],
            WorkloadClass::Pool | WorkloadClass::Worker => &["autoscaling"],
            WorkloadClass::Jobs | WorkloadClass::Migrate => &[],
        }
    }

    /// Whether the class can serve on a port: a Service, a ServiceMonitor and a
    /// PodDisruptionBudget (the api always listens; pool and worker when `port` is set).
    pub fn can_serve(self) -> bool {
        matches!(
            self,
            WorkloadClass::Api | WorkloadClass::Pool | WorkloadClass::Worker
        )
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

/// A workload's PostgreSQL and Redis allocations, by name.
pub type Allocations<'a> = (
    &'a BTreeMap<String, PostgresAllocation>,
    &'a BTreeMap<String, RedisAllocation>,
);

impl<'a> WorkloadRef<'a> {
    /// The workload's allocations as declared: what [`WorkloadRef::allocation_values`]
    /// holds, typed and borrowed.
    pub fn allocations(&self) -> Allocations<'a> {
        match self {
            WorkloadRef::Api(w) => (&w.postgres, &w.redis),
            WorkloadRef::Jobs(w) => (&w.postgres, &w.redis),
            WorkloadRef::Pool(w) => (&w.postgres, &w.redis),
            WorkloadRef::Worker(w) => (&w.postgres, &w.redis),
            WorkloadRef::Migrate(w) => (&w.postgres, &w.redis),
        }
    }

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

    /// What the `postgres` and `redis` keys of [`WorkloadRef::to_values`] hold, without
    /// serializing the rest of the workload (its env, probes, config, ...).
    pub fn allocation_values(&self) -> Value {
        let (postgres, redis) = self.allocations();
        serde_json::json!({"postgres": postgres, "redis": redis})
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

impl Spec {
    /// The names of the shared stores.
    pub fn shared_stores(&self) -> Vec<&str> {
        self.stores
            .iter()
            .filter(|(_, s)| s.class == StoreClass::Shared)
            .map(|(n, _)| n.as_str())
            .collect()
    }
}

impl Workloads {
    /// The workload named `name`, of whichever class.
    pub fn get(&self, name: &str) -> Option<WorkloadRef<'_>> {
        (self.api.get(name).map(WorkloadRef::Api))
            .or_else(|| self.jobs.get(name).map(WorkloadRef::Jobs))
            .or_else(|| self.pool.get(name).map(WorkloadRef::Pool))
            .or_else(|| self.worker.get(name).map(WorkloadRef::Worker))
            .or_else(|| self.migrate.get(name).map(WorkloadRef::Migrate))
    }

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

impl Spec {
    /// How the objects named after `suffix` (a workload, or `config`,
    /// `dependency-capacity`, `secrets`) are named: the takeover template of a
    /// workload that has one, else `<fullname>-<suffix>`.
    pub fn object_name_pattern(&self, suffix: &str) -> crate::model::naming::NamePattern {
        use crate::model::naming::{parse_template, NamePattern};
        match self
            .takeover
            .get(suffix)
            .and_then(|t| t.name.as_deref())
            .and_then(|t| parse_template(t, false).ok())
        {
            Some(parts) => NamePattern::Template(parts),
            None => NamePattern::Suffixed(suffix.to_string()),
        }
    }
}

pub use messages::plain_message;

/// Parses and checks a spec. `file` names the source in error messages.
pub fn load_spec(text: &str, file: &str) -> Result<Spec, SpecError> {
    load_spec_read_by(text, file, cut::read_spec_text)
}

/// [`load_spec`] on a thread whose helper is running: the workloads are read on it
/// while this thread reads the rest (`cut::read_spec_text_beside`).
pub fn load_spec_beside(
    text: &str,
    file: &str,
    tasks: &crate::parallel::Tasks<'_>,
) -> Result<Spec, SpecError> {
    load_spec_read_by(text, file, |text| cut::read_spec_text_beside(text, tasks))
}

/// [`load_spec`] with the reader `read`.
fn load_spec_read_by(
    text: &str,
    file: &str,
    read: impl FnOnce(&str) -> Result<Spec, serde_saphyr::Error>,
) -> Result<Spec, SpecError> {
    limits::check_expanded_size(text, limits::MAX_EXPANDED_BYTES).map_err(|e| {
        SpecError::Parse {
            file: file.to_string(),
            line: e.line,
            column: e.column,
            message: e.message,
            hint: "\n  hint: write the text out where it is used, or make it smaller".into(),
        }
    })?;
    let spec: Spec = read(text).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((0, 0));
        let message = plain_message(&e.without_snippet().to_string());
        let hint = suggestion(&message)
            .map(|s| format!("\n  hint: did you mean `{s}`?"))
            .or_else(|| missing_field_hint(&message))
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

/// What to write for a required field the spec left out.
fn missing_field_hint(message: &str) -> Option<String> {
    let field = message.strip_prefix("missing field `")?.strip_suffix('`')?;
    let what = match field {
        "class" => "classify the store: `durable`, `shared` or `per-process`",
        "repository" => "name the image repository, e.g. `registry.example.com/team/app`",
        "size" => "give the connections per process",
        "server" => "name a server of `dependencyCapacity.redis.servers`",
        _ => {
            return Some(format!(
                "\n  hint: add `{field}`; `shipshape schema` describes it"
            ))
        }
    };
    Some(format!("\n  hint: {what}"))
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
    if !spec.secrets.keys.is_empty() && spec.secrets.existing_secret.is_empty() {
        return Err(invalid(
            "secrets.existingSecret".into(),
            "the spec declares secret keys but no Secret that holds them".into(),
            "name the Secret your cluster holds (`secrets.existingSecret`); a preset may instead set `secrets.existingSecret: \"\"` and `secrets.data` for the chart to create one",
        ));
    }
    if !is_dns_label(&spec.chart.name, 53) {
        return Err(invalid(
            "chart.name".into(),
            format!(
                "`{}` is not a valid chart name",
                spec.chart.name.escape_debug()
            ),
            "use lowercase letters, digits and `-`, starting with a letter, at most 53 characters",
        ));
    }
    if !is_semver(&spec.chart.version) {
        return Err(invalid(
            "chart.version".into(),
            format!(
                "`{}` is not a SemVer 2 version",
                spec.chart.version.escape_debug()
            ),
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
                format!("`{}` is not a valid workload name", name.escape_debug()),
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
    for (name, relaxation) in &spec.security.relax {
        let path = format!("security.relax.{}", name.escape_debug());
        if !seen.contains_key(name.as_str()) {
            let known: Vec<&str> = seen.keys().copied().collect();
            return Err(invalid(
                path,
                format!("`{}` is not a workload of this spec", name.escape_debug()),
                &closest(name, &known)
                    .map(|c| format!("did you mean `{c}`?"))
                    .unwrap_or_else(|| format!("the workloads are: {}", known.join(", "))),
            ));
        }
        if relaxation.reason.trim().is_empty() || relaxation.allow.is_empty() {
            return Err(invalid(
                path,
                "a relaxation of Pod Security \"restricted\" needs a reason and what it allows".into(),
                "write `reason: why the workload needs it` and `allow: [privileged, ...]`, or remove the entry",
            ));
        }
    }
    check_allocations(spec, file)?;
    check_stores_and_pools(spec, file)?;
    check_bundled(spec, file)?;
    check_takeover(spec, file)?;
    for (name, preset) in &spec.presets {
        if !is_dns_label(name, 40) {
            return Err(invalid(
                format!("presets.{name}"),
                format!("`{}` is not a valid preset name", name.escape_debug()),
                "use lowercase letters, digits and `-`, starting with a letter",
            ));
        }
        check_builtin_choice(name, preset.builtin, file)?;
    }
    Ok(())
}

/// A preset that says `builtin: true` names a built-in one; a preset named like a
/// built-in one says whether it is that one.
fn check_builtin_choice(name: &str, builtin: bool, file: &str) -> Result<(), SpecError> {
    let is_builtin_name = BUILTIN_PRESETS.contains(&name);
    if builtin && !is_builtin_name {
        let hint = match closest(name, BUILTIN_PRESETS) {
            Some(c) => format!(
                "did you mean `{c}`? the built-in presets are {}",
                BUILTIN_PRESETS.join(", ")
            ),
            None => format!(
                "the built-in presets are {}; for a preset of your own, remove `builtin`",
                BUILTIN_PRESETS.join(", ")
            ),
        };
        return Err(SpecError::Invalid {
            file: file.to_string(),
            path: format!("presets.{name}.builtin"),
            message: format!("there is no built-in preset `{name}`"),
            hint,
        });
    }
    if !builtin && is_builtin_name {
        return Err(SpecError::Invalid {
            file: file.to_string(),
            path: format!("presets.{name}"),
            message: format!(
                "`{name}` is the name of a built-in preset, and this entry does not say `builtin: true`"
            ),
            hint: format!(
                "add `builtin: true` to use the built-in `{name}` with these values merged over it, or give your own preset another name"
            ),
        });
    }
    Ok(())
}

/// A name that becomes a values key and a template path segment.
fn is_identifier(s: &str) -> bool {
    s.len() <= 63
        && s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A name the spec declares must be an identifier: it becomes a values key and a
/// template path segment.
fn check_identifier(file: &str, path: String, name: &str, what: &str) -> Result<(), SpecError> {
    if is_identifier(name) {
        return Ok(());
    }
    Err(SpecError::Invalid {
        file: file.to_string(),
        path,
        message: format!("`{name}` is not a valid {what} name"),
        hint: "use letters, digits, `_` and `-`, starting with a letter".into(),
    })
}

/// Connection allocations name known features, workloads and Redis servers.
fn check_allocations(spec: &Spec, file: &str) -> Result<(), SpecError> {
    let invalid = |path: String, message: String, hint: String| SpecError::Invalid {
        file: file.to_string(),
        path,
        message,
        hint,
    };
    let workload_names: Vec<&str> = spec.workloads.all().iter().map(|(n, _)| *n).collect();
    let features: Vec<&str> = spec.features.keys().map(String::as_str).collect();
    let servers: Vec<&str> = spec
        .dependency_capacity
        .redis
        .servers
        .keys()
        .map(String::as_str)
        .collect();
    let suggest = |word: &str, known: &[&str]| {
        closest(word, known)
            .map(|c| format!("did you mean `{c}`?"))
            .unwrap_or_else(|| format!("known: {}", known.join(", ")))
    };
    for name in spec.features.keys() {
        check_identifier(file, format!("features.{name}"), name, "feature")?;
    }
    for name in spec.dependency_capacity.postgres.reservations.keys() {
        let path = format!("dependencyCapacity.postgres.reservations.{name}");
        check_identifier(file, path, name, "reservation")?;
    }
    for name in &servers {
        let path = format!("dependencyCapacity.redis.servers.{name}");
        check_identifier(file, path, name, "Redis server")?;
    }
    for (name, workload) in spec.workloads.all() {
        let (postgres, redis) = workload.allocations();
        let base = format!("workloads.{}.{name}", workload.class().name());
        for (alloc, a) in postgres {
            let path = format!("{base}.postgres.{alloc}");
            check_identifier(file, path.clone(), alloc, "allocation")?;
            let feature = a.feature.as_str();
            if !feature.is_empty() && !spec.features.contains_key(feature) {
                return Err(invalid(
                    format!("{path}.feature"),
                    format!("unknown feature `{feature}`"),
                    format!(
                        "declare it under `features`, or {}",
                        suggest(feature, &features)
                    ),
                ));
            }
            if let Some(other) = a.size_without.as_ref().map(|s| s.workload.as_str()) {
                // `all` lists the workloads sorted by name.
                if workload_names.binary_search(&other).is_err() {
                    return Err(invalid(
                        format!("{path}.sizeWithout.workload"),
                        format!("unknown workload `{other}`"),
                        suggest(other, &workload_names),
                    ));
                }
            }
            let part_of = a.part_of.as_str();
            if !part_of.is_empty() {
                let parent = postgres.get(part_of);
                if !parent.is_some_and(|p| p.part_of.is_empty()) {
                    return Err(invalid(format!("{path}.partOf"), format!("`{part_of}` is not another allocation of `{name}`"), "name an allocation of the same workload that is not itself part of another".into()));
                }
                let parent_size = parent.map_or(0, |p| p.size);
                if a.size > parent_size {
                    let size = a.size;
                    return Err(invalid(
                        format!("{path}.size"),
                        format!("{size} connections cannot be part of `{part_of}`'s {parent_size}"),
                        format!("make `{part_of}` at least {size}"),
                    ));
                }
            }
        }
        for (alloc, a) in redis {
            let path = format!("{base}.redis.{alloc}");
            check_identifier(file, path.clone(), alloc, "allocation")?;
            let server = a.server.as_str();
            if !servers.contains(&server) {
                return Err(invalid(
                    format!("{path}.server"),
                    format!("unknown Redis server `{server}`"),
                    format!(
                        "declare it under `dependencyCapacity.redis.servers`, or {}",
                        suggest(server, &servers)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Stores say what their class needs; every pool workload has a pool to run.
fn check_stores_and_pools(spec: &Spec, file: &str) -> Result<(), SpecError> {
    let invalid = |path: String, message: String, hint: String| SpecError::Invalid {
        file: file.to_string(),
        path,
        message,
        hint,
    };
    for (name, store) in &spec.stores {
        let path = format!("stores.{name}");
        check_identifier(file, path.clone(), name, "store")?;
        match store.class {
            StoreClass::Shared if store.env.is_empty() => {
                return Err(invalid(
                    format!("{path}.env"),
                    format!("the shared store `{name}` names no variable that selects its backend"),
                    "set `env` to the variable the application reads (`memory` or `redis`)".into(),
                ))
            }
            StoreClass::PerProcess if store.reason.trim().is_empty() => {
                return Err(invalid(
                    format!("{path}.reason"),
                    format!("the per-process store `{name}` gives no reason"),
                    "say why every replica may keep its own copy, or classify it `shared`".into(),
                ))
            }
            _ => {}
        }
    }
    let pools: Vec<&str> = spec.scheduling.pools.keys().map(String::as_str).collect();
    for name in spec.scheduling.pools.keys() {
        check_identifier(file, format!("scheduling.pools.{name}"), name, "pool")?;
    }
    for name in spec.workloads.pool.keys() {
        if !spec.scheduling.pools.contains_key(name) {
            let hint = closest(name, &pools)
                .map(|c| {
                    format!("did you mean `{c}`? a pool workload runs the pool of its own name")
                })
                .unwrap_or_else(|| {
                    format!("declare `scheduling.pools.{name}` with the jobs it runs")
                });
            return Err(invalid(
                format!("workloads.pool.{name}"),
                format!("no pool `{name}` in `scheduling.pools`"),
                hint,
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

#[cfg(test)]
mod tests {
    use super::testing::{example, example_path};

    /// An example's spec text with `from` replaced by `to` (once), loaded.
    fn changed(name: &str, from: &str, to: &str) -> Result<super::Spec, super::SpecError> {
        let path = example_path(name);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches(from).count(), 1, "{from}");
        super::load_spec(&text.replacen(from, to, 1), &path)
    }

    /// The refusal of a spec that breaks a rule of its own: its values path, message
    /// and hint.
    fn refusal(result: Result<super::Spec, super::SpecError>) -> (String, String, String) {
        match result {
            Err(super::SpecError::Invalid {
                path,
                message,
                hint,
                ..
            }) => (path, message, hint),
            Err(other) => panic!("not a rule's refusal: {other}"),
            Ok(_) => panic!("the spec was accepted"),
        }
    }

    /// An allocation names a declared feature, a declared workload for `sizeWithout`,
    /// another allocation of its own workload for `partOf` (at most that one's size):
    /// each refusal names the allocation's path, and the closest name when one is.
    #[test]
    fn allocations_name_what_the_spec_declares() {
        let telemetry = "feature: durableTelemetry, setting: telemetry_db_pool_size";
        let (path, message, hint) = refusal(changed(
            "llm-gateway",
            telemetry,
            "feature: durableTelemetri, setting: telemetry_db_pool_size",
        ));
        assert_eq!(path, "workloads.api.api.postgres.telemetry.feature");
        assert_eq!(message, "unknown feature `durableTelemetri`");
        assert!(hint.contains("did you mean `durableTelemetry`?"), "{hint}");

        let hikari = "sizeWithout: {workload: jobs, size: 15}";
        let (path, message, hint) = refusal(changed(
            "agent-platform",
            hikari,
            "sizeWithout: {workload: jobz, size: 15}",
        ));
        assert_eq!(
            path,
            "workloads.api.api.postgres.hikari.sizeWithout.workload"
        );
        assert_eq!(message, "unknown workload `jobz`");
        assert_eq!(hint, "did you mean `jobs`?");
        // The first and the last workload by name are found too.
        let names: Vec<String> = example("agent-platform")
            .workloads
            .all()
            .iter()
            .map(|(n, _)| n.to_string())
            .collect();
        for other in [names.first().unwrap(), names.last().unwrap()] {
            let to = format!("sizeWithout: {{workload: {other}, size: 15}}");
            assert!(changed("agent-platform", hikari, &to).is_ok(), "{other}");
        }

        let part = "feature: durableTelemetry, partOf: telemetry,";
        let (path, message, _) = refusal(changed(
            "llm-gateway",
            part,
            "feature: durableTelemetry, partOf: telemetry_worker_x,",
        ));
        assert_eq!(
            path,
            "workloads.api.api.postgres.telemetry_settlement.partOf"
        );
        assert_eq!(
            message,
            "`telemetry_worker_x` is not another allocation of `api`"
        );
        // Part of an allocation that is itself part of another.
        let (path, _, _) = refusal(changed(
            "llm-gateway",
            "telemetry: {size: 5, env: DELTALLM_TELEMETRY_DB_POOL_SIZE, feature: durableTelemetry,",
            "telemetry: {size: 5, env: DELTALLM_TELEMETRY_DB_POOL_SIZE, feature: durableTelemetry, partOf: control,",
        ));
        assert_eq!(
            path,
            "workloads.api.api.postgres.telemetry_settlement.partOf"
        );

        // A part as large as its whole is allowed; one connection more is not.
        let settlement = "telemetry_settlement: {size: 1,";
        assert!(changed("llm-gateway", settlement, "telemetry_settlement: {size: 5,").is_ok());
        let (path, message, hint) = refusal(changed(
            "llm-gateway",
            settlement,
            "telemetry_settlement: {size: 6,",
        ));
        assert_eq!(path, "workloads.api.api.postgres.telemetry_settlement.size");
        assert_eq!(message, "6 connections cannot be part of `telemetry`'s 5");
        assert_eq!(hint, "make `telemetry` at least 6");
    }

    /// `Workloads::get` finds every workload `all` lists, of its class, and no other.
    #[test]
    fn get_finds_each_workload_by_its_name() {
        for name in ["agent-platform", "llm-gateway", "web-shop"] {
            let spec = example(name);
            let all = spec.workloads.all();
            assert!(all.len() >= 2, "{name}");
            for (workload, w) in &all {
                let found = spec.workloads.get(workload).expect(workload);
                assert_eq!(found.class(), w.class(), "{name}.{workload}");
                assert_eq!(found.to_values(), w.to_values(), "{name}.{workload}");
            }
            for missing in ["", "bundled-postgres", "API", "ap"] {
                assert!(spec.workloads.get(missing).is_none(), "{name}: {missing}");
            }
        }
    }

    /// `allocation_values` holds what `to_values` holds under `postgres` and `redis`.
    #[test]
    fn allocation_values_are_the_allocations_of_the_declared_values() {
        let mut allocations = 0;
        for name in ["agent-platform", "llm-gateway", "web-shop"] {
            let spec = example(name);
            for (workload, w) in spec.workloads.all() {
                let (declared, only) = (w.to_values(), w.allocation_values());
                assert_eq!(only.as_object().unwrap().len(), 2, "{name}.{workload}");
                for dependency in ["postgres", "redis"] {
                    assert_eq!(only[dependency], declared[dependency], "{name}.{workload}");
                    allocations += only[dependency].as_object().unwrap().len();
                }
            }
        }
        assert!(allocations > 10, "{allocations}");
    }
}
