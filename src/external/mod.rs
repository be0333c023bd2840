//! Other programs shipshape runs: [`process`] (bounded, timed child processes) and
//! the [`kubeconform`] adapter (its arguments and its JSON report); and the servers it
//! reads: [`servers`] (a real PostgreSQL's and Redis's limits, for `preflight`).

pub mod kubeconform;
pub mod process;
pub mod servers;
