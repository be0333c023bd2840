//! Where an expression reads from: a path into the values ([`ValuePath`]) and the
//! values and release data it is evaluated against ([`EvalContext`]).

use super::semantics::{lookup_like_go, lookup_like_go_from};
use super::{go_ref, EvalError};
use serde_json::Value;
use std::fmt;

/// A path into the values tree, such as `workloads.api.replicaCount`. Its keys are
/// `SmolStr`s: a key of up to 23 bytes (nearly every one) is held in place, so the
/// object tree's thousands of paths are made and copied without allocating a string
/// for each key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ValuePath(pub Vec<SmolStr>);

pub use smol_str::SmolStr;

impl ValuePath {
    /// Builds a path from dotted segments; segments are keys, never user text.
    pub fn new<I, S>(segments: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        ValuePath(
            segments
                .into_iter()
                .map(|s| SmolStr::new(s.as_ref()))
                .collect(),
        )
    }

    /// The path extended by one key.
    pub fn child(&self, key: &str) -> Self {
        let mut segments = Vec::with_capacity(self.0.len() + 1);
        segments.extend(self.0.iter().cloned());
        segments.push(SmolStr::new(key));
        ValuePath(segments)
    }

    /// Looks the path up in a values tree; `None` when a key is missing.
    pub fn lookup<'v>(&self, values: &'v Value) -> Option<&'v Value> {
        let mut current = values;
        for segment in &self.0 {
            current = current.as_object()?.get(segment.as_str())?;
        }
        Some(current)
    }
}

impl fmt::Display for ValuePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("."))
    }
}

/// The values and release data an expression is evaluated against.
#[derive(Debug, Clone)]
pub struct EvalContext<'a> {
    pub values: &'a Value,
    /// The current element inside a `range`.
    pub item: Option<&'a Value>,
    pub release_name: &'a str,
    pub release_namespace: &'a str,
    pub chart_name: &'a str,
    pub chart_version: &'a str,
    pub chart_app_version: &'a str,
    /// The named templates' text evaluated so far in this context, by name (`None`:
    /// each is evaluated where it is included). See [`NamedTexts`].
    pub named: Option<std::rc::Rc<NamedTexts>>,
    /// Where two keys of the values lead, with those keys (`workloads.<name>`): a path
    /// that starts with them is looked up from there. One workload's figures or objects
    /// read many of its values, and the search of a map of hundreds of workloads is
    /// then done once for them ([`EvalContext::within`]).
    pub base: Option<(&'a str, &'a str, &'a Value)>,
}

impl<'a> EvalContext<'a> {
    /// The value at `path` as [`Expr::Ref`](super::Expr::Ref) of it evaluates (`None`
    /// for a missing last key), without building the expression.
    pub fn lookup(&self, path: &ValuePath) -> Result<Option<&'a Value>, EvalError> {
        self.lookup_like_go(path).map_err(|reason| EvalError {
            expression: go_ref(path),
            reason,
        })
    }

    /// This context with its [`EvalContext::base`] at `first.second` of the values
    /// (unchanged when nothing is there).
    #[must_use]
    pub fn within(&self, first: &str, second: &str) -> EvalContext<'a> {
        let base = self
            .values
            .as_object()
            .and_then(|m| m.get_key_value(first))
            .and_then(|(a, inner)| {
                let (b, value) = inner.as_object()?.get_key_value(second)?;
                Some((a.as_str(), b.as_str(), value))
            });
        EvalContext {
            base: base.or(self.base),
            ..self.clone()
        }
    }

    /// The value at `path` as Go looks it up, from [`EvalContext::base`] when the path
    /// starts with its keys: the same value, found with fewer comparisons.
    pub(super) fn lookup_like_go(&self, path: &ValuePath) -> Result<Option<&'a Value>, String> {
        if let (Some((a, b, reached)), [first, second, ..]) = (self.base, path.0.as_slice()) {
            if a == first && b == second {
                return lookup_like_go_from(reached, path, 2);
            }
        }
        lookup_like_go(self.values, path)
    }
}

/// Named templates' text, by name, as one render evaluates them
/// ([`Expr::Named`](super::Expr::Named)). Helm includes a named template with the root
/// context (`include "x" $`), so within one render its text is the same wherever it is
/// included: a name's body is evaluated once (outside a `range`, where `.` is not the
/// root) and its text reused. The chart defines one template per name, as
/// `_helpers.tpl` is written from these names.
pub type NamedTexts = std::cell::RefCell<std::collections::HashMap<String, String>>;
