//! A schema without its annotations: the keywords that describe (`description`,
//! `default`, ...) and constrain nothing, so that a schema without them accepts
//! exactly the values the schema with them accepts.
//!
//! `render` only asks whether values pass the model's schemas, and more than half of
//! their text is descriptions and defaults, which it parsed at every run. `build.rs`
//! writes the schemas of `schemas/values-model.json` without them
//! ([`strip_model_annotations`]), which `render` reads instead
//! ([`super::model_schemas::ModelSchemas::without_definitions`],
//! [`super::model_schemas::model_definition`]). This file is compiled twice, into the
//! library (tested there) and into `build.rs` (`#[path]`), so it uses nothing but
//! `serde_json`.

use serde_json::Value;

/// The draft-07 keywords that constrain nothing, as the values walk
/// ([`crate::values::schema_verdict`]) reads them: it passes each of them whatever
/// its argument. `definitions` constrains nothing either, but holds the schemas that
/// references name, and stays.
pub const ANNOTATIONS: [&str; 6] = [
    "$schema",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
];

/// Removes the [`ANNOTATIONS`] from `schema` and from every schema inside it: those
/// under the keywords that hold schemas (`properties`, `items`, `allOf`, ...). The
/// arguments of every other keyword (`enum`, `const`, `required`, ...) are values,
/// not schemas, and stay as they are, as do property names that are spelled like an
/// annotation (`properties: {default: ...}`).
pub fn strip_annotations(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    map.retain(|keyword, _| !ANNOTATIONS.contains(&keyword.as_str()));
    for (keyword, argument) in map.iter_mut() {
        match keyword.as_str() {
            // A map of names to schemas (`dependencies` may map a name to a list of
            // names instead, which holds no object to strip).
            "properties" | "patternProperties" | "definitions" | "dependencies" => {
                if let Value::Object(schemas) = argument {
                    schemas.values_mut().for_each(strip_schema_or_list);
                }
            }
            // A schema, or a list of schemas.
            "items"
            | "additionalItems"
            | "additionalProperties"
            | "contains"
            | "propertyNames"
            | "not"
            | "if"
            | "then"
            | "else"
            | "allOf"
            | "anyOf"
            | "oneOf" => strip_schema_or_list(argument),
            _ => {}
        }
    }
}

/// [`strip_annotations`] of a schema, or of each schema of a list.
fn strip_schema_or_list(argument: &mut Value) {
    match argument {
        Value::Array(schemas) => schemas.iter_mut().for_each(strip_annotations),
        schema => strip_annotations(schema),
    }
}

/// [`strip_annotations`] of each schema of `schemas/values-model.json`'s text: each
/// type's schema (under `types`, beside the definitions it uses) and each definition.
pub fn strip_model_annotations(file: &mut Value) {
    if let Some(Value::Object(types)) = file.get_mut("types") {
        for entry in types.values_mut() {
            if let Some(schema) = entry.get_mut("schema") {
                strip_annotations(schema);
            }
        }
    }
    if let Some(Value::Object(definitions)) = file.get_mut("definitions") {
        definitions.values_mut().for_each(strip_annotations);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Annotations go at every depth where a schema stands; values and names spelled
    /// like one stay.
    #[test]
    fn annotations_go_from_every_schema_and_values_stay() {
        // Every keyword that holds schemas, each with `leaf` where a schema stands,
        // and the arguments that are values, which stay whatever their spelling.
        let positions = |leaf: fn() -> Value| {
            json!({
                "properties": {"default": leaf(), "description": leaf()},
                "patternProperties": {"^a": leaf()},
                "definitions": {"D": leaf()},
                "dependencies": {"a": leaf(), "b": ["description"]},
                "items": [leaf(), leaf()],
                "additionalItems": leaf(),
                "additionalProperties": leaf(),
                "contains": leaf(),
                "propertyNames": leaf(),
                "not": leaf(),
                "if": leaf(),
                "then": leaf(),
                "else": leaf(),
                "allOf": [leaf()],
                "anyOf": [leaf(), true],
                "oneOf": [leaf()],
                "enum": [{"description": "kept"}],
                "const": {"default": 1},
                "required": ["description"],
                "x-other": {"description": "kept"}
            })
        };
        let note = || json!({"description": "d", "title": "t", "type": "integer"});
        let mut schema = positions(note);
        let annotations = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "$comment": "c",
            "description": "d",
            "default": {"description": "a default value"},
            "examples": [{"title": "x"}],
            "title": "t"
        });
        for (keyword, argument) in annotations.as_object().unwrap() {
            schema[keyword] = argument.clone();
        }
        strip_annotations(&mut schema);
        assert_eq!(schema, positions(|| json!({"type": "integer"})));
        for not_an_object in [json!(true), json!("description"), json!([note()])] {
            let mut same = not_an_object.clone();
            strip_annotations(&mut same);
            assert_eq!(same, not_an_object);
        }
    }

    /// The walk of the values ([`crate::values::schema_verdict`]) passes every value
    /// through each of the [`ANNOTATIONS`], whatever its argument, beside another
    /// keyword or alone: a schema without them decides as the schema with them.
    #[test]
    fn annotations_decide_nothing() {
        let arguments = [json!(false), json!({"not": {}}), json!("x"), json!([1])];
        let values = [
            json!(null),
            json!(3),
            json!("s"),
            json!({"a": 1}),
            json!([]),
        ];
        for keyword in ANNOTATIONS {
            for argument in &arguments {
                for value in &values {
                    let alone = json!({ keyword: argument });
                    assert_eq!(
                        crate::values::schema_verdict::schema_verdict(&alone, value),
                        Some(true),
                        "{alone}"
                    );
                    let beside = json!({ keyword: argument, "type": "integer" });
                    let without = json!({"type": "integer"});
                    assert_eq!(
                        crate::values::schema_verdict::schema_verdict(&beside, value),
                        crate::values::schema_verdict::schema_verdict(&without, value),
                        "{beside} on {value}"
                    );
                }
            }
        }
    }

    /// In the model's file, each type's schema and each definition lose their
    /// annotations, and the names of the definitions a type uses stay.
    #[test]
    fn the_model_file_loses_the_annotations_of_its_schemas_only() {
        let mut file = json!({
            "types": {"A": {"schema": {"$ref": "#/definitions/A", "description": "d"}, "uses": ["A"]}},
            "definitions": {"A": {"type": "object", "default": {}, "properties": {"title": {"title": "t"}}}},
            "description": "the file's own key stays"
        });
        strip_model_annotations(&mut file);
        assert_eq!(
            file,
            json!({
                "types": {"A": {"schema": {"$ref": "#/definitions/A"}, "uses": ["A"]}},
                "definitions": {"A": {"type": "object", "properties": {"title": {}}}},
                "description": "the file's own key stays"
            })
        );
    }
}
