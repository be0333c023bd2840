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
    // A rerun on the unchanged spec leaves the output as it is: the same folders (no
    // swap) and nothing beside them.
    use std::os::unix::fs::MetadataExt;
    let inodes = |dir: &Path| -> Vec<u64> {
        ["", "chart", "chart/templates", "rendered", "capacity"]
            .iter()
            .map(|rel| std::fs::metadata(dir.join(rel)).unwrap().ino())
            .collect()
    };
    let before = inodes(&a);
    let (code, _, err) = shipshape(&["--spec", &spec, "generate", "--out", a.to_str().unwrap()]);
    assert_eq!(code, 0, "rerun over existing output: {err}");
    assert_eq!(inodes(&a), before, "the unchanged output is left in place");
    let mut beside: Vec<String> = std::fs::read_dir(scratch.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    beside.sort();
    assert_eq!(beside, ["a", "b"]);
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
    assert!(
        out == golden,
        "render --preset all-pools differs from golden/agent-platform/rendered/all-pools.yaml"
    );
    let (code, out, err) = shipshape(&[
        "--spec",
        &spec,
        "render",
        "rel",
        "-n",
        "prod",
        "--preset",
        "scale-out",
        "--set",
        "workloads.api.replicaCount=2,image.tag=v2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("replicas: 2")
            && out.contains("core:v2\"")
            && out.contains("name: \"rel-agent-platform-api\""),
        "{out}"
    );
    let (code, out, err) = shipshape(&[
        "--spec",
        &spec,
        "render",
        "--preset",
        "scale-out",
        "--set",
        "workloads.api.replicaCount=5",
    ]);
    // Beyond the plan the preset was checked with: the schema refuses it, as Helm does.
    assert_eq!(
        code, 2,
        "the plan's bound refuses values that break a budget"
    );
    assert!(
        out.is_empty()
            && err.contains("`workloads.api.replicaCount`")
            && err.contains("capacityPlan: scale-out"),
        "{err}"
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

/// A stand-in for kubeconform that replays one of the real recordings in
/// `../shared/fixtures/kubeconform/outputs` (kubeconform cannot be installed here).
fn replaying_kubeconform(dir: &Path, recording: &str) -> std::path::PathBuf {
    let outputs = repo_root().join("../shared/fixtures/kubeconform/outputs");
    let out = outputs.join(format!("{recording}.out"));
    let rc = std::fs::read_to_string(outputs.join(format!("{recording}.rc"))).unwrap();
    let script = dir.join(format!("kubeconform-{recording}"));
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$@\" >> \"{}\"\ncat \"{}\"\nexit {}\n",
            dir.join("args.log").display(),
            out.display(),
            rc.trim()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

#[test]
fn validate_reports_by_kubeconform_outcome_and_exit_code() {
    let scratch = Scratch::new("cli-validate");
    let spec = example_spec();
    let valid = replaying_kubeconform(scratch.path(), "valid-verbose-json");
    let (code, out, err) = shipshape(&[
        "--spec",
        &spec,
        "validate",
        "--kubeconform",
        valid.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("kubernetes 1.28.0:") && out.contains("kubernetes 1.31.0:"),
        "{out}"
    );
    let args = std::fs::read_to_string(scratch.path().join("args.log")).unwrap();
    assert!(
        args.contains("-strict -summary -verbose -output json -kubernetes-version 1.28.0"),
        "{args}"
    );
    assert!(
        args.contains("scaledobject") || args.contains("{{ .ResourceKind }}{{ .KindSuffix }}.json"),
        "{args}"
    );
    assert!(
        args.contains("-schema-location default --") && !args.contains("ignore-missing"),
        "{args}"
    );
    assert!(args.contains("rendered/all-pools.yaml"), "{args}");

    let invalid = replaying_kubeconform(scratch.path(), "invalid-verbose-json");
    let (code, out, _) = shipshape(&[
        "--spec",
        &spec,
        "validate",
        "--kubeconform",
        invalid.to_str().unwrap(),
        "--kube-version",
        "1.31.0",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("invalid"), "{out}");

    let missing = replaying_kubeconform(scratch.path(), "crd-missing-schema-json");
    let (code, _, err) = shipshape(&[
        "--spec",
        &spec,
        "validate",
        "--kubeconform",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("no schema for: ScaledObject"), "{err}");

    let (code, _, err) = shipshape(&[
        "--spec",
        &spec,
        "validate",
        "--kubeconform",
        "/nonexistent/kubeconform",
    ]);
    assert_eq!(code, 3);
    assert!(err.contains("--kubeconform PATH"), "{err}");
}

#[test]
fn validate_kills_a_hanging_kubeconform() {
    let scratch = Scratch::new("cli-validate-hang");
    let script = scratch.path().join("kubeconform");
    std::fs::write(&script, "#!/bin/sh\nexec sleep 30\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let started = std::time::Instant::now();
    let (code, _, err) = shipshape(&[
        "--spec",
        &example_spec(),
        "validate",
        "--kubeconform",
        script.to_str().unwrap(),
        "--timeout-seconds",
        "1",
    ]);
    assert_eq!(code, 3, "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert!(err.contains("timed out") || err.contains("time"), "{err}");
}

#[test]
fn package_is_reproducible_and_helm_3_and_4_accept_it() {
    let scratch = Scratch::new("cli-package");
    let spec = example_spec();
    let a = scratch.path().join("a");
    let b = scratch.path().join("b");
    let bin = Path::new(env!("CARGO_BIN_EXE_shipshape"));
    let (code, out_a, err) = run(
        bin,
        &["--spec", &spec, "package", "-o", a.to_str().unwrap()],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let tz = std::path::PathBuf::from("Asia/Tokyo");
    let (code, out_b, err) = run(
        bin,
        &["--spec", &spec, "package", "-o", b.to_str().unwrap()],
        &[("TZ", &tz)],
    );
    assert_eq!(code, 0, "{err}");
    let tgz_a = std::fs::read(a.join("agent-platform-0.1.0.tgz")).unwrap();
    let tgz_b = std::fs::read(b.join("agent-platform-0.1.0.tgz")).unwrap();
    assert_eq!(tgz_a, tgz_b, "package bytes differ across runs/time zones");
    // Another umask: the archive's modes are fixed, not taken from the file system.
    let d = scratch.path().join("d");
    let (code, _, err) = run(
        Path::new("/bin/sh"),
        &[
            "-c",
            "umask 077; exec \"$0\" \"$@\"",
            bin.to_str().unwrap(),
            "--spec",
            &spec,
            "package",
            "-o",
            d.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read(d.join("agent-platform-0.1.0.tgz")).unwrap(),
        tgz_a,
        "package bytes differ under umask 077"
    );
    assert_eq!(
        out_a.split_whitespace().nth(1),
        out_b.split_whitespace().nth(1),
        "sha256 printed"
    );
    let epoch = std::path::PathBuf::from("1700000000");
    let c = scratch.path().join("c");
    let (code, _, err) = run(
        bin,
        &["--spec", &spec, "package", "-o", c.to_str().unwrap()],
        &[("SOURCE_DATE_EPOCH", &epoch)],
    );
    assert_eq!(code, 0, "{err}");
    assert_ne!(
        std::fs::read(c.join("agent-platform-0.1.0.tgz")).unwrap(),
        tgz_a,
        "SOURCE_DATE_EPOCH is the mtime"
    );
    let tgz = a.join("agent-platform-0.1.0.tgz");
    let tgz = tgz.to_str().unwrap();
    for helm_bin in [helm3(), helm4()] {
        let (code, out, err) = helm(&helm_bin, &["lint", "--strict", tgz], scratch.path());
        assert_eq!(code, 0, "{out}{err}");
        let (code, out, err) = helm(&helm_bin, &["template", tgz], scratch.path());
        assert_eq!(code, 0, "{err}");
        let golden = std::fs::read_to_string(
            repo_root().join("golden/agent-platform/rendered/default.yaml"),
        )
        .unwrap();
        assert_eq!(parse_objects(&out), parse_objects(&golden));
        let (code, out, err) = helm(&helm_bin, &["show", "chart", tgz], scratch.path());
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("name: agent-platform") && out.contains("version: 0.1.0"),
            "{out}"
        );
    }
}

#[test]
fn diff_lists_changed_objects_in_text_and_markdown() {
    let scratch = Scratch::new("cli-diff");
    let spec = example_spec();
    let out = scratch.path().join("out");
    let (code, _, err) = shipshape(&["--spec", &spec, "generate", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (code, text, _) = shipshape(&["--spec", &spec, "diff", "--against", out.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(text.contains("no object changes"), "{text}");
    let changed = scratch.path().join("shipshape.yaml");
    let edited = std::fs::read_to_string(&spec).unwrap().replacen(
        "      drainSeconds: 30\n",
        "      drainSeconds: 20\n",
        1,
    );
    std::fs::write(&changed, edited).unwrap();
    let (code, text, err) = shipshape(&[
        "--spec",
        changed.to_str().unwrap(),
        "diff",
        "--against",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        text.contains("preset `default`")
            && text.contains("Deployment/release-name-agent-platform-api")
            && text.contains(".lifecycle.preStop.exec.command[1]: \"30\" -> \"20\""),
        "{text}"
    );
    let (code, md, _) = shipshape(&[
        "--spec",
        changed.to_str().unwrap(),
        "diff",
        "--against",
        out.to_str().unwrap(),
        "--format",
        "markdown",
    ]);
    assert_eq!(code, 1);
    assert!(
        md.contains("### Rendered object changes: preset `default`")
            && md.contains("command[1]` | `\"30\"` | `\"20\"` |"),
        "{md}"
    );
    let (code, stdout, _) = shipshape(&[
        "--spec",
        changed.to_str().unwrap(),
        "check",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(
        stdout.starts_with("rendered objects that would change:"),
        "{stdout}"
    );
}

#[test]
fn make_charts_workflow_runs_the_example() {
    let scratch = Scratch::new("cli-make");
    let out = scratch.path().join("out");
    let kubeconform = replaying_kubeconform(scratch.path(), "valid-verbose-json");
    let make = Path::new("/usr/bin/make");
    let dir = repo_root().join("examples/agent-platform");
    let vars = [
        format!("SHIPSHAPE={}", env!("CARGO_BIN_EXE_shipshape")),
        format!("OUT={}", out.display()),
        format!("VALIDATE_FLAGS=--kubeconform {}", kubeconform.display()),
    ];
    let mut args = vec!["-C", dir.to_str().unwrap(), "charts", "charts-check"];
    args.extend(vars.iter().map(String::as_str));
    let (code, stdout, stderr) = run(make, &args, &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(out.join("chart/Chart.yaml").exists());
    assert!(
        stdout.contains("is up to date") && stdout.contains("kubernetes 1.31.0:"),
        "{stdout}"
    );
}

#[test]
fn diff_starts_with_capacity_before_and_after_and_the_findings_that_appear() {
    let scratch = Scratch::new("cli-diff-capacity");
    let spec = example_spec();
    assert!(spec.ends_with("agent-platform/shipshape.yaml"), "{spec}");
    let out = scratch.path().join("out");
    let out = out.to_str().unwrap();
    let (code, _, err) = shipshape(&["--spec", &spec, "generate", "--out", out]);
    assert_eq!(code, 0, "{err}");
    let (code, md, _) = shipshape(&[
        "--spec",
        &spec,
        "diff",
        "--against",
        out,
        "--format",
        "markdown",
    ]);
    assert_eq!(code, 0, "{md}");
    assert!(md.starts_with("### Capacity\n"), "{md}");
    assert!(
        md.contains("|  | `default` | PostgreSQL connections | 100 | 180 | 80 |"),
        "{md}"
    );
    assert!(
        md.contains("No capacity figure changes.")
            && md.contains("No guard finding appears or disappears.")
    );

    // The worker's pool grows from 8 to 14: 3 peak processes x 6 = 18 more connections
    // in every preset; `keda` (4 fixed api pods) no longer fits, and the autoscaling
    // preset's derived maximum drops from 4 to 3 pods.
    let changed = scratch.path().join("shipshape.yaml");
    let text = std::fs::read_to_string(&spec).unwrap();
    let edited = text.replacen("hikari: {size: 8,", "hikari: {size: 14,", 1);
    assert_ne!(text, edited);
    std::fs::write(&changed, edited).unwrap();
    let changed = changed.to_str().unwrap();
    let (code, md, err) = shipshape(&[
        "--spec",
        changed,
        "diff",
        "--against",
        out,
        "--format",
        "markdown",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(md.starts_with("### Capacity\n"), "{md}");
    for row in [
        "| **changed** | `default` | PostgreSQL connections | 100 → 118 (+18) | 180 | 80 → 62 |",
        "| **changed** | `autoscaling` | PostgreSQL connections | 172 → 166 (-6) | 180 | 8 → 14 |",
        "| **changed** | `keda` | PostgreSQL connections | 172 → 190 (+18) | 180 | 8 → **exceeded by 10** |",
        "8 of 24 rows change.",
        "Appear:\n\n- preset `keda`: **error** `capacity.postgres` at `dependencyCapacity.postgres`: peak postgresql connections 190 exceed the budget of 180",
        "> preset `keda` is not rendered: its values are refused (see the guard findings)",
        "### Rendered object changes: preset `autoscaling`",
        "| `spec.maxReplicas` | `4` | `3` |",
    ] {
        assert!(md.contains(row), "missing {row:?} in:\n{md}");
    }
    assert!(!md.contains("Disappear:"));
    // The object changes of the refused preset are not listed as removals.
    assert!(!md.contains("preset `keda`\n\n0 added, "), "{md}");
    let (code, text, _) = shipshape(&["--spec", changed, "diff", "--against", out]);
    assert_eq!(code, 1);
    assert!(
        text.starts_with("capacity changes:\n  preset `default`: PostgreSQL connections: peak 100 -> 118 (+18), budget 180, headroom 80 -> 62\n"),
        "{text}"
    );
    assert!(text.contains("guard findings that appear:\n  preset `keda`: error[capacity.postgres]"));

    // Reverting the change makes the finding disappear against an output of the change:
    // generate cannot write the refused change, so compare against a hand-made record.
    let record = std::path::Path::new(out).join("capacity/keda.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    json["findings"] = serde_json::json!([{
        "severity": "warning", "rule": "rollout.drain",
        "path": "workloads.api.autoscaling", "message": "scale-in is faster than the drain"
    }]);
    std::fs::write(&record, serde_json::to_string(&json).unwrap()).unwrap();
    let (code, md, _) = shipshape(&[
        "--spec",
        &spec,
        "diff",
        "--against",
        out,
        "--format",
        "markdown",
    ]);
    assert_eq!(code, 1, "{md}");
    assert!(md.contains("Disappear:\n\n- preset `keda`: **warning** `rollout.drain` at `workloads.api.autoscaling`: scale-in is faster than the drain"), "{md}");
}

/// The process ends with its own exit code and its whole output, and leaves nothing
/// running: the child that holds its memory while the kernel frees it (`main.rs`,
/// `leave_the_memory_to_a_child`) holds no file, so a pipe reading the output ends
/// when the process does, and it is gone once the process has ended. A `render`
/// accepted and one refused, and a `generate`. The child shares the process's memory,
/// so it shows the same command line, which holds a name of this test's own.
#[cfg(target_os = "linux")]
#[test]
fn a_run_ends_with_its_code_and_output_and_leaves_no_process_behind() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    use std::time::Duration;
    let spec = example_spec();
    let token = format!("left-behind-{}", std::process::id());
    let scratch = Scratch::new(&token);
    let folder = scratch.path().join("out").display().to_string();
    // `generate` too: a thread of its (the signals' watcher) is still running at exit.
    let cases: [(&[&str], i32); 3] = [
        (&["render", &token], 0),
        (&["render", &token, "--set", "capacityPlan=nope"], 2),
        (&["generate", "--out", &folder], 0),
    ];
    for (command, expected) in cases {
        let mut args = vec!["--spec", spec.as_str()];
        args.extend_from_slice(command);
        let mut child = Command::new(env!("CARGO_BIN_EXE_shipshape"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read both pipes to their end on threads, so that a pipe still held open
        // fails the test after a minute instead of hanging it.
        let pipes = [
            Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ];
        let (sender, receiver) = std::sync::mpsc::channel();
        for (index, mut pipe) in pipes.into_iter().enumerate() {
            let sender = sender.clone();
            std::thread::spawn(move || {
                let mut text = String::new();
                pipe.read_to_string(&mut text).unwrap();
                sender.send((index, text)).unwrap();
            });
        }
        let mut texts = [String::new(), String::new()];
        for _ in 0..2 {
            let (index, text) = receiver
                .recv_timeout(Duration::from_secs(60))
                .expect("both pipes end when the process ends");
            texts[index] = text;
        }
        let status = child.wait().unwrap();
        let [out, err] = texts;
        assert_eq!(status.code(), Some(expected), "{args:?}: {err}");
        match (command[0], expected) {
            ("render", 0) => {
                assert!(out.contains(&format!("instance: \"{token}\"")), "{out}");
                assert!(out.ends_with('\n'), "the whole output: {out}");
            }
            ("render", _) => {
                assert!(out.is_empty() && err.contains("capacityPlan"), "{out}{err}")
            }
            _ => assert!(out.starts_with("wrote ") && err.is_empty(), "{out}{err}"),
        }
        nothing_left_holding(&token);
    }
    // Eight at once, as a build runs them: each ends well, and leaves nothing behind.
    let at_once: Vec<_> = (0..8)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_shipshape"))
                .args(["--spec", &spec, "render", &token])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in at_once {
        assert!(child.wait().unwrap().success());
    }
    nothing_left_holding(&token);
}

/// Waits up to 10 s until no running process holds `token` in its command line, and
/// fails naming those that still do: a zombie waiting to be reaped by init shows none.
#[cfg(target_os = "linux")]
fn nothing_left_holding(token: &str) {
    use std::time::{Duration, Instant};
    let holding = || -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|entry| {
                let path = entry.ok()?.path().join("cmdline");
                let line = std::fs::read(&path).ok()?;
                String::from_utf8_lossy(&line)
                    .contains(token)
                    .then(|| path.display().to_string())
            })
            .collect()
    };
    let start = Instant::now();
    while !holding().is_empty() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(holding().is_empty(), "still running: {:?}", holding());
}

/// A reader that has gone (`shipshape render | head -c 0`) ends the output, not the
/// process: `render` is not killed by `SIGPIPE`, and ends with its own exit code.
#[test]
fn render_into_a_closed_pipe_is_not_killed_by_sigpipe() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    let spec = example_spec();
    let mut child = Command::new(env!("CARGO_BIN_EXE_shipshape"))
        .args(["--spec", &spec, "render"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("shipshape starts");
    // The pipe's only reader closes before the render writes a byte.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("shipshape ends");
    assert_eq!(
        out.status.signal(),
        None,
        "killed by a signal: {:?}",
        out.status
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
