//! A schema's JSON frozen into a compact, read-only form: `generate` keeps the root
//! rules of `values.schema.json` this way from the moment each is built.
//!
//! `serde_json` holds every object in a B-tree whose node has room for eleven entries
//! (632 bytes), however few it holds. Nine objects in ten of a values schema hold one
//! or two entries (`{"const": true}`, `{"properties": {<name>: ...}}`): at 400
//! workloads the 3,808 root rules took about 70 MB as `Value`s for 3 MB of JSON, and
//! every pass over them (writing the file, compiling the checks) waited on memory.
//! Frozen, an object is one slice of its entries, each 48 bytes.
//!
//! Only the keywords whose arguments are schemas are frozen further: `properties`,
//! `patternProperties` and `definitions` (objects of schemas), `allOf`, `anyOf` and
//! `oneOf` (arrays of schemas), and the keywords of one schema (`not`, `if`, `then`,
//! `else`, `items`, `additionalProperties`, `propertyNames`, `contains`,
//! `additionalItems`). Every other argument (a `const`, an `enum`, `required`, a
//! description) is data and stays a [`Value`], so the compiled checks borrow it as
//! they borrow it from a whole schema ([`super::schema_program`]).

use serde_json::{Map, Value};

/// A schema, or a keyword's argument, frozen ([`FrozenSchema::of_schema`]).
#[derive(Debug, Clone, PartialEq)]
pub enum FrozenSchema {
    /// Data, or a schema that is not an object (`true`, `false`): as `serde_json` holds it.
    Json(Value),
    /// An object, its entries in ascending order of key (as `serde_json`'s map).
    Object(Box<[(Box<str>, FrozenSchema)]>),
    /// An array of schemas.
    Array(Box<[FrozenSchema]>),
}

impl FrozenSchema {
    /// `schema` frozen, read as a schema: an object's keywords are frozen by what their
    /// arguments are; anything else is kept as it is.
    pub fn of_schema(schema: Value) -> Self {
        match schema {
            Value::Object(map) => FrozenSchema::Object(
                map.into_iter()
                    .map(|(keyword, argument)| {
                        let frozen = FrozenSchema::of_argument(&keyword, argument);
                        (keyword.into_boxed_str(), frozen)
                    })
                    .collect(),
            ),
            other => FrozenSchema::Json(other),
        }
    }

    /// The argument of `keyword` frozen: schemas as schemas, data as it is.
    fn of_argument(keyword: &str, argument: Value) -> Self {
        match (keyword, argument) {
            ("properties" | "patternProperties" | "definitions", Value::Object(map)) => {
                FrozenSchema::Object(
                    map.into_iter()
                        .map(|(name, schema)| {
                            (name.into_boxed_str(), FrozenSchema::of_schema(schema))
                        })
                        .collect(),
                )
            }
            ("allOf" | "anyOf" | "oneOf", Value::Array(schemas)) => {
                FrozenSchema::Array(schemas.into_iter().map(FrozenSchema::of_schema).collect())
            }
            (
                "not"
                | "if"
                | "then"
                | "else"
                | "items"
                | "additionalProperties"
                | "propertyNames"
                | "contains"
                | "additionalItems",
                schema @ Value::Object(_),
            ) => FrozenSchema::of_schema(schema),
            (_, data) => FrozenSchema::Json(data),
        }
    }

    /// The entry of `key`, when this is an object that has it.
    pub fn get(&self, key: &str) -> Option<&FrozenSchema> {
        match self {
            FrozenSchema::Object(entries) => entries
                .binary_search_by(|(k, _)| k.as_ref().cmp(key))
                .ok()
                .map(|i| &entries[i].1),
            _ => None,
        }
    }

    /// Sets the entry of `key` to `value`, in its place among the sorted keys; turns
    /// anything but an object into one.
    pub fn insert(&mut self, key: &str, value: FrozenSchema) {
        let mut entries = match std::mem::replace(self, FrozenSchema::Json(Value::Null)) {
            FrozenSchema::Object(entries) => entries.into_vec(),
            _ => Vec::new(),
        };
        match entries.binary_search_by(|(k, _)| k.as_ref().cmp(key)) {
            Ok(i) => entries[i].1 = value,
            Err(i) => entries.insert(i, (key.into(), value)),
        }
        *self = FrozenSchema::Object(entries.into_boxed_slice());
    }

    /// The JSON this was frozen from.
    pub fn to_value(&self) -> Value {
        match self {
            FrozenSchema::Json(v) => v.clone(),
            FrozenSchema::Object(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_value()))
                    .collect::<Map<String, Value>>(),
            ),
            FrozenSchema::Array(items) => {
                Value::Array(items.iter().map(FrozenSchema::to_value).collect())
            }
        }
    }
}

/// `root` with `rules` as its `allOf` (none when there are no rules): the whole schema
/// [`crate::contract::schema::values_schema_with`] builds, for the checks that need it
/// whole (the words of a refused value's violations).
pub fn whole_schema(root: &Value, rules: &[FrozenSchema]) -> Value {
    let mut whole = root.clone();
    if let (Value::Object(map), false) = (&mut whole, rules.is_empty()) {
        map.insert(
            "allOf".into(),
            Value::Array(rules.iter().map(FrozenSchema::to_value).collect()),
        );
    }
    whole
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A schema with every kind of keyword, data and schema, nested.
    fn sample() -> Value {
        json!({
            "description": "d",
            "type": ["object", "null"],
            "required": ["a", "b"],
            "properties": {
                "a": {"const": {"x": [1, 2]}, "enum": [{"y": 1}, 2]},
                "allOf": {"minimum": 1},
                "b": {"items": [{"type": "string"}], "default": {"k": "v"}}
            },
            "patternProperties": {"^x": {"not": {"maxLength": 2}}},
            "additionalProperties": false,
            "propertyNames": {"pattern": "^[a-z]+$"},
            "allOf": [{"if": {"properties": {"a": {"const": 1}}}, "then": {"required": ["b"]}, "else": true}],
            "anyOf": [{"$ref": "#/definitions/D"}, {}],
            "oneOf": "not an array",
            "items": {"contains": {"type": "integer"}, "additionalItems": {"type": "null"}},
            "definitions": {"D": {"minimum": 0}},
            "dependencies": {"a": {"required": ["b"]}}
        })
    }

    #[test]
    fn a_frozen_schema_gives_back_the_json_it_was_frozen_from() {
        let frozen = FrozenSchema::of_schema(sample());
        assert_eq!(frozen.to_value(), sample());
        for data in [
            json!(true),
            json!(null),
            json!(3),
            json!("s"),
            json!([1, {"a": 1}]),
        ] {
            assert_eq!(FrozenSchema::of_schema(data.clone()).to_value(), data);
        }
    }

    /// Schemas are frozen; data, and schemas in places no keyword reads, stay JSON.
    #[test]
    fn only_the_arguments_that_are_schemas_are_frozen() {
        let frozen = FrozenSchema::of_schema(sample());
        let json = |path: &[&str]| {
            let node = path.iter().try_fold(&frozen, |node, key| node.get(key));
            matches!(node, Some(FrozenSchema::Json(_)))
        };
        let object = |path: &[&str]| {
            let node = path.iter().try_fold(&frozen, |node, key| node.get(key));
            matches!(node, Some(FrozenSchema::Object(_)))
        };
        for data in [
            &["description"][..],
            &["type"],
            &["required"],
            &["properties", "a", "const"],
            &["properties", "a", "enum"],
            &["properties", "b", "items"],
            &["properties", "b", "default"],
            &["additionalProperties"],
            &["oneOf"],
            &["dependencies"],
        ] {
            assert!(json(data), "{data:?}");
        }
        for schema in [
            &["properties"][..],
            &["properties", "a"],
            &["properties", "allOf"],
            &["patternProperties", "^x"],
            &["patternProperties", "^x", "not"],
            &["propertyNames"],
            &["items"],
            &["items", "contains"],
            &["items", "additionalItems"],
            &["definitions", "D"],
        ] {
            assert!(object(schema), "{schema:?}");
        }
        for arrays in ["allOf", "anyOf"] {
            assert!(
                matches!(frozen.get(arrays), Some(FrozenSchema::Array(_))),
                "{arrays}"
            );
        }
        let Some(FrozenSchema::Array(all)) = frozen.get("allOf") else {
            panic!("allOf");
        };
        assert!(matches!(all[0].get("if"), Some(FrozenSchema::Object(_))));
        assert!(matches!(all[0].get("then"), Some(FrozenSchema::Object(_))));
        assert_eq!(all[0].get("else"), Some(&FrozenSchema::Json(json!(true))));
        assert_eq!(frozen.get("missing"), None);
        assert_eq!(FrozenSchema::Json(json!({"a": 1})).get("a"), None);
    }

    /// An entry is found by its key wherever it stands among the sorted keys.
    #[test]
    fn every_key_of_a_frozen_object_is_found() {
        let map: Map<String, Value> = (0..40).map(|i| (format!("k{i:02}"), json!(i))).collect();
        let frozen = FrozenSchema::of_schema(Value::Object(map.clone()));
        for (key, value) in &map {
            assert_eq!(frozen.get(key), Some(&FrozenSchema::Json(value.clone())));
        }
        assert_eq!(frozen.get("k"), None);
        assert_eq!(frozen.get("k40"), None);
        assert_eq!(frozen.get(""), None);
    }

    /// What the module's header claims: an entry of a frozen object is 48 bytes, a
    /// B-tree node of `serde_json`'s map 632.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn a_frozen_entry_is_48_bytes() {
        assert_eq!(std::mem::size_of::<(Box<str>, FrozenSchema)>(), 48);
    }

    #[test]
    fn the_whole_schema_has_the_rules_as_its_all_of() {
        let root = json!({"type": "object", "properties": {"a": {}}});
        let rules = [
            FrozenSchema::of_schema(json!({"required": ["a"]})),
            FrozenSchema::of_schema(json!(true)),
        ];
        assert_eq!(
            whole_schema(&root, &rules),
            json!({"type": "object", "properties": {"a": {}}, "allOf": [{"required": ["a"]}, true]})
        );
        assert_eq!(whole_schema(&root, &[]), root, "no rules, no allOf");
    }
}
