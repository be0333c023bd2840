//! The text of `values.schema.json`: one entry per line, not one token per line.
//!
//! Helm refuses any chart file over 5 MiB, and the schema grows with every workload
//! and plan. `serde_json`'s pretty form puts every key, bracket and enum member on a
//! line of its own, indented, which triples the file. Here the root's keywords, and
//! each property, definition and rule below them, start a line; an entry whose
//! one-line form is longer than [`LINE_LIMIT`] opens one level further, so a golden
//! diff still shows which rule of which workload moved.

use serde_json::ser::Formatter;
use serde_json::Value;
use std::io;

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
    let mut out = String::new();
    write_value(&mut out, v, 0);
    out.push('\n');
    out
}

fn write_value(out: &mut String, v: &Value, depth: usize) {
    let opens = match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    };
    if !opens {
        out.push_str(&one_line(v));
        return;
    }
    // Only an entry that may stay on one line is written out, and only up to the limit:
    // the root and its keywords always open (writing them whole, then each entry again
    // below them, was 67 ms of the 400-workload `generate`).
    if depth >= OPEN_DEPTH {
        if let Some(line) = one_line_within(v, LINE_LIMIT) {
            out.push_str(&line);
            return;
        }
    }
    let indent = "  ".repeat(depth + 1);
    let (open, close) = if v.is_object() {
        ('{', '}')
    } else {
        ('[', ']')
    };
    out.push(open);
    let mut first = true;
    let mut member = |out: &mut String, key: Option<&str>, value: &Value| {
        out.push_str(if first { "\n" } else { ",\n" });
        first = false;
        out.push_str(&indent);
        if let Some(k) = key {
            out.push_str(&one_line(&Value::String(k.to_string())));
            out.push_str(": ");
        }
        write_value(out, value, depth + 1);
    };
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| member(out, Some(k), x)),
        Value::Array(a) => a.iter().for_each(|x| member(out, None, x)),
        _ => {}
    }
    out.push('\n');
    out.push_str(&"  ".repeat(depth));
    out.push(close);
}

/// JSON on one line with a space after each `:` and `,`, as a person writes it.
fn one_line(v: &Value) -> String {
    let mut bytes = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut bytes, Spaced);
    // Writing a `Value` into a `Vec` cannot fail.
    let _ = serde::Serialize::serialize(v, &mut ser);
    String::from_utf8(bytes).unwrap_or_default()
}

/// [`one_line`] when it is at most `limit` bytes long; `None` as soon as it is longer,
/// without writing the rest.
fn one_line_within(v: &Value, limit: usize) -> Option<String> {
    let mut capped = Capped {
        bytes: Vec::new(),
        limit,
    };
    let mut ser = serde_json::Serializer::with_formatter(&mut capped, Spaced);
    serde::Serialize::serialize(v, &mut ser).ok()?;
    String::from_utf8(capped.bytes).ok()
}

/// A writer that fails rather than hold more than `limit` bytes.
struct Capped {
    bytes: Vec<u8>,
    limit: usize,
}

impl io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.bytes.len() + buf.len() > self.limit {
            return Err(io::Error::other("over the line limit"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// `serde_json`'s compact form with `": "` and `", "` between entries.
struct Spaced;

impl Formatter for Spaced {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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

    #[test]
    fn one_line_spaces_its_separators_and_escapes_keys() {
        assert_eq!(
            one_line(&json!({"a\"b": [1, 2], "c": {"d": null}})),
            r#"{"a\"b": [1, 2], "c": {"d": null}}"#
        );
    }
}
