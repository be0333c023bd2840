//! `extraObjects`: raw manifests in values, rendered as given (never through `tpl`),
//! equal under Helm 3, Helm 4 and the native render, valid against the official
//! schemas, refused by the values schema without `apiVersion`, `kind` or
//! `metadata.name`, and handed to kubeconform by `shipshape validate`.

use crate::support::*;
use serde_json::Value;
use shipshape::spec::load_spec;
use std::path::Path;

fn fixture() -> std::path::PathBuf {
    repo_root().join("tests/fixtures/spec/ok/extra-objects.yaml")
}

fn extras(objects: &[Value]) -> Vec<&Value> {
    let names = ["shop-quota", "shop-reader", "shop-notes"];
    objects
        .iter()
        .filter(|o| names.iter().any(|n| o["metadata"]["name"] == *n))
        .collect()
}

#[test]
fn extra_objects_render_as_given_under_helm_3_helm_4_and_natively() {
    let spec = load_spec(&std::fs::read_to_string(fixture()).unwrap(), "extra").unwrap();
    let scratch = Scratch::new("extra-objects");
    let files = write_generated(&spec, scratch.path());
    let native = parse_objects(&files["rendered/with-extras.yaml"]);
    let found = extras(&native);
    assert_eq!(found.len(), 3, "{native:#?}");
    let notes = found.iter().find(|o| o["kind"] == "ConfigMap").unwrap();
    // Template text in values stays text.
    assert_eq!(
        notes["metadata"]["annotations"]["note"],
        "{{ .Release.Name }} stays text"
    );
    assert_eq!(
        notes["data"]["template.txt"],
        "{{ fail \"never run\" }} <b>&</b>"
    );
    // The default render has none.
    assert!(extras(&parse_objects(&files["rendered/default.yaml"])).is_empty());

    let chart = scratch.path().join("chart");
    let values = chart.join("values-with-extras.yaml");
    for helm_bin in [helm3(), helm4()] {
        let (code, out, err) = helm(
            &helm_bin,
            &[
                "template",
                chart.to_str().unwrap(),
                "-f",
                values.to_str().unwrap(),
            ],
            scratch.path(),
        );
        assert_eq!(code, 0, "{}: {err}", helm_bin.display());
        assert_eq!(parse_objects(&out), native, "{}", helm_bin.display());
    }

    // The official schemas check them like the chart's own objects.
    let rendered = scratch.path().join("rendered/with-extras.yaml");
    for version in ["1.28.0", "1.31.0"] {
        let (code, out, err) = run(
            &kubernetes_validate(),
            &["--strict", "-k", version, rendered.to_str().unwrap()],
            &[],
        );
        assert_eq!(code, 0, "{version}: {out}{err}");
    }
    // ...and would refuse a broken one (`data` values are strings).
    let broken = scratch.path().join("broken.yaml");
    std::fs::write(
        &broken,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: 1}\n",
    )
    .unwrap();
    let (code, _, _) = run(
        &kubernetes_validate(),
        &["--strict", "-k", "1.31.0", broken.to_str().unwrap()],
        &[],
    );
    assert_ne!(
        code, 0,
        "kubernetes-validate accepted a ConfigMap with a number"
    );

    // The values schema needs apiVersion, kind and metadata.name.
    assert_helm_schema_verdicts(
        &chart,
        scratch.path(),
        &[
            &["--set", "extraObjects[0].kind=ConfigMap,extraObjects[0].metadata.name=x"],
            &["--set", "extraObjects[0].apiVersion=v1,extraObjects[0].metadata.name=x"],
            &["--set", "extraObjects[0].apiVersion=v1,extraObjects[0].kind=ConfigMap"],
            &["--set", "extraObjects[0]=text"],
        ],
        &[&[
            "--set",
            "extraObjects[0].apiVersion=v1,extraObjects[0].kind=ConfigMap,extraObjects[0].metadata.name=x",
        ]],
    );
}

/// A stand-in kubeconform that keeps what it was given (kubeconform cannot be
/// installed here) and replays the recording of a valid run.
fn recording_kubeconform(dir: &Path) -> std::path::PathBuf {
    let outputs = repo_root().join("../shared/fixtures/kubeconform/outputs");
    let script = dir.join("kubeconform");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in *.yaml) cat \"$a\" >> \"{}\";; esac; done\ncat \"{}\"\nexit 0\n",
            dir.join("given.yaml").display(),
            outputs.join("valid-verbose-json.out").display(),
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

#[test]
fn validate_hands_extra_objects_to_kubeconform() {
    let scratch = Scratch::new("extra-objects-validate");
    let kubeconform = recording_kubeconform(scratch.path());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_shipshape"))
        .args([
            "--spec",
            fixture().to_str().unwrap(),
            "validate",
            "--kubeconform",
            kubeconform.to_str().unwrap(),
            "--kube-version",
            "1.31.0",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let given = std::fs::read_to_string(scratch.path().join("given.yaml")).unwrap();
    let objects = parse_objects(&given);
    assert_eq!(extras(&objects).len(), 3, "{given}");
}
