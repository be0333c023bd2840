//! Dependency connection peaks: the `capacity.postgres` and `capacity.redis` guards,
//! `shipshape capacity`, and the figures of the `<release>-dependency-capacity`
//! ConfigMap.
//!
//! The arithmetic ([`FORMULA`]) is written once, as expressions over values
//! ([`formula`]): the ConfigMap prints them as Go template text, and the report
//! evaluates the same expressions natively over a preset's values, so the two cannot
//! disagree. Evaluation saturates where Helm's int64 arithmetic would overflow, so absurd
//! inputs produce a huge peak (and a finding) rather than a wrapped number or a panic.
//!
//! - [`formula`]: per workload max pods, surge, retiring pods, peak processes and
//!   connections; the totals and budgets ([`WorkloadExprs`], [`CapacityExprs`]);
//! - [`inputs`]: which values a spec's workloads read ([`capacity_exprs`],
//!   [`workload_exprs`]) and the checks on them;
//! - [`allocations`]: which connection allocations exist and their effective sizes;
//! - [`report`]: the formula evaluated ([`Capacity`], [`capacity_report`]);
//! - [`explain`]: every exceeded budget explained ([`CapacityFinding`]);
//! - [`tables`]: the report as plain text and Markdown;
//! - [`preflight`]: a real server's limits against a preset's peak on it.

pub mod allocations;
pub mod breakdown;
pub mod explain;
pub mod fit;
pub mod formula;
pub mod inputs;
pub mod preflight;
pub mod report;
pub mod svg;
pub mod tables;

pub use explain::CapacityFinding;
pub use formula::{CapacityExprs, WorkloadExprs, FORMULA};
pub use inputs::{capacity_exprs, workload_exprs};
pub use report::{capacity_report, Capacity, CapacityReport, Total, WorkloadRow};
pub use tables::{format_markdown, format_table};

#[cfg(test)]
mod tests;
