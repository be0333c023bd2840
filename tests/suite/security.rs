//! `security.restricted` at install time: plain Helm 3 and 4 refuse values beyond Pod
//! Security "restricted" through `values.schema.json`, except what the spec relaxes
//! for one workload, and the chart README prints that relaxation with its reason.

use crate::support::*;

const SPEC: &str = r#"chart: {name: tiny, version: 1.0.0, appVersion: "1", description: d}
image: {repository: example/tiny}
security:
  relax:
    node-agent: {reason: "it tunes the node's network stack", allow: [privileged, capabilities]}
workloads:
  api:
    web: {}
  worker:
    node-agent: {}
"#;

#[test]
fn helm_3_and_4_refuse_values_beyond_restricted_unless_the_spec_relaxes_them() {
    let spec = shipshape::spec::load_spec(SPEC, "shipshape.yaml").unwrap();
    let scratch = Scratch::new("security-restricted");
    let files = write_generated(&spec, scratch.path());
    let readme = &files["chart/README.md"];
    assert!(
        readme.contains("relaxed by the spec for privileged, capabilities (reason: it tunes the node's network stack)"),
        "the chart README does not show the relaxation"
    );
    let write = |name: &str, text: &str| {
        let path = scratch.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let host_path = write(
        "host-path.yaml",
        "workloads: {web: {extraVolumes: [{name: host, hostPath: {path: /}}]}}\n",
    );
    let sidecar = write(
        "sidecar.yaml",
        "workloads: {web: {sidecars: [{name: s, image: x, securityContext: {privileged: true}}]}}\n",
    );
    let init = write(
        "init.yaml",
        "workloads: {web: {initContainers: [{name: i, image: x, securityContext: {allowPrivilegeEscalation: true}}]}}\n",
    );
    let relaxed_sidecar = write(
        "relaxed-sidecar.yaml",
        "workloads: {node-agent: {sidecars: [{name: s, image: x, securityContext: {privileged: true, capabilities: {add: [NET_ADMIN]}}}]}}\n",
    );
    let chart = scratch.path().join("chart");
    assert_helm_schema_verdicts(
        &chart,
        scratch.path(),
        &[
            &["--set", "workloads.web.securityContext.privileged=true"],
            &[
                "--set",
                "workloads.web.securityContext.allowPrivilegeEscalation=true",
            ],
            &["--set", "workloads.web.securityContext.runAsNonRoot=false"],
            &[
                "--set",
                "workloads.web.podSecurityContext.runAsNonRoot=false",
            ],
            &["--set", "workloads.web.podSecurityContext.runAsUser=0"],
            &[
                "--set",
                "workloads.web.securityContext.capabilities.add={NET_ADMIN}",
            ],
            &[
                "--set",
                "workloads.web.podSecurityContext.seccompProfile.type=Unconfined",
            ],
            &["--set", "workloads.web.hostNetwork=true"],
            &["-f", &host_path],
            &["-f", &sidecar],
            &["-f", &init],
            // A relaxation covers its own parts and workload only.
            &[
                "--set",
                "workloads.node-agent.securityContext.runAsNonRoot=false",
            ],
            &[
                "--set",
                "workloads.node-agent.securityContext.allowPrivilegeEscalation=true",
            ],
        ],
        &[
            &[],
            &[
                "--set",
                "workloads.web.securityContext.capabilities.add={NET_BIND_SERVICE}",
            ],
            &["--set", "workloads.web.podSecurityContext.runAsUser=1000"],
            &[
                "--set",
                "workloads.node-agent.securityContext.privileged=true",
            ],
            &["-f", &relaxed_sidecar],
        ],
    );
}
