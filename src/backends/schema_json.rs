//! The text of `values.schema.json`: one entry per line, not one token per line.
//!
//! Helm refuses any chart file over 5 MiB, and the schema grows with every workload
//! and plan. `serde_json`'s pretty form puts every key, bracket and enum member on a
//! line of its own, indented, which triples the file. Here the root's keywords, and
//! each property, definition and rule below them, start a line; an entry whose
//! one-line form is longer than `LINE_LIMIT` opens one level further, so a golden
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
    let mut out = Vec::new();
    write_value(&mut out, v, 0);
    out.push(b'\n');
    // `serde_json` writes UTF-8, and so does everything else here.
    String::from_utf8(out).unwrap_or_default()
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
            // A string's JSON, escaped as `serde_json` escapes it.
            let _ = serde_json::to_writer(&mut *out, k);
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
/// writes it.
fn write_one_line(out: &mut Vec<u8>, v: &Value) {
    let mut ser = serde_json::Serializer::with_formatter(&mut *out, Spaced);
    // Writing a `Value` into a `Vec` cannot fail.
    let _ = serde::Serialize::serialize(v, &mut ser);
}

/// [`one_line`] of `v`.
#[cfg(test)]
fn one_line(v: &Value) -> String {
    let mut out = Vec::new();
    write_one_line(&mut out, v);
    String::from_utf8(out).unwrap_or_default()
}

/// Appends [`write_one_line`]'s text when it is at most `limit` bytes long, and says
/// so; otherwise leaves `out` as it was, having stopped writing at the limit.
fn write_one_line_within(out: &mut Vec<u8>, v: &Value, limit: usize) -> bool {
    let start = out.len();
    let mut capped = Capped {
        bytes: out,
        limit: start + limit,
    };
    let mut ser = serde_json::Serializer::with_formatter(&mut capped, Spaced);
    let fits = serde::Serialize::serialize(v, &mut ser).is_ok();
    if !fits {
        out.truncate(start);
    }
    fits
}

/// A writer that appends to `bytes` and fails rather than make them longer than
/// `limit`.
struct Capped<'o> {
    bytes: &'o mut Vec<u8>,
    limit: usize,
}

impl io::Write for Capped<'_> {
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
