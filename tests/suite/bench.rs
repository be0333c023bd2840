//! The benchmark keeps working: `scripts/bench.sh --quick` runs once with this build's
//! binary and real Helm 3 and 4, and writes its table; `benches/spaced.py` times this
//! build's runs spaced apart and refuses a failing command. Nothing about time is
//! asserted.

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
    // The second table: the same cases, each command run after a pause (none in quick
    // mode), with a time in every cell.
    let (_, spaced) = text
        .split_once("| case | preset | render | helm 3 template | ratio | generate |\n|---|---|---:|---:|---:|---:|\n")
        .unwrap_or_else(|| panic!("no table of spaced runs:\n{text}"));
    let rows: Vec<&str> = spaced.lines().take_while(|l| l.starts_with("| ")).collect();
    assert_eq!(rows.len(), 3, "{text}");
    for (row, case) in rows
        .iter()
        .zip(["agent-platform", "synth-10", "synth-stated-10"])
    {
        let cells: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
        assert_eq!(cells[..2], [case, "all-pools"], "{row}");
        assert!(
            cells[2].ends_with(" ms") && cells[3].ends_with(" ms"),
            "{row}"
        );
        assert!(cells[4].parse::<f64>().is_ok_and(|r| r > 0.0), "{row}");
        assert!(cells[5].ends_with(" ms"), "{row}");
    }
}

#[test]
fn spaced_runs_print_their_table_and_a_failing_command_is_named() {
    let script = repo_root().join("benches/spaced.py");
    let bin = env!("CARGO_BIN_EXE_shipshape");
    let version = format!("{bin} --version");
    let help = format!("{bin} --help");
    // `runs` rounds of `commands`, with no pause.
    let spaced = |runs: &str, commands: [&str; 2]| {
        let script = script.to_str().unwrap();
        let args = [
            script,
            "--runs",
            runs,
            "--gap",
            "0",
            commands[0],
            commands[1],
        ];
        run(std::path::Path::new("python3"), &args, &[])
    };
    let (code, stdout, stderr) = spaced("3", [&version, &help]);
    assert_eq!(code, 0, "benches/spaced.py failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.starts_with("3 rounds, 0 s before each run\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| command | median ms | mean | least | most | ratio to the first |"),
        "{stdout}"
    );
    let rows: Vec<&str> = stdout.lines().filter(|l| l.starts_with("| `")).collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    assert!(
        rows[0].starts_with(&format!("| `{version}` |")) && rows[0].ends_with("| 1.000 |"),
        "{stdout}"
    );
    assert!(rows[1].starts_with(&format!("| `{help}` |")), "{stdout}");
    let failing = format!("{bin} no-such-command");
    let (code, stdout, stderr) = spaced("1", [&version, &failing]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!("{failing:?} exited with 2").replace('"', "'")),
        "{stderr}"
    );
    assert!(
        !stdout.contains("| command |"),
        "a table despite the failure:\n{stdout}"
    );
}
