//! Data-driven spec fixtures: every `tests/fixtures/spec/ok/*.yaml` loads and
//! generates; every `tests/fixtures/spec/err/*.yaml` fails with the text in the
//! matching `.expected` file (`UPDATE_GOLDEN=1` rewrites those).

use crate::support::*;
use shipshape::generate::generate_outputs;
use shipshape::spec::load_spec;
use std::path::PathBuf;

fn fixture_files(kind: &str) -> Vec<PathBuf> {
    let dir = repo_root().join("tests/fixtures/spec").join(kind);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", dir.display());
    files
}

/// The error text of loading and generating a spec fixture, or `None` if it passes.
fn spec_error(path: &PathBuf) -> Option<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let name = format!("{}", path.strip_prefix(repo_root()).unwrap().display());
    match load_spec(&text, &name) {
        Err(e) => Some(e.to_string()),
        Ok(spec) => generate_outputs(&spec).err().map(|e| e.to_string()),
    }
}

/// Compares `actual` with the `.expected` file beside `fixture` (or rewrites it when
/// `update`); a mismatch is returned as a report.
fn compare_snapshot(fixture: &std::path::Path, actual: &str, update: bool) -> Option<String> {
    let expected_path = fixture.with_extension("expected");
    if update {
        std::fs::write(&expected_path, format!("{}\n", actual.trim_end())).unwrap();
        return None;
    }
    let expected = std::fs::read_to_string(&expected_path).unwrap_or_else(|_| {
        panic!(
            "missing {} (run with UPDATE_GOLDEN=1)",
            expected_path.display()
        )
    });
    (expected.trim_end() != actual.trim_end()).then(|| {
        format!(
            "{}:\n--- expected\n{expected}\n--- actual\n{actual}\n",
            fixture.display()
        )
    })
}

#[test]
fn good_specs_load_and_generate() {
    for path in fixture_files("ok") {
        if let Some(err) = spec_error(&path) {
            panic!("{} should pass, got:\n{err}", path.display());
        }
    }
}

#[test]
fn bad_specs_fail_with_the_expected_message() {
    let update = update_golden();
    let mut failures = Vec::new();
    for path in fixture_files("err") {
        let actual = spec_error(&path)
            .unwrap_or_else(|| panic!("{} should fail but passed", path.display()));
        failures.extend(compare_snapshot(&path, &actual, update));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn bad_values_fail_with_the_expected_message() {
    let update = update_golden();
    let dir = repo_root().join("tests/fixtures/values/err");
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_shipshape"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 6,
        "bad values fixtures missing in {}",
        dir.display()
    );
    let mut failures = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(repo_root())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let (code, stdout, stderr) = run(
            bin,
            &[
                "--spec",
                "examples/llm-gateway/shipshape.yaml",
                "render",
                "-f",
                &rel,
            ],
            &[],
        );
        assert_ne!(code, 0, "{rel} rendered:\n{stdout}");
        assert!(
            stdout.is_empty(),
            "{rel}: nothing is printed when the values are refused"
        );
        let actual = format!("exit {code}\n{stderr}");
        failures.extend(compare_snapshot(&file, &actual, update));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
