//! Go-compatible JSON encoding: what Helm's `toJson` prints.
//!
//! Helm reads values files into `float64` numbers and prints them with Go's
//! `encoding/json`, which escapes `<`, `>`, `&`, U+2028 and U+2029, sorts map keys
//! and formats floats in its own way. The render back end prints every leaf with
//! this encoder, and the `sha256` checksums hash its output, so native renders and
//! Helm's agree byte for byte.

use serde_json::{Map, Number, Value};
use std::fmt::Write;

/// Encodes `value` exactly as Go's `json.Marshal` (and so Helm's `toJson`) does.
pub fn to_go_json(value: &Value) -> String {
    let mut out = String::new();
    write_go_json(&mut out, value);
    out
}

/// [`to_go_json`] appended to `out`: the render back end writes every leaf into the
/// one buffer of the render.
pub fn write_go_json(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_go_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => write_map(out, map),
    }
}

fn write_map(out: &mut String, map: &Map<String, Value>) {
    // serde_json's map is a BTreeMap without `preserve_order`: keys come sorted by
    // bytes, which is the order Go's encoder uses.
    out.push('{');
    for (i, (key, item)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_go_string(out, key);
        out.push(':');
        write_go_json(out, item);
    }
    out.push('}');
}

/// Whether Go's encoder writes the byte `b` of a string other than as itself (`"`,
/// `\`, a control character, `<`, `>`, `&`; U+2028 and U+2029 start with 0xE2).
fn escaped_byte(b: u8) -> bool {
    matches!(b, b'"' | b'\\' | b'<' | b'>' | b'&' | 0xE2) || b < 0x20
}

/// A string as Go's encoder writes it, quoted, appended to `out`: runs of characters
/// that need no escape are copied whole.
pub fn write_go_string(out: &mut String, s: &str) {
    out.push('"');
    let mut rest = s;
    while let Some(at) = rest.bytes().position(escaped_byte) {
        out.push_str(&rest[..at]);
        // `at` is a character boundary: every byte `escaped_byte` names starts one.
        let mut chars = rest[at..].chars();
        let c = chars.next().unwrap_or_default();
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
        rest = chars.as_str();
    }
    out.push_str(rest);
    out.push('"');
}

/// Formats a number the way Go prints it: integers as integers, floats with
/// `strconv.FormatFloat(f, 'f' or 'e', -1, 64)` as `encoding/json` chooses.
pub fn go_number(n: &Number) -> String {
    let mut out = String::new();
    write_number(&mut out, n);
    out
}

fn write_number(out: &mut String, n: &Number) {
    if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(u) = n.as_u64() {
        let _ = write!(out, "{u}");
    } else {
        write_float(out, n.as_f64().unwrap_or(0.0));
    }
}

/// Go's `encoding/json` float64 format.
pub fn go_float(f: f64) -> String {
    let mut out = String::new();
    write_float(&mut out, f);
    out
}

fn write_float(out: &mut String, f: f64) {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        // Rust prints `1e21` and `1.5e-7`; Go prints `1e+21` and `1.5e-07`, then
        // encoding/json removes the zero: `1.5e-7`.
        let s = format!("{f:e}");
        match s.split_once('e') {
            Some((mantissa, exp)) if !exp.starts_with('-') => {
                let _ = write!(out, "{mantissa}e+{exp}");
            }
            _ => out.push_str(&s),
        }
    } else {
        // Rust's Display is the shortest representation that round-trips, without
        // an exponent, as Go's 'f' with precision -1.
        let _ = write!(out, "{f}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_print_like_go() {
        assert_eq!(go_float(1000000.0), "1000000");
        assert_eq!(go_float(4294967296.0), "4294967296");
        assert_eq!(go_float(0.5), "0.5");
        assert_eq!(go_float(1e21), "1e+21");
        assert_eq!(go_float(1.5e-7), "1.5e-7");
        assert_eq!(go_float(1e20), "100000000000000000000");
        assert_eq!(go_float(-0.0), "-0");
        assert_eq!(go_float(0.0), "0");
    }

    /// Integers as integers (the largest `u64` included), other numbers as Go's floats.
    #[test]
    fn numbers_print_like_go() {
        let number = |v: Value| match v {
            Value::Number(n) => go_number(&n),
            other => panic!("{other} is not a number"),
        };
        assert_eq!(number(json!(3)), "3");
        assert_eq!(number(json!(-7)), "-7");
        assert_eq!(number(json!(u64::MAX)), "18446744073709551615");
        assert_eq!(number(json!(i64::MIN)), "-9223372036854775808");
        assert_eq!(number(json!(2.5)), "2.5");
        assert_eq!(number(json!(1e21)), "1e+21");
    }

    #[test]
    fn strings_escape_html_and_controls() {
        let v = json!({"b": "<a & b>", "a": "line\nnext\u{1}\u{2028}é"});
        assert_eq!(
            to_go_json(&v),
            r#"{"a":"line\nnext\u0001\u2028é","b":"\u003ca \u0026 b\u003e"}"#
        );
        // Other characters that start with the byte U+2028 starts with stay as they are,
        // and the text between escapes is kept whole.
        let v = json!(["€\u{2027}\u{2029}x", "\"q\"\\\t\r\u{8}\u{c}\u{1f} ok", ""]);
        assert_eq!(
            to_go_json(&v),
            "[\"€\u{2027}\\u2029x\",\"\\\"q\\\"\\\\\\t\\r\\b\\f\\u001f ok\",\"\"]"
        );
    }
}
