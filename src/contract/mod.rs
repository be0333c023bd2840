//! The install-time contract: `values.schema.json`, which makes Helm refuse at
//! `helm install` every values file the guards would refuse.
//!
//! - [`schema`]: the schema itself, from the model's types plus the rules below.
//! - [`rules`]: the guards draft-07 can say, as `if`/`then` rules on the whole tree.
//! - [`plans`]: one checked capacity plan per preset, as bounds in the schema.

pub mod plans;
pub mod rules;
pub mod schema;

use crate::spec::Spec;
use crate::values::presets::Preset;
use std::collections::BTreeMap;

/// Everything the contract is built from, computed once per spec: the presets (with
/// the built-ins' fitted maxima), every plan's bounds and the root rules. `generate`
/// builds it once and shares it with the schema, the chart README and every preset.
pub struct Contract {
    /// Every preset of the spec, fitted ([`crate::capacity::fit::presets`]).
    pub presets: BTreeMap<String, Preset>,
    /// The plans: the defaults and each preset.
    pub plans: Vec<plans::PlanContract>,
    /// The rules on the whole values tree, plans included.
    pub rules: Vec<rules::RootRule>,
}

impl Contract {
    /// Computes the presets, the plans and the rules of `spec`.
    pub fn of(spec: &Spec) -> Self {
        let presets = crate::capacity::fit::presets(spec);
        let plans = schema::plan_contracts_of(spec, &presets);
        let rules = rules::root_rules_of(spec, &plans);
        Contract {
            presets,
            plans,
            rules,
        }
    }
}
