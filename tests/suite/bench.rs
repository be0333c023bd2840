//! The benchmark keeps working: `scripts/bench.sh --quick` runs once with this build's
//! binary and real Helm 3 and 4, and writes its table; `benches/spaced.py` times this
//! build's runs spaced apart and refuses a failing command. Nothing about time is
//! asserted.

use crate::support::*;

/// A section an earlier `scripts/bench.sh` wrote, before its runs carried their data:
/// the comparison reads its first table back.
const TABLE_OF_AN_EARLIER_RUN: &str = "Machine: A machine. Load average (1, 5, 15 min) 1 before, 1 after. Commit abc1234; Helm v3 and v4; hyperfine 1.

Wall time, the median of hyperfine's runs (no shell).

| case | preset | workloads | objects | render | helm 3 template | helm 4 template | ratio 3 / 4 | generate (presets) | peak MiB render / helm 3 / helm 4 / generate |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|
| agent-platform | all-pools | 8 | 22 | 3.6 ms | 91.8 ms | 117 ms | 0.040 / 0.031 | 1,210 ms (8) | 9 / 50 / 56 / 14 |
| synth-400 | all-pools | 400 | 806 | 73.5 ms | 2,005 ms | 33,425 ms | 0.037 / 0.002 | 221 ms (5) | 59 / 318 / 404 / 155 |
";

/// Runs `scripts/bench.sh --quick` with this build's binary into `out`.
fn bench_quick_into(out: &std::path::Path) {
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
}

/// The rows of the table after `header` and its alignment line, split into cells.
fn rows_after(text: &str, header: &str) -> Vec<Vec<String>> {
    let (_, rest) = text
        .split_once(header)
        .unwrap_or_else(|| panic!("no table `{header}`:\n{text}"));
    rest.lines()
        .skip(2)
        .take_while(|l| l.starts_with("| "))
        .map(|row| {
            row.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn bench_script_runs_in_quick_mode_and_writes_its_table() {
    let scratch = Scratch::new("bench-quick");
    let out = scratch.path().join("BENCHMARKS.md");
    std::fs::write(
        &out,
        format!("# Benchmarks\n\nA note kept by the script.\n\n<!-- bench.sh results begin -->\n{TABLE_OF_AN_EARLIER_RUN}<!-- bench.sh results end -->\n\nAfter.\n"),
    )
    .unwrap();
    bench_quick_into(&out);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.starts_with("# Benchmarks\n\nA note kept by the script.\n"),
        "{text}"
    );
    assert!(
        text.ends_with("<!-- bench.sh results end -->\n\nAfter.\n"),
        "{text}"
    );
    assert!(
        !text.contains("Commit abc1234;"),
        "the old results stay:\n{text}"
    );
    assert!(text.contains("Machine: "), "{text}");
    let main = rows_after(&text, "| case | preset | workloads |");
    let cases: Vec<&str> = main.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        cases,
        ["agent-platform", "synth-10", "synth-stated-10"],
        "{text}"
    );
    for (row, workloads) in main.iter().zip(["8", "10", "10"]) {
        assert_eq!(row[1..3], ["all-pools", workloads], "{row:?}");
    }
    // The second table: the same cases, each command run after a pause (none in quick
    // mode), with a time in every cell.
    let spaced = rows_after(
        &text,
        "| case | preset | render | helm 3 template | ratio | generate |",
    );
    assert_eq!(spaced.len(), 3, "{text}");
    for (cells, case) in spaced
        .iter()
        .zip(["agent-platform", "synth-10", "synth-stated-10"])
    {
        assert_eq!(cells[..2], [case, "all-pools"], "{cells:?}");
        assert!(
            cells[2].ends_with(" ms") && cells[3].ends_with(" ms"),
            "{cells:?}"
        );
        assert!(cells[4].parse::<f64>().is_ok_and(|r| r > 0.0), "{cells:?}");
        assert!(cells[5].ends_with(" ms"), "{cells:?}");
    }
    // Against the earlier run: the one case both have, its old figures read back from
    // the old table (the ratio as the table printed it) beside this run's.
    assert!(
        text.contains("The previous run in this file: commit abc1234, on A machine; this run is in quick mode."),
        "{text}"
    );
    let against = rows_after(
        &text,
        "| case | render | helm 3 template | render / helm 3 |",
    );
    assert_eq!(against.len(), 1, "{text}");
    let row = &against[0];
    assert_eq!(row[0], "agent-platform");
    let now = &main[0];
    let peaks: Vec<&str> = now[9].split(" / ").collect();
    for (cell, old, new) in [
        (1, "3.6 ms", now[4].as_str()),
        (2, "91.8 ms", now[5].as_str()),
        (6, "9", peaks[0]),
        (7, "14", peaks[3]),
    ] {
        assert!(
            row[cell].starts_with(&format!("{old} -> {new} (")),
            "{row:?}"
        );
    }
    assert!(row[3].starts_with("0.040 -> "), "{row:?}");
    assert!(row[4].starts_with("1,210 ms -> "), "{row:?}");
    assert!(row[5].starts_with("13.181 -> "), "{row:?}");

    // A second run compares with the first, case by case, from the data it left.
    let first = main;
    bench_quick_into(&out);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.matches("<!-- bench.sh data {").count(), 1, "{text}");
    assert!(
        !text.contains("this run is in quick mode") && text.contains("(quick mode)."),
        "{text}"
    );
    let against = rows_after(
        &text,
        "| case | render | helm 3 template | render / helm 3 |",
    );
    assert_eq!(against.len(), 3, "{text}");
    for (row, before) in against.iter().zip(&first) {
        assert_eq!(row[0], before[0], "{row:?}");
        assert!(
            row[1].starts_with(&format!("{} -> ", before[4])),
            "{row:?} {before:?}"
        );
        assert!(
            row[4].starts_with(&format!("{} -> ", before[8].split(" (").next().unwrap())),
            "{row:?} {before:?}"
        );
        for cell in &row[1..] {
            assert!(cell.contains(" -> ") && cell.ends_with(" %)"), "{row:?}");
        }
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
