//! The Pod Security "restricted" profile is every workload's contract; a spec may
//! relax parts of it for one workload, with a stated reason (`security.relax`). This
//! is spec-only: values cannot relax it, and the chart README prints each relaxation.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Relaxations of the Pod Security "restricted" profile, by workload.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SecuritySpec {
    /// Per workload name: what its values may do beyond "restricted", and why.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub relax: BTreeMap<String, Relaxation>,
}

/// One workload's relaxation of the "restricted" profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Relaxation {
    /// Why the workload needs it (printed in the chart README).
    #[schemars(length(min = 1))]
    pub reason: String,
    /// What its values may set.
    #[schemars(length(min = 1))]
    pub allow: Vec<Relaxable>,
}

/// A part of the "restricted" profile a spec may relax for one workload.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum Relaxable {
    /// `privileged: true` in a container's security context.
    Privileged,
    /// `allowPrivilegeEscalation: true` in a container's security context.
    PrivilegeEscalation,
    /// `runAsNonRoot: false` or `runAsUser: 0` (pod or container).
    RunAsRoot,
    /// `capabilities.add` beyond `NET_BIND_SERVICE`.
    Capabilities,
    /// A `hostPath` volume in `extraVolumes`.
    HostPath,
    /// `seccompProfile.type: Unconfined` (pod or container).
    SeccompUnconfined,
}

impl Relaxable {
    /// Every relaxable part, in the order messages list them.
    pub const ALL: [Relaxable; 6] = [
        Relaxable::Privileged,
        Relaxable::PrivilegeEscalation,
        Relaxable::RunAsRoot,
        Relaxable::Capabilities,
        Relaxable::HostPath,
        Relaxable::SeccompUnconfined,
    ];

    /// The name a spec writes (`privileged`, `runAsRoot`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Relaxable::Privileged => "privileged",
            Relaxable::PrivilegeEscalation => "privilegeEscalation",
            Relaxable::RunAsRoot => "runAsRoot",
            Relaxable::Capabilities => "capabilities",
            Relaxable::HostPath => "hostPath",
            Relaxable::SeccompUnconfined => "seccompUnconfined",
        }
    }
}
