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
        let expected_path = path.with_extension("expected");
        if update {
            std::fs::write(&expected_path, format!("{actual}\n")).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_else(|_| {
            panic!(
                "missing {} (run with UPDATE_GOLDEN=1)",
                expected_path.display()
            )
        });
        if expected.trim_end() != actual.trim_end() {
            failures.push(format!(
                "{}:\n--- expected\n{expected}\n--- actual\n{actual}\n",
                path.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn bad_values_fail_with_the_expected_message() {
    let update = update_golden();
    let dir = repo_root().join("tests/fixtures/values/err");
    let spec = repo_root().join("examples/llm-gateway/shipshape.yaml");
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
        let _ = &spec;
        assert_ne!(code, 0, "{rel} rendered:\n{stdout}");
        assert!(
            stdout.is_empty(),
            "{rel}: nothing is printed when the values are refused"
        );
        let actual = format!("exit {code}\n{stderr}");
        let expected_path = file.with_extension("expected");
        if update {
            std::fs::write(&expected_path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_else(|_| {
            panic!(
                "missing {} (run with UPDATE_GOLDEN=1)",
                expected_path.display()
            )
        });
        if expected.trim_end() != actual.trim_end() {
            failures.push(format!(
                "{rel}:\n--- expected\n{expected}\n--- actual\n{actual}\n"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
