//! What the guards' tests share: the example specs, their resolved values, and a way
//! to change one value.

use super::Finding;
use crate::spec::Spec;
use serde_json::Value;

/// The spec of `examples/<name>/shipshape.yaml`.
pub use crate::spec::testing::example;

/// The resolved values of a preset (`None`: the chart's defaults), as generation
/// hands them to the guards.
pub fn values(spec: &Spec, preset: Option<&str>) -> Value {
    crate::capacity::fit::preset_values(spec, preset).unwrap()
}

/// Sets the value at a dotted path (`workloads.api.replicaCount`), creating maps on the
/// way; `[i]` segments index lists.
pub fn set(values: &mut Value, path: &str, new: Value) {
    let mut at = values;
    for key in path.split('.') {
        at = match key.strip_prefix('[').and_then(|k| k.strip_suffix(']')) {
            Some(index) => &mut at[index.parse::<usize>().unwrap()],
            None => &mut at[key],
        };
    }
    *at = new;
}

/// The values with changes, as `(path, value)` pairs.
pub fn with(mut values: Value, changes: &[(&str, Value)]) -> Value {
    for (path, new) in changes {
        set(&mut values, path, new.clone());
    }
    values
}

/// Each finding's rule id and values path.
pub fn places(findings: &[Finding]) -> Vec<(&'static str, String)> {
    findings.iter().map(|f| (f.rule, f.path.clone())).collect()
}
