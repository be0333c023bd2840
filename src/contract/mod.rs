//! The install-time contract: `values.schema.json`, which makes Helm refuse at
//! `helm install` every values file the guards would refuse.
//!
//! - [`schema`]: the schema itself, from the model's types plus the rules below.
//! - [`rules`]: the guards draft-07 can say, as `if`/`then` rules on the whole tree.
//! - [`plans`]: one checked capacity plan per preset, as bounds in the schema.

pub mod plans;
pub mod rules;
pub mod schema;
