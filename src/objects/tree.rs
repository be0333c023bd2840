//! The object tree: each Kubernetes object built once, with value holes.
//!
//! A [`Document`] is one template file (one object). Its structure is static; leaves
//! are [`Expr`]s, and entries or items may be present only when a condition holds.
//! The Helm back end prints the tree as Go template text; the render back end
//! evaluates it. Both use the same layout code in [`crate::backends::emit`].

use crate::expr::{Expr, ValuePath};
use std::borrow::Cow;

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
    /// A key the generator writes (a Kubernetes field or label name): borrowed when
    /// the builders name it as literal text (nearly every key), so that building an
    /// object allocates no string for it.
    Static(Cow<'static, str>),
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
    /// Entries written once as a named template of `_helpers.tpl` and used through
    /// `include` (the render back end writes `parts` in place). The entries are
    /// unconditional, so the template's text is the same wherever it is used.
    Named {
        template: String,
        parts: Vec<MapPart>,
    },
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
    pub fn map<K: Into<Cow<'static, str>>>(entries: Vec<(K, Node)>) -> Node {
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

/// Anything that can stand as a value in [`crate::manifest!`]: a node, an expression,
/// a value path (read as is), or a constant.
pub trait IntoNode {
    fn into_node(self) -> Node;
}

impl IntoNode for Node {
    fn into_node(self) -> Node {
        self
    }
}

impl IntoNode for Expr {
    fn into_node(self) -> Node {
        Node::Leaf(self)
    }
}

impl IntoNode for ValuePath {
    fn into_node(self) -> Node {
        Node::Leaf(Expr::Ref(self))
    }
}

impl IntoNode for &ValuePath {
    fn into_node(self) -> Node {
        Node::Leaf(Expr::Ref(self.clone()))
    }
}

impl IntoNode for &str {
    fn into_node(self) -> Node {
        Node::text(self)
    }
}

impl IntoNode for String {
    fn into_node(self) -> Node {
        Node::text(&self)
    }
}

impl IntoNode for bool {
    fn into_node(self) -> Node {
        Node::Leaf(crate::expr::lit(self))
    }
}

impl IntoNode for i32 {
    fn into_node(self) -> Node {
        Node::Leaf(crate::expr::lit(self))
    }
}

impl IntoNode for i64 {
    fn into_node(self) -> Node {
        Node::Leaf(crate::expr::lit(self))
    }
}

/// Anything that can be spread into a mapping with `..` in [`crate::manifest!`].
pub trait IntoMapParts {
    fn into_map_parts(self) -> Vec<MapPart>;
}

impl IntoMapParts for MapPart {
    fn into_map_parts(self) -> Vec<MapPart> {
        vec![self]
    }
}

impl IntoMapParts for Vec<MapPart> {
    fn into_map_parts(self) -> Vec<MapPart> {
        self
    }
}

impl IntoMapParts for Option<MapPart> {
    fn into_map_parts(self) -> Vec<MapPart> {
        self.into_iter().collect()
    }
}

/// Anything that can be spread into a sequence with `..` in [`crate::manifest!`].
pub trait IntoListParts {
    fn into_list_parts(self) -> Vec<ListPart>;
}

impl IntoListParts for ListPart {
    fn into_list_parts(self) -> Vec<ListPart> {
        vec![self]
    }
}

impl IntoListParts for Vec<ListPart> {
    fn into_list_parts(self) -> Vec<ListPart> {
        self
    }
}

/// `key: <value at path>`, present only when that value is truthy (Helm's
/// `{{- with }}` idiom).
pub fn if_set(key: &'static str, path: &ValuePath) -> MapPart {
    MapPart::Entry {
        key: Key::Static(Cow::Borrowed(key)),
        value: Node::value(path),
        when: Some(Expr::Ref(path.clone())),
    }
}

/// Every entry of a values map.
pub fn entries_of(path: &ValuePath) -> MapPart {
    MapPart::EntriesOf(path.clone())
}

/// Every item of a values list.
pub fn items_of(path: &ValuePath) -> ListPart {
    ListPart::ItemsOf(path.clone())
}

/// An entry whose key is read from values.
pub fn dynamic_entry(key: Expr, value: impl IntoNode) -> MapPart {
    MapPart::Entry {
        key: Key::Dynamic(key),
        value: value.into_node(),
        when: None,
    }
}

/// An empty list of parts, for [`crate::manifest!`] to fill.
pub fn no_parts<T>() -> Vec<T> {
    Vec::new()
}

/// Builds a [`Node`] that reads like the YAML it prints, in the spirit of
/// `serde_json::json!`:
///
/// ```
/// # use shipshape::manifest;
/// # use shipshape::expr::{lit, ValuePath};
/// let replicas = ValuePath::new(["workloads", "api", "replicaCount"]);
/// let node = manifest!({
///     "kind": "Deployment",                 // static text
///     "spec": {
///         "replicas" if (lit(true)): (&replicas), // present when the condition holds
///         "paused": false,
///     },
///     "items": ["a", (lit(1)) if (lit(true))],
/// });
/// ```
///
/// A value is a string, number or boolean literal, a `{..}` mapping, a `[..]`
/// sequence, or any Rust expression in parentheses that is [`IntoNode`] (a value hole:
/// an [`Expr`], a [`ValuePath`], another node). `"key" if (cond): value` and
/// `value if (cond)` are conditional; `..(parts)` spreads [`IntoMapParts`] or
/// [`IntoListParts`] (conditional helpers, `range` over values, named templates).
/// `manifest!(entries { .. })` gives a mapping's parts, to spread elsewhere.
#[macro_export]
macro_rules! manifest {
    (entries { $($body:tt)* }) => {{
        #[allow(unused_mut)]
        let mut parts: ::std::vec::Vec<$crate::objects::tree::MapPart> = $crate::objects::tree::no_parts();
        $crate::manifest!(@map parts; $($body)*);
        parts
    }};
    ({ $($body:tt)* }) => {{
        #[allow(unused_mut)]
        let mut parts: ::std::vec::Vec<$crate::objects::tree::MapPart> = $crate::objects::tree::no_parts();
        $crate::manifest!(@map parts; $($body)*);
        $crate::objects::tree::Node::Map(parts)
    }};
    ([ $($body:tt)* ]) => {{
        #[allow(unused_mut)]
        let mut parts: ::std::vec::Vec<$crate::objects::tree::ListPart> = $crate::objects::tree::no_parts();
        $crate::manifest!(@list parts; $($body)*);
        $crate::objects::tree::Node::List(parts)
    }};
    (@map $p:ident; ) => {};
    (@map $p:ident; .. ($spread:expr) $(, $($rest:tt)*)?) => {
        $p.extend($crate::objects::tree::IntoMapParts::into_map_parts($spread));
        $( $crate::manifest!(@map $p; $($rest)*); )?
    };
    (@map $p:ident; $key:literal if ($cond:expr) : $value:tt $(, $($rest:tt)*)?) => {
        $p.push($crate::objects::tree::MapPart::Entry {
            key: $crate::objects::tree::Key::Static(::std::borrow::Cow::Borrowed($key)),
            value: $crate::manifest!(@value $value),
            when: Some($cond),
        });
        $( $crate::manifest!(@map $p; $($rest)*); )?
    };
    (@map $p:ident; $key:literal : $value:tt $(, $($rest:tt)*)?) => {
        $p.push($crate::objects::tree::MapPart::Entry {
            key: $crate::objects::tree::Key::Static(::std::borrow::Cow::Borrowed($key)),
            value: $crate::manifest!(@value $value),
            when: None,
        });
        $( $crate::manifest!(@map $p; $($rest)*); )?
    };
    (@map $p:ident; ($key:expr) : $value:tt $(, $($rest:tt)*)?) => {
        $p.push($crate::objects::tree::MapPart::Entry {
            key: $crate::objects::tree::Key::Static(::std::borrow::Cow::from($key)),
            value: $crate::manifest!(@value $value),
            when: None,
        });
        $( $crate::manifest!(@map $p; $($rest)*); )?
    };
    (@list $p:ident; ) => {};
    (@list $p:ident; .. ($spread:expr) $(, $($rest:tt)*)?) => {
        $p.extend($crate::objects::tree::IntoListParts::into_list_parts($spread));
        $( $crate::manifest!(@list $p; $($rest)*); )?
    };
    (@list $p:ident; $value:tt if ($cond:expr) $(, $($rest:tt)*)?) => {
        $p.push($crate::objects::tree::ListPart::Item {
            value: $crate::manifest!(@value $value),
            when: Some($cond),
        });
        $( $crate::manifest!(@list $p; $($rest)*); )?
    };
    (@list $p:ident; $value:tt $(, $($rest:tt)*)?) => {
        $p.push($crate::objects::tree::ListPart::Item {
            value: $crate::manifest!(@value $value),
            when: None,
        });
        $( $crate::manifest!(@list $p; $($rest)*); )?
    };
    (@value { $($body:tt)* }) => { $crate::manifest!({ $($body)* }) };
    (@value [ $($body:tt)* ]) => { $crate::manifest!([ $($body)* ]) };
    (@value ($e:expr)) => { $crate::objects::tree::IntoNode::into_node($e) };
    (@value $l:literal) => { $crate::objects::tree::IntoNode::into_node($l) };
}
