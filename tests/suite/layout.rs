//! The source layout the design asks for: data flows one way through the stages, and
//! no source file outgrows a reader.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The stages in the order data flows; a module may use only itself and the ones
/// before it (the order of `src/lib.rs`).
const STAGES: &[&str] = &[
    "expr", "model", "spec", "values", "capacity", "guards", "contract", "objects", "backends",
    "generate", "publish", "external", "commands",
];

/// Stages at the same level that must not use each other either.
const PEERS: &[(&str, &str)] = &[
    ("publish", "external"),
    ("publish", "generate"),
    ("external", "generate"),
];

fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            source_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The stage a file under `src/` belongs to (`None` for `lib.rs` and `main.rs`).
fn stage_of(relative: &Path) -> Option<String> {
    let first = relative
        .components()
        .next()?
        .as_os_str()
        .to_str()?
        .to_string();
    let stage = first.trim_end_matches(".rs").to_string();
    STAGES.contains(&stage.as_str()).then_some(stage)
}

/// Every `crate::<stage>` a line of code (not a comment) names.
fn used_stages(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_use_group = false;
    for (n, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push((n + 1, name));
            } else if after.starts_with('{') {
                in_use_group = true;
            }
            rest = after;
        }
        if in_use_group {
            for word in code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                if STAGES.contains(&word) {
                    out.push((n + 1, word.to_string()));
                }
            }
            if code.contains("};") {
                in_use_group = false;
            }
        }
    }
    out
}

#[test]
fn data_flows_one_way_through_the_stages() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    source_files(&src, &mut files);
    let rank: BTreeMap<&str, usize> = STAGES.iter().enumerate().map(|(i, s)| (*s, i)).collect();
    let mut backwards = Vec::new();
    let mut checked = 0;
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let Some(stage) = stage_of(relative) else {
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for (line, used) in used_stages(&text) {
            let Some(&used_rank) = rank.get(used.as_str()) else {
                continue;
            };
            checked += 1;
            let peer = PEERS
                .iter()
                .any(|(a, b)| (*a == stage && *b == used) || (*b == stage && *a == used));
            if used_rank > rank[stage.as_str()] || peer {
                backwards.push(format!(
                    "src/{}:{line}: {stage} uses {used}",
                    relative.display()
                ));
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} crate paths found: the scan is broken"
    );
    assert!(
        backwards.is_empty(),
        "uses against the data flow:\n{}",
        backwards.join("\n")
    );
}

#[test]
fn the_scan_sees_paths_and_use_groups() {
    let text = "use crate::values::x;\n// crate::commands in a comment\nuse crate::{\n    guards::y,\n};\nlet a = crate::objects::b();";
    let found: Vec<String> = used_stages(text).into_iter().map(|(_, s)| s).collect();
    assert_eq!(found, ["values", "guards", "objects"]);
}

/// Longest a source file may be before its `#[cfg(test)]` line.
const MAX_LINES: usize = 800;

#[test]
fn no_source_file_is_over_800_lines_outside_tests() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    source_files(&src, &mut files);
    let mut long = Vec::new();
    for file in &files {
        if file.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let code_lines = text.lines().take_while(|l| *l != "#[cfg(test)]").count();
        if code_lines > MAX_LINES {
            long.push(format!(
                "{} ({code_lines} lines)",
                file.strip_prefix(&src).unwrap().display()
            ));
        }
    }
    assert!(files.len() > 60, "only {} files checked", files.len());
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines before `#[cfg(test)]`:\n{}",
        long.join("\n")
    );
}
