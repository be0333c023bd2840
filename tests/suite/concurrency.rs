//! Eight `generate` runs at once on one output folder, fifty times: every run
//! succeeds or is refused with "another shipshape run holds `OUT`", and the folder
//! is always exactly what one clean run writes, with nothing left beside it.

use crate::hostile::{snapshot, SMALL_SPEC};
use crate::support::*;
use std::path::Path;
use std::process::{Command, Stdio};

const RUNS: usize = 8;
const ROUNDS: usize = 50;

#[test]
fn eight_generates_at_once_succeed_or_are_refused_and_the_output_is_clean() {
    let scratch = Scratch::new("concurrency");
    let bin = Path::new(env!("CARGO_BIN_EXE_shipshape"));
    let spec = repo_root().join(SMALL_SPEC);
    let spec = spec.to_str().unwrap();
    let clean = scratch.path().join("clean");
    let (code, _, err) = run(
        bin,
        &["--spec", spec, "generate", "--out", clean.to_str().unwrap()],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let expected = snapshot(&clean);
    let parent = scratch.path().join("shared");
    std::fs::create_dir(&parent).unwrap();
    let out = parent.join("out");
    let refusal = format!("another shipshape run holds `{}`", out.display());
    let (mut succeeded, mut refused) = (0, 0);
    for round in 0..ROUNDS {
        let children: Vec<_> = (0..RUNS)
            .map(|_| {
                Command::new(bin)
                    .args(["--spec", spec, "generate", "--out"])
                    .arg(&out)
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut winners = 0;
        for child in children {
            let output = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            match output.status.code() {
                Some(0) => winners += 1,
                Some(3) if stderr.contains(&refusal) => refused += 1,
                other => panic!("round {round}: exit {other:?}: {stderr}"),
            }
        }
        assert!(winners >= 1, "round {round}: every run was refused");
        succeeded += winners;
        assert_eq!(snapshot(&out), expected, "round {round}: output differs");
        let beside: Vec<String> = std::fs::read_dir(&parent)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(beside, ["out"], "round {round}: left beside the output");
    }
    eprintln!(
        "{} runs: {succeeded} succeeded, {refused} refused",
        RUNS * ROUNDS
    );
}
