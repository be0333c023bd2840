//! JSON schemas generated from the Rust types: the spec's own schema
//! (`shipshape schema`, committed as `schemas/shipshape.schema.json`) and the chart's
//! `values.schema.json` (draft-07, self-contained: local `$ref`s only).

use crate::model::{
    ApiValues, ConfigFileValues, ImageValues, JobsValues, LocalObjectReference, MigrateValues,
    PoolValues, ServiceAccountValues, WorkerValues,
};
use crate::spec::{Spec, WorkloadClass};
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{json, Map, Value};

fn generator() -> SchemaGenerator {
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
    let mut gen = generator();
    let mut workloads = Map::new();
    for (name, workload) in spec.workloads.all() {
        let schema = match workload.class() {
            WorkloadClass::Api => gen.subschema_for::<ApiValues>(),
            WorkloadClass::Jobs => gen.subschema_for::<JobsValues>(),
            WorkloadClass::Pool => gen.subschema_for::<PoolValues>(),
            WorkloadClass::Worker => gen.subschema_for::<WorkerValues>(),
            WorkloadClass::Migrate => gen.subschema_for::<MigrateValues>(),
        };
        workloads.insert(name.to_string(), schema.to_value());
    }
    let names: Vec<&str> = spec.workloads.all().iter().map(|(n, _)| *n).collect();
    let properties = json!({
        "image": gen.subschema_for::<ImageValues>().to_value(),
        "imagePullSecrets": {
            "description": "Image pull secrets of every pod.",
            "type": "array",
            "items": gen.subschema_for::<LocalObjectReference>().to_value()
        },
        "serviceAccount": gen.subschema_for::<ServiceAccountValues>().to_value(),
        "configFile": gen.subschema_for::<ConfigFileValues>().to_value(),
        "config": {
            "description": "The application's configuration, rendered into a ConfigMap whose checksum rolls the pods that read it.",
            "type": "object"
        },
        "workloads": {
            "description": "The workloads, by name.",
            "type": "object",
            "properties": workloads,
            "required": names,
            "additionalProperties": false
        }
    });
    let definitions = gen.take_definitions(true);
    let mut root = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": format!("Values of the {} chart", spec.chart.name),
        "type": "object",
        "properties": properties,
        "required": ["image", "imagePullSecrets", "serviceAccount", "configFile", "config", "workloads"],
        "additionalProperties": false,
        "definitions": Value::Object(definitions.into_iter().collect()),
    });
    tidy(&mut root);
    require_non_nullable(&mut root);
    root
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

/// Resolves a local `$ref` (`#/definitions/X`) against the root schema.
pub fn resolve_ref<'s>(root: &'s Value, schema: &'s Value) -> &'s Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix("#/definitions/")
            .and_then(|name| root.get("definitions")?.get(name))
            .map(|s| resolve_ref(root, s))
            .unwrap_or(schema),
        None => schema,
    }
}
