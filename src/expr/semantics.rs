//! Go template and Sprig semantics on values: how `.Values.a.b` is looked up, what
//! is true and empty, how `int` and `mergeOverwrite` read their operands.

use super::gojson::to_go_json;
use super::ValuePath;
use serde_json::{Map, Value};

/// The value at `path` (`None`: a missing last key, nil in Go), or Go's error.
pub(super) fn lookup_like_go<'v>(
    values: &'v Value,
    path: &ValuePath,
) -> Result<Option<&'v Value>, String> {
    lookup_like_go_from(values, path, 0)
}

/// [`lookup_like_go`] from `start`, the value the first `skip` keys of `path` reach.
pub(super) fn lookup_like_go_from<'v>(
    start: &'v Value,
    path: &ValuePath,
    skip: usize,
) -> Result<Option<&'v Value>, String> {
    let mut current = start;
    for (i, segment) in path.0.iter().enumerate().skip(skip) {
        match current {
            Value::Object(map) => match map.get(segment.as_str()) {
                Some(next) => current = next,
                // A missing last key is nil; a missing key in the middle makes the next
                // field access fail, as in Go.
                None if i + 1 == path.0.len() => return Ok(None),
                None => {
                    return Err(format!(
                        "nil pointer evaluating `{}`",
                        ValuePath(path.0[..=i + 1].to_vec())
                    ))
                }
            },
            Value::Null => {
                return Err(format!(
                    "nil pointer evaluating `{}`",
                    ValuePath(path.0[..=i].to_vec())
                ))
            }
            other => {
                return Err(format!(
                    "can't evaluate field `{segment}` in {}",
                    to_go_json(other)
                ))
            }
        }
    }
    Ok(Some(current))
}

/// Sprig's `mergeOverwrite` on values: maps merge key by key, anything else in
/// `over` replaces what `base` has.
pub(super) fn merge_over(base: &mut Map<String, Value>, over: Map<String, Value>) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(Value::Object(inner)), Value::Object(value)) => merge_over(inner, value),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

pub(super) fn expect_string(v: Value) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s),
        other => Err(format!("expected a string, got {}", to_go_json(&other))),
    }
}

/// Go template truthiness (`if`, `and`, `or`, `not`).
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
    }
}

/// Sprig's `empty` (used by `default`): Go's zero values and empty collections.
pub fn sprig_empty(v: &Value) -> bool {
    !truthy(v)
}

/// Sprig's `int` (spf13/cast `ToInt`): floats truncate, strings parse, else 0.
pub fn sprig_int(v: &Value) -> i64 {
    match v {
        Value::Bool(b) => i64::from(*b),
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_u64().map(|u| u as i64))
            .or_else(|| n.as_f64().map(|f| f as i64))
            .unwrap_or(0),
        Value::String(s) => s.trim().parse::<i64>().unwrap_or(0),
        _ => 0,
    }
}

/// Sprig's `sha256sum`: the SHA-256 digest of `bytes` in lower-case hex.
///
/// Computed by `hmac-sha256`, which has no run-time detection of the processor's
/// features. `sha2` asks the processor with three `cpuid` instructions at its first
/// digest, and under a hypervisor each leaves the virtual machine: a profile of 300
/// `render`s of an example put 37 µs of each in them (on an Intel VM; `render` takes
/// 2.5 to 3.2 ms there), and paired runs without them took 0.3 to 0.5 % less time.
/// The digests are of a ConfigMap's text and the Secrets' values: a few kilobytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = hmac_sha256::Hash::hash(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What Helm 3.17 and 4.1 print for `mergeOverwrite (deepCopy base) over` on the
    /// same operands (checked with both binaries): maps merge, anything else replaces,
    /// `false`, `0`, `""`, `null` and `[]` included.
    #[test]
    fn merge_over_replaces_with_falsy_values_and_merges_maps() {
        let base = json!({"b": true, "n": 5, "s": "x", "l": [1, 2], "m": {"x": true, "y": 1, "z": [3]}, "k": {"q": 1}, "e": {}});
        let over = json!({"b": false, "n": 0, "s": "", "l": [], "m": {"x": false, "z": null}, "k": "scalar", "e": {"w": 1}, "new": false});
        let (Value::Object(mut base), Value::Object(over)) = (base, over) else {
            unreachable!()
        };
        merge_over(&mut base, over);
        assert_eq!(
            Value::Object(base),
            json!({"b": false, "n": 0, "s": "", "l": [], "m": {"x": false, "y": 1, "z": null}, "k": "scalar", "e": {"w": 1}, "new": false})
        );
    }

    /// Go's truth for every kind of value, Sprig's `empty` its negation.
    #[test]
    fn truth_and_emptiness_follow_go() {
        for falsy in [
            json!(null),
            json!(false),
            json!(0),
            json!(0.0),
            json!(""),
            json!([]),
            json!({}),
        ] {
            assert!(!truthy(&falsy), "{falsy}");
            assert!(sprig_empty(&falsy), "{falsy}");
        }
        for true_ in [
            json!(true),
            json!(-1),
            json!(0.5),
            json!("0"),
            json!([0]),
            json!({"a": null}),
        ] {
            assert!(truthy(&true_), "{true_}");
            assert!(!sprig_empty(&true_), "{true_}");
        }
    }

    /// Sprig's `int` on every kind: `true` is 1, floats truncate, strings parse.
    #[test]
    fn sprig_int_reads_booleans_floats_and_strings() {
        assert_eq!(sprig_int(&json!(true)), 1);
        assert_eq!(sprig_int(&json!(false)), 0);
        assert_eq!(sprig_int(&json!(2.9)), 2);
        assert_eq!(sprig_int(&json!(" 42 ")), 42);
        assert_eq!(sprig_int(&json!("x")), 0);
        assert_eq!(sprig_int(&json!([1])), 0);
    }

    #[test]
    fn sha256_hex_is_the_standard_digest() {
        // FIPS 180-2's examples: the empty message, "abc", and two blocks.
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
    }

    #[test]
    fn sha256_hex_agrees_with_sha2_at_every_length_around_the_blocks() {
        use sha2::{Digest, Sha256};
        // lengths 0 to 200 cross the 55/56-byte padding edge and three block edges
        let bytes: Vec<u8> = (0..200u32).map(|i| (i * 151 + 7) as u8).collect();
        for len in 0..=bytes.len() {
            let expected: String = Sha256::digest(&bytes[..len])
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(sha256_hex(&bytes[..len]), expected, "length {len}");
        }
    }
}
