//! checkov's offline Kubernetes checks on every golden render: every check passes
//! except the ones README.md lists with a reason (between `<!-- checkov:start -->` and
//! `<!-- checkov:end -->`), and every listed check still fails somewhere, so the list
//! never outlives its reason.

use crate::support::{repo_root, run, tool, Scratch};
use serde_json::Value;
use std::collections::BTreeSet;

/// The check ids README.md skips, each with its reason in the same table row.
fn listed_skips() -> BTreeSet<String> {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let start = readme
        .find("<!-- checkov:start -->")
        .expect("README.md has no <!-- checkov:start --> marker");
    let end = readme
        .find("<!-- checkov:end -->")
        .expect("README.md has no <!-- checkov:end --> marker");
    let mut ids = BTreeSet::new();
    for row in readme[start..end]
        .lines()
        .filter(|l| l.starts_with("| `CKV"))
    {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert!(
            cells.len() >= 4 && cells[2].len() > 20,
            "README.md checkov row without a reason: {row}"
        );
        ids.insert(cells[1].trim_matches('`').to_string());
    }
    assert!(!ids.is_empty(), "README.md lists no checkov skips");
    ids
}

#[test]
fn golden_renders_pass_checkov_except_the_checks_the_readme_lists() {
    let checkov = tool("SHIPSHAPE_CHECKOV", ".tools/checkov/bin/checkov");
    let scratch = Scratch::new("checkov");
    let mut files = 0;
    for example in std::fs::read_dir(repo_root().join("golden")).unwrap() {
        let example = example.unwrap().path();
        let rendered = example.join("rendered");
        let Ok(entries) = std::fs::read_dir(&rendered) else {
            continue;
        };
        for file in entries {
            let file = file.unwrap().path();
            let name = format!(
                "{}-{}",
                example.file_name().unwrap().to_string_lossy(),
                file.file_name().unwrap().to_string_lossy()
            );
            std::fs::copy(&file, scratch.path().join(name)).unwrap();
            files += 1;
        }
    }
    assert!(files >= 10, "only {files} golden renders found");
    let dir = scratch.path().to_str().unwrap();
    let (_, stdout, stderr) = run(
        &checkov,
        &[
            "-d",
            dir,
            "--framework",
            "kubernetes",
            "--quiet",
            "--compact",
            "--skip-download",
            "-o",
            "json",
        ],
        &[],
    );
    let report: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("checkov printed no JSON ({e}): {stdout}\n{stderr}"));
    let report = if report.is_array() {
        &report[0]
    } else {
        &report
    };
    let summary = &report["summary"];
    assert_eq!(summary["parsing_errors"], 0, "{summary}");
    assert!(summary["passed"].as_u64().unwrap_or(0) > 1000, "{summary}");
    let skips = listed_skips();
    let failed = report["results"]["failed_checks"].as_array().unwrap();
    let mut seen = BTreeSet::new();
    let mut unexpected = Vec::new();
    for f in failed {
        let id = f["check_id"].as_str().unwrap().to_string();
        if !skips.contains(&id) {
            unexpected.push(format!(
                "{id} {} on {} in {}",
                f["check_name"], f["resource"], f["file_path"]
            ));
        }
        seen.insert(id);
    }
    assert!(
        unexpected.is_empty(),
        "checkov checks that fail and README.md does not list:\n{}",
        unexpected.join("\n")
    );
    let stale: Vec<&String> = skips.difference(&seen).collect();
    assert!(
        stale.is_empty(),
        "README.md skips checkov checks that no longer fail: {stale:?}"
    );
}
