//! JSON schemas generated from the Rust types: the spec's own schema
//! (`shipshape schema`, committed as `schemas/shipshape.schema.json`) and the chart's
//! `values.schema.json` (draft-07, self-contained: local `$ref`s only).

use crate::contract::model_schemas::{ModelSchemas, ModelType};
use crate::contract::plans::PodBounds;
use crate::contract::rules::{root_rules, RootRule};
use crate::spec::{Spec, WorkloadClass};
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{json, Map, Value};

pub(super) fn generator() -> SchemaGenerator {
    SchemaSettings::draft07().into_generator()
}

/// The JSON schema of `shipshape.yaml`.
pub fn spec_schema() -> Value {
    let schema = generator().into_root_schema_for::<Spec>();
    let mut v = schema.to_value();
    tidy(&mut v);
    v
}

/// The chart's `values.schema.json`: the values model's types, with one property per
/// workload of the spec holding that workload's class schema.
pub fn values_schema(spec: &Spec) -> Value {
    values_schema_of(spec, &crate::contract::Contract::of(spec))
}

/// [`values_schema`] of a contract already computed.
pub fn values_schema_of(spec: &Spec, contract: &crate::contract::Contract) -> Value {
    values_schema_with(
        spec,
        contract.rules.iter().map(|r| r.schema.clone()).collect(),
        contract.pods,
        &crate::values::default_values(spec),
    )
}

/// [`values_schema_of`] taking the root rules' schemas by value, so they are moved into
/// the schema rather than copied (`render`'s peak memory at 400 workloads), with the pod
/// bounds their shared definitions are enumerated over and the chart's defaults the
/// managed variables are read from
/// ([`crate::contract::definitions::shared_definitions`]).
pub fn values_schema_with(
    spec: &Spec,
    rules: Vec<Value>,
    pods: PodBounds,
    defaults: &Value,
) -> Value {
    let mut root = frame_schema(spec);
    if let Some(Value::Object(definitions)) = root.get_mut("definitions") {
        definitions.extend(root_rule_definitions(spec, pods, defaults));
    }
    if let Value::Object(m) = &mut root {
        if !rules.is_empty() {
            m.insert("allOf".into(), Value::Array(rules));
        }
    }
    root
}

/// The definitions only the root rules refer to ([`crate::contract::rules::rule_definitions`]
/// and [`crate::contract::definitions::shared_definitions`]), as `values.schema.json`
/// holds them.
pub fn root_rule_definitions(spec: &Spec, pods: PodBounds, defaults: &Value) -> Map<String, Value> {
    let mut definitions = crate::contract::rules::rule_definitions(spec);
    definitions.extend(crate::contract::definitions::shared_definitions(
        spec, pods, defaults,
    ));
    tidied(definitions)
}

/// [`root_rule_definitions`] but those enumerated over the pod bounds
/// ([`crate::contract::definitions::enumerated_definitions`]), which read no pod
/// bound: `render` decides the enumerated ones without building them
/// ([`crate::contract::root_rules_verdict_with`]).
pub(crate) fn root_rule_definitions_not_enumerated(
    spec: &Spec,
    defaults: &Value,
) -> Map<String, Value> {
    let mut definitions = crate::contract::rules::rule_definitions(spec);
    definitions
        .extend(crate::contract::definitions::shared_definitions_not_enumerated(spec, defaults));
    tidied(definitions)
}

/// `definitions`, each [`tidy`]'d and with [`require_non_nullable`].
pub(super) fn tidied(definitions: Map<String, Value>) -> Map<String, Value> {
    // Each node is tidied on its own, so the definitions are as in the whole schema.
    let mut definitions = Value::Object(definitions);
    tidy(&mut definitions);
    require_non_nullable(&mut definitions);
    match definitions {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// `values.schema.json` without its root rules and the definitions only they refer to:
/// the model's types, each workload's class, the maps closed to the spec's names. Its
/// `$ref`s are to its own definitions, so it is checked on its own (beside the rules,
/// on another core, by `render`).
pub fn frame_schema(spec: &Spec) -> Value {
    frame_schema_with(spec, ModelSchemas::committed())
}

/// [`frame_schema`] with the model's schemas already read (`render` reads them before
/// it has read the spec), from the committed file or, for a frame only walked to check
/// values, without the model's definitions
/// ([`ModelSchemas::without_definitions`], walked by
/// [`walked_frame_verdict`](crate::contract::walked_frame_verdict)).
pub fn frame_schema_with(spec: &Spec, mut model: ModelSchemas) -> Value {
    let mut workloads = Map::new();
    // Each class's schema is taken once and copied for each of its workloads.
    let mut by_class: Vec<(WorkloadClass, Value)> = Vec::new();
    for (name, workload) in spec.workloads.all() {
        let class = workload.class();
        let schema = match by_class.iter().find(|(c, _)| *c == class) {
            Some((_, schema)) => schema.clone(),
            None => {
                let schema = match class {
                    WorkloadClass::Api => {
                        with_install_time_rules(model.schema_of(ModelType::Api), API_RULES)
                    }
                    WorkloadClass::Jobs => model.schema_of(ModelType::Jobs),
                    WorkloadClass::Pool => model.schema_of(ModelType::Pool),
                    WorkloadClass::Worker => model.schema_of(ModelType::Worker),
                    WorkloadClass::Migrate => model.schema_of(ModelType::Migrate),
                };
                by_class.push((class, schema.clone()));
                schema
            }
        };
        workloads.insert(
            name.to_string(),
            forbid_taken_over_labels(
                close_workload_maps(schema, &workload.allocation_values()),
                spec,
            ),
        );
    }
    let names: Vec<&str> = spec.workloads.all().iter().map(|(n, _)| *n).collect();
    let mut properties = json!({
        "nameOverride": {
            "description": "Replaces the chart's name in the full name and in the `app.kubernetes.io/name` label (empty: the chart's name). Changing it on an installed release renames its objects and changes its selectors, which a Deployment refuses.",
            "type": "string",
            "maxLength": crate::model::naming::MAX_NAME,
            "pattern": NAME_OVERRIDE_PATTERN
        },
        "fullnameOverride": {
            "description": "Replaces the full name every object name starts with (empty: the release name, followed by `-<chart name>` unless it contains it). Each name keeps its own suffix, so names stay unique.",
            "type": "string",
            "maxLength": crate::model::naming::MAX_NAME,
            "pattern": NAME_OVERRIDE_PATTERN
        },
        "image": model.schema_of(ModelType::Image),
        "imagePullSecrets": {
            "description": "Image pull secrets of every pod.",
            "type": "array",
            "items": model.schema_of(ModelType::LocalObjectReference)
        },
        "serviceAccount": model.schema_of(ModelType::ServiceAccount),
        "configFile": model.schema_of(ModelType::ConfigFile),
        "config": {
            "description": "The application's configuration, rendered into a ConfigMap whose checksum rolls the pods that read it.",
            "type": "object"
        },
        "features": close_map(
            json!({"description": "Feature flags that turn connection allocations on.", "type": "object", "additionalProperties": {"type": "boolean"}}),
            spec.features.keys(),
        ),
        "featureSwitches": close_map(
            json!({"description": "How each feature flag reaches the application: an env var (`true`/`false`) and/or a key of the startup settings section (fixed by the spec).", "type": "object", "additionalProperties": model.schema_of(ModelType::FeatureSwitch)}),
            spec.feature_switches.keys(),
        ),
        "bundled": {"allOf": [
            model.schema_of(ModelType::Bundled),
            {"properties": {"redis": close_map(
                json!({"type": "object", "additionalProperties": {"$ref": "#/definitions/BundledRedis"}}),
                crate::values::bundled_defaults(spec).redis.keys(),
            )}}
        ], "description": "Servers the chart runs for evaluation only (one pod each, no backups): PostgreSQL and one Valkey per declared Redis server. Their limits are the declared budgets under `dependencyCapacity`, never values of their own."},
        "capacityPlan": {
            "description": "The checked plan these values stay within: `default` or a preset's name (each `values-<preset>.yaml` sets its own). Its bounds are listed in the chart README; to go beyond them, add a preset to `shipshape.yaml` and regenerate.",
            "enum": plan_names(spec)
        },
        "replicaStrict": {"description": "Make unsafe replica findings fatal at boot.", "type": "boolean"},
        "global": {"description": "Helm's global values, shared by the charts of an umbrella chart (this chart reads none).", "type": ["object", "null"]},
        "stores": close_map(
            json!({"description": "The shared stores: each one's backend, `memory` (one pod only) or `redis`.", "type": "object", "additionalProperties": model.schema_of(ModelType::SharedStore)}),
            spec.shared_stores().iter().map(|s| s.to_string()).collect::<Vec<_>>().iter(),
        ),
        "storeRedis": model.schema_of(ModelType::StoreRedis),
        "secrets": secrets_schema(spec),
        "scheduling": {"allOf": [
            model.schema_of(ModelType::Scheduling),
            {"properties": {"pools": close_map(
                json!({"type": "object", "additionalProperties": {"$ref": "#/definitions/PoolJobs"}}),
                spec.scheduling.pools.keys(),
            )}}
        ], "description": "Scheduled jobs and the pools that own them."},
        "managedEnv": model.schema_of(ModelType::ManagedEnv),
        "postgresPooler": model.schema_of(ModelType::PostgresPooler),
        "startupSettings": model.schema_of(ModelType::StartupSettings),
        "dependencyCapacity": {"allOf": [
            model.schema_of(ModelType::DependencyCapacity),
            {"properties": {
                "postgres": {"properties": {"reservations": close_map(
                    json!({"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}),
                    spec.dependency_capacity.postgres.reservations.keys(),
                )}},
                "redis": {"properties": {"servers": close_map(
                    json!({"type": "object", "additionalProperties": {"$ref": "#/definitions/RedisServer"}}),
                    spec.dependency_capacity.redis.servers.keys(),
                )}}
            }}
        ], "description": "The declared connection budgets every preset must fit."},
        "extraObjects": {
            "description": "Kubernetes objects the spec does not model, rendered as given, each as its own document (no templating: text such as `{{ .Release.Name }}` stays literal), and checked by `shipshape validate` like the chart's own. Each needs `apiVersion`, `kind` and `metadata.name`.",
            "type": "array",
            "items": {
                "type": "object",
                "required": ["apiVersion", "kind", "metadata"],
                "properties": {
                    "apiVersion": {"type": "string", "minLength": 1},
                    "kind": {"type": "string", "minLength": 1},
                    "metadata": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {"name": {"type": "string", "minLength": 1}}
                    }
                }
            }
        },
        "workloads": {
            "description": "The workloads, by name.",
            "type": "object",
            "properties": {},
            "required": names,
            "additionalProperties": false
        }
    });
    // Moved in: `json!` would copy every workload's schema.
    properties["workloads"]["properties"] = Value::Object(workloads);
    if spec.startup_settings.is_none() {
        if let Value::Object(p) = &mut properties {
            p.remove("startupSettings");
        }
    }
    let definitions = model.into_definitions();
    let mut root = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": format!("Values of the {} chart", spec.chart.name),
        "type": "object",
        "required": ["capacityPlan", "nameOverride", "fullnameOverride", "image", "imagePullSecrets", "serviceAccount", "configFile", "config", "features", "featureSwitches", "bundled", "replicaStrict", "stores", "storeRedis", "secrets", "scheduling", "managedEnv", "postgresPooler", "dependencyCapacity", "workloads", "extraObjects"],
        "additionalProperties": false,
    });
    root["properties"] = properties;
    // Each node is tidied on its own, and the model's definitions come tidied from
    // `schemas/values-model.json`: only the rest is tidied here.
    tidy(&mut root);
    require_non_nullable(&mut root);
    root["definitions"] = Value::Object(definitions.into_iter().collect());
    root
}

/// The label keys of the spec's `takeover` selectors are kept out of every
/// workload's `podLabels`: a pod label there would duplicate the chart's, or make a
/// workload's pods match another's selector.
fn forbid_taken_over_labels(schema: Value, spec: &Spec) -> Value {
    let keys: std::collections::BTreeSet<&String> = spec
        .takeover
        .values()
        .flat_map(|t| t.selector_labels.keys())
        .collect();
    if keys.is_empty() {
        return schema;
    }
    let rule = json!({"properties": {"podLabels": {"propertyNames": {"not": {"enum": keys}}}}});
    match schema {
        Value::Object(mut m) if m.len() == 1 && m.contains_key("allOf") => {
            if let Some(Value::Array(all)) = m.get_mut("allOf") {
                all.push(rule);
            }
            Value::Object(m)
        }
        other => json!({"allOf": [other, rule]}),
    }
}

/// `nameOverride` and `fullnameOverride`: empty, or a DNS label, so every name and
/// the `app.kubernetes.io/name` label they make is valid.
const NAME_OVERRIDE_PATTERN: &str = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$";

/// The names of the checked plans: `default` and every preset, in the order of
/// [`plan_names_of`]. The spec's presets are named as declared: no preset is
/// expanded or fitted to know its name.
pub fn plan_names(spec: &Spec) -> Vec<String> {
    default_then(spec.presets.keys())
}

/// The contract of every plan: the defaults and each preset, resolved.
pub fn plan_contracts(spec: &Spec) -> Vec<crate::contract::plans::PlanContract> {
    plan_contracts_of(spec, &crate::capacity::fit::presets(spec))
}

/// The contract of every plan, from the spec's fitted presets.
pub fn plan_contracts_of(
    spec: &Spec,
    presets: &std::collections::BTreeMap<String, crate::values::presets::Preset>,
) -> Vec<crate::contract::plans::PlanContract> {
    plan_contracts_over(spec, presets, &crate::values::default_values_map(spec))
}

/// [`plan_contracts_of`] over the chart's defaults already built.
pub fn plan_contracts_over(
    spec: &Spec,
    presets: &std::collections::BTreeMap<String, crate::values::presets::Preset>,
    defaults: &Map<String, Value>,
) -> Vec<crate::contract::plans::PlanContract> {
    plan_contracts_with(
        spec,
        &crate::capacity::capacity_exprs(spec),
        presets,
        &each_plan_values(defaults, presets),
        false,
    )
}

/// Each plan's resolved values ([`plan_values_sharing_over`]) in the order of
/// [`plan_names_of`], each on the next free core.
pub fn each_plan_values<'d>(
    defaults: &'d Map<String, Value>,
    presets: &std::collections::BTreeMap<String, crate::values::presets::Preset>,
) -> Vec<PlanValues<'d>> {
    crate::parallel::map_in_parallel(&plan_names_of(presets), |name| {
        plan_values_sharing_over(defaults, presets, name)
    })
}

/// The contract of every plan, over each plan's values already resolved
/// ([`each_plan_values`]) and the spec's capacity formula already built
/// ([`crate::capacity::capacity_exprs`]), each on the next free core, in the plans'
/// order; their schemas `frozen` ([`crate::contract::plans::plan_contract_frozen_over`])
/// or not.
pub fn plan_contracts_with(
    spec: &Spec,
    exprs: &crate::capacity::CapacityExprs,
    presets: &std::collections::BTreeMap<String, crate::values::presets::Preset>,
    values: &[PlanValues<'_>],
    frozen: bool,
) -> Vec<crate::contract::plans::PlanContract> {
    use crate::contract::plans::{plan_contract_frozen_over, plan_contract_over};
    let names = plan_names_of(presets);
    let plans: Vec<(&String, &Value)> = names.iter().zip(values.iter().map(|v| &**v)).collect();
    crate::parallel::map_in_parallel(&plans, |(name, values)| {
        if frozen {
            plan_contract_frozen_over(exprs, spec, name, values)
        } else {
            plan_contract_over(exprs, spec, name, values)
        }
    })
}

/// The names of the checked plans, from the spec's presets: `default` and each one.
pub fn plan_names_of(
    presets: &std::collections::BTreeMap<String, crate::values::presets::Preset>,
) -> Vec<String> {
    default_then(presets.keys())
}

/// `default`, then the presets' names in their order.
fn default_then<'a>(presets: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut names = vec![crate::values::presets::DEFAULT_PRESET.to_string()];
    names.extend(presets.cloned());
    names
}

/// The resolved values a plan was checked with: the defaults, or a preset over them
/// (`null` when they do not resolve).
pub fn plan_values(
    spec: &Spec,
    presets: &std::collections::BTreeMap<String, crate::values::presets::Preset>,
    plan: &str,
) -> Value {
    plan_values_over(&crate::values::default_values_map(spec), presets, plan)
}

/// [`plan_values`] over the chart's defaults already built.
pub fn plan_values_over(
    defaults: &serde_json::Map<String, Value>,
    presets: &std::collections::BTreeMap<String, crate::values::presets::Preset>,
    plan: &str,
) -> Value {
    let preset = (plan != crate::values::presets::DEFAULT_PRESET).then_some(plan);
    crate::values::presets::resolve_preset_over(defaults, presets, preset).unwrap_or(Value::Null)
}

/// [`plan_values_over`], sharing the parts of `defaults` the plan's preset does not
/// change ([`crate::values::resolve_values_sharing_defaults`]) instead of copying them.
pub fn plan_values_sharing_over<'d>(
    defaults: &'d serde_json::Map<String, Value>,
    presets: &std::collections::BTreeMap<String, crate::values::presets::Preset>,
    plan: &str,
) -> PlanValues<'d> {
    let overlay = if plan == crate::values::presets::DEFAULT_PRESET {
        None
    } else {
        match presets.get(plan) {
            Some(preset) => Some(&preset.values),
            None => return PlanValues::Whole(std::borrow::Cow::Owned(Value::Null)),
        }
    };
    PlanValues::Sharing(crate::values::resolve_values_sharing_defaults(
        defaults,
        overlay,
        &[],
    ))
}

/// A plan's whole values over the chart's defaults: the defaults themselves, borrowed,
/// for the `default` plan (no preset over them: [`plan_values_over`] would copy
/// them), a preset resolved over them for any other.
pub fn plan_values_of<'v>(
    defaults: &'v Value,
    presets: &std::collections::BTreeMap<String, crate::values::presets::Preset>,
    plan: &str,
) -> std::borrow::Cow<'v, Value> {
    if plan == crate::values::presets::DEFAULT_PRESET && defaults.is_object() {
        return std::borrow::Cow::Borrowed(defaults);
    }
    std::borrow::Cow::Owned(plan_values_over(
        crate::values::entries_of(defaults),
        presets,
        plan,
    ))
}

/// [`plan_values_of`], a preset's values sharing the defaults' own objects and arrays
/// where they would be copies of them ([`crate::values::resolve_values_sharing_defaults`]),
/// and those places ([`PlanValues::copies`]); none for the defaults themselves.
pub fn plan_values_sharing_defaults<'v>(
    defaults: &'v Value,
    presets: &std::collections::BTreeMap<String, crate::values::presets::Preset>,
    plan: &str,
) -> PlanValues<'v> {
    if plan == crate::values::presets::DEFAULT_PRESET && defaults.is_object() {
        return PlanValues::Whole(std::borrow::Cow::Borrowed(defaults));
    }
    plan_values_sharing_over(crate::values::entries_of(defaults), presets, plan)
}

/// A plan's whole values ([`plan_values_sharing_defaults`]).
#[derive(Debug)]
pub enum PlanValues<'v> {
    /// The defaults themselves, borrowed (the `default` plan), or values of their own.
    Whole(std::borrow::Cow<'v, Value>),
    /// A preset over the defaults, holding the defaults' own parts it does not change.
    Sharing(crate::values::SharingDefaults<'v>),
}

impl<'v> PlanValues<'v> {
    /// The places (keys from the root) where the values hold the defaults' own object
    /// or array, unchanged: none for the defaults themselves.
    pub fn copies(&self) -> &[Vec<&'v str>] {
        match self {
            PlanValues::Whole(_) => &[],
            PlanValues::Sharing(values) => values.copies(),
        }
    }
}

impl std::ops::Deref for PlanValues<'_> {
    type Target = Value;

    fn deref(&self) -> &Value {
        match self {
            PlanValues::Whole(values) => values,
            PlanValues::Sharing(values) => values,
        }
    }
}

/// A guard that draft-07 can say too, so Helm itself refuses `--set` values that
/// break it. Helm's messages do not print the `description`; the chart README lists
/// each rule.
pub struct InstallTimeRule {
    /// The guard's rule id.
    pub rule: &'static str,
    /// What the schema refuses, for the README.
    pub description: &'static str,
    /// The draft-07 schema (JSON text) the workload's values must also match.
    pub schema: &'static str,
}

/// Rules on every `api` workload's values.
pub const API_RULES: &[InstallTimeRule] = &[InstallTimeRule {
    rule: "autoscaling.one-autoscaler",
    description: "`autoscaling.enabled` and `keda.enabled` are never both true",
    schema: r#"{"not": {"required": ["autoscaling", "keda"], "properties": {"autoscaling": {"required": ["enabled"], "properties": {"enabled": {"const": true}}}, "keda": {"required": ["enabled"], "properties": {"enabled": {"const": true}}}}}}"#,
}];

/// `secrets`: `data` holds only the declared keys; without an `existingSecret` it
/// must hold every one of them, not empty, so Helm refuses an install that would
/// start pods without a key the application requires.
fn secrets_schema(spec: &Spec) -> Value {
    let keys: Vec<&String> = spec.secrets.keys.keys().collect();

    let mut schema = json!({
        "description": "Where the application's secret keys come from: an existing Secret, or `data` for a Secret the chart creates (evaluation).",
        "type": "object",
        "additionalProperties": false,
        "required": ["existingSecret", "data"],
        "properties": {
            "existingSecret": {"description": "An existing Secret holding every key the spec declares; empty: the chart creates `<release>-secrets` from `data`.", "type": "string"},
            "data": {"description": "The keys' values when the chart creates the Secret.", "type": "object", "additionalProperties": {"type": "string"}},
        }
    });
    // Only the declared keys (an empty `enum` is not valid draft-07).
    schema["properties"]["data"]["propertyNames"] = if keys.is_empty() {
        json!({"not": {}})
    } else {
        json!({"enum": keys})
    };
    if !keys.is_empty() {
        let filled: Map<String, Value> = keys
            .iter()
            .map(|k| ((*k).clone(), json!({"minLength": 1})))
            .collect();
        schema["allOf"] = json!([{
            "description": "secrets.required-keys: without `existingSecret`, `data` holds every key the application requires",
            "if": {"properties": {"existingSecret": {"const": ""}}},
            "then": {"properties": {"data": {"required": keys, "properties": filled}}},
        }]);
    }
    schema
}

/// Every install-time rule of the chart: `(values path, rule id, what it refuses)`.
pub fn install_time_rules(spec: &Spec) -> Vec<(String, &'static str, String)> {
    install_time_rules_of(spec, &root_rules(spec))
}

/// [`install_time_rules`] with the root rules already computed.
pub fn install_time_rules_of(
    spec: &Spec,
    root_rules: &[RootRule],
) -> Vec<(String, &'static str, String)> {
    let mut out = Vec::new();
    for (name, workload) in spec.workloads.all() {
        if workload.class() == WorkloadClass::Api {
            out.extend(API_RULES.iter().map(|r| {
                (
                    format!("workloads.{name}"),
                    r.rule,
                    r.description.to_string(),
                )
            }));
        }
    }
    out.extend(root_rules.iter().map(|r| {
        let text = r
            .description
            .strip_prefix(&format!("{}: ", r.rule))
            .unwrap_or(&r.description)
            .to_string();
        (r.path.clone(), r.rule, text)
    }));
    out
}

/// A workload's schema with the install-time rules added as `allOf` members.
fn with_install_time_rules(base: Value, rules: &[InstallTimeRule]) -> Value {
    let mut all_of = vec![base];
    for rule in rules {
        if let Ok(mut schema) = serde_json::from_str::<Value>(rule.schema) {
            if let Value::Object(m) = &mut schema {
                m.insert(
                    "description".into(),
                    Value::String(format!("{}: {}", rule.rule, rule.description)),
                );
            }
            all_of.push(schema);
        }
    }
    json!({ "allOf": all_of })
}

/// A map schema closed to the names the spec declares: values may change what a
/// declared entry holds, not add entries the chart's templates do not know.
fn close_map<'a>(mut schema: Value, names: impl Iterator<Item = &'a String>) -> Value {
    let item = schema
        .get("additionalProperties")
        .cloned()
        .unwrap_or(json!({}));
    let names: Vec<String> = names.cloned().collect();
    let properties: Map<String, Value> = names.iter().map(|n| (n.clone(), item.clone())).collect();
    if let Value::Object(m) = &mut schema {
        m.insert("properties".into(), Value::Object(properties));
        m.insert("additionalProperties".into(), Value::Bool(false));
        m.insert("required".into(), json!(names));
    }
    schema
}

/// The spec-declared maps of a workload (connection allocations) closed the same way.
fn close_workload_maps(schema: Value, workload: &Value) -> Value {
    let mut overrides = Map::new();
    for key in ["postgres", "redis"] {
        let declared: Vec<String> = workload
            .get(key)
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let def = if key == "postgres" {
            "PostgresAllocation"
        } else {
            "RedisAllocation"
        };
        overrides.insert(
            key.to_string(),
            close_map(
                json!({"type": "object", "additionalProperties": {"$ref": format!("#/definitions/{def}")}}),
                declared.iter(),
            ),
        );
    }
    let mut all_of = match schema {
        Value::Object(mut m) if m.contains_key("allOf") && m.len() == 1 => {
            match m.remove("allOf") {
                Some(Value::Array(a)) => a,
                _ => Vec::new(),
            }
        }
        other => vec![other],
    };
    all_of.push(crate::contract::object([(
        "properties",
        Value::Object(overrides),
    )]));
    crate::contract::object([("allOf", Value::Array(all_of))])
}

/// Removes `format` annotations schemars adds for Rust integer widths (`uint32`):
/// they are not draft-07 formats and validators treat them differently.
fn tidy(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if matches!(map.get("format"), Some(Value::String(f)) if f.starts_with("int") || f.starts_with("uint") || f == "double")
            {
                map.remove("format");
            }
            // Every accepted integer fits the typed model (and Kubernetes' int32).
            if map.get("type").and_then(Value::as_str) == Some("integer")
                && !map.contains_key("maximum")
            {
                map.insert("maximum".into(), json!(crate::model::INT_MAX));
            }
            for child in map.values_mut() {
                tidy(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// Marks every non-nullable property of a closed object as required, so a `null`
/// in user values (which deletes the key under Helm's merge) is refused by the
/// schema instead of leaving a hole in the templates.
fn require_non_nullable(v: &mut Value) {
    match v {
        Value::Object(map) => {
            let closed = map.get("additionalProperties") == Some(&Value::Bool(false));
            if closed {
                if let Some(Value::Object(props)) = map.get("properties") {
                    let required: Vec<Value> = props
                        .iter()
                        .filter(|(_, s)| !nullable(s))
                        .map(|(k, _)| Value::String(k.clone()))
                        .collect();
                    map.insert("required".into(), Value::Array(required));
                }
            }
            for child in map.values_mut() {
                require_non_nullable(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(require_non_nullable),
        _ => {}
    }
}

fn nullable(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
        _ => schema
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|alts| alts.iter().any(nullable)),
    }
}

/// Resolves a local `$ref` (`#/definitions/X`) against the root schema, and looks
/// through an `allOf` wrapper (schemars' way of describing a referenced type, and the
/// install-time rules) to the schema that declares the properties.
pub fn resolve_ref<'s>(root: &'s Value, schema: &'s Value) -> &'s Value {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        return r
            .strip_prefix("#/definitions/")
            .and_then(|name| root.get("definitions")?.get(name))
            .map(|s| resolve_ref(root, s))
            .unwrap_or(schema);
    }
    if schema.get("properties").is_none() {
        if let Some(first) = schema.get("allOf").and_then(|a| a.get(0)) {
            return resolve_ref(root, first);
        }
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frame schema is as if the whole of it were tidied, the model's definitions
    /// (tidied when the file was written) included: tidying it again changes nothing.
    #[test]
    fn the_frame_schema_is_tidied_throughout() {
        for name in ["agent-platform", "llm-gateway", "web-shop"] {
            let spec = crate::guards::testing::example(name);
            let frame = frame_schema(&spec);
            let mut again = frame.clone();
            tidy(&mut again);
            require_non_nullable(&mut again);
            assert!(again == frame, "{name}");
            let definitions = frame["definitions"].as_object().unwrap();
            assert!(definitions.len() > 10, "{name}");
        }
    }

    /// Tidying removes the integer formats, bounds every integer by the model's
    /// largest and requires every non-nullable property of a closed object.
    #[test]
    fn tidying_bounds_integers_and_requires_what_cannot_be_null() {
        let mut v = json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "a": {"type": "integer", "format": "uint32"},
                "b": {"type": ["string", "null"]},
                "c": {"anyOf": [{"type": "null"}, {"type": "string"}]},
                "d": {"type": "integer", "maximum": 5, "format": "double"}
            }
        });
        tidy(&mut v);
        require_non_nullable(&mut v);
        assert_eq!(
            v,
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["a", "d"],
                "properties": {
                    "a": {"type": "integer", "maximum": crate::model::INT_MAX},
                    "b": {"type": ["string", "null"]},
                    "c": {"anyOf": [{"type": "null"}, {"type": "string"}]},
                    "d": {"type": "integer", "maximum": 5}
                }
            })
        );
    }
}
