//! Stage 2, resolve values: chart defaults from the spec, a preset overlay, user
//! files and `--set` pairs, merged with Helm's rules, then checked against the
//! generated `values.schema.json` exactly as Helm checks them.
//!
//! Helm reads values files into `float64` numbers and `--set` integers into `int64`;
//! the loaders here do the same, so expressions evaluate as they do under Helm.

mod coalesce;
pub mod frozen_schema;
pub mod locate;
pub mod presets;
pub mod schema_program;
pub mod schema_verdict;
pub mod whole_numbers;

use coalesce::user_values;
pub use coalesce::{
    coalesce_with_defaults, merge_user_values, parts_at, resolve_values_sharing_defaults,
    SharingDefaults,
};
pub use whole_numbers::{whole_u64, WholeNumbers};

use crate::spec::Spec;
use serde_json::{Map, Number, Value};

/// Values that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ValuesError {
    /// A values file does not parse.
    #[error("{file}:{line}:{column}: {message}")]
    Parse {
        file: String,
        line: u64,
        column: u64,
        message: String,
    },
    /// A values file is not a mapping at the top.
    #[error("{file}: values must be a mapping of keys at the top level")]
    NotAMap { file: String },
    /// A `--set` argument is malformed.
    #[error(
        "--set `{arg}`: {message}\n  hint: write `path.to.key=value`, several separated by `,`"
    )]
    BadSet { arg: String, message: String },
    /// A preset name the spec does not define.
    #[error("unknown preset `{name}`{}\n  hint: the presets are: {}", did_you_mean(name, known), known.join(", "))]
    UnknownPreset { name: String, known: Vec<String> },
    /// The merged values break `values.schema.json`.
    #[error(
        "{source_name}: values do not match the chart's schema:\n{}",
        format_violations(violations)
    )]
    Schema {
        source_name: String,
        violations: Vec<SchemaViolation>,
    },
}

/// One place where values break the schema.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SchemaViolation {
    /// The values path, dotted (`workloads.api.replicaCount`).
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// Where the path is written (`values.yaml:3:5`), when a values file sets it.
    pub at: Option<String>,
    /// How to fix it, when there is more to say ("did you mean", quoting).
    pub hint: Option<String>,
}

fn did_you_mean(name: &str, known: &[String]) -> String {
    let candidates: Vec<&str> = known.iter().map(String::as_str).collect();
    crate::spec::closest(name, &candidates)
        .map(|c| format!(": did you mean `{c}`?"))
        .unwrap_or_default()
}

fn format_violations(violations: &[SchemaViolation]) -> String {
    violations
        .iter()
        .map(|v| {
            let path = if v.path.is_empty() {
                "the top level of the values".to_string()
            } else {
                format!("`{}`", v.path.escape_debug())
            };
            let at =
                v.at.as_deref()
                    .map(|a| format!("{a}: "))
                    .unwrap_or_default();
            let hint = v
                .hint
                .as_deref()
                .map(|h| format!("\n    hint: {h}"))
                .unwrap_or_default();
            format!("  - {at}{path}: {}{hint}", v.message)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Adds to each violation where a values file writes its path (the last file that
/// does, as later files win; not when `--set` sets it), and a hint to quote an
/// unquoted YAML 1.1 look-alike (`no`, `on`, `0755`) where a string is expected.
pub fn place_violations(
    violations: &mut [SchemaViolation],
    files: &[(String, String)],
    set: &Map<String, Value>,
) {
    for v in violations.iter_mut() {
        let segments: Vec<String> = v.path.split('.').map(str::to_string).collect();
        if v.path.is_empty() || value_at(set, &segments).is_some() {
            continue;
        }
        let Some((name, place)) = files
            .iter()
            .rev()
            .find_map(|(name, text)| locate::locate(text, &segments).map(|p| (name, p)))
        else {
            continue;
        };
        v.at = Some(format!("{name}:{}:{}", place.line, place.column));
        if let Some(raw) = place.plain {
            if v.message.contains("is not of type \"string\"") && v.hint.is_none() {
                v.hint = Some(format!(
                    "unquoted, `{}` is not a string: YAML 1.1 (as Helm reads values) makes it a boolean or number; write it quoted, \"{}\"",
                    raw.escape_debug(),
                    raw.escape_debug()
                ));
            }
        }
    }
}

fn value_at<'v>(map: &'v Map<String, Value>, path: &[String]) -> Option<&'v Value> {
    let (first, rest) = path.split_first()?;
    let value = map.get(first)?;
    match (rest.is_empty(), value) {
        (true, v) => Some(v),
        (false, Value::Object(m)) => value_at(m, rest),
        (false, _) => None,
    }
}

/// The chart's default values (what `values.yaml` holds), as Helm reads them back:
/// every number a float.
pub fn default_values(spec: &Spec) -> Value {
    let mut workloads = Map::new();
    for (name, workload) in spec.workloads.all() {
        workloads.insert(name.to_string(), workload.to_values());
    }
    let mut root = Map::new();
    root.insert(
        crate::values::presets::PLAN_KEY.into(),
        Value::String(crate::values::presets::DEFAULT_PRESET.into()),
    );
    root.insert("nameOverride".into(), Value::String(String::new()));
    root.insert("fullnameOverride".into(), Value::String(String::new()));
    root.insert("image".into(), to_json(&spec.image));
    root.insert("imagePullSecrets".into(), to_json(&spec.image_pull_secrets));
    root.insert("serviceAccount".into(), to_json(&spec.service_account));
    root.insert("configFile".into(), to_json(&spec.config_file));
    root.insert("config".into(), Value::Object(spec.config.clone()));
    root.insert("features".into(), to_json(&spec.features));
    root.insert("featureSwitches".into(), to_json(&spec.feature_switches));
    root.insert("bundled".into(), to_json(&bundled_defaults(spec)));
    root.insert("replicaStrict".into(), Value::Bool(spec.replica_strict));
    let stores: Map<String, Value> = spec
        .stores
        .iter()
        .filter(|(_, s)| s.class == crate::model::StoreClass::Shared)
        .map(|(name, s)| {
            let store = crate::model::SharedStoreValues {
                backend: crate::model::StoreBackend::Memory,
                env: s.env.clone(),
            };
            (name.clone(), to_json(&store))
        })
        .collect();
    root.insert("stores".into(), Value::Object(stores));
    root.insert("storeRedis".into(), to_json(&spec.store_redis));
    let secrets = crate::model::SecretsValues {
        existing_secret: spec.secrets.existing_secret.clone(),
        data: Default::default(),
    };
    root.insert("secrets".into(), to_json(&secrets));
    root.insert("scheduling".into(), to_json(&spec.scheduling));
    root.insert("managedEnv".into(), to_json(&spec.managed_env));
    root.insert("postgresPooler".into(), to_json(&spec.postgres_pooler));
    if let Some(settings) = &spec.startup_settings {
        root.insert("startupSettings".into(), to_json(settings));
    }
    root.insert(
        "dependencyCapacity".into(),
        to_json(&spec.dependency_capacity),
    );
    root.insert("workloads".into(), Value::Object(workloads));
    root.insert("extraObjects".into(), Value::Array(Vec::new()));
    numbers_as_floats(Value::Object(root))
}

/// The entries of an object value, none for any other value (the chart's defaults are
/// always an object).
pub fn entries_of(values: &Value) -> &Map<String, Value> {
    static NONE: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
    values.as_object().unwrap_or(&NONE)
}

/// The parts of `values` at `paths`, each kept whole, and the maps on the way to them
/// with only those keys: a smaller tree where every path that starts with one of
/// `paths` looks up what it looks up in `values`, before and after an overlay is
/// coalesced over it ([`coalesce_with_defaults`] reads a key's default only where the
/// key is). Plans and the capacity fit resolve presets over such a projection of the
/// chart's defaults instead of copying every workload's values for each.
pub fn project_values(
    values: &Map<String, Value>,
    paths: &[crate::expr::ValuePath],
) -> Map<String, Value> {
    /// A node of the paths: `None` keeps the whole value, `Some` only those keys.
    #[derive(Default)]
    struct Keep<'p>(Option<std::collections::BTreeMap<&'p str, Keep<'p>>>);
    fn add<'p>(
        level: &mut std::collections::BTreeMap<&'p str, Keep<'p>>,
        path: &'p [crate::expr::SmolStr],
    ) {
        let Some((first, rest)) = path.split_first() else {
            return;
        };
        if rest.is_empty() {
            level.insert(first.as_str(), Keep(None));
            return;
        }
        let node = level
            .entry(first.as_str())
            .or_insert_with(|| Keep(Some(Default::default())));
        // A node kept whole stays whole.
        if let Some(children) = &mut node.0 {
            add(children, rest);
        }
    }
    let mut root = std::collections::BTreeMap::new();
    for path in paths {
        if path.0.is_empty() {
            return values.clone();
        }
        add(&mut root, &path.0);
    }
    fn keep(
        values: &Map<String, Value>,
        keys: &std::collections::BTreeMap<&str, Keep>,
    ) -> Map<String, Value> {
        let mut out = Map::new();
        for (key, node) in keys {
            let Some(value) = values.get(*key) else {
                continue;
            };
            let kept = match (&node.0, value) {
                (Some(children), Value::Object(map)) => Value::Object(keep(map, children)),
                _ => value.clone(),
            };
            out.insert((*key).to_string(), kept);
        }
        out
    }
    keep(values, &root)
}

/// [`default_values`] as the map it is.
pub fn default_values_map(spec: &Spec) -> Map<String, Value> {
    match default_values(spec) {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The bundled servers' defaults: the spec's, with an entry (off) for every declared
/// Redis server whose name can name objects.
pub fn bundled_defaults(spec: &Spec) -> crate::model::BundledValues {
    let mut bundled = spec.bundled.clone();
    for server in bundled_redis_servers(spec) {
        bundled.redis.entry(server.to_string()).or_default();
    }
    bundled
}

/// The keys of [`bundled_defaults`]'s `redis`, sorted, without copying the defaults.
pub fn bundled_redis_servers(spec: &Spec) -> std::collections::BTreeSet<&str> {
    let declared = spec.dependency_capacity.redis.servers.keys();
    let named = declared.filter(|s| crate::model::bundleable_server_name(s));
    let own = spec.bundled.redis.keys();
    own.chain(named).map(String::as_str).collect()
}

fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Converts every number to a float, as Helm's YAML reading does.
pub fn numbers_as_floats(mut v: Value) -> Value {
    set_numbers_as_floats(&mut v);
    v
}

/// [`numbers_as_floats`] in place: only the numbers change, no map is rebuilt.
fn set_numbers_as_floats(v: &mut Value) {
    match v {
        Value::Number(n) => {
            *v = n
                .as_f64()
                .and_then(Number::from_f64)
                .map(Value::Number)
                .unwrap_or(Value::Null);
        }
        Value::Array(items) => items.iter_mut().for_each(set_numbers_as_floats),
        Value::Object(map) => map.values_mut().for_each(set_numbers_as_floats),
        _ => {}
    }
}

/// Parses a values file as Helm does (YAML 1.1 scalars: `yes`/`no`/`on`/`off` are
/// booleans, `0755` is octal; numbers are floats).
pub fn parse_values_yaml(text: &str, file: &str) -> Result<Map<String, Value>, ValuesError> {
    use crate::spec::limits::{check_expanded_size, MAX_EXPANDED_BYTES};
    check_expanded_size(text, MAX_EXPANDED_BYTES).map_err(|e| ValuesError::Parse {
        file: file.to_string(),
        line: e.line,
        column: e.column,
        message: e.message,
    })?;
    let mut options = serde_saphyr::Options::default();
    options.legacy_octal_numbers = true;
    let parsed: Value = serde_saphyr::from_str_with_options(text, options).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((0, 0));
        let message = crate::spec::plain_message(&e.without_snippet().to_string());
        ValuesError::Parse {
            file: file.to_string(),
            line,
            column,
            message,
        }
    })?;
    match numbers_as_floats(parsed) {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        _ => Err(ValuesError::NotAMap {
            file: file.to_string(),
        }),
    }
}

/// Parses `--set` arguments: `a.b=1,c=x` (dotted keys, `,` between pairs, `{x,y}`
/// for a list of strings); scalars typed as Helm types them: `true`/`false`,
/// `null`, integers without a leading zero as integers, everything else a string.
pub fn parse_set_args(args: &[String]) -> Result<Map<String, Value>, ValuesError> {
    let mut out = Map::new();
    for arg in args {
        for pair in split_top_level(arg) {
            let (path, raw) = pair.split_once('=').ok_or_else(|| ValuesError::BadSet {
                arg: shorten(arg),
                message: format!("`{}` has no `=`", shorten(&pair)),
            })?;
            let keys: Vec<&str> = path.split('.').collect();
            if keys.iter().any(|k| k.is_empty()) {
                return Err(ValuesError::BadSet {
                    arg: shorten(arg),
                    message: format!("`{}` has an empty key", shorten(path)),
                });
            }
            if keys.len() > MAX_SET_DEPTH {
                return Err(ValuesError::BadSet {
                    arg: shorten(arg),
                    message: format!(
                        "the key has {} parts; values nest at most {MAX_SET_DEPTH} levels deep",
                        keys.len()
                    ),
                });
            }
            let value = if let Some(inner) = raw.strip_prefix('{').and_then(|r| r.strip_suffix('}'))
            {
                Value::Array(
                    inner
                        .split(',')
                        .filter(|s| !s.is_empty())
                        .map(typed_set_scalar)
                        .collect(),
                )
            } else {
                typed_set_scalar(raw)
            };
            let mut overlay = value;
            for key in keys.iter().rev() {
                let mut m = Map::new();
                m.insert((*key).to_string(), overlay);
                overlay = Value::Object(m);
            }
            if let Value::Object(m) = overlay {
                merge_user_values(&mut out, m);
            }
        }
    }
    Ok(out)
}

/// How deep a `--set` key may nest: the depth values files may nest too (the YAML
/// reader's budget), far beyond any chart's values, and shallow enough that the
/// recursive merges and the schema check stay within the stack.
pub const MAX_SET_DEPTH: usize = 64;

/// An argument as messages quote it: at most 80 characters.
fn shorten(s: &str) -> String {
    let escaped = s.escape_debug().to_string();
    let s = escaped.as_str();
    match s.char_indices().nth(80) {
        Some((cut, _)) => format!("{}… ({} bytes)", &s[..cut], s.len()),
        None => s.to_string(),
    }
}

fn split_top_level(arg: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut depth = 0;
    for c in arg.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current);
    parts.into_iter().filter(|p| !p.is_empty()).collect()
}

fn typed_set_scalar(raw: &str) -> Value {
    match raw {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "null" => Value::Null,
        "0" => Value::Number(0.into()),
        s if s.starts_with('0') => Value::String(s.to_string()),
        s => s
            .parse::<i64>()
            .map(|i| Value::Number(i.into()))
            .unwrap_or_else(|_| Value::String(s.to_string())),
    }
}

/// One source of user values, applied in order.
#[derive(Debug, Clone)]
pub enum ValuesSource {
    /// A values file's parsed content, with its name for messages.
    File {
        name: String,
        values: Map<String, Value>,
    },
    /// `--set` pairs.
    Set(Map<String, Value>),
}

/// Merges the preset overlay (if any), then the user sources in order, over the
/// chart's defaults.
pub fn resolve_values(
    spec: &Spec,
    preset: Option<&Map<String, Value>>,
    sources: &[ValuesSource],
) -> Value {
    resolve_values_over(&default_values_map(spec), preset, sources)
}

/// [`resolve_values`] over defaults already built (for several presets of one spec).
pub fn resolve_values_over(
    defaults: &Map<String, Value>,
    preset: Option<&Map<String, Value>>,
    sources: &[ValuesSource],
) -> Value {
    let mut user = user_values(preset, sources);
    coalesce_with_defaults(&mut user, defaults);
    Value::Object(user)
}

/// Checks values against the chart's values schema, returning every violation.
pub fn check_values_schema(
    values: &Value,
    schema: &Value,
    source_name: &str,
) -> Result<(), ValuesError> {
    ValuesSchema::new(schema).check(values, source_name)
}

/// A values schema to check the values of every preset with. Values are first walked
/// through the schema's JSON ([`schema_verdict::schema_verdict`]), or checked by the
/// schema compiled once for many checks ([`schema_program::SchemaProgram`], the same
/// verdicts); the `jsonschema` crate compiles it, once, only to decide what that does
/// not and to word the violations of refused values.
pub struct ValuesSchema<'s> {
    schema: &'s Value,
    /// The root's `allOf`, frozen, when the schema comes as a root without it and its
    /// rules ([`ValuesSchema::for_many_checks_beside_with_rules`]); empty otherwise.
    rules: &'s [frozen_schema::FrozenSchema],
    /// The whole schema, built from the root and its rules only to word violations.
    whole: std::sync::OnceLock<Value>,
    /// Compiled on the first check, when made for many.
    program: Option<std::sync::OnceLock<schema_program::SchemaProgram<'s>>>,
    validator: std::sync::OnceLock<Result<jsonschema::Validator, String>>,
    /// Values most checks differ from in a few parts (`generate`'s defaults, under
    /// every preset), and whether they passed, once they have been checked.
    base: Option<(&'s Value, std::sync::OnceLock<bool>)>,
    /// How many checks were taken beside the base, for the tests.
    #[cfg(test)]
    checked_beside: std::sync::atomic::AtomicUsize,
}

impl<'s> ValuesSchema<'s> {
    /// A schema to check values with; nothing is compiled yet, and each check walks
    /// the schema's JSON (cheapest for one check).
    pub fn new(schema: &'s Value) -> Self {
        ValuesSchema {
            schema,
            rules: &[],
            whole: std::sync::OnceLock::new(),
            program: None,
            validator: std::sync::OnceLock::new(),
            base: None,
            #[cfg(test)]
            checked_beside: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// A schema to check many values with (`generate`'s defaults and presets): it is
    /// compiled on the first check, by whichever thread checks first, and every check
    /// runs the compiled form.
    pub fn for_many_checks(schema: &'s Value) -> Self {
        ValuesSchema {
            program: Some(std::sync::OnceLock::new()),
            ..ValuesSchema::new(schema)
        }
    }

    /// [`ValuesSchema::for_many_checks`] of values most of which differ from `base` in
    /// a few parts (`generate`'s presets, over the defaults). Once `base` itself has
    /// been checked and passed, a check of other values skips their parts equal to
    /// `base`'s at the same place wherever every schema must pass
    /// ([`schema_program::SchemaProgram::verdict_beside`]); a check before that checks
    /// them whole. The verdicts are the same either way.
    pub fn for_many_checks_beside(schema: &'s Value, base: &'s Value) -> Self {
        ValuesSchema {
            base: Some((base, std::sync::OnceLock::new())),
            ..ValuesSchema::for_many_checks(schema)
        }
    }

    /// [`ValuesSchema::for_many_checks_beside`] of the whole schema `root` with `rules`
    /// as its `allOf` ([`frozen_schema::whole_schema`]), without building it: `generate`
    /// keeps the root rules frozen ([`crate::contract::Contract::over_frozen`]).
    pub fn for_many_checks_beside_with_rules(
        root: &'s Value,
        rules: &'s [frozen_schema::FrozenSchema],
        base: &'s Value,
    ) -> Self {
        ValuesSchema {
            rules,
            ..ValuesSchema::for_many_checks_beside(root, base)
        }
    }

    /// The whole schema: the one given, or the root with its rules, built once.
    fn whole(&self) -> &Value {
        if self.rules.is_empty() {
            return self.schema;
        }
        self.whole
            .get_or_init(|| frozen_schema::whole_schema(self.schema, self.rules))
    }

    /// Whether `values` pass, when the walk or the program can decide. `copies`, when
    /// given, are the parts of `values` that are copies of the base values' at the
    /// same place (otherwise they are found by comparing).
    fn verdict(&self, values: &Value, copies: Option<&[&Value]>) -> Option<bool> {
        let Some(program) = &self.program else {
            return schema_verdict::schema_verdict(self.whole(), values);
        };
        let program = program.get_or_init(|| {
            schema_program::SchemaProgram::compile_with_rules(self.schema, self.rules)
        });
        match &self.base {
            Some((base, passed)) if std::ptr::eq(values, *base) => {
                let verdict = program.verdict(values);
                let _ = passed.set(verdict == Some(true));
                verdict
            }
            Some((base, passed)) if passed.get() == Some(&true) => {
                #[cfg(test)]
                self.checked_beside
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                match copies {
                    Some(copies) => program.verdict_with_copies(values, copies),
                    None => program.verdict_beside(values, base),
                }
            }
            _ => program.verdict(values),
        }
    }

    /// The compiled schema; an invalid schema is reported as a violation of `source_name`.
    fn compiled(&self, source_name: &str) -> Result<&jsonschema::Validator, ValuesError> {
        self.validator
            .get_or_init(|| jsonschema::draft7::new(self.whole()).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| ValuesError::Schema {
                source_name: source_name.to_string(),
                violations: vec![SchemaViolation {
                    message: format!("the values schema itself is invalid: {e}"),
                    ..Default::default()
                }],
            })
    }

    /// Checks values against the schema, returning every violation: an unknown key at
    /// the key, with the closest known one.
    pub fn check(&self, values: &Value, source_name: &str) -> Result<(), ValuesError> {
        self.check_knowing(values, source_name, None)
    }

    /// [`ValuesSchema::check`] of values whose parts `copies` are copies of the base
    /// values' at the same place ([`ValuesSchema::for_many_checks_beside`]): as
    /// [`resolve_values_sharing_defaults`] finds them, instead of comparing the values
    /// with the base.
    pub fn check_with_copies(
        &self,
        values: &Value,
        source_name: &str,
        copies: &[&Value],
    ) -> Result<(), ValuesError> {
        self.check_knowing(values, source_name, Some(copies))
    }

    fn check_knowing(
        &self,
        values: &Value,
        source_name: &str,
        copies: Option<&[&Value]>,
    ) -> Result<(), ValuesError> {
        if self.verdict(values, copies) == Some(true) {
            return Ok(());
        }
        let mut violations: Vec<SchemaViolation> = Vec::new();
        for e in self.compiled(source_name)?.iter_errors(values) {
            let path = e
                .instance_path()
                .as_str()
                .trim_start_matches('/')
                .replace('/', ".");
            if let jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } =
                e.kind()
            {
                let known: Vec<&str> = e
                    .instance()
                    .as_object()
                    .map(|m| {
                        m.keys()
                            .map(String::as_str)
                            .filter(|k| !unexpected.iter().any(|u| u == k))
                            .collect()
                    })
                    .unwrap_or_default();
                for key in unexpected {
                    violations.push(SchemaViolation {
                        path: if path.is_empty() {
                            key.clone()
                        } else {
                            format!("{path}.{key}")
                        },
                        message: "unknown key: the chart has no such value".into(),
                        hint: crate::spec::closest(key, &known)
                            .map(|c| format!("did you mean `{}`?", c.escape_debug())),
                        at: None,
                    });
                }
                continue;
            }
            violations.push(SchemaViolation {
                path,
                message: violation_message(
                    self.whole(),
                    e.evaluation_path().as_str(),
                    &e.to_string(),
                ),
                ..Default::default()
            });
        }
        violations.sort_by(|a, b| (&a.path, &a.message).cmp(&(&b.path, &b.message)));
        violations.dedup();
        if violations.is_empty() {
            Ok(())
        } else {
            Err(ValuesError::Schema {
                source_name: source_name.to_string(),
                violations,
            })
        }
    }
}

/// A violation in words: an install-time rule says which guard refused the values
/// (its `description`); other messages are cut so a whole workload's values are not
/// printed back.
fn violation_message(schema: &Value, schema_path: &str, raw: &str) -> String {
    // An install-time rule carries `<rule id>: <what it refuses>` as the description of
    // the schema node that holds it; report the innermost such rule on the failing
    // keyword's path, with the keyword's own message when it is short (a bound).
    let segments: Vec<&str> = schema_path.trim_start_matches('/').split('/').collect();
    for end in (0..=segments.len()).rev() {
        let prefix = format!("/{}", segments[..end].join("/"));
        let Some(rule) = schema_node(schema, &prefix)
            .and_then(|n| n.get("description"))
            .and_then(Value::as_str)
            .filter(|d| is_rule_description(d))
        else {
            continue;
        };
        let keyword = segments.last().copied().unwrap_or("");
        return if matches!(
            keyword,
            "maximum" | "minimum" | "exclusiveMinimum" | "pattern" | "enum"
        ) && raw.chars().count() <= 100
        {
            format!("refused by {rule} ({raw})")
        } else {
            format!("refused by {rule}")
        };
    }
    const LIMIT: usize = 160;
    if raw.chars().count() > LIMIT {
        let cut: String = raw.chars().take(LIMIT).collect();
        format!("{cut}...")
    } else {
        raw.to_string()
    }
}

/// Whether a schema description names a guard: `rule.id: text`.
fn is_rule_description(d: &str) -> bool {
    d.split_once(": ").is_some_and(|(id, _)| {
        id.contains('.')
            && !id.contains(' ')
            && id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '.' || c == '-')
    })
}

/// The schema node at a JSON pointer such as `/properties/a/allOf/1`; a `$ref`
/// segment (of an evaluation path) continues in the local definition it names.
fn schema_node<'s>(schema: &'s Value, pointer: &str) -> Option<&'s Value> {
    pointer
        .trim_start_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .try_fold(schema, |node, segment| match node {
            Value::Object(m) if segment == "$ref" => {
                let target = m.get("$ref")?.as_str()?.strip_prefix('#')?;
                schema_node(schema, target)
            }
            Value::Object(m) => m.get(segment),
            Value::Array(a) => segment.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        })
}

/// Floats with no fraction back to integers, so resolved values (floats, as Helm
/// reads them) deserialize into the typed model again.
pub fn integral_numbers(v: &Value) -> Value {
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => {
                Value::Number((f as i64).into())
            }
            _ => v.clone(),
        },
        Value::Array(items) => Value::Array(items.iter().map(integral_numbers).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), integral_numbers(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The bundled Redis servers' names are [`bundled_defaults`]'s `redis` keys: the
    /// spec's own bundled servers and every declared server whose name can name
    /// objects, not one whose name cannot.
    #[test]
    fn the_bundled_redis_servers_are_the_bundled_defaults_keys() {
        for example in crate::spec::testing::EXAMPLES {
            let mut spec = crate::spec::testing::example(example);
            let declared = spec
                .dependency_capacity
                .redis
                .servers
                .values()
                .next()
                .cloned();
            if let Some(server) = declared {
                let servers = &mut spec.dependency_capacity.redis.servers;
                servers.insert("Not_A_Name".into(), server.clone());
                servers.insert("extra-server".into(), server);
            }
            spec.bundled.redis.insert("own".into(), Default::default());
            let mut expected: Vec<String> = spec.bundled.redis.keys().cloned().collect();
            let servers = spec.dependency_capacity.redis.servers.keys();
            expected.extend(servers.filter(|s| *s != "Not_A_Name").cloned());
            expected.sort();
            expected.dedup();
            let names = bundled_redis_servers(&spec);
            assert_eq!(
                names.iter().copied().collect::<Vec<_>>(),
                expected,
                "{example}"
            );
            let defaults = bundled_defaults(&spec);
            let keys: Vec<&str> = defaults.redis.keys().map(String::as_str).collect();
            assert_eq!(names.into_iter().collect::<Vec<_>>(), keys, "{example}");
            assert!(
                keys.contains(&"own") && !keys.contains(&"Not_A_Name"),
                "{example}"
            );
            assert_eq!(
                keys.contains(&"extra-server"),
                spec.dependency_capacity
                    .redis
                    .servers
                    .contains_key("extra-server"),
                "{example}"
            );
        }
    }

    /// The places where the coalesce copies the defaults' objects and arrays whole:
    /// the keys the overlays lack, below the maps both have; not a key deleted with
    /// `null`, replaced by anything, or a scalar.
    #[test]
    fn the_copies_of_the_defaults_are_the_keys_the_overlays_lack() {
        let defaults = obj(json!({
            "a": {"b": {"c": 1}, "d": [1, 2], "e": 3, "f": {"g": 1}},
            "h": {"i": 1},
            "j": [1],
            "k": {"l": 1},
            "m": {"n": 1},
            "o": 1,
            "p": {"q": {"r": {"s": 1}, "t": {"u": 1}}}
        }));
        let preset = obj(json!({"a": {"e": 4, "f": null}, "k": 2, "p": {"q": {"r": {"s": 2}}}}));
        let set = ValuesSource::Set(obj(json!({"m": {"x": 1}, "h": null})));
        let values =
            resolve_values_sharing_defaults(&defaults, Some(&preset), std::slice::from_ref(&set));
        let copies = values.copies();
        assert_eq!(
            *values,
            resolve_values_over(&defaults, Some(&preset), &[set])
        );
        assert_eq!(
            copies,
            [
                vec!["a", "b"],
                vec!["a", "d"],
                vec!["j"],
                vec!["p", "q", "t"]
            ]
        );
        let parts = parts_at(&values, copies);
        assert_eq!(
            parts,
            [
                &json!({"c": 1}),
                &json!([1, 2]),
                &json!([1]),
                &json!({"u": 1})
            ]
        );
        // Each is the values' own part, where the values hold it, and shares the
        // defaults' memory: the same entries, not copies of them.
        assert!(std::ptr::eq(parts[0], &values["a"]["b"]));
        assert!(std::ptr::eq(parts[3], &values["p"]["q"]["t"]));
        let first_entry =
            |v: &Value| -> *const Value { v.as_object().unwrap().values().next().unwrap() };
        assert!(std::ptr::eq(
            first_entry(parts[0]),
            first_entry(&defaults["a"]["b"])
        ));
        assert!(std::ptr::eq(&parts[1][0], &defaults["a"]["d"][0]));
        // Scalars the overlay lacks are copies, and the overlay's own parts are not
        // the defaults'.
        assert_eq!(values["a"]["e"], json!(4.0));
        assert_eq!(values["o"], json!(1));
        assert!(!std::ptr::eq(
            first_entry(&values["p"]["q"]["r"]),
            first_entry(&defaults["p"]["q"]["r"])
        ));
        // A place the values do not have is left out.
        assert!(parts_at(&values, &[vec!["a", "zz"], vec!["o", "x"]]).is_empty());
        // Dropping the values leaves the defaults whole.
        let before = defaults.clone();
        drop(values);
        assert_eq!(defaults, before);
        // No overlay: every top-level object and array is a copy.
        let values = resolve_values_sharing_defaults(&defaults, None, &[]);
        assert_eq!(values.copies().len(), 6);
        assert_eq!(*values, Value::Object(defaults.clone()));
    }

    /// Checked beside base values, a check is taken beside them only once they have
    /// been checked and passed, and its answer and violations are those of a check
    /// of the whole values.
    #[test]
    fn checks_beside_base_values_start_once_they_have_passed() {
        let schema = json!({
            "properties": {
                "a": {"properties": {"x": {"type": "integer"}}},
                "b": {"type": "integer"}
            }
        });
        let violations = |result: Result<(), ValuesError>| match result {
            Ok(()) => Vec::new(),
            Err(ValuesError::Schema { violations, .. }) => {
                violations.into_iter().map(|v| v.path).collect()
            }
            Err(other) => panic!("{other}"),
        };
        let changed = [
            json!({"a": {"x": "s"}, "b": 1}),
            json!({"a": {"x": 1}, "b": "s"}),
        ];
        // Base values that pass: recorded when checked, and then each check is
        // taken beside them; before, whole.
        let passing = json!({"a": {"x": 1}, "b": 1});
        let beside = ValuesSchema::for_many_checks_beside(&schema, &passing);
        let whole = ValuesSchema::for_many_checks(&schema);
        assert_eq!(violations(beside.check(&changed[1], "v")), ["b"]);
        assert_eq!(beside.base.as_ref().unwrap().1.get(), None);
        assert!(beside.check(&passing, "base").is_ok());
        assert_eq!(beside.base.as_ref().unwrap().1.get(), Some(&true));
        let taken = || {
            beside
                .checked_beside
                .load(std::sync::atomic::Ordering::Relaxed)
        };
        assert_eq!(taken(), 0);
        for values in &changed {
            assert_eq!(
                violations(beside.check(values, "v")),
                violations(whole.check(values, "v"))
            );
        }
        assert_eq!(taken(), 2);
        // Given copies of the base, a check takes them for equal parts and skips them
        // (shown with a part that is no copy, which `generate` never gives).
        assert!(beside
            .check_with_copies(&changed[0], "v", &[&changed[0]["a"]])
            .is_ok());
        assert_eq!(taken(), 3);
        // Base values that fail are recorded as such, and nothing is skipped: the
        // same part of other values still fails.
        let failing = json!({"a": {"x": "s"}});
        let beside = ValuesSchema::for_many_checks_beside(&schema, &failing);
        assert_eq!(violations(beside.check(&failing, "base")), ["a.x"]);
        assert_eq!(beside.base.as_ref().unwrap().1.get(), Some(&false));
        assert_eq!(violations(beside.check(&changed[0], "v")), ["a.x"]);
        assert_eq!(
            violations(beside.check_with_copies(&changed[0], "v", &[&changed[0]["a"]])),
            ["a.x"]
        );
        assert_eq!(
            beside
                .checked_beside
                .load(std::sync::atomic::Ordering::Relaxed),
            0
        );
        // Values equal to the base but elsewhere in memory are checked, not taken
        // for the base.
        let beside = ValuesSchema::for_many_checks_beside(&schema, &failing);
        assert_eq!(violations(beside.check(&failing.clone(), "copy")), ["a.x"]);
        assert_eq!(beside.base.as_ref().unwrap().1.get(), None);
    }

    /// An object's entries are its own; any other value has none.
    #[test]
    fn entries_of_an_object_are_its_own_and_of_anything_else_none() {
        let object = serde_json::json!({"a": 1, "b": {"c": 2}});
        assert_eq!(entries_of(&object), object.as_object().unwrap());
        for other in [Value::Null, serde_json::json!([1]), serde_json::json!("a")] {
            assert!(entries_of(&other).is_empty(), "{other}");
        }
    }

    /// The entries of an object (the tests of `values` and of its files).
    pub(super) fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not a map"),
        }
    }

    /// A rule whose body is a shared definition still names its rule: the message
    /// follows the evaluation path through `$ref`.
    #[test]
    fn a_violation_inside_a_referenced_definition_names_the_rule_that_refers_to_it() {
        let schema = json!({
            "definitions": {"OnRedis": {"properties": {"backend": {"const": "redis"}}}},
            "properties": {"store": {"description": "replicas.shared-stores: `workloads.api` needs a shared store", "allOf": [{"$ref": "#/definitions/OnRedis"}]}}
        });
        let checked =
            ValuesSchema::new(&schema).check(&json!({"store": {"backend": "memory"}}), "v");
        let Err(ValuesError::Schema { violations, .. }) = checked else {
            panic!("{checked:?}")
        };
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(
            violations[0].message,
            "refused by replicas.shared-stores: `workloads.api` needs a shared store"
        );
        assert_eq!(
            schema_node(&schema, "/properties/store/allOf/0/$ref/properties/backend"),
            Some(&json!({"const": "redis"}))
        );
        assert_eq!(schema_node(&schema, "/properties/store/$ref"), None);
    }

    /// Checked against a root and its frozen rules, values pass and are refused as
    /// against the whole schema, with the same violations worded by the same rules
    /// (the whole schema is built only for those words), beside passing base values
    /// or not.
    #[test]
    fn a_schema_with_frozen_rules_checks_as_the_whole_schema() {
        use frozen_schema::{whole_schema, FrozenSchema};
        let root = json!({
            "definitions": {"OnRedis": {"properties": {"backend": {"const": "redis"}}}},
            "properties": {"store": {"type": "object"}, "n": {"type": "integer"}},
            "additionalProperties": false
        });
        let rules: Vec<FrozenSchema> = [
            json!({"description": "replicas.shared-stores: the store is on Redis", "properties": {"store": {"$ref": "#/definitions/OnRedis"}}}),
            json!({"description": "capacity.plan: n stays within 3", "properties": {"n": {"maximum": 3}}}),
        ]
        .into_iter()
        .map(FrozenSchema::of_schema)
        .collect();
        let whole = whole_schema(&root, &rules);
        let base = json!({"store": {"backend": "redis"}, "n": 1});
        let by_whole = ValuesSchema::new(&whole);
        let by_parts = ValuesSchema::for_many_checks_beside_with_rules(&root, &rules, &base);
        assert!(by_parts.check(&base, "v").is_ok());
        for values in [
            json!({"store": {"backend": "memory"}, "n": 1}),
            json!({"store": {"backend": "redis"}, "n": 4}),
            json!({"store": {"backend": "memory"}, "n": 9, "extra": true}),
            json!({"store": {"backend": "redis"}, "n": 2}),
        ] {
            let (a, b) = (by_whole.check(&values, "v"), by_parts.check(&values, "v"));
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{values}");
        }
        let Err(ValuesError::Schema { violations, .. }) =
            by_parts.check(&json!({"store": {"backend": "memory"}, "n": 4}), "v")
        else {
            panic!("refused")
        };
        let messages: Vec<&str> = violations.iter().map(|v| v.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "refused by capacity.plan: n stays within 3 (4 is greater than the maximum of 3)",
                "refused by replicas.shared-stores: the store is on Redis"
            ]
        );
    }

    /// A projection keeps each path's value whole and, on the way to it, only the keys
    /// of the paths; a value that is not a map on the way is kept as it is, and an
    /// overlay coalesced over the projection reads the same at every path.
    #[test]
    fn a_projection_keeps_the_paths_and_the_maps_that_lead_to_them() {
        use crate::expr::ValuePath;
        let values = obj(json!({
            "a": {"b": {"c": 1, "d": [2]}, "e": 3},
            "f": {"g": 4},
            "h": 5,
            "s": "text",
        }));
        let paths = [
            ValuePath::new(["a", "b"]),
            ValuePath::new(["a", "b", "c"]),
            ValuePath::new(["f", "x"]),
            ValuePath::new(["s", "deeper"]),
            ValuePath::new(["missing", "y"]),
        ];
        let projected = project_values(&values, &paths);
        assert_eq!(
            Value::Object(projected.clone()),
            json!({"a": {"b": {"c": 1, "d": [2]}}, "f": {}, "s": "text"})
        );
        // A shorter path given after a longer one keeps the value whole too.
        let whole = project_values(
            &values,
            &[ValuePath::new(["f", "g"]), ValuePath::new(["f"])],
        );
        assert_eq!(Value::Object(whole), json!({"f": {"g": 4}}));
        // The empty path is the whole tree.
        assert_eq!(
            project_values(&values, &[ValuePath::new(Vec::<String>::new())]),
            values
        );
        // An overlay over the projection and over the whole tree agree on the paths.
        let overlay =
            obj(json!({"a": {"b": {"c": null, "z": 9}, "e": null}, "f": 1, "s": {"deeper": 2}}));
        let (mut over_whole, mut over_projected) = (overlay.clone(), overlay);
        coalesce_with_defaults(&mut over_whole, &values);
        coalesce_with_defaults(&mut over_projected, &projected);
        for path in &paths {
            let (whole, projected) = (
                Value::Object(over_whole.clone()),
                Value::Object(over_projected.clone()),
            );
            assert_eq!(path.lookup(&whole), path.lookup(&projected), "{path}");
        }
    }

    #[test]
    fn helm_merge_rules() {
        let defaults = obj(json!({"a": {"b": 1, "c": [1, 2]}, "d": "x", "e": {"f": 1}}));
        let mut user = obj(json!({"a": {"c": [3]}, "d": null}));
        merge_user_values(&mut user, obj(json!({"a": {"b": 2}, "e": null, "g": null})));
        coalesce_with_defaults(&mut user, &defaults);
        assert_eq!(
            Value::Object(user),
            json!({"a": {"b": 2, "c": [3]}, "g": null})
        );
    }

    #[test]
    fn set_args_are_typed_like_helm() {
        let m = parse_set_args(&["a.b=3,c=true,d=007,e=1.5,f={x,y},g=null".to_string()]).unwrap();
        assert_eq!(
            Value::Object(m),
            json!({"a": {"b": 3}, "c": true, "d": "007", "e": "1.5", "f": ["x", "y"], "g": null})
        );
        assert!(parse_set_args(&["novalue".to_string()]).is_err());
    }

    #[test]
    fn values_files_read_yaml_1_1_scalars_as_helm_does() {
        let m = parse_values_yaml(
            "a: no\nb: on\nc: 0755\nd: 1e3\ne: ~\nf: '0755'\ng: 1000000\n",
            "v.yaml",
        )
        .unwrap();
        assert_eq!(m["a"], json!(false));
        assert_eq!(m["b"], json!(true));
        assert_eq!(m["c"], json!(493.0));
        assert_eq!(m["d"], json!(1000.0));
        assert_eq!(m["e"], Value::Null);
        assert_eq!(m["f"], json!("0755"));
        assert_eq!(crate::expr::gojson::to_go_json(&m["g"]), "1000000");
    }
}
