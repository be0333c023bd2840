//! Shared test helpers: locating external tools, running them, parsing manifests.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// An external tool the suite needs: from its environment variable (set by
/// `scripts/test.sh`), else from `.tools/` where `scripts/install-test-tools.sh` puts
/// it. A missing tool fails the test; nothing is skipped.
pub fn tool(env_var: &str, fallback: &str) -> PathBuf {
    if let Ok(p) = std::env::var(env_var) {
        if !p.is_empty() {
            return PathBuf::from(p);
        }
    }
    let local = repo_root().join(fallback);
    assert!(
        local.exists(),
        "external tool missing: set `{env_var}` or run `scripts/install-test-tools.sh` (expected `{}`); the suite never skips a test for a missing tool",
        local.display()
    );
    local
}

pub fn helm3() -> PathBuf {
    tool("SHIPSHAPE_HELM3", ".tools/bin/helm3")
}

pub fn helm4() -> PathBuf {
    tool("SHIPSHAPE_HELM4", ".tools/bin/helm4")
}

/// `rsvg-convert` (Debian `librsvg2-bin`, installed by `scripts/install-test-tools.sh`):
/// `SHIPSHAPE_RSVG_CONVERT`, else `/usr/bin/rsvg-convert`. Missing, the test fails.
pub fn rsvg_convert() -> PathBuf {
    if let Ok(p) = std::env::var("SHIPSHAPE_RSVG_CONVERT") {
        if !p.is_empty() {
            return PathBuf::from(p);
        }
    }
    let system = PathBuf::from("/usr/bin/rsvg-convert");
    assert!(
        system.exists(),
        "external tool missing: set `SHIPSHAPE_RSVG_CONVERT` or run `scripts/install-test-tools.sh` (apt-get install -y librsvg2-bin); the suite never skips a test for a missing tool"
    );
    system
}

pub fn kubernetes_validate() -> PathBuf {
    tool(
        "SHIPSHAPE_KUBERNETES_VALIDATE",
        ".tools/venv/bin/kubernetes-validate",
    )
}

/// Runs a program with arguments (never a shell) and returns (status, stdout, stderr).
pub fn run(program: &Path, args: &[&str], envs: &[(&str, &Path)]) -> (i32, String, String) {
    let mut cmd = Command::new(program);
    cmd.args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run `{}`: {e}", program.display()));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A Helm invocation isolated from the user's Helm configuration.
pub fn helm(helm: &Path, args: &[&str], scratch: &Path) -> (i32, String, String) {
    let home = scratch.join("helm-home");
    std::fs::create_dir_all(&home).expect("helm home");
    run(
        helm,
        args,
        &[
            ("HOME", &home),
            ("HELM_CACHE_HOME", &home.join("cache")),
            ("HELM_CONFIG_HOME", &home.join("config")),
            ("HELM_DATA_HOME", &home.join("data")),
        ],
    )
}

/// Parses a multi-document manifest stream into objects, sorted so that two
/// renders of the same objects compare equal whatever their order. Comments
/// (`# Source:`) and empty documents do not count.
pub fn parse_objects(stream: &str) -> Vec<Value> {
    let mut docs = Vec::new();
    let mut current = String::new();
    let mut flush = |text: &mut String| {
        if text
            .lines()
            .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        {
            let v: Value = serde_saphyr::from_str(text)
                .unwrap_or_else(|e| panic!("rendered document does not parse: {e}\n{text}"));
            docs.push(v);
        }
        text.clear();
    };
    for line in stream.lines() {
        if line == "---" {
            flush(&mut current);
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    flush(&mut current);
    docs.sort_by_key(|d| serde_json::to_string(d).unwrap_or_default());
    docs
}

/// A fresh scratch directory under the target directory, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = repo_root()
            .join("target")
            .join("test-scratch")
            .join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Scratch(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::env::var_os("SHIPSHAPE_KEEP_SCRATCH").is_some() {
            return;
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The example specs shipped with the project.
pub fn examples() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(repo_root().join("examples")).expect("examples/") {
        let dir = entry.expect("entry").path();
        let spec = dir.join("shipshape.yaml");
        if spec.exists() {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            out.push((name, spec));
        }
    }
    out.sort();
    assert!(!out.is_empty(), "no example under examples/");
    out
}

/// Whether golden files may be rewritten (`UPDATE_GOLDEN=1`, never in CI).
pub fn update_golden() -> bool {
    let asked = std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    assert!(!(asked && ci), "UPDATE_GOLDEN=1 is refused in CI");
    asked
}

/// Writes a spec's generated output (chart, renders, capacity reports) into `dir`.
pub fn write_generated(
    spec: &shipshape::spec::Spec,
    dir: &Path,
) -> std::collections::BTreeMap<String, String> {
    let files = shipshape::generate::generate_outputs(spec)
        .expect("generation")
        .files;
    for (rel, text) in &files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    files
}

/// Runs `helm template CHART ARGS...` under both Helms: every `refused` argument list
/// must fail on the values schema, every `accepted` one must render.
pub fn assert_helm_schema_verdicts(
    chart: &Path,
    scratch: &Path,
    refused: &[&[&str]],
    accepted: &[&[&str]],
) {
    let chart = chart.to_str().unwrap();
    for helm_bin in [helm3(), helm4()] {
        for args in refused {
            let mut all = vec!["template", chart];
            all.extend_from_slice(args);
            let (code, _, err) = helm(&helm_bin, &all, scratch);
            assert_ne!(code, 0, "{} accepted {args:?}", helm_bin.display());
            assert!(err.contains("schema"), "{}: {err}", helm_bin.display());
        }
        for args in accepted {
            let mut all = vec!["template", chart];
            all.extend_from_slice(args);
            let (code, _, err) = helm(&helm_bin, &all, scratch);
            assert_eq!(code, 0, "{} refused {args:?}: {err}", helm_bin.display());
        }
    }
}

/// A small seeded generator (SplitMix64), so failures reproduce.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}
