//! The values model's schemas, as schemars generates them, read from
//! `schemas/values-model.json` instead of generated at each run.
//!
//! `values.schema.json` (and `render`'s check of the values, [`super::schema::frame_schema`])
//! is built around the schemas of the values model's Rust types. They depend on the
//! types only, never on the spec, yet generating them was two thirds of the frame
//! schema's instructions and about a sixth of an example's `render`. The file holds, for
//! each type the frame schema asks schemars for, the schema schemars gives and the
//! definitions it refers to (directly or through other definitions), and every
//! definition once, already tidied as `values.schema.json` holds it (integer formats
//! dropped, every integer bounded, the non-nullable properties of a closed object
//! required), which the frame schema then need not do at every run. A unit test holds
//! the file equal to schemars' output so tidied, and the definitions a spec's frame
//! schema takes equal to those schemars adds for the same types, tidied
//! (`UPDATE_GOLDEN=1 cargo test` rewrites the file).

use super::schema::generator;
use crate::model::{
    ApiValues, BundledValues, ConfigFileValues, DependencyCapacity, FeatureSwitch, ImageValues,
    JobsValues, LocalObjectReference, ManagedEnv, MigrateValues, PoolValues, PostgresPooler,
    Scheduling, ServiceAccountValues, SharedStoreValues, StartupSettings, StoreRedis, WorkerValues,
};
use schemars::generate::SchemaGenerator;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// `schemas/values-model.json`, as committed.
const COMMITTED: &str = include_str!("../../schemas/values-model.json");

// [`COMMITTED`]'s schemas without their annotations, as `build.rs` writes them
// ([`super::annotations::strip_model_annotations`]): `TYPE_SCHEMAS` and `DEFINITIONS`
// (sorted by name), each schema the text of its JSON.
include!(concat!(env!("OUT_DIR"), "/model_constraints.rs"));

/// Each of [`DEFINITIONS`], parsed on first use ([`model_definition`]).
static PARSED_DEFINITIONS: [OnceLock<Value>; DEFINITIONS.len()] =
    [const { OnceLock::new() }; DEFINITIONS.len()];

/// The model's definition `name` without its annotations, parsed the first time it is
/// asked for in the process; `None` when the model has no such definition. A frame
/// built with [`ModelSchemas::without_definitions`] leaves the model's definitions to
/// this: the walk of the values parses only those they reach (about two thirds of
/// the text for the smaller examples).
pub fn model_definition(name: &str) -> Option<&'static Value> {
    let index = DEFINITIONS.binary_search_by(|(n, _)| (*n).cmp(name)).ok()?;
    // The text is the build's own JSON; were it not, `Null` is no schema, which the
    // walk cannot decide, and the values are checked by `jsonschema` instead.
    Some(
        PARSED_DEFINITIONS[index]
            .get_or_init(|| serde_json::from_str(DEFINITIONS[index].1).unwrap_or(Value::Null)),
    )
}

/// The names of the model's definitions, the longest text first: the order in which
/// `render` parses them ahead ([`model_definition`]) in its helper's idle time.
pub fn model_definition_names_longest_first() -> Vec<&'static str> {
    let mut names: Vec<(usize, &'static str)> = DEFINITIONS
        .iter()
        .map(|(name, text)| (text.len(), *name))
        .collect();
    names.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    names.into_iter().map(|(_, name)| name).collect()
}

/// A type of the values model whose schema the frame schema takes. Named as in
/// `schemas/values-model.json` (the Rust type's name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelType {
    Api,
    Jobs,
    Pool,
    Worker,
    Migrate,
    Image,
    LocalObjectReference,
    ServiceAccount,
    ConfigFile,
    FeatureSwitch,
    Bundled,
    SharedStore,
    StoreRedis,
    Scheduling,
    ManagedEnv,
    PostgresPooler,
    StartupSettings,
    DependencyCapacity,
}

impl ModelType {
    /// Every model type: the classes, then the others, in the order `frame_schema`
    /// asks for them (the file lists them by name).
    pub const ALL: [ModelType; 18] = [
        ModelType::Api,
        ModelType::Jobs,
        ModelType::Pool,
        ModelType::Worker,
        ModelType::Migrate,
        ModelType::Image,
        ModelType::LocalObjectReference,
        ModelType::ServiceAccount,
        ModelType::ConfigFile,
        ModelType::FeatureSwitch,
        ModelType::Bundled,
        ModelType::SharedStore,
        ModelType::StoreRedis,
        ModelType::Scheduling,
        ModelType::ManagedEnv,
        ModelType::PostgresPooler,
        ModelType::StartupSettings,
        ModelType::DependencyCapacity,
    ];

    /// The Rust type's name, the type's key in the file.
    pub fn name(self) -> &'static str {
        match self {
            ModelType::Api => "ApiValues",
            ModelType::Jobs => "JobsValues",
            ModelType::Pool => "PoolValues",
            ModelType::Worker => "WorkerValues",
            ModelType::Migrate => "MigrateValues",
            ModelType::Image => "ImageValues",
            ModelType::LocalObjectReference => "LocalObjectReference",
            ModelType::ServiceAccount => "ServiceAccountValues",
            ModelType::ConfigFile => "ConfigFileValues",
            ModelType::FeatureSwitch => "FeatureSwitch",
            ModelType::Bundled => "BundledValues",
            ModelType::SharedStore => "SharedStoreValues",
            ModelType::StoreRedis => "StoreRedis",
            ModelType::Scheduling => "Scheduling",
            ModelType::ManagedEnv => "ManagedEnv",
            ModelType::PostgresPooler => "PostgresPooler",
            ModelType::StartupSettings => "StartupSettings",
            ModelType::DependencyCapacity => "DependencyCapacity",
        }
    }

    /// What schemars gives for the type (`gen.subschema_for`), adding the definitions
    /// it refers to to `gen`.
    fn subschema_in(self, gen: &mut SchemaGenerator) -> Value {
        match self {
            ModelType::Api => gen.subschema_for::<ApiValues>(),
            ModelType::Jobs => gen.subschema_for::<JobsValues>(),
            ModelType::Pool => gen.subschema_for::<PoolValues>(),
            ModelType::Worker => gen.subschema_for::<WorkerValues>(),
            ModelType::Migrate => gen.subschema_for::<MigrateValues>(),
            ModelType::Image => gen.subschema_for::<ImageValues>(),
            ModelType::LocalObjectReference => gen.subschema_for::<LocalObjectReference>(),
            ModelType::ServiceAccount => gen.subschema_for::<ServiceAccountValues>(),
            ModelType::ConfigFile => gen.subschema_for::<ConfigFileValues>(),
            ModelType::FeatureSwitch => gen.subschema_for::<FeatureSwitch>(),
            ModelType::Bundled => gen.subschema_for::<BundledValues>(),
            ModelType::SharedStore => gen.subschema_for::<SharedStoreValues>(),
            ModelType::StoreRedis => gen.subschema_for::<StoreRedis>(),
            ModelType::Scheduling => gen.subschema_for::<Scheduling>(),
            ModelType::ManagedEnv => gen.subschema_for::<ManagedEnv>(),
            ModelType::PostgresPooler => gen.subschema_for::<PostgresPooler>(),
            ModelType::StartupSettings => gen.subschema_for::<StartupSettings>(),
            ModelType::DependencyCapacity => gen.subschema_for::<DependencyCapacity>(),
        }
        .to_value()
    }
}

/// The model's schemas of one run, read from the committed file: each call to
/// [`ModelSchemas::schema_of`] takes a type's schema and records the definitions it
/// refers to; [`ModelSchemas::into_definitions`] gives those definitions, the same
/// ones schemars would have added for the same types.
pub struct ModelSchemas {
    types: Map<String, Value>,
    definitions: Map<String, Value>,
    used: BTreeSet<String>,
}

impl ModelSchemas {
    /// The committed schemas, parsed.
    pub fn committed() -> ModelSchemas {
        Self::of_text(COMMITTED)
    }

    /// The types' schemas without their annotations ([`super::annotations`]), and no
    /// definition: for a frame built only to check values with, whose walk finds the
    /// model's definitions with [`model_definition`] (`render`'s frame). They accept
    /// exactly the values the committed schemas accept.
    pub fn without_definitions() -> ModelSchemas {
        let types = TYPE_SCHEMAS
            .iter()
            .map(|(name, schema)| {
                let schema: Value = serde_json::from_str(schema).unwrap_or(Value::Null);
                let mut entry = Map::new();
                entry.insert("schema".to_string(), schema);
                (name.to_string(), Value::Object(entry))
            })
            .collect();
        ModelSchemas {
            types,
            definitions: Map::new(),
            used: BTreeSet::new(),
        }
    }

    /// The schemas of a file's text in the committed layout (empty when it is not).
    fn of_text(text: &str) -> ModelSchemas {
        let mut file = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(file)) => file,
            _ => Map::new(),
        };
        let mut take = |key: &str| match file.remove(key) {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        };
        ModelSchemas {
            types: take("types"),
            definitions: take("definitions"),
            used: BTreeSet::new(),
        }
    }

    /// The schema schemars gives for `model` (a `$ref` to its definition for most
    /// types); the definitions it refers to are kept for [`ModelSchemas::into_definitions`].
    pub fn schema_of(&mut self, model: ModelType) -> Value {
        let Some(entry) = self.types.get(model.name()) else {
            return Value::Object(Map::new());
        };
        if let Some(uses) = entry.get("uses").and_then(Value::as_array) {
            self.used
                .extend(uses.iter().filter_map(Value::as_str).map(str::to_string));
        }
        entry.get("schema").cloned().unwrap_or(Value::Null)
    }

    /// The definitions the schemas taken refer to, as schemars' `take_definitions`
    /// gives them, tidied ([`super::schema::tidied`]).
    pub fn into_definitions(self) -> Map<String, Value> {
        let ModelSchemas {
            mut definitions,
            used,
            ..
        } = self;
        definitions.retain(|name, _| used.contains(name));
        definitions
    }
}

/// What `schemas/values-model.json` holds, generated by schemars now: under `types`,
/// each model type's schema and the definitions it uses; under `definitions`, every
/// definition once.
pub fn generated_model_schemas() -> Value {
    let mut gen = generator();
    let schemas: Vec<(ModelType, Value)> = ModelType::ALL
        .iter()
        .map(|&model| (model, model.subschema_in(&mut gen)))
        .collect();
    // Tidied as `values.schema.json` holds them, so that the frame schema need not
    // tidy them at every run (`frame_schema_with`).
    let definitions = super::schema::tidied(gen.take_definitions(true).into_iter().collect());
    let mut types = Map::new();
    for (model, schema) in schemas {
        let uses: Vec<Value> = definitions_used_by(&schema, &definitions)
            .into_iter()
            .map(Value::String)
            .collect();
        types.insert(
            model.name().to_string(),
            serde_json::json!({"schema": schema, "uses": uses}),
        );
    }
    serde_json::json!({"types": types, "definitions": definitions})
}

/// The definitions `schema` refers to (`#/definitions/<name>`), directly or through
/// other definitions, sorted.
fn definitions_used_by(schema: &Value, definitions: &Map<String, Value>) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    let mut pending = Vec::new();
    references_in(schema, &mut pending);
    while let Some(name) = pending.pop() {
        if used.insert(name.clone()) {
            if let Some(definition) = definitions.get(&name) {
                references_in(definition, &mut pending);
            }
        }
    }
    used
}

/// Pushes the name of each definition `schema` refers to by `$ref`.
fn references_in(schema: &Value, names: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("$ref", Value::String(reference)) => {
                        if let Some(name) = reference.strip_prefix("#/definitions/") {
                            names.push(name.to_string());
                        }
                    }
                    _ => references_in(value, names),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| references_in(item, names)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_file() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/values-model.json")
    }

    /// The committed file is what schemars generates (`UPDATE_GOLDEN=1` rewrites it).
    #[test]
    fn the_committed_model_schemas_are_what_schemars_generates() {
        let fresh = serde_json::to_string_pretty(&generated_model_schemas()).unwrap() + "\n";
        // Rewritten on `UPDATE_GOLDEN=1`, never in CI (as the suite's golden files).
        let asked = std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1");
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        assert!(!(asked && ci), "UPDATE_GOLDEN=1 is refused in CI");
        if asked {
            std::fs::write(repo_file(), &fresh).unwrap();
        }
        let committed = std::fs::read_to_string(repo_file()).unwrap();
        assert!(
            committed == fresh,
            "schemas/values-model.json is stale (UPDATE_GOLDEN=1 cargo test to accept)"
        );
        assert_eq!(
            committed, COMMITTED,
            "the binary embeds the file as committed"
        );
    }

    /// Every definition once, each parsing to a schema, the longest text first.
    #[test]
    fn definitions_are_named_once_each_the_longest_first() {
        let names = model_definition_names_longest_first();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        let all: Vec<&str> = DEFINITIONS.iter().map(|(name, _)| *name).collect();
        assert_eq!(sorted, all);
        let text = |name: &str| DEFINITIONS.iter().find(|(n, _)| *n == name).unwrap().1;
        for pair in names.windows(2) {
            let (a, b) = (text(pair[0]).len(), text(pair[1]).len());
            assert!(a > b || (a == b && pair[0] < pair[1]), "{pair:?}");
        }
        assert!(names
            .iter()
            .all(|name| model_definition(name).is_some_and(Value::is_object)));
    }

    /// The frame schema asks for each class it has workloads of, then for every other
    /// type: for each set of classes, the definitions taken from the file are those
    /// schemars adds for the same types, and each type's schema is schemars'.
    #[test]
    fn the_definitions_taken_are_those_schemars_adds_for_the_same_types() {
        let classes = &ModelType::ALL[..5];
        let others = &ModelType::ALL[5..];
        for subset in 0u32..(1 << classes.len()) {
            let asked: Vec<ModelType> = classes
                .iter()
                .enumerate()
                .filter(|(i, _)| subset & (1 << i) != 0)
                .map(|(_, &c)| c)
                .chain(others.iter().copied())
                .collect();
            let mut gen = generator();
            let mut model = ModelSchemas::committed();
            for &model_type in &asked {
                assert_eq!(
                    model.schema_of(model_type),
                    model_type.subschema_in(&mut gen),
                    "{model_type:?}"
                );
            }
            let expected =
                super::super::schema::tidied(gen.take_definitions(true).into_iter().collect());
            let taken = model.into_definitions();
            assert_eq!(
                taken.keys().collect::<Vec<_>>(),
                expected.keys().collect::<Vec<_>>(),
                "classes {subset:05b}"
            );
            assert!(taken == expected, "classes {subset:05b}");
        }
    }

    /// The schemas to check values with are the committed ones without their
    /// annotations: every type and every definition, sorted by name, each found by
    /// name; a frame built with them holds no definition of the model.
    #[test]
    fn the_schemas_to_check_with_are_the_committed_ones_without_annotations() {
        let committed: Value = serde_json::from_str(COMMITTED).unwrap();
        let mut full = ModelSchemas::committed();
        let mut bare = ModelSchemas::without_definitions();
        for model in ModelType::ALL {
            let mut schema = full.schema_of(model);
            super::super::annotations::strip_annotations(&mut schema);
            assert_eq!(bare.schema_of(model), schema, "{model:?}");
        }
        assert_eq!(TYPE_SCHEMAS.len(), ModelType::ALL.len());
        assert!(bare.into_definitions().is_empty());
        let definitions = committed["definitions"].as_object().unwrap();
        assert_eq!(definitions.len(), DEFINITIONS.len());
        assert!(definitions.len() > 40, "{}", definitions.len());
        let names: Vec<&str> = DEFINITIONS.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            definitions.keys().map(String::as_str).collect::<Vec<_>>()
        );
        let (mut full_objects, mut bare_objects) = (0, 0);
        for (name, definition) in definitions {
            full_objects += objects_in(definition);
            let mut expected = definition.clone();
            super::super::annotations::strip_annotations(&mut expected);
            let found = model_definition(name).unwrap();
            assert!(found == &expected, "{name}");
            assert!(
                std::ptr::eq(found, model_definition(name).unwrap()),
                "parsed once"
            );
            bare_objects += objects_in(found);
        }
        assert!(
            bare_objects < full_objects,
            "{bare_objects} of {full_objects}"
        );
        for unknown in ["", "Nothing", "apivalues", "ApiValues/properties", "ZZZ"] {
            assert_eq!(model_definition(unknown), None, "{unknown}");
        }
        let texts: usize = DEFINITIONS.iter().map(|(_, t)| t.len()).sum();
        assert!(texts * 3 < COMMITTED.len(), "{texts}");
        assert!(DEFINITIONS.iter().all(|(_, t)| !t.contains('\n')));
    }

    /// How many JSON objects `value` holds, itself included.
    fn objects_in(value: &Value) -> usize {
        match value {
            Value::Object(map) => 1 + map.values().map(objects_in).sum::<usize>(),
            Value::Array(items) => items.iter().map(objects_in).sum(),
            _ => 0,
        }
    }

    /// A type refers to its own definition, and through it to those its fields refer
    /// to; a definition no schema taken refers to is left out.
    #[test]
    fn definitions_used_follow_references_through_definitions() {
        let definitions: Map<String, Value> = serde_json::from_value(serde_json::json!({
            "A": {"properties": {"b": {"$ref": "#/definitions/B"}}},
            "B": {"items": [{"$ref": "#/definitions/C"}]},
            "C": {"type": "string"},
            "D": {"$ref": "#/definitions/A"}
        }))
        .unwrap();
        let used = definitions_used_by(
            &serde_json::json!({"$ref": "#/definitions/A"}),
            &definitions,
        );
        assert_eq!(used.into_iter().collect::<Vec<_>>(), ["A", "B", "C"]);
        let none = definitions_used_by(&serde_json::json!({"$ref": "#/other/A"}), &definitions);
        assert!(none.is_empty());
        let mut model = ModelSchemas::of_text(
            &serde_json::json!({
                "types": {"ApiValues": {"schema": {"$ref": "#/definitions/B"}, "uses": ["B", "C"]}},
                "definitions": definitions
            })
            .to_string(),
        );
        assert_eq!(
            model.schema_of(ModelType::Api),
            serde_json::json!({"$ref": "#/definitions/B"})
        );
        assert_eq!(model.schema_of(ModelType::Jobs), serde_json::json!({}));
        assert_eq!(
            model.into_definitions().keys().collect::<Vec<_>>(),
            ["B", "C"]
        );
    }
}
