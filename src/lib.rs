//! shipshape: one typed description of a platform in, a Helm chart, its values
//! schema, presets and the rendered manifests of every preset out.
//!
//! The pipeline, one module per stage (see `ARCHITECTURE.md`):
//! [`spec`] (load) → [`values`] (resolve) → [`objects`] (build) → [`emit`] with the
//! Helm back end [`chart`] and the render back end [`render`] → [`generate`] (all
//! outputs in memory) → [`commands`] (the only I/O).

pub mod capacity;
pub mod chart;
pub mod commands;
pub mod dependencies;
pub mod emit;
pub mod expr;
pub mod generate;
pub mod gojson;
pub mod guards;
pub mod kubeconform;
pub mod model;
pub mod objdiff;
pub mod objects;
pub mod oci;
pub mod package;
pub mod partition;
pub mod plans;
pub mod presets;
pub mod process;
pub mod render;
pub mod schema;
pub mod spec;
pub mod tree;
pub mod values;
pub mod values_doc;
