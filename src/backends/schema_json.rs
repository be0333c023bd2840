//! The text of `values.schema.json`: one entry per line, not one token per line.
//!
//! Helm refuses any chart file over 5 MiB, and the schema grows with every workload
//! and plan. `serde_json`'s pretty form puts every key, bracket and enum member on a
//! line of its own, indented, which triples the file. Here the root's keywords, and
//! each property, definition and rule below them, start a line; an entry whose
//! one-line form is longer than `LINE_LIMIT` opens one level further, so a golden
//! diff still shows which rule of which workload moved.

use crate::values::frozen_schema::FrozenSchema;
use serde_json::Value;

/// Nesting depth above which every non-empty object and array is opened, one member
/// per line: the root (0) and its keywords (1), so each property, definition and rule
/// (depth 2) starts a line of its own.
const OPEN_DEPTH: usize = 2;

/// An entry at [`OPEN_DEPTH`] or deeper stays on one line up to this many bytes, and
/// opens one level further when longer.
const LINE_LIMIT: usize = 1000;

/// `values.schema.json` as written into the chart: the same JSON value as `v`, with a
/// trailing newline.
pub fn schema_json(v: &Value) -> String {
    let mut out = Vec::new();
    write_value(&mut out, v, 0);
    out.push(b'\n');
    // `serde_json` writes UTF-8, and so does everything else here.
    String::from_utf8(out).unwrap_or_default()
}

/// [`schema_json`] of the whole schema `root` with `rules` as its `allOf`
/// ([`crate::values::frozen_schema::whole_schema`]), without building it: the same text.
pub fn schema_json_with_rules(root: &Value, rules: &[FrozenSchema]) -> String {
    let Value::Object(map) = root else {
        return schema_json(root);
    };
    if rules.is_empty() {
        return schema_json(root);
    }
    let mut entries: Vec<(&str, Entry<'_>)> = Vec::with_capacity(map.len() + 1);
    let mut rules = Some(rules);
    for (key, value) in map {
        if key.as_str() >= "allOf" {
            if let Some(rules) = rules.take() {
                entries.push(("allOf", Entry::Rules(rules)));
            }
            if key == "allOf" {
                continue;
            }
        }
        entries.push((key, Entry::Json(value)));
    }
    if let Some(rules) = rules {
        entries.push(("allOf", Entry::Rules(rules)));
    }
    let mut out = Vec::new();
    write_root(&mut out, &entries);
    out.push(b'\n');
    String::from_utf8(out).unwrap_or_default()
}

/// A member of the root [`schema_json_with_rules`] writes.
enum Entry<'a> {
    Json(&'a Value),
    Rules(&'a [FrozenSchema]),
}

/// Appends the root object of `members`, one member per line, as [`write_value`]
/// writes the root.
fn write_root(out: &mut Vec<u8>, members: &[(&str, Entry<'_>)]) {
    out.push(b'{');
    for (i, (key, member)) in members.iter().enumerate() {
        out.extend_from_slice(if i == 0 { b"\n  " } else { b",\n  " });
        write_string(out, key);
        out.extend_from_slice(b": ");
        match member {
            Entry::Json(value) => write_value(out, value, 1),
            Entry::Rules(rules) => write_frozen_array(out, rules, 1),
        }
    }
    out.extend_from_slice(b"\n}");
}

/// [`write_value`] of a frozen array of schemas.
fn write_frozen_array(out: &mut Vec<u8>, items: &[FrozenSchema], depth: usize) {
    if items.is_empty() {
        out.extend_from_slice(b"[]");
        return;
    }
    if depth >= OPEN_DEPTH && write_frozen_one_line_within(out, items, LINE_LIMIT) {
        return;
    }
    let indent = "  ".repeat(depth + 1);
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        out.extend_from_slice(if i == 0 { b"\n" } else { b",\n" });
        out.extend_from_slice(indent.as_bytes());
        write_frozen(out, item, depth + 1);
    }
    out.push(b'\n');
    out.extend_from_slice("  ".repeat(depth).as_bytes());
    out.push(b']');
}

/// [`write_value`] of a frozen schema: the text of the JSON it was frozen from.
fn write_frozen(out: &mut Vec<u8>, v: &FrozenSchema, depth: usize) {
    match v {
        FrozenSchema::Json(v) => write_value(out, v, depth),
        FrozenSchema::Array(items) => write_frozen_array(out, items, depth),
        FrozenSchema::Object(entries) if entries.is_empty() => out.extend_from_slice(b"{}"),
        FrozenSchema::Object(entries) => {
            if depth >= OPEN_DEPTH {
                let start = out.len();
                if write_frozen_one_line_until(out, v, start.saturating_add(LINE_LIMIT)) {
                    return;
                }
                out.truncate(start);
            }
            let indent = "  ".repeat(depth + 1);
            out.push(b'{');
            for (i, (key, value)) in entries.iter().enumerate() {
                out.extend_from_slice(if i == 0 { b"\n" } else { b",\n" });
                out.extend_from_slice(indent.as_bytes());
                write_string(out, key);
                out.extend_from_slice(b": ");
                write_frozen(out, value, depth + 1);
            }
            out.push(b'\n');
            out.extend_from_slice("  ".repeat(depth).as_bytes());
            out.push(b'}');
        }
    }
}

/// [`write_one_line_within`] of a frozen array of schemas.
fn write_frozen_one_line_within(out: &mut Vec<u8>, items: &[FrozenSchema], limit: usize) -> bool {
    let start = out.len();
    let end = start.saturating_add(limit);
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        if !write_frozen_one_line_until(out, item, end) {
            out.truncate(start);
            return false;
        }
    }
    out.push(b']');
    if out.len() > end {
        out.truncate(start);
        return false;
    }
    true
}

/// [`write_one_line_until`] of a frozen schema.
fn write_frozen_one_line_until(out: &mut Vec<u8>, v: &FrozenSchema, end: usize) -> bool {
    match v {
        FrozenSchema::Json(v) => return write_one_line_until(out, v, end),
        FrozenSchema::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                if !write_frozen_one_line_until(out, item, end) {
                    return false;
                }
            }
            out.push(b']');
        }
        FrozenSchema::Object(entries) => {
            out.push(b'{');
            for (i, (key, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                write_string(out, key);
                out.extend_from_slice(b": ");
                if !write_frozen_one_line_until(out, item, end) {
                    return false;
                }
            }
            out.push(b'}');
        }
    }
    out.len() <= end
}

/// Appends `v` to `out`, which holds the text so far: each entry is written in place,
/// not into a string of its own and copied.
fn write_value(out: &mut Vec<u8>, v: &Value, depth: usize) {
    let opens = match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    };
    if !opens {
        write_one_line(out, v);
        return;
    }
    // Only an entry that may stay on one line is written out, and only up to the limit:
    // the root and its keywords always open (writing them whole, then each entry again
    // below them, was 67 ms of the 400-workload `generate`).
    if depth >= OPEN_DEPTH && write_one_line_within(out, v, LINE_LIMIT) {
        return;
    }
    let indent = "  ".repeat(depth + 1);
    let (open, close) = if v.is_object() {
        (b'{', b'}')
    } else {
        (b'[', b']')
    };
    out.push(open);
    let mut first = true;
    let mut member = |out: &mut Vec<u8>, key: Option<&str>, value: &Value| {
        out.extend_from_slice(if first { b"\n" } else { b",\n" });
        first = false;
        out.extend_from_slice(indent.as_bytes());
        if let Some(k) = key {
            write_string(out, k);
            out.extend_from_slice(b": ");
        }
        write_value(out, value, depth + 1);
    };
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| member(out, Some(k), x)),
        Value::Array(a) => a.iter().for_each(|x| member(out, None, x)),
        _ => {}
    }
    out.push(b'\n');
    out.extend_from_slice("  ".repeat(depth).as_bytes());
    out.push(close);
}

/// Appends `v` as JSON on one line with a space after each `:` and `,`, as a person
/// writes it: `serde_json`'s compact form with `": "` and `", "` between entries,
/// byte for byte, written here without a formatter's call and a writer's call for
/// every token (through them it took 33 instructions a byte of the schema); strings
/// that need escaping and numbers are written by `serde_json`.
fn write_one_line(out: &mut Vec<u8>, v: &Value) {
    write_one_line_until(out, v, usize::MAX);
}

/// [`one_line`] of `v`.
#[cfg(test)]
fn one_line(v: &Value) -> String {
    let mut out = Vec::new();
    write_one_line(&mut out, v);
    String::from_utf8(out).unwrap_or_default()
}

/// Appends [`write_one_line`]'s text when it is at most `limit` bytes long, and says
/// so; otherwise leaves `out` as it was, having stopped writing past the limit.
fn write_one_line_within(out: &mut Vec<u8>, v: &Value, limit: usize) -> bool {
    let start = out.len();
    let fits = write_one_line_until(out, v, start.saturating_add(limit));
    if !fits {
        out.truncate(start);
    }
    fits
}

/// Appends [`write_one_line`]'s text of `v`, stopping (false) as soon as `out` is
/// longer than `end` bytes.
fn write_one_line_until(out: &mut Vec<u8>, v: &Value, end: usize) -> bool {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        // Writing into a `Vec` cannot fail.
        Value::Number(n) => drop(serde_json::to_writer(&mut *out, n)),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                if !write_one_line_until(out, item, end) {
                    return false;
                }
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                write_string(out, key);
                out.extend_from_slice(b": ");
                if !write_one_line_until(out, item, end) {
                    return false;
                }
            }
            out.push(b'}');
        }
    }
    out.len() <= end
}

/// Whether `s` holds a byte JSON escapes: a quote, a backslash, a control character.
/// Each block of 32 bytes is tested whole, without stopping at the first such byte,
/// so that the compiler tests its bytes side by side.
fn needs_escaping(s: &str) -> bool {
    s.as_bytes().chunks(32).any(|block| {
        block.iter().fold(false, |found, &b| {
            found | matches!(b, 0..=0x1f | b'"' | b'\\')
        })
    })
}

/// A string's JSON, escaped as `serde_json` escapes it: copied between quotes when
/// nothing in it needs escaping (a quote, a backslash, a control character).
fn write_string(out: &mut Vec<u8>, s: &str) {
    if needs_escaping(s) {
        // Writing into a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut *out, s);
    } else {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    /// `serde_json`'s compact form with `": "` and `", "` between entries.
    pub(super) struct Spaced;

    impl serde_json::ser::Formatter for Spaced {
        fn begin_array_value<W: ?Sized + io::Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> io::Result<()> {
            separate(w, first)
        }

        fn begin_object_key<W: ?Sized + io::Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> io::Result<()> {
            separate(w, first)
        }

        fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
            w.write_all(b": ")
        }
    }

    /// `", "` before every member but the first.
    fn separate<W: ?Sized + io::Write>(w: &mut W, first: bool) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }
    use serde_json::json;

    /// What `serde_json` writes of `v` with [`Spaced`].
    fn by_serde_json(v: &Value) -> String {
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut out, Spaced);
        serde::Serialize::serialize(v, &mut ser).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Random values, whose strings hold what needs escaping (quotes, backslashes,
    /// control characters) and what does not (DEL, characters of two to four bytes),
    /// and whose numbers reach both ends of `u64` and `i64` and fractions: one line is
    /// what `serde_json` writes, byte for byte, and it fits a limit exactly when it is
    /// no longer, leaving nothing behind when it does not.
    #[test]
    fn one_line_is_serde_json_spaced_and_fits_a_limit_exactly() {
        use proptest::prelude::*;
        let pieces = [
            "",
            "a",
            "\"",
            "\\",
            "\n",
            "\t",
            "\u{1}",
            "\u{1f}",
            " ",
            "\u{7f}",
            "é",
            "€",
            "\u{1f600}",
            "/",
            "{",
            "}",
            ":",
            ",",
        ];
        let text = proptest::collection::vec(0..pieces.len(), 0..6)
            .prop_map(move |picks| picks.into_iter().map(|i| pieces[i]).collect::<String>());
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            prop::sample::select(vec![0, 1, u64::MAX, i64::MAX as u64, i64::MAX as u64 + 1,])
                .prop_map(Value::from),
            prop::sample::select(vec![i64::MIN, -1]).prop_map(Value::from),
            prop::sample::select(vec![0.5f64, -0.0, 1e21, 1.5e-7, 3.0, f64::MAX])
                .prop_map(Value::from),
            text.clone().prop_map(Value::from),
        ];
        let values = leaf.prop_recursive(4, 40, 5, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map(text.clone(), inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        });
        let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
            cases: 3000,
            ..proptest::test_runner::Config::default()
        });
        runner
            .run(&(values, 0usize..80), |(v, limit)| {
                let expected = by_serde_json(&v);
                prop_assert_eq!(&one_line(&v), &expected);
                let mut out = b"before".to_vec();
                let fits = write_one_line_within(&mut out, &v, limit);
                prop_assert_eq!(fits, expected.len() <= limit, "{} in {}", expected, limit);
                let after = if fits {
                    format!("before{expected}")
                } else {
                    "before".to_string()
                };
                prop_assert_eq!(String::from_utf8(out).unwrap(), after);
                let exact = expected.len();
                let mut out = Vec::new();
                prop_assert!(write_one_line_within(&mut out, &v, exact));
                if exact > 0 {
                    prop_assert!(!write_one_line_within(&mut Vec::new(), &v, exact - 1));
                }
                Ok(())
            })
            .unwrap();
    }

    /// Exactly quotes, backslashes and control characters need escaping, wherever they
    /// stand: in the first block of 32 bytes, at its last byte, or in a later block.
    #[test]
    fn needs_escaping_finds_exactly_what_json_escapes() {
        for b in 0u8..=0x7f {
            let escaped = b < 0x20 || b == b'"' || b == b'\\';
            let c = char::from(b).to_string();
            for at in [0, 31, 32, 70] {
                let text = format!("{}{c}{}", "a".repeat(at), "z".repeat(3));
                assert_eq!(needs_escaping(&text), escaped, "byte {b:#x} at {at}");
            }
        }
        assert!(!needs_escaping(""));
        assert!(!needs_escaping("é€\u{1f600} /{}"));
    }

    #[test]
    fn the_text_parses_back_to_the_same_value() {
        let v = json!({
            "a": [1, "two", {"three": [3.5, null, true]}],
            "b": {"c": {"d": {"e": "x\"y\n"}}},
            "empty": {}, "none": [], "unicode": "é\u{1}"
        });
        let text = schema_json(&v);
        assert!(text.ends_with("}\n"), "{text}");
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    }

    #[test]
    fn the_root_and_its_keywords_open_and_each_entry_below_is_one_line() {
        let v = json!({"properties": {"x": {"type": "integer", "minimum": 0}}, "allOf": [{"required": ["x"]}], "type": "object"});
        assert_eq!(
            schema_json(&v),
            "{\n  \"allOf\": [\n    {\"required\": [\"x\"]}\n  ],\n  \"properties\": {\n    \"x\": {\"minimum\": 0, \"type\": \"integer\"}\n  },\n  \"type\": \"object\"\n}\n"
        );
    }

    #[test]
    fn an_empty_container_and_a_scalar_stay_on_their_line() {
        assert_eq!(schema_json(&json!({})), "{}\n");
        assert_eq!(schema_json(&json!([])), "[]\n");
        assert_eq!(schema_json(&json!(7)), "7\n");
        assert_eq!(schema_json(&json!({"a": {}})), "{\n  \"a\": {}\n}\n");
    }

    /// An entry of exactly [`LINE_LIMIT`] bytes stays on one line; one byte more opens it.
    #[test]
    fn an_entry_opens_only_past_the_line_limit() {
        let entry = |len: usize| {
            // `{"k": "…"}` is 9 bytes around the string.
            json!({"k": "x".repeat(len - 9)})
        };
        let at = json!({"p": {"e": entry(LINE_LIMIT)}});
        assert_eq!(one_line(&at["p"]["e"]).len(), LINE_LIMIT);
        assert_eq!(schema_json(&at).lines().count(), 5);
        let past = json!({"p": {"e": entry(LINE_LIMIT + 1)}});
        let text = schema_json(&past);
        assert_eq!(text.lines().count(), 7, "{text}");
        assert!(text.contains("\n    \"e\": {\n      \"k\": \"x"), "{text}");
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), past);
    }

    /// Random roots and rules shaped like schemas (keywords that take schemas, data,
    /// strings long enough to open an entry at every depth): the root written with its
    /// rules frozen is the whole schema's text, byte for byte.
    #[test]
    fn a_root_with_frozen_rules_is_written_as_the_whole_schema() {
        use crate::values::frozen_schema::whole_schema;
        use proptest::prelude::*;
        let keys = prop::sample::select(vec![
            "$ref",
            "$schema",
            "additionalProperties",
            "allOf",
            "anyOf",
            "const",
            "definitions",
            "description",
            "else",
            "enum",
            "if",
            "items",
            "not",
            "oneOf",
            "properties",
            "required",
            "then",
            "type",
            "x\"y",
        ]);
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            (0usize..1100).prop_map(|n| Value::from("é".repeat(n / 2))),
            Just(json!({})),
            Just(json!([])),
        ];
        let values = leaf.prop_recursive(5, 64, 5, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map(keys.clone(), inner, 0..4).prop_map(|m| {
                    Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                }),
            ]
        });
        let root = prop::collection::btree_map(
            prop::sample::select(vec![
                "$schema",
                "additionalProperties",
                "allOf",
                "b",
                "type",
            ]),
            values.clone(),
            0..4,
        );
        let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
            cases: 400,
            ..proptest::test_runner::Config::default()
        });
        runner
            .run(
                &(root, prop::collection::vec(values, 0..5)),
                |(root, rules)| {
                    let root =
                        Value::Object(root.into_iter().map(|(k, v)| (k.to_string(), v)).collect());
                    let rules: Vec<FrozenSchema> =
                        rules.into_iter().map(FrozenSchema::of_schema).collect();
                    let whole = whole_schema(&root, &rules);
                    prop_assert_eq!(schema_json_with_rules(&root, &rules), schema_json(&whole));
                    Ok(())
                },
            )
            .unwrap();
        // A root that is not an object has no rules to hold.
        let rules = [FrozenSchema::of_schema(json!({"const": 1}))];
        assert_eq!(schema_json_with_rules(&json!(3), &rules), "3\n");
    }

    /// A frozen schema is written at any depth as its JSON is: an empty object or array
    /// on its line, a full one opened above the open depth.
    #[test]
    fn a_frozen_schema_is_written_at_every_depth_as_its_json() {
        use crate::values::frozen_schema::FrozenSchema;
        for v in [
            json!({}),
            json!([]),
            json!({"properties": {}}),
            json!({"allOf": []}),
            json!({"allOf": [{}, {"const": {"a": []}}]}),
            json!({"properties": {"p": {"description": "x".repeat(LINE_LIMIT)}}}),
            // An array of schemas whose one line is the limit exactly, and a byte more
            // with its closing bracket.
            json!({"anyOf": [{"description": "x".repeat(LINE_LIMIT - 21)}]}),
            json!({"anyOf": [{"description": "x".repeat(LINE_LIMIT - 20)}]}),
        ] {
            let frozen = FrozenSchema::of_schema(v.clone());
            for depth in 0..4 {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                write_frozen(&mut a, &frozen, depth);
                write_value(&mut b, &v, depth);
                assert_eq!(String::from_utf8(a), String::from_utf8(b), "{v} at {depth}");
            }
        }
    }

    #[test]
    fn one_line_spaces_its_separators_and_escapes_keys() {
        assert_eq!(
            one_line(&json!({"a\"b": [1, 2], "c": {"d": null}})),
            r#"{"a\"b": [1, 2], "c": {"d": null}}"#
        );
    }
}
