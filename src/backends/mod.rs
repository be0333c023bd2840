//! The back ends: one object tree, written two ways that Helm proves equal.
//!
//! - [`emit`]: the shared writer, from the tree to text (template or rendered).
//! - [`helm`]: the Helm chart: templates, `Chart.yaml`, README, NOTES.
//! - [`native`]: shipshape's own render of the same templates.
//! - [`limits`]: Kubernetes' size limits on a rendered object.
//! - [`schema_json`]: the text of `values.schema.json`, one entry per line.
//! - [`values_yaml`]: the commented `values.yaml`.
//! - [`wrap`]: long template actions broken across lines.

pub mod emit;
pub mod helm;
pub mod limits;
pub mod native;
pub mod schema_json;
pub mod values_yaml;
pub mod wrap;
