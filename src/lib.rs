//! shipshape: one typed description of a platform in, a Helm chart, its values
//! schema, presets and the rendered manifests of every preset out.
//!
//! Data flows one way, one folder per stage (see `ARCHITECTURE.md`); a module only
//! uses the ones above it in this list (a test in `tests/suite/layout.rs` checks it):
//!
//! 1. [`expr`]: the expression language every value hole is written in.
//! 2. [`model`]: the typed values of each workload class and the shared types.
//! 3. [`spec`]: load `shipshape.yaml` into the model.
//! 4. [`values`]: resolve values (defaults, presets, files, `--set`).
//! 5. [`capacity`]: the connection formula, written once, and its report.
//! 6. [`guards`]: one rule per file, and the registry that lists them.
//! 7. [`contract`]: the install-time contract, `values.schema.json`.
//! 8. [`objects`]: one file per Kubernetes kind, the object tree.
//! 9. [`backends`]: the tree as Helm templates or as rendered manifests.
//! 10. [`generate`]: every output file, in memory.
//! 11. [`publish`] (package, OCI push) and [`external`] (processes, kubeconform).
//! 12. [`commands`]: the CLI's commands, the only I/O.
//!
//! [`parallel`] is not a stage: any stage may run independent work on the machine's
//! cores with it, and it uses none.

pub mod backends;
pub mod capacity;
pub mod commands;
pub mod contract;
pub mod expr;
pub mod external;
pub mod generate;
pub mod guards;
pub mod model;
pub mod objects;
pub mod parallel;
pub mod publish;
pub mod spec;
pub mod values;
