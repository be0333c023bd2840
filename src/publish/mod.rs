//! Publishing the chart: a reproducible `.tgz` ([`package`]) and an OCI push
//! ([`oci`]) that Helm 3 and Helm 4 can pull.

pub mod oci;
pub mod package;
