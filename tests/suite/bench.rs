//! The benchmark keeps working: `scripts/bench.sh --quick` runs once with this build's
//! binary and real Helm 3 and 4, and writes its table. Nothing about time is asserted.

use crate::support::*;

#[test]
fn bench_script_runs_in_quick_mode_and_writes_its_table() {
    let scratch = Scratch::new("bench-quick");
    let out = scratch.path().join("BENCHMARKS.md");
    std::fs::write(&out, "# Benchmarks\n\nA note kept by the script.\n\n<!-- bench.sh results begin -->\nold\n<!-- bench.sh results end -->\n\nAfter.\n").unwrap();
    let script = repo_root().join("scripts/bench.sh");
    let bin = std::path::PathBuf::from(env!("CARGO_BIN_EXE_shipshape"));
    let (code, stdout, stderr) = run(
        &script,
        &[
            "--quick",
            "--shipshape",
            bin.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[("SHIPSHAPE_HELM3", &helm3()), ("SHIPSHAPE_HELM4", &helm4())],
    );
    assert_eq!(
        code, 0,
        "scripts/bench.sh --quick failed:\n{stdout}\n{stderr}"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.starts_with("# Benchmarks\n\nA note kept by the script.\n"),
        "{text}"
    );
    assert!(
        text.ends_with("<!-- bench.sh results end -->\n\nAfter.\n"),
        "{text}"
    );
    assert!(!text.contains("\nold\n"), "the old results stay:\n{text}");
    assert!(text.contains("Machine: "), "{text}");
    assert!(text.contains("| case | preset | workloads |"), "{text}");
    for case in [
        "| agent-platform | all-pools | 8 |",
        "| synth-10 | all-pools | 10 |",
        "| synth-stated-10 | all-pools | 10 |",
    ] {
        assert!(text.contains(case), "no row `{case}`:\n{text}");
    }
}
