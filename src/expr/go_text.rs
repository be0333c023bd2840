//! The Go template text of a reference into the values (`$.Values.a.b`, or
//! `(index $.Values "a" "b-c")` when a key is not an identifier) and of a literal
//! operand, as [`Expr::write_go`](super::Expr::write_go) writes them.

use super::gojson::to_go_json;
use super::ValuePath;
use serde_json::Value;

/// A Go template identifier can follow a dot: `.Values.replicaCount`.
pub(super) fn is_go_identifier(s: &str) -> bool {
    // Byte by byte: no byte of a non-ASCII character is an ASCII letter, digit or `_`.
    let mut bytes = s.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

pub(super) fn go_ref(path: &ValuePath) -> String {
    let mut out = String::new();
    write_go_ref(&mut out, path);
    out
}

pub(super) fn write_go_ref(out: &mut String, path: &ValuePath) {
    if path.0.iter().all(|s| is_go_identifier(s)) {
        out.push_str("$.Values");
        for segment in &path.0 {
            out.push('.');
            out.push_str(segment);
        }
    } else {
        out.push_str("(index $.Values");
        for key in &path.0 {
            out.push(' ');
            write_go_string(out, key);
        }
        out.push(')');
    }
}

/// A Go string literal. Go's double-quoted literal accepts the same escapes JSON
/// uses for the characters that need one.
pub fn go_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_go_string(&mut out, s);
    out
}

/// Whether JSON writes `byte` escaped: a quote, a backslash or a control character.
fn json_escapes(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// [`go_string`] appended to `out`. A string with nothing JSON escapes (a quote, a
/// backslash, a control character), as keys and names are, is quoted as it is;
/// any other is written by `serde_json`.
fn write_go_string(out: &mut String, s: &str) {
    if !s.bytes().any(json_escapes) {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&serde_json::to_string(s).unwrap_or_else(|_| String::from("\"\"")));
    }
}

pub(super) fn write_go_literal(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("nil"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&crate::expr::gojson::go_number(n)),
        Value::String(s) => write_go_string(out, s),
        // The builders never put collections in a literal operand; printing them as
        // a JSON string keeps the template valid if one ever does.
        other => {
            out.push_str("(fromJson ");
            write_go_string(out, &to_go_json(other));
            out.push(')');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Go string literal is what `serde_json` writes for the string, whether it is
    /// quoted as it is or escaped: every character below 0x80 alone and between
    /// others, and characters of two to four bytes.
    #[test]
    fn go_strings_are_the_json_strings() {
        let mut cases: Vec<String> = (0u8..0x80).map(|b| char::from(b).to_string()).collect();
        cases.extend((0u8..0x80).map(|b| format!("pool-{}x", char::from(b))));
        cases.extend(
            [
                "",
                "workloads",
                "x y",
                "é",
                "\u{2028}",
                "\u{1f600}",
                "a\"b\\c",
                "<&>",
                "\u{7f}",
            ]
            .map(String::from),
        );
        for b in 0..=u8::MAX {
            let escaped = b < 0x80
                && serde_json::to_string(&char::from(b).to_string())
                    .unwrap()
                    .len()
                    > 3;
            assert_eq!(json_escapes(b), escaped, "{b:#x}");
        }
        for s in &cases {
            let json = serde_json::to_string(s).unwrap();
            assert_eq!(go_string(s), json, "{s:?}");
            let mut out = String::from("x ");
            write_go_string(&mut out, s);
            assert_eq!(out, format!("x {json}"), "{s:?}");
        }
    }
}
