//! Compiling a values schema into a [`SchemaProgram`]: each schema node once, each
//! `$ref` to the node it names, from the whole schema's JSON or from a root with
//! frozen rules ([`FrozenSchema`]).

use super::{Keyword, Merged, Node, Pattern, SchemaProgram};
use crate::values::frozen_schema::FrozenSchema;
use crate::values::schema_verdict::resolve_pointer;
use serde_json::{Map, Value};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::OnceLock;

/// [`SchemaProgram::compile_with_rules`].
pub(super) fn compile<'s>(root: &'s Value, rules: &'s [FrozenSchema]) -> SchemaProgram<'s> {
    let mut compiler = Compiler {
        root,
        program: SchemaProgram {
            nodes: Vec::new(),
            patterns: Vec::new(),
            root: 0,
        },
        targets: std::collections::BTreeMap::new(),
        patterns: HashMap::new(),
    };
    compiler.program.root = match (root, rules.is_empty()) {
        (Value::Object(map), false) => {
            compiler.program.nodes.push(Node::NotASchema);
            let node = compiler.object_with_rules(map, rules);
            compiler.program.nodes[0] = node;
            0
        }
        _ => compiler.node(root),
    };
    compiler.program
}

/// Turns schema nodes into [`Node`]s. A node a `$ref` names is compiled once, however
/// many references name it, so a reference cycle is a cycle of nodes, which the depth
/// limit stops as it stops the walk; every other node has one parent and is compiled
/// where it stands.
struct Compiler<'s> {
    root: &'s Value,
    program: SchemaProgram<'s>,
    /// Each node a reference names, compiled, by address (ordered by address: no
    /// hashing, which was a tenth of the compilation with the default hasher).
    targets: std::collections::BTreeMap<*const Value, usize>,
    /// Each pattern, by source.
    patterns: HashMap<&'s str, usize>,
}

/// Whether a key in first place may be preceded by `$ref` in the sorted order: as the
/// walk, a `$ref` (which replaces the rest) is looked up only then.
fn may_be_ref(first_key: &str) -> bool {
    first_key.as_bytes().first().is_none_or(|&c| c <= b'$')
}

/// A schema, or a keyword's argument, in either form the compiler reads.
#[derive(Clone, Copy)]
enum Schema<'s> {
    Json(&'s Value),
    Frozen(&'s FrozenSchema),
}

impl<'s> Schema<'s> {
    /// The argument as JSON data (a frozen schema keeps every keyword's data as JSON;
    /// `None` for an object or an array of schemas it froze).
    fn json(self) -> Option<&'s Value> {
        match self {
            Schema::Json(v) | Schema::Frozen(FrozenSchema::Json(v)) => Some(v),
            Schema::Frozen(_) => None,
        }
    }

    /// Each property's name and schema, in order, when this is an object.
    fn properties(self) -> Option<Vec<(&'s str, Schema<'s>)>> {
        match self {
            Schema::Json(v) | Schema::Frozen(FrozenSchema::Json(v)) => v.as_object().map(|m| {
                m.iter()
                    .map(|(name, sub)| (name.as_str(), Schema::Json(sub)))
                    .collect()
            }),
            Schema::Frozen(FrozenSchema::Object(entries)) => Some(
                entries
                    .iter()
                    .map(|(name, sub)| (name.as_ref(), Schema::Frozen(sub)))
                    .collect(),
            ),
            Schema::Frozen(FrozenSchema::Array(_)) => None,
        }
    }

    /// The schemas in order, when this is an array.
    fn items(self) -> Option<Vec<Schema<'s>>> {
        match self {
            Schema::Json(v) | Schema::Frozen(FrozenSchema::Json(v)) => v
                .as_array()
                .map(|items| items.iter().map(Schema::Json).collect()),
            Schema::Frozen(FrozenSchema::Array(items)) => {
                Some(items.iter().map(Schema::Frozen).collect())
            }
            Schema::Frozen(FrozenSchema::Object(_)) => None,
        }
    }
}

/// The names of a `required` argument when all are strings in ascending order.
fn in_order(argument: &Value) -> Option<Vec<&str>> {
    let names: Vec<&str> = argument
        .as_array()?
        .iter()
        .map(Value::as_str)
        .collect::<Option<_>>()?;
    names.windows(2).all(|w| w[0] < w[1]).then_some(names)
}

impl<'s> Compiler<'s> {
    /// The node a reference names: compiled the first time, and entered before its
    /// children are, so a reference back to it is to this node.
    fn target(&mut self, schema: &'s Value) -> usize {
        let key = schema as *const Value;
        if let Some(&index) = self.targets.get(&key) {
            return index;
        }
        let index = self.program.nodes.len();
        self.program.nodes.push(Node::NotASchema);
        self.targets.insert(key, index);
        self.fill(index, schema);
        index
    }

    fn node(&mut self, schema: &'s Value) -> usize {
        let index = self.program.nodes.len();
        self.program.nodes.push(Node::NotASchema);
        self.fill(index, schema);
        index
    }

    /// Compiles `schema` into node `index`.
    fn fill(&mut self, index: usize, schema: &'s Value) {
        let node = match schema {
            Value::Bool(b) => Node::Bool(*b),
            Value::Object(map) => self.object(map),
            _ => Node::NotASchema,
        };
        self.program.nodes[index] = node;
    }

    fn object(&mut self, map: &'s Map<String, Value>) -> Node<'s> {
        // As the walk: a `$ref` (which the first key's place tells) replaces the rest.
        if map.keys().next().is_some_and(|k| may_be_ref(k)) {
            if let Some(reference) = map.get("$ref") {
                return Node::Ref(self.reference(reference));
            }
        }
        // At most one keyword per entry: a vector grown one push at a time would hold
        // four, and nine schema objects in ten hold one or two entries.
        let mut keywords = Vec::with_capacity(map.len());
        for (keyword, argument) in map {
            let schema = |key: &str| map.get(key).map(Schema::Json);
            if let Some(compiled) = self.keyword(keyword, Schema::Json(argument), schema) {
                keywords.push(compiled);
            }
        }
        Node::Keywords(keywords)
    }

    /// [`Compiler::object`] of `map` with `rules` as its `allOf` (in its place among the
    /// sorted keys, instead of one `map` has).
    fn object_with_rules(
        &mut self,
        map: &'s Map<String, Value>,
        rules: &'s [FrozenSchema],
    ) -> Node<'s> {
        if map.keys().next().is_some_and(|k| may_be_ref(k)) {
            if let Some(reference) = map.get("$ref") {
                return Node::Ref(self.reference(reference));
            }
        }
        let mut keywords = Vec::with_capacity(map.len());
        let mut rules = Some(rules);
        let mut all_of = |compiler: &mut Self, keywords: &mut Vec<Keyword<'s>>| {
            if let Some(rules) = rules.take() {
                let subs: Vec<usize> = rules.iter().map(|r| compiler.frozen_node(r)).collect();
                let merged = Merged::of(&compiler.program.nodes, &subs);
                keywords.push(Keyword::AllOf(subs, merged));
            }
        };
        for (keyword, argument) in map {
            match keyword.as_str().cmp("allOf") {
                Ordering::Less => {}
                Ordering::Equal => continue,
                Ordering::Greater => all_of(self, &mut keywords),
            }
            let schema = |key: &str| map.get(key).map(Schema::Json);
            if let Some(compiled) = self.keyword(keyword, Schema::Json(argument), schema) {
                keywords.push(compiled);
            }
        }
        all_of(self, &mut keywords);
        Node::Keywords(keywords)
    }

    /// [`Compiler::object`] of a frozen object's entries.
    fn frozen_object(&mut self, entries: &'s [(Box<str>, FrozenSchema)]) -> Node<'s> {
        let get = |key: &str| {
            entries
                .binary_search_by(|(k, _)| k.as_ref().cmp(key))
                .ok()
                .map(|i| &entries[i].1)
        };
        if entries.first().is_some_and(|(k, _)| may_be_ref(k)) {
            if let Some(reference) = get("$ref") {
                return Node::Ref(match reference {
                    FrozenSchema::Json(reference) => self.reference(reference),
                    _ => None,
                });
            }
        }
        let mut keywords = Vec::with_capacity(entries.len());
        for (keyword, argument) in entries.iter() {
            let schema = |key: &str| get(key).map(Schema::Frozen);
            if let Some(compiled) = self.keyword(keyword, Schema::Frozen(argument), schema) {
                keywords.push(compiled);
            }
        }
        Node::Keywords(keywords)
    }

    /// The node a `$ref`'s argument names, compiled (`None` when it is not a string
    /// or names nothing in the document).
    fn reference(&mut self, reference: &'s Value) -> Option<usize> {
        reference
            .as_str()
            .and_then(|r| resolve_pointer(self.root, r))
            .map(|target| self.target(target))
    }

    /// `keyword` with its `argument` compiled, `None` for one that constrains nothing
    /// (an annotation, `definitions`, or `then` and `else`, which `if` reads through
    /// `sibling`, the node's other entries by key).
    fn keyword(
        &mut self,
        keyword: &str,
        argument: Schema<'s>,
        sibling: impl Fn(&str) -> Option<Schema<'s>>,
    ) -> Option<Keyword<'s>> {
        // A keyword's data is JSON in a frozen schema too; a schema where data is read
        // is a keyword the walk does not decide.
        let data = argument.json();
        let compiled = match keyword {
            "$schema" | "$comment" | "title" | "description" | "default" | "examples"
            | "definitions" | "then" | "else" => return None,
            "type" => data.map_or(Keyword::Unknown, Keyword::Type),
            "const" => data.map_or(Keyword::Unknown, Keyword::Const),
            "enum" => match data.and_then(Value::as_array) {
                Some(options) => Keyword::Enum(options),
                None => Keyword::Unknown,
            },
            "minimum" => data.map_or(Keyword::Unknown, |a| {
                Keyword::Bound(a, |o| o != Ordering::Less)
            }),
            "maximum" => data.map_or(Keyword::Unknown, |a| {
                Keyword::Bound(a, |o| o != Ordering::Greater)
            }),
            "exclusiveMinimum" => data.map_or(Keyword::Unknown, |a| {
                Keyword::Bound(a, |o| o == Ordering::Greater)
            }),
            "exclusiveMaximum" => data.map_or(Keyword::Unknown, |a| {
                Keyword::Bound(a, |o| o == Ordering::Less)
            }),
            "minLength" => data.map_or(Keyword::Unknown, |a| Keyword::Length(a, |len, n| len >= n)),
            "maxLength" => data.map_or(Keyword::Unknown, |a| Keyword::Length(a, |len, n| len <= n)),
            "pattern" => match data.and_then(Value::as_str) {
                Some(source) => Keyword::Pattern(self.pattern(source)),
                None => Keyword::Unknown,
            },
            "required" => match data {
                Some(argument) => match in_order(argument) {
                    Some(names) => Keyword::RequiredInOrder(names),
                    None => Keyword::Required(argument),
                },
                None => Keyword::Unknown,
            },
            "properties" => Keyword::Properties(argument.properties().map(|properties| {
                properties
                    .into_iter()
                    .map(|(name, sub)| (name, self.schema_node(sub)))
                    .collect()
            })),
            "additionalProperties" => Keyword::AdditionalProperties {
                pattern_properties: sibling("patternProperties").is_some(),
                named: sibling("properties")
                    .and_then(|p| p.properties())
                    .map(|named| named.into_iter().map(|(name, _)| name).collect()),
                schema: self.schema_node(argument),
            },
            "propertyNames" => Keyword::PropertyNames(self.schema_node(argument)),
            "items" => match argument.items() {
                // An array of schemas (tuple validation), which the walk does not decide.
                Some(_) => Keyword::Unknown,
                None => Keyword::Items(self.schema_node(argument)),
            },
            "allOf" | "anyOf" | "oneOf" => match argument.items() {
                Some(subs) => {
                    let subs: Vec<usize> =
                        subs.into_iter().map(|sub| self.schema_node(sub)).collect();
                    match keyword {
                        "allOf" => {
                            let merged = Merged::of(&self.program.nodes, &subs);
                            Keyword::AllOf(subs, merged)
                        }
                        "anyOf" => Keyword::AnyOf(subs),
                        _ => Keyword::OneOf(subs),
                    }
                }
                None => Keyword::Unknown,
            },
            "not" => Keyword::Not(self.schema_node(argument)),
            "if" => Keyword::If {
                condition: self.schema_node(argument),
                then: sibling("then").map(|sub| self.schema_node(sub)),
                otherwise: sibling("else").map(|sub| self.schema_node(sub)),
            },
            _ => Keyword::Unknown,
        };
        Some(compiled)
    }

    /// A new node for `schema`, of either form.
    fn schema_node(&mut self, schema: Schema<'s>) -> usize {
        match schema {
            Schema::Json(schema) => self.node(schema),
            Schema::Frozen(schema) => self.frozen_node(schema),
        }
    }

    /// [`Compiler::node`] of a frozen schema.
    fn frozen_node(&mut self, schema: &'s FrozenSchema) -> usize {
        let index = self.program.nodes.len();
        self.program.nodes.push(Node::NotASchema);
        let node = match schema {
            FrozenSchema::Json(schema) => {
                self.fill(index, schema);
                return index;
            }
            FrozenSchema::Object(entries) => self.frozen_object(entries),
            FrozenSchema::Array(_) => Node::NotASchema,
        };
        self.program.nodes[index] = node;
        index
    }

    fn pattern(&mut self, source: &'s str) -> usize {
        if let Some(&index) = self.patterns.get(source) {
            return index;
        }
        let index = self.program.patterns.len();
        self.program.patterns.push(Pattern {
            source,
            compiled: OnceLock::new(),
        });
        self.patterns.insert(source, index);
        index
    }
}
