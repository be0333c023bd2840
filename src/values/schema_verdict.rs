//! Whether values pass a draft-07 schema, read straight from the schema's JSON.
//!
//! The `jsonschema` crate compiles a whole schema before it checks anything, and the
//! values schema of a large spec is megabytes: compiling it was over a quarter of
//! `render` and most of its memory. Values are checked once per run, so this walks the
//! schema once instead, for the keywords shipshape's schemas use, and answers only
//! "valid" or "not". It answers `None` for anything it does not know (another keyword,
//! a reference outside the document, a regular expression whose meaning could differ
//! from ECMA 262's); the caller then asks `jsonschema`, which also words every refusal.
//! Unit tests hold its verdicts equal to `jsonschema`'s on every example's schemas.

use serde_json::{Map, Number, Value};
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashMap;

/// `Some(true)` when `values` pass `schema`, `Some(false)` when they do not, `None` when
/// the schema uses something this does not evaluate.
pub fn schema_verdict(schema: &Value, values: &Value) -> Option<bool> {
    Walk {
        root: schema,
        natives: &[],
        outside: None,
    }
    .valid(schema, values, 1)
}

/// Where a walk finds a definition its schema does not hold: the definition named,
/// `None` when there is none.
pub type OutsideDefinitions = fn(&str) -> Option<&'static Value>;

/// [`schema_verdict`] of a schema that leaves some of its definitions to `outside`: a
/// reference into `#/definitions/<name>` that `schema` does not resolve resolves in
/// `outside(name)` (`render`'s frame leaves the model's definitions to
/// [`crate::contract::model_schemas::model_definition`], which parses each when the
/// values first reach it). Decides as the schema would with those definitions in it.
pub fn schema_verdict_beside(
    schema: &Value,
    values: &Value,
    outside: OutsideDefinitions,
) -> Option<bool> {
    Walk {
        root: schema,
        natives: &[],
        outside: Some(outside),
    }
    .valid(schema, values, 1)
}

/// [`schema_verdict`] of `schema` as one entry of the root schema `root`'s top-level
/// `allOf`: its references resolve in `root`, and it is walked at the depth it has
/// there. `root` and each entry in turn all pass exactly when `root` with the entries
/// in its `allOf` passes (a refusal and an unknown may come in another order).
pub fn schema_verdict_in(root: &Value, schema: &Value, values: &Value) -> Option<bool> {
    schema_verdict_in_with(root, schema, values, &[])
}

/// A definition the walk decides with code instead of a schema: its name under
/// `definitions`, and whether a value passes it. A reference to it
/// (`#/definitions/<name>`) is answered by the code, whatever `root` holds.
pub type NativeDefinition<'n> = (&'n str, &'n dyn Fn(&Value) -> bool);

/// [`schema_verdict_in`] with definitions decided by code (`render` checks the root
/// rules' definitions enumerated over pod counts without building them).
pub fn schema_verdict_in_with(
    root: &Value,
    schema: &Value,
    values: &Value,
    natives: &[NativeDefinition<'_>],
) -> Option<bool> {
    Walk {
        root,
        natives,
        outside: None,
    }
    .valid(schema, values, 2)
}

/// Whether `value` passes `{"maximum": limit}`: a number at most `limit`, or anything
/// that is not a number.
pub fn at_most(value: &Value, limit: u64) -> bool {
    bound(value, &Value::from(limit), |o| o != Ordering::Greater).unwrap_or(true)
}

thread_local! {
    /// Compiled patterns by source; `None` for one this does not evaluate. Kept for the
    /// thread's life: a schema repeats its patterns in every workload, and tests walk
    /// the same schemas many times. Each is a clone of [`SHARED_PATTERNS`]' one.
    static PATTERNS: RefCell<HashMap<String, Option<regex_lite::Regex>>> = RefCell::new(HashMap::new());
}

/// Compiled patterns by source, for every thread: a thread's first use of a source
/// takes a clone of the pattern from here, compiling it only if no thread has
/// ([`shared_pattern`]). A clone shares the compiled program and builds its own
/// matching cache, so each thread matches without a lock ([`PATTERNS`]).
static SHARED_PATTERNS: std::sync::Mutex<
    std::collections::BTreeMap<String, Option<regex_lite::Regex>>,
> = std::sync::Mutex::new(std::collections::BTreeMap::new());

/// The pattern `source` compiled ([`compiled_pattern`]) by whichever thread asked first.
fn shared_pattern(source: &str) -> Option<regex_lite::Regex> {
    let shared = || SHARED_PATTERNS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(compiled) = shared().get(source) {
        return compiled.clone();
    }
    // Compiled outside the lock: another thread may compile the same source meanwhile,
    // and the first one stored is kept.
    let compiled = compiled_pattern(source);
    shared()
        .entry(source.to_string())
        .or_insert(compiled)
        .clone()
}

/// Compiles every pattern of `schema` (each `pattern` keyword's string, at any depth)
/// that no thread has compiled yet, for the walks that will match them
/// ([`shared_pattern`]): work a thread with nothing else to do can do ahead.
pub fn compile_patterns_ahead(schema: &Value) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match value {
                    Value::String(source) if key == "pattern" => {
                        shared_pattern(source);
                    }
                    _ => compile_patterns_ahead(value),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(compile_patterns_ahead),
        _ => {}
    }
}

/// Deeper than this, a schema is taken as a reference cycle (`None`).
pub(super) const MAX_DEPTH: usize = 256;

struct Walk<'s> {
    root: &'s Value,
    natives: &'s [NativeDefinition<'s>],
    /// The definitions `root` leaves to others ([`schema_verdict_beside`]).
    outside: Option<OutsideDefinitions>,
}

impl<'s> Walk<'s> {
    /// The verdict of `schema` on `value`, `depth` schemas deep (the root is 1).
    fn valid(&self, schema: &'s Value, value: &Value, depth: usize) -> Option<bool> {
        if depth > MAX_DEPTH {
            return None;
        }
        let depth = depth + 1;
        let map = match schema {
            Value::Bool(b) => return Some(*b),
            Value::Object(map) => map,
            _ => return None,
        };
        // In draft 7 a reference replaces the keywords beside it. Keys come sorted: a
        // map has `$ref` only if its first key sorts no later, so only if that key is
        // empty or starts with a byte no later than `$` (one byte compared, not a
        // string: this runs at every node).
        if map
            .keys()
            .next()
            .is_some_and(|k| k.as_bytes().first().is_none_or(|&c| c <= b'$'))
        {
            if let Some(reference) = map.get("$ref") {
                let reference = reference.as_str()?;
                if let Some(name) = reference.strip_prefix("#/definitions/") {
                    if let Some((_, holds)) = self.natives.iter().find(|(n, _)| *n == name) {
                        return Some(holds(value));
                    }
                }
                let target = self.resolve(reference)?;
                return self.valid(target, value, depth);
            }
        }
        // A schema fails at its first failing keyword, whatever the keywords after it
        // are (a keyword this does not know included): its keywords all must hold.
        for (keyword, argument) in map {
            let passes = match keyword.as_str() {
                // Keywords that constrain nothing.
                "$schema" | "$comment" | "title" | "description" | "default" | "examples"
                | "definitions" => true,
                "then" | "else" => true, // read with `if`
                "type" => type_matches(argument, value)?,
                "const" => equal(argument, value),
                "enum" => argument.as_array()?.iter().any(|a| equal(a, value)),
                "minimum" => bound(value, argument, |o| o != Ordering::Less)?,
                "maximum" => bound(value, argument, |o| o != Ordering::Greater)?,
                "exclusiveMinimum" => bound(value, argument, |o| o == Ordering::Greater)?,
                "exclusiveMaximum" => bound(value, argument, |o| o == Ordering::Less)?,
                "minLength" => length(value, argument, |len, n| len >= n)?,
                "maxLength" => length(value, argument, |len, n| len <= n)?,
                "pattern" => match value.as_str() {
                    Some(s) => self.pattern_matches(argument.as_str()?, s)?,
                    None => {
                        // Only a pattern this can evaluate passes what is not a string.
                        self.pattern_matches(argument.as_str()?, "")?;
                        true
                    }
                },
                "required" => match value {
                    Value::Object(object) => every(argument.as_array()?, |name| {
                        Some(object.contains_key(name.as_str()?))
                    })?,
                    _ => true,
                },
                "properties" => match value {
                    Value::Object(object) => {
                        let properties = argument.as_object()?;
                        every(paired(properties, object), |(sub, v)| match v {
                            Some(v) => self.valid(sub, v, depth),
                            None => Some(true),
                        })?
                    }
                    _ => true,
                },
                "additionalProperties" => match value {
                    Value::Object(object) => self.additional(map, argument, object, depth)?,
                    _ => true,
                },
                "propertyNames" => match value {
                    Value::Object(object) => every(object.keys(), |name| {
                        self.valid(argument, &Value::String(name.clone()), depth)
                    })?,
                    _ => true,
                },
                "items" => match (argument, value) {
                    (Value::Array(_), _) => return None,
                    (_, Value::Array(items)) => {
                        every(items, |item| self.valid(argument, item, depth))?
                    }
                    _ => true,
                },
                "allOf" => every(argument.as_array()?, |sub| self.valid(sub, value, depth))?,
                "anyOf" => !every(argument.as_array()?, |sub| {
                    Some(!self.valid(sub, value, depth)?)
                })?,
                "oneOf" => {
                    let mut count = 0;
                    for sub in argument.as_array()? {
                        count += usize::from(self.valid(sub, value, depth)?);
                    }
                    count == 1
                }
                "not" => !self.valid(argument, value, depth)?,
                "if" => {
                    let branch = if self.valid(argument, value, depth)? {
                        map.get("then")
                    } else {
                        map.get("else")
                    };
                    match branch {
                        Some(sub) => self.valid(sub, value, depth)?,
                        None => true,
                    }
                }
                _ => return None,
            };
            if !passes {
                return Some(false);
            }
        }
        Some(true)
    }

    /// `additionalProperties`: the keys neither `properties` nor `patternProperties`
    /// name pass `argument`.
    fn additional(
        &self,
        map: &'s Map<String, Value>,
        argument: &'s Value,
        object: &Map<String, Value>,
        depth: usize,
    ) -> Option<bool> {
        if map.contains_key("patternProperties") {
            return None;
        }
        let Some(named) = map.get("properties").and_then(Value::as_object) else {
            return every(object.values(), |v| self.valid(argument, v, depth));
        };
        every(paired(object, named), |(v, declared)| match declared {
            Some(_) => Some(true),
            None => self.valid(argument, v, depth),
        })
    }

    /// A reference inside the schema's own document ([`resolve_pointer`]), or into a
    /// definition it leaves to [`Walk::outside`].
    fn resolve(&self, reference: &str) -> Option<&'s Value> {
        resolve_pointer(self.root, reference).or_else(|| self.resolve_outside(reference))
    }

    /// `#/definitions/<name>` or `#/definitions/<name>/<pointer>` in the definition
    /// [`Walk::outside`] gives for `name` (a name with no `~` escape: none of the
    /// model's has one).
    fn resolve_outside(&self, reference: &str) -> Option<&'s Value> {
        let outside = self.outside?;
        let rest = reference.strip_prefix("#/definitions/")?;
        let (name, pointer) = match rest.split_once('/') {
            Some((name, pointer)) => (name, Some(pointer)),
            None => (rest, None),
        };
        if name.contains('~') || name.contains('%') {
            return None;
        }
        let definition = outside(name)?;
        match pointer {
            None => Some(definition),
            Some(pointer) => resolve_pointer(definition, &format!("#/{pointer}")),
        }
    }

    /// Whether `text` matches the pattern `source`, compiled once per source; `None`
    /// for a pattern whose meaning may differ between ECMA 262 and `regex_lite`.
    /// The match runs on the kept `Regex` itself: a clone of one starts with no
    /// matching cache, which each use then builds again.
    fn pattern_matches(&self, source: &str, text: &str) -> Option<bool> {
        PATTERNS.with_borrow_mut(|patterns| {
            if !patterns.contains_key(source) {
                patterns.insert(source.to_string(), shared_pattern(source));
            }
            patterns
                .get(source)
                .and_then(Option::as_ref)
                .map(|pattern| pattern.is_match(text))
        })
    }
}

/// A reference inside the document `root`: `#` or `#/a/b` (a JSON pointer).
pub(super) fn resolve_pointer<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.contains('%') {
        return None;
    }
    if pointer.is_empty() {
        return Some(root);
    }
    // `Value::pointer`, without unescaping (two new strings) a token with no `~`.
    pointer
        .strip_prefix('/')?
        .split('/')
        .try_fold(root, |target, token| {
            let token = if token.contains('~') {
                std::borrow::Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
            } else {
                std::borrow::Cow::Borrowed(token)
            };
            match target {
                Value::Object(map) => map.get(token.as_ref()),
                Value::Array(items) => array_index(&token).and_then(|i| items.get(i)),
                _ => None,
            }
        })
}

/// The pattern `source` compiled for the walk, which only asks whether it matches
/// ([`without_captures`]); `None` for one the walk does not evaluate
/// ([`same_in_ecma_and_rust`]).
pub(super) fn compiled_pattern(source: &str) -> Option<regex_lite::Regex> {
    same_in_ecma_and_rust(source)
        .then(|| regex_lite::Regex::new(&without_captures(source)).ok())
        .flatten()
}

/// Whether `names` names are looked up in an object of `keys` keys one by one (a
/// search each) rather than found by one walk along its sorted keys: when they are
/// fewer than a quarter of the keys. Either way gives the same answer; both walks
/// (this one and [`super::schema_program`]) choose by it.
pub(super) fn searched(names: usize, keys: usize) -> bool {
    names.saturating_mul(4) < keys
}

/// Each entry of `outer`, in its order, with the value `inner` has under the same key.
/// Both maps are sorted by key, so a large pair is walked side by side (one comparison
/// per step) instead of searched once per entry; a few entries against a large map
/// are searched.
fn paired<'a, 'b>(
    outer: &'a Map<String, Value>,
    inner: &'b Map<String, Value>,
) -> impl Iterator<Item = (&'a Value, Option<&'b Value>)> {
    let search = searched(outer.len(), inner.len());
    let mut rest = inner.iter().peekable();
    outer.iter().map(move |(key, value)| {
        if search {
            return (value, inner.get(key));
        }
        while rest.next_if(|(k, _)| k.as_str() < key.as_str()).is_some() {}
        let found = rest.next_if(|(k, _)| *k == key).map(|(_, v)| v);
        (value, found)
    })
}

/// A JSON pointer token as an array index, as `Value::pointer` reads it: digits, no
/// leading zero, no sign.
fn array_index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.starts_with('0') && token.len() != 1) {
        return None;
    }
    token.parse().ok()
}

/// Whether `holds` is true of every item, stopping at the first it is false of; `None`
/// when it cannot tell for an item before that.
pub(super) fn every<I: IntoIterator>(
    items: I,
    mut holds: impl FnMut(I::Item) -> Option<bool>,
) -> Option<bool> {
    for item in items {
        if !holds(item)? {
            return Some(false);
        }
    }
    Some(true)
}

/// Whether a pattern means the same to ECMA 262 (Helm's validators, `jsonschema`) and to
/// `regex_lite` (the `regex` crate's syntax without its Unicode tables, much cheaper to
/// compile, which the values schema's patterns need): no `.` outside a class (ECMA's stops at `\r` and U+2028 too), no
/// negated class (ECMA counts UTF-16 units), no class escape that is Unicode-wide in one
/// and ASCII in the other (`\d`, `\w`, `\s`, `\b`), no group syntax past plain groups,
/// no back reference; only escapes of punctuation and of `\t \n \f \r`. Inside a class,
/// no `[` (a nested class, which `regex_lite` refuses), no `&&`, `--` or `~~` (set
/// operations in the `regex` crate's syntax), and no empty class (`[]` opens a class
/// holding `]` there).
fn same_in_ecma_and_rust(source: &str) -> bool {
    let mut chars = source.chars();
    let mut in_class = false;
    let mut previous = None;
    while let Some(c) = chars.next() {
        let next = chars.as_str().chars().next();
        match c {
            '\\' => match chars.next() {
                Some(e) if e.is_ascii_punctuation() || "tnfr".contains(e) => {}
                _ => return false,
            },
            '[' if in_class => return false,
            '[' if matches!(next, Some('^' | ']')) => return false,
            '[' => in_class = true,
            ']' => in_class = false,
            '&' | '-' | '~' if in_class && next == Some(c) => return false,
            '.' if !in_class => return false,
            '?' if previous == Some('(') => return false,
            _ => {}
        }
        previous = Some(c);
    }
    !in_class
}

/// `source`, a pattern [`same_in_ecma_and_rust`] accepts, with each of its groups made
/// non-capturing (`(` to `(?:`): the walk only asks whether a pattern matches, and
/// `regex_lite` keeps two slots per group in each state of its search. The values
/// schema's pattern that refuses managed settings in `command` and `args` has ten
/// groups over some 1,200 states: in an example's `render`, DHAT counted two tables of
/// 99.6 KB for its search, fresh memory each. Parentheses escaped or inside a class
/// stay literal.
fn without_captures(source: &str) -> String {
    let mut out = String::with_capacity(source.len() + 16);
    let mut chars = source.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        out.push(c);
        match c {
            '\\' => out.extend(chars.next()),
            '[' => in_class = true,
            ']' => in_class = false,
            '(' if !in_class => out.push_str("?:"),
            _ => {}
        }
    }
    out
}

/// Whether `value` has the type (or one of the types) named; `integer` is a number with
/// no fractional part, `1.0` included.
pub(super) fn type_matches(types: &Value, value: &Value) -> Option<bool> {
    let one = |name: &str| -> Option<bool> {
        Some(match name {
            "null" => value.is_null(),
            "boolean" => value.is_boolean(),
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "number" => value.is_number(),
            "integer" => match value {
                Value::Number(n) => n.as_f64()?.fract() == 0.0,
                _ => false,
            },
            _ => return None,
        })
    };
    match types {
        Value::String(name) => one(name),
        Value::Array(names) => {
            let mut any = false;
            for name in names {
                any |= one(name.as_str()?)?;
            }
            Some(any)
        }
        _ => None,
    }
}

/// JSON equality, numbers by their value (`1` equals `1.0`).
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare(x, y) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| equal(p, q)))
        }
        _ => a == b,
    }
}

/// A numeric bound: passes for a value that is not a number.
pub(super) fn bound(
    value: &Value,
    limit: &Value,
    holds: impl Fn(Ordering) -> bool,
) -> Option<bool> {
    let limit = limit.as_number()?;
    Some(match value {
        Value::Number(n) => holds(compare(n, limit)),
        _ => true,
    })
}

/// A length bound in characters: passes for a value that is not a string.
pub(super) fn length(
    value: &Value,
    limit: &Value,
    holds: impl Fn(u64, u64) -> bool,
) -> Option<bool> {
    let limit = limit.as_u64()?;
    Some(match value {
        Value::String(s) => holds(s.chars().count() as u64, limit),
        _ => true,
    })
}

/// Two JSON numbers compared exactly, whatever their representation (a `u64` past 2^53
/// against a float included).
fn compare(a: &Number, b: &Number) -> Ordering {
    match (as_int(a), as_int(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(x), None) => compare_int_float(x, b.as_f64().unwrap_or(f64::NAN)),
        (None, Some(y)) => compare_int_float(y, a.as_f64().unwrap_or(f64::NAN)).reverse(),
        (None, None) => {
            let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
    }
}

fn as_int(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// An integer against a finite float, exactly.
fn compare_int_float(int: i128, float: f64) -> Ordering {
    const TWO_TO_THE_100: f64 = 1_267_650_600_228_229_401_496_703_205_376.0;
    if float >= TWO_TO_THE_100 {
        return Ordering::Less;
    }
    if float <= -TWO_TO_THE_100 {
        return Ordering::Greater;
    }
    let floor = float.floor();
    match int.cmp(&(floor as i128)) {
        Ordering::Equal if float > floor => Ordering::Less,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Whether `source` is among the patterns compiled for every thread.
    fn shared(source: &str) -> bool {
        SHARED_PATTERNS.lock().unwrap().contains_key(source)
    }

    /// Compiling ahead takes each `pattern` keyword's string at any depth (in
    /// `properties`, `items`, `anyOf`), and no other string: not a `description`, not a
    /// property named `pattern`, not an `enum` member.
    #[test]
    fn patterns_are_compiled_ahead_from_every_depth_and_no_other_string() {
        let schema = json!({
            "pattern": "^ahead-top$",
            "description": "^ahead-description$",
            "enum": ["^ahead-enum$"],
            "properties": {
                "pattern": {"type": "string", "pattern": "^ahead-property$"},
                "list": {"items": {"anyOf": [{"pattern": "^ahead-any-of$"}]}}
            }
        });
        compile_patterns_ahead(&schema);
        for compiled in ["^ahead-top$", "^ahead-property$", "^ahead-any-of$"] {
            assert!(shared(compiled), "{compiled}");
        }
        for other in ["^ahead-description$", "^ahead-enum$"] {
            assert!(!shared(other), "{other}");
        }
    }

    /// A pattern compiled on one thread is the one another thread matches with; one
    /// the walk does not evaluate is shared as `None` (ECMA's `.` differs).
    #[test]
    fn a_pattern_compiled_ahead_on_one_thread_matches_on_another() {
        std::thread::spawn(|| {
            compile_patterns_ahead(&json!({"anyOf": [
                {"pattern": "^shared-[a-z]+$"},
                {"pattern": "^shared-.$"}
            ]}));
        })
        .join()
        .unwrap();
        assert!(shared("^shared-[a-z]+$") && shared("^shared-.$"));
        let root = json!({});
        let walk = Walk {
            root: &root,
            natives: &[],
            outside: None,
        };
        assert_eq!(
            walk.pattern_matches("^shared-[a-z]+$", "shared-abc"),
            Some(true)
        );
        assert_eq!(
            walk.pattern_matches("^shared-[a-z]+$", "shared-1"),
            Some(false)
        );
        assert_eq!(walk.pattern_matches("^shared-.$", "shared-x"), None);
        assert_eq!(
            shared_pattern("^shared-.$").map(|r| r.as_str().to_string()),
            None
        );
    }

    /// A few names of a large object are searched, more are found by a walk: fewer
    /// than a quarter of the keys is few.
    #[test]
    fn a_few_names_of_a_large_object_are_searched() {
        assert!(!searched(1, 4));
        assert!(searched(1, 5));
        assert!(!searched(2, 8));
        assert!(searched(2, 9));
        assert!(searched(0, 1));
        assert!(!searched(0, 0));
        assert!(!searched(usize::MAX, usize::MAX));
        assert!(!searched(usize::MAX / 2, usize::MAX));
    }

    /// A definition the schema leaves outside is found there, and a pointer into it
    /// too; the schema's own definitions come first; what neither holds, or a name
    /// with an escape, is undecided, as is every outside reference of a plain walk.
    #[test]
    fn a_definition_left_outside_is_found_there() {
        fn outside(name: &str) -> Option<&'static Value> {
            static SMALL: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
            static NESTED: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
            match name {
                "Small" => Some(SMALL.get_or_init(|| json!({"maximum": 1}))),
                "Nested" => {
                    Some(NESTED.get_or_init(|| json!({"properties": {"n": {"minimum": 5}}})))
                }
                "Mine" | "a~1b" => Some(SMALL.get_or_init(|| json!({"maximum": 1}))),
                _ => None,
            }
        }
        let schema = json!({
            "definitions": {"Mine": {"minimum": 10}},
            "properties": {
                "s": {"$ref": "#/definitions/Small"},
                "n": {"$ref": "#/definitions/Nested/properties/n"},
                "m": {"$ref": "#/definitions/Mine"}
            }
        });
        let beside = |values: Value| schema_verdict_beside(&schema, &values, outside);
        assert_eq!(beside(json!({"s": 1, "n": 5, "m": 10})), Some(true));
        assert_eq!(beside(json!({"s": 2})), Some(false));
        assert_eq!(beside(json!({"n": 4})), Some(false));
        assert_eq!(
            beside(json!({"m": 9})),
            Some(false),
            "the schema's own first"
        );
        assert_eq!(schema_verdict(&schema, &json!({"s": 1})), None);
        assert_eq!(schema_verdict(&schema, &json!({"m": 10})), Some(true));
        for reference in [
            "#/definitions/Unknown",
            "#/definitions/Nested/properties/x",
            "#/definitions/a~1b",
            "#/definitions/Sm%61ll",
            "#/other/Small",
        ] {
            let one = json!({"$ref": reference});
            assert_eq!(
                schema_verdict_beside(&one, &json!(0), outside),
                None,
                "{reference}"
            );
        }
    }

    /// A native definition decides a reference to its name, whatever the root holds
    /// under that name; other references resolve in the root as before.
    #[test]
    fn a_native_definition_decides_the_references_to_its_name() {
        let root = json!({"definitions": {
            "Small": {"maximum": 1},
            "Other": {"minimum": 5}
        }});
        let even = |v: &Value| v.as_u64().is_some_and(|n| n % 2 == 0);
        let natives: [NativeDefinition<'_>; 1] = [("Small", &even)];
        let small = json!({"$ref": "#/definitions/Small"});
        let other = json!({"properties": {"o": {"$ref": "#/definitions/Other"}}});
        assert_eq!(
            schema_verdict_in_with(&root, &small, &json!(4), &natives),
            Some(true)
        );
        assert_eq!(
            schema_verdict_in_with(&root, &small, &json!(3), &natives),
            Some(false)
        );
        assert_eq!(schema_verdict_in(&root, &small, &json!(4)), Some(false));
        assert_eq!(schema_verdict_in(&root, &small, &json!(1)), Some(true));
        for (o, verdict) in [(4, false), (6, true)] {
            let values = json!({"o": o});
            assert_eq!(
                schema_verdict_in_with(&root, &other, &values, &natives),
                Some(verdict)
            );
        }
        // A name is matched whole, and only under `#/definitions/`.
        let longer =
            json!({"definitions": {"Smaller": {"maximum": 1}}, "$ref": "#/definitions/Smaller"});
        assert_eq!(
            schema_verdict_in_with(&longer, &longer, &json!(4), &natives),
            Some(false)
        );
    }

    #[test]
    fn at_most_is_the_maximum_keyword() {
        for (value, limit) in [
            (json!(3), 3),
            (json!(3), 2),
            (json!(2.5), 2),
            (json!(-1), 0),
            (json!("9"), 1),
            (json!(u64::MAX), u64::MAX),
            (json!(null), 0),
        ] {
            let schema = json!({"maximum": limit});
            assert_eq!(
                Some(at_most(&value, limit)),
                schema_verdict(&schema, &value),
                "{value} <= {limit}"
            );
        }
        assert!(at_most(&json!(3), 3) && !at_most(&json!(4), 3) && at_most(&json!(true), 0));
    }

    /// A root schema and the entries of its `allOf` walked one at a time pass values
    /// exactly when the root with its `allOf` does: references resolve in the root,
    /// and an entry nested just within or just past the depth limit gets the same
    /// answer.
    #[test]
    fn entries_of_the_root_all_of_walked_alone_decide_as_the_whole() {
        let frame = json!({
            "type": "object",
            "definitions": {"Positive": {"minimum": 1}},
            "properties": {"n": {"type": "integer"}}
        });
        let entries = |depth: usize| {
            let mut nested = json!({"properties": {"n": {"$ref": "#/definitions/Positive"}}});
            for _ in 0..depth {
                nested = json!({"allOf": [nested]});
            }
            vec![nested, json!({"required": ["n"]})]
        };
        for depth in [
            0,
            1,
            MAX_DEPTH - 6,
            MAX_DEPTH - 5,
            MAX_DEPTH - 4,
            MAX_DEPTH - 3,
            MAX_DEPTH,
        ] {
            let mut whole = frame.clone();
            whole["allOf"] = Value::Array(entries(depth));
            for values in [
                json!({"n": 2}),
                json!({"n": 0}),
                json!({}),
                json!({"n": "x"}),
            ] {
                let one_at_a_time = entries(depth).iter().try_fold(
                    schema_verdict(&frame, &values),
                    |verdict, entry| match verdict {
                        Some(true) => Some(schema_verdict_in(&frame, entry, &values)),
                        other => Some(other),
                    },
                );
                // Which refusal or unknown comes first may differ; a pass may not.
                let whole_verdict = schema_verdict(&whole, &values);
                assert_eq!(
                    one_at_a_time.flatten() == Some(true),
                    whole_verdict == Some(true),
                    "depth {depth}: {values}"
                );
            }
        }
        let mut whole = frame.clone();
        whole["allOf"] = Value::Array(entries(0));
        assert_eq!(schema_verdict(&whole, &json!({"n": 2})), Some(true));
        assert_eq!(schema_verdict(&whole, &json!({"n": 0})), Some(false));
        let deep = entries(MAX_DEPTH);
        assert_eq!(schema_verdict_in(&frame, &deep[0], &json!({"n": 2})), None);
    }

    fn verdict_pairs(schema: Value, values: &[Value]) -> Vec<(Option<bool>, bool)> {
        let compiled = jsonschema::draft7::new(&schema).unwrap();
        values
            .iter()
            .map(|v| (schema_verdict(&schema, v), compiled.is_valid(v)))
            .collect()
    }

    fn assert_same_as_jsonschema(schema: Value, values: &[Value]) {
        for (v, (ours, theirs)) in values.iter().zip(verdict_pairs(schema.clone(), values)) {
            assert_eq!(ours, Some(theirs), "{v} against {schema}");
        }
    }

    #[test]
    fn numbers_compare_by_value_at_the_edges() {
        let big = u64::MAX;
        let values = [
            json!(0),
            json!(-1),
            json!(1),
            json!(1.0),
            json!(1.5),
            json!(2),
            json!(2.0),
            json!(big),
            json!(big as f64),
            json!(i64::MIN),
            json!(9_007_199_254_740_993_u64),
            json!(9_007_199_254_740_992.0),
            json!(1e300),
            json!(-1e300),
            json!("2"),
            json!(null),
        ];
        for schema in [
            json!({"maximum": 2}),
            json!({"minimum": 1}),
            json!({"maximum": 1.5}),
            json!({"minimum": 1.5}),
            json!({"exclusiveMinimum": 1}),
            json!({"exclusiveMaximum": 2}),
            json!({"maximum": big}),
            json!({"maximum": 9_007_199_254_740_992_u64}),
            json!({"minimum": i64::MIN}),
            json!({"const": 2}),
            json!({"const": 2.0}),
            json!({"enum": [1, "2", null]}),
            json!({"type": "integer"}),
            json!({"type": "number"}),
            json!({"type": ["string", "null"]}),
        ] {
            assert_same_as_jsonschema(schema, &values);
        }
    }

    #[test]
    fn objects_strings_and_combinators_as_draft_7_says() {
        let values = [
            json!({}),
            json!({"a": 1}),
            json!({"a": 1, "b": "x"}),
            json!({"b": "abc", "c": true}),
            json!({"a": "1"}),
            json!({"a": [1, 2]}),
            json!({"ab": null}),
            json!({"a": {"x": 1.0}}),
            json!({"a": {"x": 1}}),
            json!({"a": {"x": 1, "y": 2}}),
            json!({"a": {"y": 1}}),
            json!({"a": {"x": 1, "y": [2.0]}}),
            json!({"a": {"x": 1, "y": [2, 3]}}),
            json!(["x", "--workers=2"]),
            json!("héllo"),
            json!("--wo"),
            json!([]),
        ];
        // The shape of the `env.managed` rule's argument pattern.
        let managed = r#"(^|[\t\n\f\r '"`;&|()])(--wo(r(k(e(rs?)?)?)?)?([=\t\n\f\r '"`;&|()]|$)|-w[0-9]*([\t\n\f\r '"`;&|()]|$)|WEB_CONCURRENCY=)"#;
        for schema in [
            json!({"properties": {"a": {"type": "integer"}}, "additionalProperties": false}),
            json!({"properties": {"a": true}, "additionalProperties": {"type": "string"}}),
            json!({"required": ["a"]}),
            json!({"propertyNames": {"maxLength": 1}}),
            json!({"items": {"not": {"pattern": managed}}}),
            json!({"minLength": 5}),
            json!({"maxLength": 5}),
            json!({"allOf": [{"required": ["a"]}, {"required": ["b"]}]}),
            json!({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}),
            json!({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}),
            json!({"if": {"required": ["a"]}, "then": {"required": ["b"]}}),
            json!({"if": {"required": ["a"]}, "else": {"required": ["c"]}}),
            json!({"if": {"required": ["a"]}, "then": false, "else": {"const": {}}}),
            json!({"definitions": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/definitions/n"}}}),
            json!({"definitions": {"n": {"type": "integer"}}, "$ref": "#/definitions/n", "type": "object"}),
            json!({"properties": {"a": {"const": [1, 2.0]}}}),
            json!({"properties": {"a": {"const": [1, 2]}}}),
            json!({"properties": {"a": {"const": {"x": 1}}}}),
            json!({"properties": {"a": {"enum": [{"x": 1, "y": [2]}]}}}),
            json!(false),
            json!(true),
        ] {
            assert_same_as_jsonschema(schema, &values);
        }
    }

    #[test]
    fn what_it_does_not_evaluate_is_none() {
        for schema in [
            json!({"format": "email"}),
            json!({"multipleOf": 2}),
            json!({"items": [{"type": "string"}]}),
            json!({"$ref": "other.json"}),
            json!({"$ref": "#/definitions/missing"}),
            json!({"patternProperties": {"^a": true}, "additionalProperties": false}),
            json!({"pattern": "a.b"}),
            json!({"pattern": "\\d+"}),
            json!({"pattern": "(?=a)"}),
            json!({"type": "decimal"}),
            json!({"definitions": {"a": {"$ref": "#/definitions/a"}}, "$ref": "#/definitions/a"}),
        ] {
            assert_eq!(schema_verdict(&schema, &json!(["a1b"])), None, "{schema}");
            assert_eq!(schema_verdict(&schema, &json!("a1b")), None, "{schema}");
        }
        // A keyword that fails first decides `false` (a schema needs all its keywords);
        // one this does not know before it leaves the verdict open.
        assert_eq!(
            schema_verdict(&json!({"minimum": 5, "multipleOf": 2}), &json!(1)),
            Some(false)
        );
        assert_eq!(
            schema_verdict(&json!({"multipleOf": 2, "type": "string"}), &json!(1)),
            None
        );
        assert_eq!(
            schema_verdict(
                &json!({"anyOf": [{"minimum": 1}, {"format": "x"}]}),
                &json!(1)
            ),
            Some(true)
        );
    }

    #[test]
    fn schemas_nest_up_to_the_depth_limit() {
        // `schemas` schemas deep: `not`s around an integer type.
        let chain = |schemas: usize| {
            (1..schemas).fold(json!({"type": "integer"}), |inner, _| json!({"not": inner}))
        };
        // 255 `not`s: an odd number, so a string passes and an integer does not.
        assert_eq!(schema_verdict(&chain(MAX_DEPTH), &json!("a")), Some(true));
        assert_eq!(schema_verdict(&chain(MAX_DEPTH), &json!(1)), Some(false));
        assert_eq!(schema_verdict(&chain(MAX_DEPTH + 1), &json!(1)), None);
        // One schema more deep through every keyword that holds a schema.
        for wrap in [
            (|s: Value| json!({"properties": {"a": s}})) as fn(Value) -> Value,
            |s| json!({"additionalProperties": s}),
            |s| json!({"propertyNames": s}),
            |s| json!({"items": s}),
            |s| json!({"allOf": [s]}),
            |s| json!({"anyOf": [s]}),
            |s| json!({"oneOf": [s]}),
            |s| json!({"if": s}),
            |s| json!({"if": true, "then": s}),
            |s| json!({"if": false, "else": s}),
            |s| json!({"definitions": {"d": s}, "$ref": "#/definitions/d"}),
        ] {
            let values = [json!({"a": "a"}), json!(["a"]), json!("a")];
            let deep = wrap(chain(MAX_DEPTH));
            assert!(
                values.iter().any(|v| schema_verdict(&deep, v).is_none()),
                "{}",
                &deep.to_string()[..60]
            );
        }
    }

    #[test]
    fn groups_lose_their_captures_and_keep_their_meaning() {
        assert_eq!(without_captures("^(a|b)?(c(d))$"), "^(?:a|b)?(?:c(?:d))$");
        // Escaped or inside a class, a parenthesis is a character; after the class, a
        // group again; an escaped `[` opens no class.
        assert_eq!(without_captures("\\([(]x(y)\\[(z)"), "\\([(]x(?:y)\\[(?:z)");
        // As `contract::rules::managed_args_pattern` writes it.
        let managed = r#"(^|[\t\n\f\r '"`;&|()])(--wo(r(k(e(rs?)?)?)?)?([=\t\n\f\r '"`;&|()]|$)|-w[0-9]*([\t\n\f\r '"`;&|()]|$)|SPRING_DATASOURCE_URL=|APP_\(X\)=)"#;
        for source in [
            "^(a|b)?(c(d))$",
            "\\([(]x(y)",
            "^(0|([0-9]+(ms|s|m|h|d|w|y))+)?$",
            "^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
            managed,
        ] {
            assert!(same_in_ecma_and_rust(source), "{source}");
            let (with, without) = (
                regex_lite::Regex::new(source).unwrap(),
                regex_lite::Regex::new(&without_captures(source)).unwrap(),
            );
            assert_eq!(without.captures_len(), 1, "{source}");
            for text in [
                "",
                "a",
                "bcd",
                "cd",
                "(xy",
                "(x",
                "[xy",
                "0",
                "5ms",
                "3h2m",
                "1x",
                "*.a-b.c",
                "a.",
                "-a",
                "--workers=2",
                "run --work 3",
                "-w4",
                "SPRING_DATASOURCE_URL=x",
                "x-w",
                "--worke",
                "--workers2",
                "APP_(X)=1",
                "APP_X=1",
            ] {
                assert_eq!(
                    with.is_match(text),
                    without.is_match(text),
                    "{source} on {text:?}"
                );
            }
        }
    }

    #[test]
    fn patterns_that_mean_the_same_in_both_dialects() {
        for ok in [
            "^[a-z.]+$",
            "^(a|b)?\\.x$",
            "[\\t\\n]",
            "^\\*\\.",
            "[a&b]",
            "[-a-]",
            "a&&b",
            "[?(]",
            "a--b",
            "(a)?",
            "[(]?",
        ] {
            assert!(same_in_ecma_and_rust(ok), "{ok}");
        }
        for not in [
            "a.b", "\\d", "\\w", "\\s", "\\b", "(?:a)", "(?", "\\1", "[a", "\\u0041", "a\\",
            "[^a]", "[]a]", "[a[b]]", "[a&&b]", "[a--b]", "[a~~b]",
        ] {
            assert!(!same_in_ecma_and_rust(not), "{not}");
        }
    }
}
