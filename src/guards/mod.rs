//! Stage 3, guards: Rust functions over resolved values that refuse unsafe presets.
//!
//! Each guard has a stable rule id and returns every finding (it never stops at the
//! first), each with the values path, a message, the arithmetic where there is any,
//! and a fix hint. An error in any preset fails generation; nothing is written.
//!
//! One file per rule, each with its id, what it refuses and why, how
//! `values.schema.json` enforces it at install time, and its tests. [`registry`]
//! lists every rule once with its guard; [`check_guards`] runs them, and the docs'
//! rule tables are generated from it.

mod finding;
pub mod registry;

pub mod bundled;
pub mod capacity;
pub mod drain;
pub mod env_unique;
pub mod exposed_port;
pub mod job_partition;
pub mod managed_env;
pub mod names;
pub mod one_autoscaler;
pub mod partition;
pub mod pooler_mode;
pub mod redis_eviction;
pub mod rollout_strategy;
pub mod security_restricted;
pub mod settings_one_value;
pub mod shared_stores;
pub mod single_leader;
pub mod timeouts;
pub mod typed_values;

pub use finding::{Finding, Severity};
pub use managed_env::{
    database_env_names, managed_arg_names, managed_env_names, managed_settings_keys,
    sets_managed_variable, sets_workers,
};
pub use registry::{
    check_guards, check_guards_with, readme_rule_list, sorted_findings, spec_rule_findings,
    value_rule_findings, whole_number_rule_findings, Rule, RULES,
};
pub use typed_values::TypedWorkloads;

#[cfg(test)]
pub(crate) mod testing;
