//! The object tree: each Kubernetes object built once, with value holes.
//!
//! A [`Document`] is one template file (one object). Its structure is static; leaves
//! are [`Expr`]s, and entries or items may be present only when a condition holds.
//! The Helm back end prints the tree as Go template text; the render back end
//! evaluates it. Both use the same layout code in [`crate::backends::emit`].

use crate::expr::{Expr, ValuePath};

/// A node of a YAML document.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// A scalar or a whole value subtree, printed as one JSON flow value.
    Leaf(Expr),
    /// A block mapping.
    Map(Vec<MapPart>),
    /// A block sequence.
    List(Vec<ListPart>),
}

/// A key of a block mapping.
#[derive(Clone, Debug, PartialEq)]
pub enum Key {
    /// A key the generator writes (a Kubernetes field or label name).
    Static(String),
    /// A key taken from values (a ConfigMap file name, say).
    Dynamic(Expr),
}

/// One part of a block mapping.
#[derive(Clone, Debug, PartialEq)]
pub enum MapPart {
    /// `key: value`, present only when `when` is truthy (always when `None`).
    Entry {
        key: Key,
        value: Node,
        when: Option<Expr>,
    },
    /// Every entry of a values map, in sorted key order (`range $k, $v := ...`).
    EntriesOf(ValuePath),
}

/// One part of a block sequence.
#[derive(Clone, Debug, PartialEq)]
pub enum ListPart {
    /// One item, present only when `when` is truthy.
    Item { value: Node, when: Option<Expr> },
    /// Every item of a values list, each as a JSON flow value (`range ...`).
    ItemsOf(ValuePath),
    /// One item built from each element of a values list; inside, [`Expr::Item`] is the
    /// element (`range` with `.` rebound).
    Each { list: ValuePath, item: Node },
}

/// One template file holding one object.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// File name under `templates/`, e.g. `api-deployment.yaml`.
    pub file: String,
    /// The object exists only when this holds (the workload is enabled, say).
    pub when: Option<Expr>,
    /// The object itself.
    pub root: Node,
}

impl Node {
    /// A mapping with unconditional entries, in the given order.
    pub fn map<K: Into<String>>(entries: Vec<(K, Node)>) -> Node {
        Node::Map(
            entries
                .into_iter()
                .map(|(k, v)| MapPart::Entry {
                    key: Key::Static(k.into()),
                    value: v,
                    when: None,
                })
                .collect(),
        )
    }

    /// A sequence of unconditional items.
    pub fn list(items: Vec<Node>) -> Node {
        Node::List(
            items
                .into_iter()
                .map(|v| ListPart::Item {
                    value: v,
                    when: None,
                })
                .collect(),
        )
    }

    /// A leaf holding a constant string the generator writes.
    pub fn text(s: &str) -> Node {
        Node::Leaf(crate::expr::lit(s))
    }

    /// A leaf reading a value.
    pub fn value(path: &ValuePath) -> Node {
        Node::Leaf(Expr::Ref(path.clone()))
    }
}

/// Builds a mapping part by part (conditional entries, value ranges).
#[derive(Default)]
pub struct MapBuilder {
    parts: Vec<MapPart>,
}

impl MapBuilder {
    /// An empty mapping.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `key: value`.
    pub fn entry(mut self, key: &str, value: Node) -> Self {
        self.parts.push(MapPart::Entry {
            key: Key::Static(key.to_string()),
            value,
            when: None,
        });
        self
    }

    /// Adds `key: value` present only when `when` is truthy.
    pub fn entry_when(mut self, key: &str, value: Node, when: Expr) -> Self {
        self.parts.push(MapPart::Entry {
            key: Key::Static(key.to_string()),
            value,
            when: Some(when),
        });
        self
    }

    /// Adds an entry whose key comes from values.
    pub fn dynamic_entry(mut self, key: Expr, value: Node) -> Self {
        self.parts.push(MapPart::Entry {
            key: Key::Dynamic(key),
            value,
            when: None,
        });
        self
    }

    /// Adds a leaf `key: <value at path>` present only when that value is truthy.
    pub fn value_if_set(self, key: &str, path: &ValuePath) -> Self {
        self.entry_when(key, Node::value(path), Expr::Ref(path.clone()))
    }

    /// Adds every entry of a values map.
    pub fn entries_of(mut self, path: &ValuePath) -> Self {
        self.parts.push(MapPart::EntriesOf(path.clone()));
        self
    }

    /// The finished mapping.
    pub fn build(self) -> Node {
        Node::Map(self.parts)
    }
}
