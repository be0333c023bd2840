//! The typed values model: the one source of truth.
//!
//! Every workload class is its own struct holding only the fields that make sense
//! for it. The spec (`shipshape.yaml`) is written in these types, so its workload
//! entries are the chart's default values; `values.yaml`, `values.schema.json`, the
//! spec's JSON schema and the README's values table are all generated from them.
//! Doc comments here become the comments of `values.yaml` and the schema's
//! descriptions.
//!
//! - [`workloads`]: the five classes (`ApiValues`, `JobsValues`, `PoolValues`,
//!   `WorkerValues`, `MigrateValues`).
//! - [`kubernetes`]: the Kubernetes fields they share, and the security defaults.
//! - [`dependencies`]: PostgreSQL and Redis allocations, budgets and servers.
//! - [`stores`]: stores, scheduled jobs and pools, managed env names.
//! - [`settings`]: the startup settings (timeouts, deadlines).
//! - [`bundled`]: the evaluation servers the chart can run, and how feature flags
//!   reach the application.
//! - [`naming`]: object names and selector labels (`nameOverride`, `fullnameOverride`,
//!   the spec's `takeover` block).
//! - [`security`]: the spec's relaxations of Pod Security "restricted".
//!
//! Every type is re-exported here: `crate::model::ApiValues`.

pub mod bundled;
pub mod dependencies;
pub mod kubernetes;
pub mod naming;
pub mod security;
pub mod settings;
pub mod stores;
pub mod workloads;

pub use bundled::*;
pub use dependencies::*;
pub use kubernetes::*;
pub use security::*;
pub use settings::*;
pub use stores::*;
pub use workloads::*;
