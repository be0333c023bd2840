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
    write_value(&mut out, value);
    out
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&go_number(n)),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
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
        write_string(out, key);
        out.push(':');
        write_value(out, item);
    }
    out.push('}');
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
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
    }
    out.push('"');
}

/// Formats a number the way Go prints it: integers as integers, floats with
/// `strconv.FormatFloat(f, 'f' or 'e', -1, 64)` as `encoding/json` chooses.
pub fn go_number(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    go_float(n.as_f64().unwrap_or(0.0))
}

/// Go's `encoding/json` float64 format.
pub fn go_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        // Rust prints `1e21` and `1.5e-7`; Go prints `1e+21` and `1.5e-07`, then
        // encoding/json removes the zero: `1.5e-7`.
        let s = format!("{f:e}");
        match s.split_once('e') {
            Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
            _ => s,
        }
    } else {
        // Rust's Display is the shortest representation that round-trips, without
        // an exponent, as Go's 'f' with precision -1.
        format!("{f}")
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

    #[test]
    fn strings_escape_html_and_controls() {
        let v = json!({"b": "<a & b>", "a": "line\nnext\u{1}\u{2028}é"});
        assert_eq!(
            to_go_json(&v),
            r#"{"a":"line\nnext\u0001\u2028é","b":"\u003ca \u0026 b\u003e"}"#
        );
    }
}
