//! Pushing a packaged chart to an OCI registry (`shipshape push oci://...`).
//!
//! Pure parts: [`parse_oci_reference`] (the `oci://` reference), [`helm_chart_artifact`]
//! (config blob, layer and manifest exactly as Helm lays them out, with reproducible
//! digests), [`credentials_from_docker_config`], [`rfc3339_utc`]. The I/O part is
//! [`push_chart`], the OCI distribution push protocol over HTTP(S). Every error is an
//! [`OciError`]; the command layer maps them all to exit code 3.
//!
//! - [`error`]: the error type;
//! - [`reference`](mod@reference): references, repository names, tags;
//! - [`artifact`]: the chart as an OCI artifact;
//! - [`credentials`]: the Docker config file and authentication challenges;
//! - [`push`]: the push protocol.

pub mod artifact;
pub mod credentials;
pub mod error;
pub mod push;
pub mod reference;

pub use artifact::{helm_chart_artifact, rfc3339_utc, Blob, ChartArtifact};
pub use credentials::{credentials_from_docker_config, Credentials};
pub use error::OciError;
pub use push::{push_chart, PushOutcome};
pub use reference::{parse_oci_reference, tag_for_version, OciReference};

/// Media type of the OCI image manifest.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// Media type of Helm's config blob (the chart metadata as JSON).
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.cncf.helm.config.v1+json";
/// Media type of Helm's chart layer (the `.tgz` as is).
pub const CHART_LAYER_MEDIA_TYPE: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";

#[cfg(test)]
mod tests;
