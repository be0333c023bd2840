//! A values schema compiled once to check many values with: the same verdicts as
//! [`schema_verdict`](super::schema_verdict::schema_verdict), without reading the
//! schema's JSON again for each value.
//!
//! The walk of [`schema_verdict`](super::schema_verdict) reads every keyword's name and
//! resolves every `$ref` by its path each time it checks values; for one check that is
//! cheapest. `generate` checks the defaults and every preset against one schema of
//! megabytes, so it compiles the schema first: every schema node becomes a list of its
//! keywords, already told apart, each `$ref` the node it names, each pattern compiled
//! once (on first use, for every check after). A keyword's arguments are read exactly
//! as the walk reads them, at the same point, so the answers are the walk's, `None`
//! (cannot decide) included. Unit tests hold the two equal on hand-written schemas,
//! on every example's values schema and on random schemas and values.

use super::frozen_schema::FrozenSchema;
use super::schema_verdict::{
    bound, compiled_pattern, equal, every, length, searched, type_matches, MAX_DEPTH,
};
use serde_json::{Map, Value};
use std::cmp::Ordering;
use std::sync::OnceLock;

mod compiler;

/// A compiled values schema.
pub struct SchemaProgram<'s> {
    nodes: Vec<Node<'s>>,
    patterns: Vec<Pattern<'s>>,
    root: usize,
}

/// One schema of the document.
enum Node<'s> {
    /// `true` or `false`.
    Bool(bool),
    /// Neither a boolean nor an object: the walk cannot decide.
    NotASchema,
    /// A `$ref`, which replaces every keyword beside it: the node it names (`None`
    /// when it is not a string or names nothing in the document).
    Ref(Option<usize>),
    /// The keywords that constrain, in the document's (sorted) order.
    Keywords(Vec<Keyword<'s>>),
}

/// A keyword and its argument, read as the walk reads it.
enum Keyword<'s> {
    /// One the walk does not evaluate, or an argument of the wrong kind it checks
    /// whatever the value: the verdict is `None` when it is reached.
    Unknown,
    Type(&'s Value),
    Const(&'s Value),
    Enum(&'s [Value]),
    Bound(&'s Value, fn(Ordering) -> bool),
    Length(&'s Value, fn(u64, u64) -> bool),
    /// The pattern's index in [`SchemaProgram::patterns`].
    Pattern(usize),
    /// The names, checked only against objects (as the walk, which reads the argument
    /// only then).
    Required(&'s Value),
    /// `required` naming strings in ascending order (as the generated schemas do):
    /// found by one walk along the object's sorted keys.
    RequiredInOrder(Vec<&'s str>),
    /// Each property's name and schema, sorted; `None` for an argument that is not an
    /// object (which refuses to decide only against an object).
    Properties(Option<Vec<(&'s str, usize)>>),
    AdditionalProperties {
        /// The node has `patternProperties`: undecided against an object.
        pattern_properties: bool,
        /// The names `properties` declares, sorted, when it is an object.
        named: Option<Vec<&'s str>>,
        schema: usize,
    },
    PropertyNames(usize),
    Items(usize),
    /// The schemas in their order, and, when two or more of them only name
    /// properties, the same schemas merged by property ([`Merged`]).
    AllOf(Vec<usize>, Option<Box<Merged<'s>>>),
    AnyOf(Vec<usize>),
    OneOf(Vec<usize>),
    Not(usize),
    If {
        condition: usize,
        then: Option<usize>,
        otherwise: Option<usize>,
    },
}

/// The schemas of an `allOf` merged by the properties they name: a schema whose only
/// constraining keyword is `properties` (an object) is not kept itself but entered as
/// each of its properties' schemas, one level down under the property's name;
/// properties named by several schemas are looked up once. At 400 workloads the root
/// `allOf` holds 3,808 rules, most of them `properties: {workloads: {properties:
/// {<workload>: ...}}}`: each looked `workloads` up in the root and its workload up in
/// 400 names. Merged, each workload is looked up once for all of its rules.
///
/// The merge decides only that every schema passes ([`SchemaProgram::all_pass`]): that
/// answer does not depend on their order. Any other answer (a schema that refuses or
/// cannot decide) is found again by the schemas in their order, whose first such answer
/// is the `allOf`'s.
#[derive(Default)]
struct Merged<'s> {
    /// The schemas checked against the value here, one level down for each property
    /// name above.
    here: Vec<usize>,
    /// The value's properties with schemas of their own, by name (sorted).
    properties: Vec<(&'s str, Merged<'s>)>,
    /// The most property levels below the `allOf` of a schema entered by its
    /// properties (0 for one entered at the `allOf`'s value): each such schema counts
    /// towards the depth limit where it is entered.
    entered: usize,
}

impl<'s> Merged<'s> {
    /// The schemas `subs` merged, when at least two of them are entered by their
    /// properties (otherwise there is nothing to share).
    fn of(nodes: &[Node<'s>], subs: &[usize]) -> Option<Box<Merged<'s>>> {
        let only_properties = subs
            .iter()
            .filter(|&&sub| only_properties(&nodes[sub]).is_some())
            .count();
        if only_properties < 2 {
            return None;
        }
        let mut grouped = Grouped::default();
        for &sub in subs {
            grouped.enter(nodes, sub, 0);
        }
        Some(Box::new(grouped.merged()))
    }
}

/// [`Merged`] while it is built: properties by name.
#[derive(Default)]
struct Grouped<'s> {
    here: Vec<usize>,
    /// By name, in ascending order (a `BTreeMap` took about 800 bytes for each level
    /// of one name, which most levels are).
    properties: Vec<(&'s str, Grouped<'s>)>,
    entered: usize,
}

impl<'s> Grouped<'s> {
    /// Enters schema `node`, `level` properties below the `allOf`.
    fn enter(&mut self, nodes: &[Node<'s>], node: usize, level: usize) {
        match only_properties(&nodes[node]) {
            Some(properties) => {
                self.entered = self.entered.max(level);
                for &(name, sub) in properties {
                    let at = match self.properties.binary_search_by(|(n, _)| n.cmp(&name)) {
                        Ok(at) => at,
                        Err(at) => {
                            self.properties.insert(at, (name, Grouped::default()));
                            at
                        }
                    };
                    let below = &mut self.properties[at].1;
                    below.enter(nodes, sub, level + 1);
                    self.entered = self.entered.max(below.entered);
                }
            }
            None => self.here.push(node),
        }
    }

    fn merged(self) -> Merged<'s> {
        Merged {
            here: self.here,
            properties: self
                .properties
                .into_iter()
                .map(|(name, below)| (name, below.merged()))
                .collect(),
            entered: self.entered,
        }
    }
}

/// The properties of a schema whose only constraining keyword is `properties`, an
/// object.
fn only_properties<'n, 's>(node: &'n Node<'s>) -> Option<&'n [(&'s str, usize)]> {
    match node {
        Node::Keywords(keywords) => match keywords.as_slice() {
            [Keyword::Properties(Some(properties))] => Some(properties),
            _ => None,
        },
        _ => None,
    }
}

/// A pattern, compiled on first use.
struct Pattern<'s> {
    source: &'s str,
    compiled: OnceLock<Option<regex_lite::Regex>>,
}

impl Pattern<'_> {
    /// Whether `text` matches; `None` for a pattern the walk does not evaluate.
    fn matches(&self, text: &str) -> Option<bool> {
        self.compiled
            .get_or_init(|| compiled_pattern(self.source))
            .as_ref()
            .map(|pattern| pattern.is_match(text))
    }
}

impl<'s> SchemaProgram<'s> {
    /// Compiles `schema` (a root: its `$ref`s resolve in it).
    pub fn compile(schema: &'s Value) -> Self {
        SchemaProgram::compile_with_rules(schema, &[])
    }

    /// [`SchemaProgram::compile`] of the whole schema `root` with `rules` as its
    /// `allOf` ([`super::frozen_schema::whole_schema`]), the rules frozen: the same
    /// program, the rules' data borrowed from their frozen form. Their `$ref`s are to
    /// `root`'s definitions.
    pub fn compile_with_rules(root: &'s Value, rules: &'s [FrozenSchema]) -> Self {
        compiler::compile(root, rules)
    }

    /// Whether `values` pass: what [`schema_verdict`](super::schema_verdict::schema_verdict)
    /// answers for the schema compiled.
    pub fn verdict(&self, values: &Value) -> Option<bool> {
        self.valid(self.root, values, 1, None)
    }

    /// The verdict on `values` when `passed` is known to pass (its [`verdict`] is
    /// `Some(true)`): the same answer as [`verdict`], without checking again the parts
    /// of `values` equal to `passed`'s at the same place ([`Same`]).
    ///
    /// [`verdict`]: SchemaProgram::verdict
    pub fn verdict_beside(&self, values: &Value, passed: &Value) -> Option<bool> {
        let mut same = Same::default();
        if same.mark(values, passed) {
            return Some(true);
        }
        self.valid(self.root, values, 1, Some(&same))
    }

    /// [`SchemaProgram::verdict_beside`] with the parts of `values` equal to the
    /// passing value's at the same place already known: `copies`, each an object or
    /// an array of `values` (anything else is not looked for).
    pub fn verdict_with_copies(&self, values: &Value, copies: &[&Value]) -> Option<bool> {
        self.valid(self.root, values, 1, Some(&Same::holding(copies)))
    }

    /// The verdict of node `node` on `value`, `depth` schemas deep. `same`, when
    /// given, holds the parts of the values equal to a passing value's at the same
    /// place; it is given only where every schema must pass for the root to pass (not
    /// under `anyOf`, `oneOf`, `not` or `if`), so that the same schemas checked the same
    /// part of the passing value there, and passed.
    fn valid(&self, node: usize, value: &Value, depth: usize, same: Option<&Same>) -> Option<bool> {
        if depth > MAX_DEPTH {
            return None;
        }
        let depth = depth + 1;
        let keywords = match &self.nodes[node] {
            Node::Bool(b) => return Some(*b),
            Node::NotASchema => return None,
            Node::Ref(target) => return self.valid((*target)?, value, depth, same),
            Node::Keywords(keywords) => keywords,
        };
        for keyword in keywords {
            let passes = match keyword {
                Keyword::Unknown => return None,
                Keyword::Type(types) => type_matches(types, value)?,
                Keyword::Const(argument) => equal(argument, value),
                Keyword::Enum(options) => options.iter().any(|a| equal(a, value)),
                Keyword::Bound(limit, holds) => bound(value, limit, holds)?,
                Keyword::Length(limit, holds) => length(value, limit, holds)?,
                Keyword::Pattern(index) => {
                    let pattern = &self.patterns[*index];
                    match value.as_str() {
                        Some(s) => pattern.matches(s)?,
                        None => {
                            pattern.matches("")?;
                            true
                        }
                    }
                }
                Keyword::RequiredInOrder(names) => match value {
                    Value::Object(object) => all_present(names, object),
                    _ => true,
                },
                Keyword::Required(names) => match value {
                    Value::Object(object) => every(names.as_array()?, |name| {
                        Some(object.contains_key(name.as_str()?))
                    })?,
                    _ => true,
                },
                Keyword::Properties(properties) => match value {
                    Value::Object(object) => {
                        let properties = properties.as_ref()?;
                        every(properties_of(properties, object), |(sub, v)| match v {
                            Some(v) => self.valid_below(sub, v, depth, same),
                            None => Some(true),
                        })?
                    }
                    _ => true,
                },
                Keyword::AdditionalProperties {
                    pattern_properties,
                    named,
                    schema,
                } => match value {
                    Value::Object(object) => {
                        if *pattern_properties {
                            return None;
                        }
                        match named {
                            None => every(object.values(), |v| {
                                self.valid_below(*schema, v, depth, same)
                            })?,
                            Some(named) => every(undeclared(object, named), |v| {
                                self.valid_below(*schema, v, depth, same)
                            })?,
                        }
                    }
                    _ => true,
                },
                Keyword::PropertyNames(schema) => match value {
                    Value::Object(object) => every(object.keys(), |name| {
                        self.valid(*schema, &Value::String(name.clone()), depth, None)
                    })?,
                    _ => true,
                },
                Keyword::Items(schema) => match value {
                    Value::Array(items) => {
                        every(items, |item| self.valid_below(*schema, item, depth, same))?
                    }
                    _ => true,
                },
                Keyword::AllOf(subs, merged) => {
                    let all_pass = merged.as_deref().is_some_and(|merged| {
                        depth + merged.entered <= MAX_DEPTH
                            && self.all_pass(merged, value, depth, same)
                    });
                    all_pass || every(subs, |sub| self.valid(*sub, value, depth, same))?
                }
                Keyword::AnyOf(subs) => {
                    !every(subs, |sub| Some(!self.valid(*sub, value, depth, None)?))?
                }
                Keyword::OneOf(subs) => {
                    let mut count = 0;
                    for sub in subs {
                        count += usize::from(self.valid(*sub, value, depth, None)?);
                    }
                    count == 1
                }
                Keyword::Not(sub) => !self.valid(*sub, value, depth, None)?,
                Keyword::If {
                    condition,
                    then,
                    otherwise,
                } => {
                    let branch = match self.valid(*condition, value, depth, None)? {
                        true => then,
                        false => otherwise,
                    };
                    match branch {
                        Some(sub) => self.valid(*sub, value, depth, None)?,
                        None => true,
                    }
                }
            };
            if !passes {
                return Some(false);
            }
        }
        Some(true)
    }

    /// [`SchemaProgram::valid`] of a schema on a part `value` of the value it was
    /// checking: `Some(true)` without checking when `same` holds that part.
    fn valid_below(
        &self,
        node: usize,
        value: &Value,
        depth: usize,
        same: Option<&Same>,
    ) -> Option<bool> {
        if same.is_some_and(|same| same.holds(value)) {
            return Some(true);
        }
        self.valid(node, value, depth, same)
    }
}

impl SchemaProgram<'_> {
    /// Whether every schema of `merged` passes on `value` (`Some(true)`), each checked
    /// at `depth` plus its property levels. False when one refuses or cannot decide.
    fn all_pass(
        &self,
        merged: &Merged<'_>,
        value: &Value,
        depth: usize,
        same: Option<&Same>,
    ) -> bool {
        if !merged
            .here
            .iter()
            .all(|&node| self.valid(node, value, depth, same) == Some(true))
        {
            return false;
        }
        let Value::Object(object) = value else {
            // Schemas of only `properties` pass anything but an object.
            return true;
        };
        let search = searched(merged.properties.len(), object.len());
        let mut rest = object.iter().peekable();
        merged.properties.iter().all(|(name, below)| {
            let found = if search {
                object.get(*name)
            } else {
                while rest.next_if(|(k, _)| k.as_str() < *name).is_some() {}
                rest.next_if(|(k, _)| k.as_str() == *name).map(|(_, v)| v)
            };
            found.is_none_or(|v| {
                same.is_some_and(|same| same.holds(v)) || self.all_pass(below, v, depth + 1, same)
            })
        })
    }
}

/// The parts of some values equal to a passing value's at the same place (the same
/// keys and indexes from the root): each object or array found equal, by address, but
/// not the parts of one already held. A schema that must pass for the root to pass
/// checks a part at one place, and its verdict depends on nothing else, so on a part
/// held here it passes, as it did on the passing value's.
#[derive(Default)]
struct Same {
    parts: std::collections::HashSet<usize, std::hash::BuildHasherDefault<AddressHasher>>,
    /// While [`Same::mark`] walks: the parts found equal whose parents are still
    /// being compared (held only if their parent is not equal).
    pending: Vec<usize>,
}

/// Where a part of the values is in memory: what [`Same`] holds it by.
fn address_of(part: &Value) -> usize {
    part as *const Value as usize
}

impl Same {
    /// The parts `parts`, known to be equal to a passing value's at the same place.
    fn holding(parts: &[&Value]) -> Self {
        Same {
            parts: parts.iter().map(|part| address_of(part)).collect(),
            pending: Vec::new(),
        }
    }

    /// Whether `part` is one of the parts held.
    fn holds(&self, part: &Value) -> bool {
        !self.parts.is_empty() && self.parts.contains(&address_of(part))
    }

    /// Whether `values` equals `passed`; if not, holds each of its parts (objects and
    /// arrays) that equals `passed`'s at the same place, the largest ones.
    fn mark(&mut self, values: &Value, passed: &Value) -> bool {
        let start = self.pending.len();
        let equal = match (values, passed) {
            (Value::Object(object), Value::Object(other)) if object.len() == other.len() => {
                // The same keys, most often: compared pairwise.
                let mut equal = true;
                for ((key, part), (other_key, twin)) in object.iter().zip(other) {
                    if key != other_key {
                        equal = false;
                        self.pending.truncate(start);
                        self.mark_entries(object, other);
                        break;
                    }
                    equal &= self.mark_part(part, twin);
                }
                equal
            }
            (Value::Object(object), Value::Object(other)) => {
                self.mark_entries(object, other);
                false
            }
            (Value::Array(items), Value::Array(other)) => {
                let mut equal = items.len() == other.len();
                for (item, twin) in items.iter().zip(other) {
                    equal &= self.mark_part(item, twin);
                }
                equal
            }
            _ => values == passed,
        };
        if equal {
            self.pending.truncate(start);
        } else {
            self.parts.extend(self.pending.drain(start..));
        }
        equal
    }

    /// [`Same::mark`] of each entry of `object` whose key `other` has too.
    fn mark_entries(&mut self, object: &Map<String, Value>, other: &Map<String, Value>) {
        let mut rest = other.iter().peekable();
        for (key, part) in object {
            while rest.next_if(|(k, _)| *k < key).is_some() {}
            if let Some((_, twin)) = rest.next_if(|(k, _)| *k == key) {
                self.mark_part(part, twin);
            }
        }
    }

    /// [`Same::mark`] of a part, which, when equal, waits in `pending` for its
    /// parent's answer (scalars are not held: no schema is skipped for one).
    fn mark_part(&mut self, part: &Value, twin: &Value) -> bool {
        let equal = self.mark(part, twin);
        if equal && (part.is_object() || part.is_array()) {
            self.pending.push(address_of(part));
        }
        equal
    }
}

/// Hashes an address for [`Same`]: one multiplication (addresses are distinct, and
/// their low bits are alike).
#[derive(Default)]
struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    /// Only addresses are hashed ([`AddressHasher::write_usize`]); other bytes as
    /// the addresses they would make, 8 at a time.
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_usize(u64::from_ne_bytes(word) as usize);
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(26);
    }
}

/// Each property a schema declares, in its order, with the value `object` has under
/// the same name: walked side by side along both sorted lists, or searched when the
/// schema declares a few names of a large object.
fn properties_of<'p, 'v>(
    properties: &'p [(&'p str, usize)],
    object: &'v Map<String, Value>,
) -> impl Iterator<Item = (usize, Option<&'v Value>)> + 'p
where
    'v: 'p,
{
    let search = searched(properties.len(), object.len());
    let mut rest = object.iter().peekable();
    properties.iter().map(move |&(name, node)| {
        if search {
            return (node, object.get(name));
        }
        while rest.next_if(|(k, _)| k.as_str() < name).is_some() {}
        (
            node,
            rest.next_if(|(k, _)| k.as_str() == name).map(|(_, v)| v),
        )
    })
}

/// Whether every name (in ascending order) is a key of `object`: walked side by side
/// along both sorted lists, or searched when the names are a few of a large object
/// (a rule's `required: [workloads]`, then `[<one workload>]` of hundreds, would
/// otherwise walk past every workload before it).
fn all_present(names: &[&str], object: &Map<String, Value>) -> bool {
    if searched(names.len(), object.len()) {
        return names.iter().all(|name| object.contains_key(*name));
    }
    let mut keys = object.keys().peekable();
    names.iter().all(|&name| {
        while keys.next_if(|k| k.as_str() < name).is_some() {}
        keys.next_if(|k| k.as_str() == name).is_some()
    })
}

/// The values of `object` under keys `named` (sorted) does not hold, in the object's
/// order: both lists walked side by side.
fn undeclared<'v, 'n>(
    object: &'v Map<String, Value>,
    named: &'n [&'n str],
) -> impl Iterator<Item = &'v Value> + 'n
where
    'v: 'n,
{
    let mut names = named.iter().peekable();
    object.iter().filter_map(move |(key, v)| {
        while names.next_if(|n| **n < key.as_str()).is_some() {}
        match names.peek() {
            Some(n) if **n == key.as_str() => None,
            _ => Some(v),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::schema_verdict::schema_verdict;
    use proptest::prelude::*;
    use serde_json::json;

    /// Searched or walked, names are present exactly when each is a key.
    #[test]
    fn names_are_present_by_search_and_by_walk_alike() {
        let object: Map<String, Value> = (0..12).map(|i| (format!("k{i:02}"), json!(i))).collect();
        for (names, present) in [
            (vec!["k03"], true),
            (vec!["k11"], true),
            (vec!["k00", "k11"], true),
            (vec!["k04x"], false),
            (vec!["a"], false),
            (vec!["k03", "z"], false),
            (vec!["k00", "k01", "k02", "k03"], true),
            (vec!["k00", "k01", "k02", "k02x"], false),
            (
                vec!["k00", "k01", "k02", "k03", "k04", "k05", "k06", "k07"],
                true,
            ),
            (
                vec!["k00", "k01", "k02", "k03", "k04", "k05", "k06", "z"],
                false,
            ),
            (vec![], true),
        ] {
            assert_eq!(all_present(&names, &object), present, "{names:?}");
        }
    }

    /// The program's verdict on each value is the walk's.
    fn same_as_the_walk(schema: &Value, values: &[Value]) {
        let program = SchemaProgram::compile(schema);
        for v in values {
            assert_eq!(
                program.verdict(v),
                schema_verdict(schema, v),
                "{v} against {schema}"
            );
        }
    }

    fn sample_values() -> Vec<Value> {
        vec![
            json!(null),
            json!(true),
            json!(0),
            json!(-1),
            json!(1),
            json!(1.0),
            json!(1.5),
            json!(2),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(1e300),
            json!(""),
            json!("2"),
            json!("a1b"),
            json!("héllo"),
            json!("--workers=2"),
            json!([]),
            json!(["a1b"]),
            json!(["x", "--workers=2"]),
            json!([1, 2.0]),
            json!({}),
            json!({"a": 1}),
            json!({"a": 1, "b": "x"}),
            json!({"b": "abc", "c": true}),
            json!({"a": 1, "c": true}),
            json!({"a": "1"}),
            json!({"a": [1, 2]}),
            json!({"ab": null}),
            json!({"a": {"x": 1.0}}),
            json!({"a": {"x": 1, "y": 2}}),
            json!({"a": {"y": 1}}),
            json!({"a": {"x": 1, "y": [2, 3]}}),
            json!({"n": 2}),
            json!({"n": "x"}),
        ]
    }

    /// Every keyword the walk knows, the ones it does not, and arguments of the wrong
    /// kind, on values of every kind.
    #[test]
    fn hand_written_schemas_decide_as_the_walk() {
        let managed = r#"(^|[\t\n\f\r '"`;&|()])(--wo(r(k(e(rs?)?)?)?)?([=\t\n\f\r '"`;&|()]|$)|-w[0-9]*([\t\n\f\r '"`;&|()]|$)|WEB_CONCURRENCY=)"#;
        let schemas = [
            json!(true),
            json!(false),
            json!(3),
            json!({}),
            json!({"maximum": 2}),
            json!({"minimum": 1.5}),
            json!({"exclusiveMinimum": 1}),
            json!({"exclusiveMaximum": 2}),
            json!({"maximum": "2"}),
            json!({"minimum": i64::MIN}),
            json!({"const": 2}),
            json!({"const": {"x": 1}}),
            json!({"enum": [1, "2", null]}),
            json!({"enum": 1}),
            json!({"type": "integer"}),
            json!({"type": ["string", "null"]}),
            json!({"type": "decimal"}),
            json!({"type": ["string", "decimal"]}),
            json!({"type": 1}),
            json!({"minLength": 2}),
            json!({"maxLength": 2}),
            json!({"maxLength": -1}),
            json!({"pattern": "^a"}),
            json!({"pattern": "a.b"}),
            json!({"pattern": 1}),
            json!({"items": {"not": {"pattern": managed}}}),
            json!({"items": [{"type": "string"}]}),
            json!({"required": ["a"]}),
            json!({"required": [1]}),
            json!({"required": ["a", 1]}),
            json!({"required": "a"}),
            json!({"properties": {"a": {"type": "integer"}}, "additionalProperties": false}),
            json!({"properties": {"a": true}, "additionalProperties": {"type": "string"}}),
            // Declared names on both sides of an undeclared key.
            json!({"properties": {"a": true, "c": true}, "additionalProperties": false}),
            json!({"properties": 1}),
            json!({"properties": 1, "additionalProperties": false}),
            json!({"patternProperties": {"^a": true}, "additionalProperties": false}),
            json!({"additionalProperties": {"type": "integer"}}),
            json!({"propertyNames": {"maxLength": 1}}),
            json!({"allOf": [{"required": ["a"]}, {"required": ["b"]}]}),
            json!({"anyOf": [{"required": ["a"]}, {"format": "x"}]}),
            json!({"anyOf": [{"format": "x"}, {"required": ["a"]}]}),
            json!({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}),
            json!({"oneOf": [{"required": ["a"]}, {"format": "x"}]}),
            json!({"allOf": 1}),
            json!({"not": {"type": "object"}}),
            json!({"if": {"required": ["a"]}, "then": {"required": ["b"]}}),
            json!({"if": {"required": ["a"]}, "else": {"required": ["c"]}}),
            json!({"if": {"required": ["a"]}, "then": false, "else": {"const": {}}}),
            json!({"then": false}),
            json!({"minimum": 5, "multipleOf": 2}),
            json!({"multipleOf": 2, "type": "string"}),
            json!({"definitions": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/definitions/n"}, "n": {"$ref": "#/definitions/n"}}}),
            json!({"definitions": {"n": {"type": "integer"}}, "$ref": "#/definitions/n", "type": "object"}),
            json!({"$comment": "x", "$ref": "#/definitions/missing"}),
            json!({"$ref": 1}),
            json!({"$ref": "other.json"}),
            json!({"$ref": "#"}),
            json!({"definitions": {"a": {"$ref": "#/definitions/a"}}, "$ref": "#/definitions/a"}),
            json!({"definitions": {"a": {"not": {"$ref": "#/definitions/b"}}, "b": {"anyOf": [{"type": "string"}, {"$ref": "#/definitions/a"}]}}, "properties": {"a": {"$ref": "#/definitions/a"}}}),
            json!({"definitions": {"a~b": {"type": "string"}, "c/d": {"minimum": 2}}, "properties": {"a": {"$ref": "#/definitions/a~0b"}, "n": {"$ref": "#/definitions/c~1d"}}}),
            json!({"items": {"$ref": "#/items/0"}}),
            json!({"allOf": [{"minimum": 0}], "properties": {"n": {"$ref": "#/allOf/0"}}}),
            json!({"": 1, "$ref": "#/definitions/x", "definitions": {"x": false}}),
        ];
        for schema in &schemas {
            same_as_the_walk(schema, &sample_values());
        }
    }

    /// Schemas nested to the depth limit and past it, through every keyword that holds
    /// a schema, decide (or fail to) as the walk does.
    #[test]
    fn the_depth_limit_is_the_walks() {
        let chain = |schemas: usize| {
            (1..schemas).fold(json!({"type": "integer"}), |inner, _| json!({"not": inner}))
        };
        for depth in [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1] {
            for wrap in [
                (|s: Value| s) as fn(Value) -> Value,
                |s| json!({"properties": {"a": s}}),
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
                same_as_the_walk(&wrap(chain(depth)), &sample_values());
            }
        }
    }

    /// A schema drawn from the keywords the walk knows, a few it does not, arguments of
    /// the wrong kind, and references to the root's definitions (cycles included).
    fn schema_strategy() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(json!(true)),
            Just(json!(false)),
            Just(json!({})),
            (0..4i64).prop_map(|n| json!({"minimum": n})),
            (0..4i64).prop_map(|n| json!({"maximum": n})),
            (0..4i64).prop_map(|n| json!({"exclusiveMaximum": n})),
            (0..4u64).prop_map(|n| json!({"maxLength": n})),
            (0..4u64).prop_map(|n| json!({"minLength": n})),
            prop::sample::select(vec![
                "object", "string", "integer", "number", "array", "null", "boolean", "decimal"
            ])
            .prop_map(|t| json!({"type": t})),
            Just(json!({"type": ["string", "integer"]})),
            Just(json!({"const": 1})),
            Just(json!({"enum": ["a", 2, null]})),
            Just(json!({"pattern": "^a[0-9]*$"})),
            Just(json!({"pattern": "a.b"})),
            Just(json!({"required": ["a", "b"]})),
            Just(json!({"required": ["b"]})),
            Just(json!({"required": ["b", "a"]})),
            Just(json!({"required": ["a", "a"]})),
            Just(json!({"required": ["a", 1]})),
            Just(json!({"format": "email"})),
            Just(json!({"multipleOf": 2})),
            Just(json!({"$ref": "#/definitions/d0"})),
            Just(json!({"$ref": "#/definitions/d1"})),
            Just(json!({"$ref": "#/definitions/missing"})),
            Just(json!({"items": [true]})),
            Just(json!({"enum": 3})),
        ];
        leaf.prop_recursive(4, 48, 4, |inner| {
            prop_oneof![
                prop::collection::btree_map(
                    prop::sample::select(vec!["a", "b", "c"]),
                    inner.clone(),
                    0..3
                )
                .prop_map(|m| json!({"properties": m})),
                (
                    prop::collection::btree_map(
                        prop::sample::select(vec!["a", "b"]),
                        inner.clone(),
                        0..2
                    ),
                    inner.clone()
                )
                    .prop_map(|(m, extra)| json!({"properties": m, "additionalProperties": extra})),
                inner
                    .clone()
                    .prop_map(|s| json!({"additionalProperties": s})),
                inner.clone().prop_map(|s| json!({"items": s})),
                inner.clone().prop_map(|s| json!({"propertyNames": s})),
                inner.clone().prop_map(|s| json!({"not": s})),
                prop::collection::vec(inner.clone(), 0..3).prop_map(|v| json!({"allOf": v})),
                prop::collection::vec(inner.clone(), 0..3).prop_map(|v| json!({"anyOf": v})),
                prop::collection::vec(inner.clone(), 0..3).prop_map(|v| json!({"oneOf": v})),
                (inner.clone(), inner.clone(), inner.clone())
                    .prop_map(|(i, t, e)| json!({"if": i, "then": t, "else": e})),
                (inner.clone(), inner.clone()).prop_map(|(i, t)| json!({"if": i, "then": t})),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| {
                    let mut m = a.as_object().cloned().unwrap_or_default();
                    if let Value::Object(b) = b {
                        m.extend(b);
                    }
                    Value::Object(m)
                }),
            ]
        })
    }

    /// A value of any kind, shaped like what the schemas above look at.
    fn value_strategy() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(json!(null)),
            any::<bool>().prop_map(Value::from),
            (-3i64..5).prop_map(Value::from),
            prop::sample::select(vec![0.5f64, 1.0, 2.0, -1.5]).prop_map(Value::from),
            prop::sample::select(vec!["", "a", "a1", "b", "ab", "a.b", "xyz1"])
                .prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
                prop::collection::btree_map(
                    prop::sample::select(vec!["a", "b", "c", "d"]).prop_map(String::from),
                    inner,
                    0..4
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// A proptest runner of `cases` cases from a fixed seed, which saves no failures:
    /// the same cases at every run.
    fn deterministic_runner(cases: u32) -> proptest::test_runner::TestRunner {
        use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
        let config = Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        };
        TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha))
    }

    /// `body` (an object, else the only schema of an `allOf`) with `definitions`.
    fn with_definitions(body: Value, definitions: Value) -> Value {
        let mut schema = match body {
            Value::Object(m) => m,
            other => [("allOf".to_string(), json!([other]))]
                .into_iter()
                .collect(),
        };
        schema.insert("definitions".into(), definitions);
        Value::Object(schema)
    }

    /// Each answer (pass, refusal, undecided) was compared more than `times` times.
    fn assert_each_answer_seen_more_than(
        answers: &std::collections::BTreeMap<Option<bool>, usize>,
        times: usize,
    ) {
        for answer in [Some(true), Some(false), None] {
            assert!(
                answers.get(&answer).copied().unwrap_or(0) > times,
                "{answer:?} too rare: {answers:?}"
            );
        }
    }

    /// Random schemas, with definitions that refer to each other and to themselves, on
    /// random values: the program answers what the walk answers. Each answer (pass,
    /// refusal, undecided) comes up often, so each is compared.
    #[test]
    fn random_schemas_decide_as_the_walk() {
        let mut runner = deterministic_runner(768);
        let answers = std::cell::RefCell::new(std::collections::BTreeMap::new());
        let strategy = (
            schema_strategy(),
            schema_strategy(),
            schema_strategy(),
            prop::collection::vec(value_strategy(), 1..6),
        );
        runner
            .run(&strategy, |(body, d0, d1, values)| {
                let schema = with_definitions(body, json!({"d0": d0, "d1": d1}));
                let program = SchemaProgram::compile(&schema);
                for v in &values {
                    let walked = schema_verdict(&schema, v);
                    prop_assert_eq!(program.verdict(v), walked, "{} against {}", v, schema);
                    *answers.borrow_mut().entry(walked).or_insert(0) += 1;
                }
                Ok(())
            })
            .unwrap();
        assert_each_answer_seen_more_than(&answers.into_inner(), 200);
    }

    /// Random schemas with random rules: compiled with the rules frozen as the root's
    /// `allOf`, the program answers what the whole schema's program and walk answer,
    /// each answer often.
    #[test]
    fn random_schemas_with_frozen_rules_decide_as_the_whole_schema() {
        use crate::values::frozen_schema::{whole_schema, FrozenSchema};
        let mut runner = deterministic_runner(512);
        let answers = std::cell::RefCell::new(std::collections::BTreeMap::new());
        let strategy = (
            schema_strategy(),
            schema_strategy(),
            prop::collection::vec(schema_strategy(), 0..4),
            prop::collection::vec(value_strategy(), 1..6),
        );
        runner
            .run(&strategy, |(body, d0, rules, values)| {
                let root =
                    with_definitions(body, json!({"d0": d0, "d1": {"allOf": rules.clone()}}));
                let frozen: Vec<FrozenSchema> =
                    rules.into_iter().map(FrozenSchema::of_schema).collect();
                let whole = whole_schema(&root, &frozen);
                let (parts, program) = (
                    SchemaProgram::compile_with_rules(&root, &frozen),
                    SchemaProgram::compile(&whole),
                );
                for v in &values {
                    let walked = schema_verdict(&whole, v);
                    prop_assert_eq!(parts.verdict(v), walked, "{} against {}", v, whole);
                    prop_assert_eq!(program.verdict(v), walked, "{} against {}", v, whole);
                    *answers.borrow_mut().entry(walked).or_insert(0) += 1;
                }
                Ok(())
            })
            .unwrap();
        assert_each_answer_seen_more_than(&answers.into_inner(), 150);
    }

    /// Every place in `value`, as JSON pointers, the root (`""`) first.
    fn places(value: &Value, at: String, out: &mut Vec<String>) {
        out.push(at.clone());
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    places(v, format!("{at}/{key}"), out);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    places(v, format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }

    /// Random schemas on values that differ from a passing value in one place (each
    /// place, replaced by each of a few random values): checked beside the passing
    /// value, the program answers what the walk answers, each answer often.
    #[test]
    fn random_values_beside_a_passing_one_decide_as_the_walk() {
        let mut runner = deterministic_runner(768);
        let answers = std::cell::RefCell::new(std::collections::BTreeMap::new());
        let strategy = (
            schema_strategy(),
            schema_strategy(),
            value_strategy(),
            prop::collection::vec(value_strategy(), 3..7),
        );
        runner
            .run(&strategy, |(body, d0, values, replacements)| {
                let schema = with_definitions(body, json!({"d0": d0, "d1": {}}));
                let program = SchemaProgram::compile(&schema);
                // A passing value: the one drawn, or (most schemas refuse something)
                // an empty object or null.
                let Some(passed) = [values, json!({}), json!(null)]
                    .into_iter()
                    .find(|v| program.verdict(v) == Some(true))
                else {
                    return Ok(());
                };
                let mut at = Vec::new();
                places(&passed, String::new(), &mut at);
                for place in &at {
                    for new in &replacements {
                        let mut changed = passed.clone();
                        *changed.pointer_mut(place).unwrap() = new.clone();
                        let walked = schema_verdict(&schema, &changed);
                        prop_assert_eq!(
                            program.verdict_beside(&changed, &passed),
                            walked,
                            "{} beside {} against {}",
                            changed,
                            passed,
                            schema
                        );
                        *answers.borrow_mut().entry(walked).or_insert(0) += 1;
                    }
                }
                prop_assert_eq!(program.verdict_beside(&passed, &passed), Some(true));
                Ok(())
            })
            .unwrap();
        assert_each_answer_seen_more_than(&answers.into_inner(), 100);
    }

    /// The parts equal to the passing value's, at the same place, are not checked
    /// again where every schema must pass (shown here with a value that does not in
    /// fact pass, which a caller never gives), and are checked again under `anyOf`,
    /// `oneOf`, `not` and `if`, where a schema may have failed on the passing value.
    #[test]
    fn equal_parts_are_skipped_only_where_every_schema_must_pass() {
        let integer = json!({"properties": {"x": {"type": "integer"}}});
        let failing = json!({"a": {"x": "s"}, "l": [{"x": "s"}]});
        let changed = json!({"a": {"x": "s"}, "l": [{"x": "s"}], "b": 1});
        for (schema, skipped) in [
            (json!({"properties": {"a": integer}}), true),
            (json!({"additionalProperties": integer}), true),
            (json!({"properties": {"l": {"items": integer}}}), true),
            (json!({"allOf": [{"properties": {"a": integer}}]}), true),
            (
                json!({"allOf": [{"properties": {"a": integer}}, {"properties": {"b": true}}]}),
                true,
            ),
            (
                json!({"definitions": {"d": {"properties": {"a": integer}}}, "$ref": "#/definitions/d"}),
                true,
            ),
            (json!({"anyOf": [{"properties": {"a": integer}}]}), false),
            (json!({"oneOf": [{"properties": {"a": integer}}]}), false),
            (
                json!({"not": {"not": {"properties": {"a": integer}}}}),
                false,
            ),
            (
                json!({"if": {"properties": {"a": integer}}, "else": false}),
                false,
            ),
            (
                json!({"if": true, "then": {"properties": {"a": integer}}}),
                false,
            ),
            (
                json!({"if": false, "else": {"properties": {"a": integer}}}),
                false,
            ),
        ] {
            let program = SchemaProgram::compile(&schema);
            assert_eq!(program.verdict(&changed), Some(false), "{schema}");
            let beside = program.verdict_beside(&changed, &failing);
            assert_eq!(beside, Some(skipped), "{schema}");
            // The same parts, given as copies.
            let copies = [&changed["a"], &changed["l"]];
            assert_eq!(
                program.verdict_with_copies(&changed, &copies),
                Some(skipped),
                "{schema}"
            );
            assert_eq!(program.verdict_with_copies(&changed, &[]), Some(false));
        }
        // Equal values are not checked at all; a part equal in content but at another
        // place is checked.
        let schema = json!({"properties": {"a": integer, "c": integer}});
        let program = SchemaProgram::compile(&schema);
        assert_eq!(program.verdict_beside(&failing, &failing), Some(true));
        let moved = json!({"a": {"x": 1}, "c": {"x": "s"}});
        assert_eq!(program.verdict_beside(&moved, &failing), Some(false));
    }

    /// Equal parts are found by content, at the same keys and indexes: an added or
    /// missing key, a longer or shorter array, or a number written otherwise make a
    /// part differ.
    #[test]
    fn parts_are_equal_by_content_at_the_same_place() {
        let passed = json!({"a": {"x": 1, "y": [1, 2]}, "b": [{"x": 1}, {"y": 2}], "c": 1});
        let mut same = Same::default();
        assert!(same.mark(&passed.clone(), &passed));
        for (values, equal_parts) in [
            (
                json!({"a": {"x": 1, "y": [1, 2]}, "b": [{"x": 1}, {"y": 2}], "c": 2}),
                vec!["/a", "/b"],
            ),
            (
                json!({"a": {"x": 1, "y": [1, 2], "z": 0}, "b": [{"x": 1}, {"y": 2}]}),
                vec!["/a/y", "/b"],
            ),
            (
                json!({"a": {"x": 1}, "b": [{"x": 1}, {"y": 2}, 3], "c": 1}),
                vec!["/b/0", "/b/1"],
            ),
            (
                json!({"a": {"x": 1.0, "y": [1]}, "b": [{"x": 1}], "c": 1}),
                vec!["/b/0"],
            ),
            (
                json!({"b": {"x": 1, "y": [1, 2]}, "a": [{"x": 1}, {"y": 2}]}),
                vec![],
            ),
        ] {
            let mut same = Same::default();
            assert!(!same.mark(&values, &passed), "{values}");
            let mut at = Vec::new();
            places(&values, String::new(), &mut at);
            let held: Vec<&str> = at
                .iter()
                .filter(|p| same.holds(values.pointer(p).unwrap()))
                .map(String::as_str)
                .collect();
            assert_eq!(held, equal_parts, "{values}");
        }
    }

    /// An `allOf` is merged when two or more of its schemas hold only `properties`,
    /// by property name, each other schema kept where it stands.
    #[test]
    fn an_all_of_is_merged_by_property_when_two_schemas_only_name_properties() {
        let merged_of = |schema: &Value| {
            let program = SchemaProgram::compile(schema);
            let Node::Keywords(keywords) = &program.nodes[program.root] else {
                panic!("{schema}");
            };
            let [Keyword::AllOf(_, merged)] = keywords.as_slice() else {
                panic!("{schema}");
            };
            merged.as_ref().map(|merged| {
                let names = |m: &Merged<'_>| {
                    m.properties
                        .iter()
                        .map(|(n, _)| n.to_string())
                        .collect::<Vec<_>>()
                };
                let below: Vec<(Vec<String>, usize)> = merged
                    .properties
                    .iter()
                    .map(|(_, m)| (names(m), m.here.len()))
                    .collect();
                (names(merged), merged.here.len(), below, merged.entered)
            })
        };
        let only = |name: &str, sub: Value| json!({"properties": {name: sub}});
        assert_eq!(merged_of(&json!({"allOf": [only("a", json!(true))]})), None);
        assert_eq!(
            merged_of(&json!({"allOf": [only("a", json!(true)), {"required": ["a"]}]})),
            None
        );
        assert_eq!(
            merged_of(
                &json!({"allOf": [only("a", json!({"type": "integer"})), only("b", json!(true)), {"required": ["a"]}]})
            ),
            Some((
                vec!["a".into(), "b".into()],
                1,
                vec![(vec![], 1), (vec![], 1)],
                0
            ))
        );
        assert_eq!(
            merged_of(&json!({"allOf": [
                only("w", only("x", json!(true))),
                only("w", only("y", json!(true))),
                only("w", json!({"minimum": 1})),
                only("v", json!(true))
            ]})),
            Some((
                vec!["v".into(), "w".into()],
                0,
                vec![(vec![], 1), (vec!["x".into(), "y".into()], 1)],
                1
            ))
        );
    }

    /// An address hashes the same written as an address or as its bytes, and the
    /// addresses of neighbouring values hash apart in the bits a hash table reads
    /// (its low bits for the bucket, its top seven for the control byte), better
    /// than at random.
    #[test]
    fn addresses_hash_apart() {
        use std::hash::Hasher;
        let hash = |n: usize| {
            let mut hasher = AddressHasher::default();
            hasher.write_usize(n);
            hasher.finish()
        };
        let values = vec![Value::Null; 1024];
        let hashes: Vec<u64> = values.iter().map(|v| hash(address_of(v))).collect();
        for (v, h) in values.iter().zip(&hashes) {
            let mut bytes = AddressHasher::default();
            bytes.write(&address_of(v).to_ne_bytes());
            assert_eq!(bytes.finish(), *h);
        }
        let distinct = |bits: fn(u64) -> u64| {
            hashes
                .iter()
                .map(|h| bits(*h))
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        };
        // 1,024 neighbours in 1,024 buckets: a random hash fills about 650 of them,
        // the product alone 32 (an address's low bits are zeros).
        assert!(distinct(|h| h & 1023) > 900, "{}", distinct(|h| h & 1023));
        assert_eq!(distinct(|h| h >> 57), 128);
    }

    /// A merged `allOf` answers that every schema passes exactly when each does: the
    /// schemas kept where they stand, and those below each property present.
    #[test]
    fn a_merged_all_of_passes_when_every_schema_does() {
        let schema = json!({"allOf": [
            {"properties": {"a": {"type": "integer"}}},
            {"properties": {"a": {"minimum": 0}, "b": {"properties": {"c": {"const": 1}}}}},
            {"required": ["a"]}
        ]});
        let program = SchemaProgram::compile(&schema);
        let Node::Keywords(keywords) = &program.nodes[program.root] else {
            panic!()
        };
        let [Keyword::AllOf(_, Some(merged))] = keywords.as_slice() else {
            panic!()
        };
        for (value, passes) in [
            (json!({"a": 1}), true),
            (json!({"a": 1, "b": {"c": 1}}), true),
            (json!({"a": 1, "b": 2}), true),
            (json!({"a": 1, "b": {"c": 2}}), false),
            (json!({"a": -1}), false),
            (json!({"a": "x"}), false),
            (json!({"a": 1.5}), false),
            (json!({}), false),
            (json!(3), true),
        ] {
            assert_eq!(program.all_pass(merged, &value, 2, None), passes, "{value}");
            assert_eq!(program.verdict(&value), Some(passes), "{value}");
        }
        // A part held as equal to a passing value's is not checked again.
        let value = json!({"a": 1, "b": {"c": 2}});
        let same = Same::holding(&[&value["b"]]);
        assert!(program.all_pass(merged, &value, 2, Some(&same)));
    }

    /// An `allOf` of schemas of only `properties`, merged, nested to the depth limit
    /// and past it, decides (or fails to) as the walk does.
    #[test]
    fn merged_properties_meet_the_depth_limit_as_the_walk() {
        let chain = |levels: usize, leaf: Value| {
            (0..levels).fold(leaf, |inner, _| json!({"properties": {"a": inner}}))
        };
        let nested = |levels: usize| (0..levels).fold(json!(1), |inner, _| json!({"a": inner}));
        for levels in [
            MAX_DEPTH - 3,
            MAX_DEPTH - 2,
            MAX_DEPTH - 1,
            MAX_DEPTH,
            MAX_DEPTH + 1,
        ] {
            for leaf in [json!({"type": "integer"}), json!({"type": "string"})] {
                let schema = json!({"allOf": [chain(levels, leaf.clone()), chain(2, json!(true))]});
                let values = [nested(levels), nested(levels - 1), nested(3), json!(1)];
                same_as_the_walk(&schema, &values);
            }
        }
        // A merged `allOf` itself reached at the limit and past it, under `not`s.
        let merged = json!({"allOf": [{"properties": {"a": true}}, {"properties": {"b": true}}]});
        for wraps in [MAX_DEPTH - 3, MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH] {
            let schema = (0..wraps).fold(merged.clone(), |inner, _| json!({"not": inner}));
            same_as_the_walk(&schema, &[json!(1), json!({"a": 1}), json!({})]);
        }
    }
}
