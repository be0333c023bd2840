//! Other programs shipshape runs: [`process`] (bounded, timed child processes) and
//! the [`kubeconform`] adapter (its arguments and its JSON report).

pub mod kubeconform;
pub mod process;
