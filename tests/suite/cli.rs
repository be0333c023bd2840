//! The binary end to end: exit codes, atomic and byte-identical output, drift.

use crate::support::*;
use std::path::Path;

fn shipshape(args: &[&str]) -> (i32, String, String) {
    run(Path::new(env!("CARGO_BIN_EXE_shipshape")), args, &[])
}

fn example_spec() -> String {
    examples()[0].1.to_string_lossy().into_owned()
}

#[test]
fn generate_twice_is_byte_identical_and_check_passes() {
    let scratch = Scratch::new("cli-generate");
    let spec = example_spec();
    let a = scratch.path().join("a");
    let b = scratch.path().join("b");
    for out in [&a, &b] {
        let (code, _, err) =
            shipshape(&["--spec", &spec, "generate", "--out", out.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
    }
    let (code, _, err) = shipshape(&["--spec", &spec, "generate", "--out", a.to_str().unwrap()]);
    assert_eq!(code, 0, "rerun over existing output: {err}");
    let ta = shipshape::commands::read_tree(&a).unwrap();
    let tb = shipshape::commands::read_tree(&b).unwrap();
    assert!(!ta.is_empty());
    assert_eq!(ta, tb);
    let (code, out, err) = shipshape(&["--spec", &spec, "check", "--out", a.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn check_reports_drift_with_a_diff_and_the_fix() {
    let scratch = Scratch::new("cli-drift");
    let spec = example_spec();
    let out = scratch.path().join("out");
    let (code, _, err) = shipshape(&["--spec", &spec, "generate", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let values = out.join("chart/values.yaml");
    let edited =
        std::fs::read_to_string(&values)
            .unwrap()
            .replacen("replicaCount: 1", "replicaCount: 7", 1);
    std::fs::write(&values, edited).unwrap();
    std::fs::write(out.join("rendered/stray.yaml"), "x: 1\n").unwrap();
    let (code, stdout, stderr) =
        shipshape(&["--spec", &spec, "check", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("--- a/chart/values.yaml")
            && stdout.contains("-    replicaCount: 7")
            && stdout.contains("+    replicaCount: 1"),
        "{stdout}"
    );
    assert!(stdout.contains("--- a/rendered/stray.yaml"), "{stdout}");
    assert!(
        stderr.contains("shipshape --spec") && stderr.contains("generate --out"),
        "{stderr}"
    );
}

#[test]
fn bad_spec_exits_2_and_leaves_previous_output() {
    let scratch = Scratch::new("cli-bad");
    let spec = example_spec();
    let out = scratch.path().join("out");
    let (code, _, err) = shipshape(&["--spec", &spec, "generate", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let before = shipshape::commands::read_tree(&out).unwrap();
    let bad = scratch.path().join("bad.yaml");
    let text = std::fs::read_to_string(&spec)
        .unwrap()
        .replacen("drainSeconds:", "drainSecond:", 1);
    std::fs::write(&bad, text).unwrap();
    let (code, _, err) = shipshape(&[
        "--spec",
        bad.to_str().unwrap(),
        "generate",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("unknown field `drainSecond`") && err.contains("did you mean `drainSeconds`"),
        "{err}"
    );
    assert!(err.contains("bad.yaml:"), "{err}");
    assert_eq!(shipshape::commands::read_tree(&out).unwrap(), before);
    let leftovers: Vec<_> = std::fs::read_dir(scratch.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        2,
        "staging folders left behind: {leftovers:?}"
    );
}

#[test]
fn render_matches_the_golden_render_and_applies_set_and_files() {
    let spec = example_spec();
    let (code, out, err) = shipshape(&["--spec", &spec, "render", "--preset", "all-pools"]);
    assert_eq!(code, 0, "{err}");
    let golden =
        std::fs::read_to_string(repo_root().join("golden/agent-platform/rendered/all-pools.yaml"))
            .unwrap();
    assert_eq!(out, golden);
    let (code, out, err) = shipshape(&[
        "--spec",
        &spec,
        "render",
        "rel",
        "-n",
        "prod",
        "--set",
        "workloads.api.replicaCount=5,image.tag=v2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("replicas: 5")
            && out.contains("core:v2\"")
            && out.contains("name: \"rel-api\""),
        "{out}"
    );
    let (code, _, err) = shipshape(&[
        "--spec",
        &spec,
        "render",
        "--set",
        "workloads.api.replicaCount=-1",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("workloads.api.replicaCount"), "{err}");
    let (code, _, err) = shipshape(&["--spec", &spec, "render", "--preset", "all-pool"]);
    assert_eq!(code, 2);
    assert!(err.contains("did you mean `all-pools`"), "{err}");
}

#[test]
fn schema_command_prints_the_committed_schema() {
    let (code, out, _) = shipshape(&["schema"]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        std::fs::read_to_string(repo_root().join("schemas/shipshape.schema.json")).unwrap()
    );
}
