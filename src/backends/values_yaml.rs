//! `values.yaml` with comments, and the README's values table, both walked from the
//! default values and the values schema's descriptions (the types' doc comments).

use crate::backends::emit::yaml_key;
use crate::contract::schema::resolve_ref;
use crate::model::StoreClass;
use crate::spec::Spec;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Comments that say what one entry of a values map is (a workload, a store, an
/// allocation, a Redis server), by values path. A note ending in `:` comes before the
/// type's description (a workload's class says what it does); any other replaces
/// it, since every entry of the map shares the generic one.
pub type EntryNotes = BTreeMap<String, String>;

/// What each named entry of the spec's values maps is, from the spec.
pub fn entry_notes(spec: &Spec) -> EntryNotes {
    let mut notes = EntryNotes::new();
    let flag = |feature: Option<&str>| match feature {
        Some(f) if !f.is_empty() => format!(", only while `features.{f}` is true"),
        _ => String::new(),
    };
    for (name, workload) in spec.workloads.all() {
        let class = workload.class().name();
        notes.insert(
            format!("workloads.{name}"),
            format!("Workload `{name}`, class `{class}`:"),
        );
        let declared = workload.allocation_values();
        for dependency in ["postgres", "redis"] {
            let Some(allocations) = declared.get(dependency).and_then(Value::as_object) else {
                continue;
            };
            for (alloc, d) in allocations {
                let text = |key: &str| d.get(key).and_then(Value::as_str).unwrap_or("");
                let setting = match text("setting") {
                    "" => String::new(),
                    s => format!(", stated to the application as `{s}`"),
                };
                let what = if dependency == "postgres" {
                    let part_of = match text("partOf") {
                        "" => String::new(),
                        p => format!(", part of `{p}` (counted there)"),
                    };
                    format!(
                        "PostgreSQL allocation `{alloc}` of `{name}`: connections per process{part_of}{}{setting}.",
                        flag(Some(text("feature")))
                    )
                } else {
                    format!(
                        "Redis allocation `{alloc}` of `{name}`: clients per process on server `{}`{setting}.",
                        text("server")
                    )
                };
                notes.insert(format!("workloads.{name}.{dependency}.{alloc}"), what);
            }
        }
    }
    for (name, store) in &spec.stores {
        let what = match store.class {
            StoreClass::Shared if store.fatal => format!(
                "Store `{name}` (shared, fatal): `memory` is safe with one pod only; with \
                 several, the application refuses to boot under `replicaStrict`. `{}` selects \
                 the backend.",
                store.env
            ),
            StoreClass::Shared => format!(
                "Store `{name}` (shared): `memory` is safe with one pod only; with several, \
                 each pod keeps its own copy (reported, not fatal). `{}` selects the backend.",
                store.env
            ),
            StoreClass::Durable => format!("Store `{name}` (durable, in PostgreSQL)."),
            StoreClass::PerProcess => {
                format!("Store `{name}` (per process): {}", store.reason)
            }
        };
        notes.insert(format!("stores.{name}"), what);
    }
    for (name, server) in &spec.dependency_capacity.redis.servers {
        let role = match &server.role {
            Some(role) => format!(
                " holding {} data",
                serde_json::to_value(role)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            ),
            None => String::new(),
        };
        notes.insert(
            format!("dependencyCapacity.redis.servers.{name}"),
            format!("Redis server `{name}`{role}: its client limit, reservations and policy."),
        );
    }
    for name in crate::values::bundled_redis_servers(spec) {
        notes.insert(
            format!("bundled.redis.{name}"),
            format!(
                "A Valkey server for `{name}`, for evaluation only: `--maxclients` and `--maxmemory-policy` are `dependencyCapacity.redis.servers.{name}.maxClients` and `maxmemoryPolicy`."
            ),
        );
    }
    for name in spec.feature_switches.keys() {
        notes.insert(
            format!("featureSwitches.{name}"),
            format!("How `features.{name}` reaches the application (fixed by the spec)."),
        );
    }
    for name in spec.dependency_capacity.postgres.reservations.keys() {
        notes.insert(
            format!("dependencyCapacity.postgres.reservations.{name}"),
            format!("PostgreSQL connections reserved for `{name}`, counted in the peak."),
        );
    }
    for (name, pool) in &spec.scheduling.pools {
        notes.insert(
            format!("scheduling.pools.{name}"),
            format!(
                "Pool `{name}`: the {} scheduled job(s) the `{name}` workload runs.",
                pool.jobs.len()
            ),
        );
    }
    notes
}

/// One entry of the values tree as the documents list it.
struct Row<'a> {
    path: String,
    depth: usize,
    key: &'a str,
    /// The schema's description, or a note of the spec's (an owned string).
    description: Cow<'a, str>,
    value: &'a Value,
}

/// Every entry of a values tree, in order, with its depth and description, as both
/// `values.yaml` and the README's values table list them ([`value_rows`]).
pub struct ValueRows<'a>(Vec<Row<'a>>);

/// The entries of `values` under `schema`, described by the schema and the spec's
/// `notes`, walked once for [`values_yaml_of`] and [`values_table_of`].
pub fn value_rows<'a>(values: &'a Value, schema: &'a Value, notes: &EntryNotes) -> ValueRows<'a> {
    let mut walk = Walk {
        notes: Notes {
            deepest: notes.keys().map(|k| k.matches('.').count()).max(),
            notes,
        },
        root: schema,
        fields: std::collections::HashMap::new(),
        rows: Vec::new(),
    };
    walk.object(schema, values, "", 0);
    ValueRows(walk.rows)
}

/// The spec's notes, with the most dots any of their paths has: a path at depth `d`
/// has at least `d` dots, so below that depth no note is looked up (most rows are
/// the fields of workloads, deeper than every note).
struct Notes<'n> {
    notes: &'n EntryNotes,
    deepest: Option<usize>,
}

impl Notes<'_> {
    /// The note of the entry at `path`, `depth` levels below the root.
    fn get(&self, path: &str, depth: usize) -> Option<&String> {
        if self.deepest.is_some_and(|deepest| depth <= deepest) {
            self.notes.get(path)
        } else {
            None
        }
    }
}

/// What the rows of an entry read of the schema that declares it.
#[derive(Clone, Copy)]
struct Declared<'a> {
    /// The entry's schema, its `$ref` resolved.
    schema: &'a Value,
    /// Its description (the declaration's, else the schema's), or empty.
    generic: &'a str,
    /// Whether its entries are typed (its own or its map entries' `properties`): a
    /// free-form map (config, annotations, probes) is listed whole.
    typed: bool,
}

impl<'a> Declared<'a> {
    fn of(root: &'a Value, declared: &'a Value) -> Self {
        let schema = resolve_ref(root, declared);
        let generic = declared
            .get("description")
            .or_else(|| schema.get("description"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let entries = schema
            .get("additionalProperties")
            .map(|s| resolve_ref(root, s));
        let typed = schema.get("properties").is_some()
            || entries.is_some_and(|s| s.get("properties").is_some());
        Declared {
            schema,
            generic,
            typed,
        }
    }
}

/// The entries an object schema declares: its `properties` by name, in the order of
/// the names (the values' order too), and the schema of its other entries (a named
/// entry of a map, a store or an allocation, has the map's entry schema).
struct Fields<'a> {
    properties: Vec<(&'a str, Declared<'a>)>,
    others: Declared<'a>,
}

/// One walk of [`value_rows`]. Every workload of a class has the same schema: what an
/// entry reads of it is found once per schema ([`Fields`]), not once per workload.
struct Walk<'a, 'n> {
    notes: Notes<'n>,
    root: &'a Value,
    /// [`Fields`] by the address of the schema they were read from.
    fields: std::collections::HashMap<*const Value, std::rc::Rc<Fields<'a>>>,
    rows: Vec<Row<'a>>,
}

impl<'a> Walk<'a, '_> {
    /// The [`Fields`] of `schema` (its `$ref` resolved).
    fn fields_of(&mut self, schema: &'a Value) -> std::rc::Rc<Fields<'a>> {
        let root = self.root;
        self.fields
            .entry(std::ptr::from_ref(schema))
            .or_insert_with(|| {
                let properties = schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|p| {
                        p.iter()
                            .map(|(name, declared)| (name.as_str(), Declared::of(root, declared)))
                            .collect()
                    })
                    .unwrap_or_default();
                let others = schema
                    .get("additionalProperties")
                    .filter(|s| s.is_object())
                    .unwrap_or(&Value::Null);
                std::rc::Rc::new(Fields {
                    properties,
                    others: Declared::of(root, others),
                })
            })
            .clone()
    }

    /// The rows of the entries of `value` (when an object), `depth` levels below the
    /// root at `path`, under `schema`.
    fn object(&mut self, schema: &'a Value, value: &'a Value, path: &str, depth: usize) {
        let Value::Object(map) = value else { return };
        let fields = self.fields_of(resolve_ref(self.root, schema));
        // Both lists are in the order of the names: the declared ones are met in turn.
        let mut properties = fields.properties.iter().peekable();
        for (key, child) in map {
            while properties
                .next_if(|(name, _)| *name < key.as_str())
                .is_some()
            {}
            let declared = match properties.next_if(|(name, _)| *name == key.as_str()) {
                Some((_, declared)) => *declared,
                None => fields.others,
            };
            let child_path = if path.is_empty() {
                key.clone()
            } else {
                let mut child = String::with_capacity(path.len() + 1 + key.len());
                child.push_str(path);
                child.push('.');
                child.push_str(key);
                child
            };
            let generic = declared.generic;
            let description = match self.notes.get(&child_path, depth) {
                Some(note) if note.ends_with(':') => {
                    // The class's own description, without its "The `x` class:" lead.
                    let rest = generic
                        .strip_prefix("The `")
                        .and_then(|g| g.split_once("` class: "))
                        .map_or(generic, |(_, rest)| rest);
                    Cow::Owned(format!("{note} {rest}"))
                }
                Some(note) => Cow::Owned(note.clone()),
                None => Cow::Borrowed(generic),
            };
            let expanded = declared.typed && matches!(child, Value::Object(m) if !m.is_empty());
            let row = |path| Row {
                path,
                depth,
                key,
                description,
                value: child,
            };
            if expanded {
                self.rows.push(row(child_path.clone()));
                self.object(declared.schema, child, &child_path, depth + 1);
            } else {
                self.rows.push(row(child_path));
            }
        }
    }
}

/// Appends JSON as a YAML author writes it: integers without a fraction.
fn write_plain_json(v: &Value, out: &mut String) {
    use std::fmt::Write;
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => {
                let _ = write!(out, "{}", f as i64);
            }
            _ => {
                let _ = write!(out, "{n}");
            }
        },
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_plain_json(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(&Value::String(k.clone()), out);
                out.push(':');
                write_plain_json(v, out);
            }
            out.push('}');
        }
        other => write_json(other, out),
    }
}

/// `serde_json`'s compact text of a scalar, appended to `out`.
fn write_json(v: &Value, out: &mut String) {
    // `serde_json` writes only valid UTF-8.
    let _ = serde_json::to_writer(StringWriter(out), v);
}

/// A `String` as an `io::Write` for `serde_json`, which writes whole UTF-8 text.
struct StringWriter<'a>(&'a mut String);

impl std::io::Write for StringWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        match std::str::from_utf8(bytes) {
            Ok(text) => {
                self.0.push_str(text);
                Ok(bytes.len())
            }
            Err(e) => Err(std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn wrap_comment(text: &str, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && pad.len() + 2 + line.len() + 1 + word.len() > 90 {
            out.push_str(&format!("{pad}# {line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&format!("{pad}# {line}\n"));
    }
}

/// Prints `values.yaml`: every key with its description as a comment above it.
pub fn values_yaml(values: &Value, schema: &Value, notes: &EntryNotes, header: &str) -> String {
    values_yaml_of(&value_rows(values, schema, notes), header)
}

/// [`values_yaml`] of rows already walked.
pub fn values_yaml_of(rows: &ValueRows<'_>, header: &str) -> String {
    let rows = &rows.0;
    let mut out = String::new();
    for line in header.lines() {
        out.push_str(&format!("# {line}\n").replace("# \n", "#\n"));
    }
    // Every workload of a class repeats its fields' descriptions: each is wrapped once
    // per indentation. A description the schema holds is the same string for every
    // workload of a class, so it is known by where it is (a note of the spec's, new
    // for each entry, is wrapped each time); hashing the texts was slower than
    // wrapping them.
    let mut comments: std::collections::BTreeMap<(usize, usize, usize), String> =
        std::collections::BTreeMap::new();
    for (i, row) in rows.iter().enumerate() {
        let indent = row.depth * 2;
        if row.depth == 0 && i > 0 {
            out.push('\n');
        }
        let text: &str = row.description.as_ref();
        let comment = comments
            .entry((text.as_ptr() as usize, text.len(), indent))
            .or_insert_with(|| {
                let mut text = String::new();
                wrap_comment(&row.description, indent, &mut text);
                text
            });
        out.push_str(comment);
        out.extend(std::iter::repeat_n(' ', indent));
        out.push_str(&yaml_key(row.key));
        let expanded = rows.get(i + 1).is_some_and(|next| next.depth > row.depth);
        match row.value {
            _ if expanded => out.push_str(":\n"),
            Value::Object(m) if m.is_empty() => out.push_str(": {}\n"),
            Value::Array(a) if a.is_empty() => out.push_str(": []\n"),
            Value::Array(a) => {
                out.push_str(":\n");
                for item in a {
                    out.extend(std::iter::repeat_n(' ', indent));
                    out.push_str("  - ");
                    write_plain_json(item, &mut out);
                    out.push('\n');
                }
            }
            v => {
                out.push_str(": ");
                write_plain_json(v, &mut out);
                out.push('\n');
            }
        }
    }
    out
}

/// The README's values table: path, default and description of every value. A
/// workload's field (`workloads.<name>.<field>`) is described at the first workload
/// with that field and description only: a chart of hundreds of workloads would
/// otherwise repeat each class's descriptions hundreds of times, past Helm's 5 MiB
/// file limit.
pub fn values_table_of(rows: &ValueRows<'_>) -> String {
    let rows = &rows.0;
    let mut out = String::from("| Key | Default | Description |\n|---|---|---|\n");
    let mut described: std::collections::HashSet<(&str, &str)> = std::collections::HashSet::new();
    // The default's text, written anew for each row.
    let mut default = String::new();
    for (i, row) in rows.iter().enumerate() {
        let expanded = rows.get(i + 1).is_some_and(|next| next.depth > row.depth);
        if expanded {
            continue;
        }
        let field = row
            .path
            .strip_prefix("workloads.")
            .and_then(|rest| rest.split_once('.'))
            .map(|(_, field)| field);
        let repeated = field.is_some_and(|f| !described.insert((f, row.description.as_ref())));
        out.push_str("| `");
        out.push_str(&row.path);
        out.push_str("` | `");
        default.clear();
        write_plain_json(row.value, &mut default);
        push_cell(&default, &mut out);
        out.push_str("` | ");
        if !repeated {
            push_cell(&row.description, &mut out);
        }
        out.push_str(" |\n");
    }
    out
}

/// Appends `text` as the text of a table cell: `|` escaped, line breaks as spaces.
fn push_cell(text: &str, out: &mut String) {
    for (i, part) in text.split('|').enumerate() {
        if i > 0 {
            out.push_str("\\|");
        }
        for (j, line) in part.split('\n').enumerate() {
            if j > 0 {
                out.push(' ');
            }
            out.push_str(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A schema of a map `m` whose entries are objects with a described field `f`.
    fn schema() -> Value {
        json!({
            "properties": {
                "m": {
                    "description": "The map.",
                    "additionalProperties": {
                        "description": "The `x` class: an entry.",
                        "properties": {"f": {"description": "A field | with a bar\nand a break."}}
                    }
                }
            }
        })
    }

    fn notes(entries: &[(&str, &str)]) -> EntryNotes {
        entries
            .iter()
            .map(|(path, note)| (path.to_string(), note.to_string()))
            .collect()
    }

    fn described(rows: &ValueRows<'_>) -> Vec<(String, usize, String)> {
        rows.0
            .iter()
            .map(|r| (r.path.clone(), r.depth, r.description.to_string()))
            .collect()
    }

    #[test]
    fn notes_describe_entries_at_every_depth_up_to_the_deepest_note() {
        let values = json!({"m": {"a": {"f": 1}, "b": {"f": 2}}});
        let schema = schema();
        // The deepest note is at depth 2 (`m.b.f`, two dots): it is still found.
        let notes = notes(&[
            ("m.a", "Entry `a`:"),
            ("m.b", "Entry `b` alone."),
            ("m.b.f", "The field of `b`."),
        ]);
        let rows = value_rows(&values, &schema, &notes);
        assert_eq!(
            described(&rows),
            [
                ("m".to_string(), 0, "The map.".to_string()),
                ("m.a".into(), 1, "Entry `a`: an entry.".into()),
                (
                    "m.a.f".into(),
                    2,
                    "A field | with a bar\nand a break.".into()
                ),
                ("m.b".into(), 1, "Entry `b` alone.".into()),
                ("m.b.f".into(), 2, "The field of `b`.".into()),
            ]
        );
        // Without notes, every entry has the schema's descriptions.
        let rows = value_rows(&values, &schema, &EntryNotes::new());
        assert_eq!(rows.0[1].description, "The `x` class: an entry.");
        assert_eq!(rows.0[4].description, "A field | with a bar\nand a break.");
    }

    /// Declared entries and the map's other entries, in any order between each other,
    /// each with its own schema; without an entry schema the others have none.
    #[test]
    fn each_entry_has_its_declared_schema_or_the_entry_schema() {
        let values = json!({"a": 1, "b": {"x": 1}, "c": 3, "d": 4, "e": {"x": 2}, "f": 6});
        let with_others = json!({
            "properties": {
                "b": {"description": "B.", "properties": {"x": {"description": "X."}}},
                "d": {"$ref": "#/definitions/D"},
                "z": {"description": "Z, not in the values."}
            },
            "additionalProperties": {"description": "Other."},
            "definitions": {"D": {"description": "D, by reference."}}
        });
        let rows = value_rows(&values, &with_others, &EntryNotes::new());
        let expected = [
            ("a", 0, "Other."),
            ("b", 0, "B."),
            ("b.x", 1, "X."),
            ("c", 0, "Other."),
            ("d", 0, "D, by reference."),
            ("e", 0, "Other."),
            ("f", 0, "Other."),
        ];
        let expected: Vec<(String, usize, String)> = expected
            .iter()
            .map(|(p, d, t)| (p.to_string(), *d, t.to_string()))
            .collect();
        assert_eq!(described(&rows), expected);
        let mut without = with_others.clone();
        without["additionalProperties"] = json!(false);
        let rows = value_rows(&values, &without, &EntryNotes::new());
        assert_eq!(rows.0[0].description, "");
        assert_eq!(rows.0[1].description, "B.");
        // `e` is an object but undeclared: listed whole, not expanded.
        assert_eq!(rows.0.len(), 7);
        assert_eq!(rows.0[5].path, "e");
        assert_eq!(rows.0[6].path, "f");
    }

    #[test]
    fn a_note_deeper_than_its_dots_say_is_found_by_its_path() {
        // A key with a dot in it: `m.c.d` is the entry `c.d` of `m`, at depth 1 with
        // two dots, while the deepest note has two dots too.
        let values = json!({"m": {"c.d": {"f": 1}}});
        let notes = notes(&[("m.c.d", "Entry `c.d` alone.")]);
        let schema = schema();
        let rows = value_rows(&values, &schema, &notes);
        assert_eq!(rows.0[1].description, "Entry `c.d` alone.");
    }

    #[test]
    fn the_table_escapes_bars_and_breaks_and_describes_a_workload_field_once() {
        let values = json!({
            "workloads": {"a": {"f": "x|y"}, "b": {"f": 2}},
            "g": [1, 2.5, {"k": "v"}]
        });
        let schema = json!({
            "properties": {
                "workloads": {
                    "additionalProperties": {
                        "properties": {"f": {"description": "Field | of\na workload."}}
                    }
                },
                "g": {"description": "A list."}
            }
        });
        let rows = value_rows(&values, &schema, &EntryNotes::new());
        assert_eq!(
            values_table_of(&rows),
            "| Key | Default | Description |\n|---|---|---|\n\
             | `g` | `[1,2.5,{\"k\":\"v\"}]` | A list. |\n\
             | `workloads.a.f` | `\"x\\|y\"` | Field \\| of a workload. |\n\
             | `workloads.b.f` | `2` |  |\n"
        );
    }
}
