//! Hostile input, data-driven: every `tests/fixtures/hostile/*.yaml` is one case of
//! issue #14 (its `item`): the input (a tool script, files, a registry fault, a set-up
//! step), the command, the expected exit code and message fragments.
//!
//! Each case runs in a fresh folder `{dir}` holding the earlier output `{dir}/out`
//! (generated from the smallest spec, unless the case writes `out/` itself). After the
//! run: the exit code and the messages are the expected ones, nothing panicked, every
//! file under `{dir}` is byte-identical to before (a SHA-256 of each), nothing new is
//! beside the output (no staging folder, part file or lock file), the temp folder is
//! empty, and no process the case's tool started is still running.

use crate::fake_registry::{FakeRegistry, Fault};
use crate::support::*;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The smallest spec: generation takes milliseconds.
pub const SMALL_SPEC: &str = "tests/fixtures/spec/ok/minimal.yaml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    /// The line of issue #14 the case belongs to.
    item: u32,
    /// What the case shows.
    about: String,
    /// Files written under `{dir}` first; `out/...` ones replace the generated output.
    #[serde(default)]
    files: BTreeMap<String, String>,
    /// A script installed as `{tool}` (mode 0755).
    #[serde(default)]
    tool: Option<String>,
    /// A fault of the fake registry behind `{registry}`.
    #[serde(default)]
    registry: Option<String>,
    /// Set-up steps: `immutable PATH`, `folder PATH` (an empty folder made, such as a
    /// stale one in the earlier output, which a rerun then replaces), `hold-lock`,
    /// `file-size-limit`.
    #[serde(default)]
    setup: Vec<String>,
    /// `TERM` or `INT`, sent to shipshape once the tool has written `$STARTED`.
    #[serde(default)]
    signal: Option<String>,
    /// Standard input of the command.
    #[serde(default)]
    stdin: String,
    /// Arguments of `shipshape`, with placeholders.
    command: Vec<String>,
    /// Expected exit code.
    exit: i32,
    /// Fragments the output (stdout and stderr) must contain.
    message: Vec<String>,
    /// A sibling of the output allowed to stay (the case's message names it).
    #[serde(default)]
    leftover: Option<String>,
    /// Paths under `{dir}` the run may remove: what the set-up put into the earlier
    /// output for the run to replace.
    #[serde(default)]
    replaced: Vec<String>,
}

fn cases() -> Vec<(String, Case)> {
    let dir = repo_root().join("tests/fixtures/hostile");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            let case: Case =
                serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (name, case)
        })
        .collect()
}

/// Every file, folder and link under `root` by relative path: a SHA-256 for a file.
pub fn snapshot(root: &Path) -> BTreeMap<String, String> {
    use sha2::{Digest, Sha256};
    let mut out = BTreeMap::new();
    fn visit(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let kind = entry.file_type().unwrap();
            if kind.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, format!("link {}", target.display()));
            } else if kind.is_dir() {
                out.insert(rel, "folder".into());
                visit(root, &path, out);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                let hex: String = Sha256::digest(&bytes)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                out.insert(rel, hex);
            }
        }
    }
    visit(root, root, &mut out);
    out
}

/// Whether process `pid` is gone (a zombie counts as gone).
pub fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
    }
}

/// `{repeat N TEXT}` expanded to TEXT N times.
fn expand_repeats(arg: &str) -> String {
    let mut out = String::new();
    let mut rest = arg;
    while let Some(start) = rest.find("{repeat ") {
        out.push_str(&rest[..start]);
        let after = &rest[start + "{repeat ".len()..];
        let end = after.find('}').expect("closing `}` of {repeat N TEXT}");
        let (count, text) = after[..end].split_once(' ').expect("{repeat N TEXT}");
        out.push_str(&text.repeat(count.parse().expect("N in {repeat N TEXT}")));
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Clears the immutable flag under `dir` when a case is done, whatever happened.
struct Mutable(PathBuf);

impl Drop for Mutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr")
            .arg("-R")
            .arg("-i")
            .arg(&self.0)
            .status();
    }
}

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs shipshape, feeds `stdin`, sends `signal` once `started` exists, and waits up to
/// 60 s.
fn run_shipshape(
    command: &mut Command,
    stdin: &str,
    signal: Option<i32>,
    started: &Path,
) -> Outcome {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start shipshape");
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.as_bytes().to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut signalled = signal.is_none();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if !signalled && started.exists() {
            // SAFETY: signals the child this function started and has not reaped.
            unsafe {
                libc::kill(child.id() as i32, signal.unwrap());
            }
            signalled = true;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("shipshape did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = writer.join();
    use std::os::unix::process::ExitStatusExt;
    Outcome {
        code: status
            .code()
            .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn run_case(name: &str, case: &Case, scratch: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let root = scratch.join(name);
    let (dir, tmp, log) = (root.join("work"), root.join("tmp"), root.join("log"));
    for d in [&dir, &tmp, &log] {
        std::fs::create_dir_all(d).unwrap();
    }
    let bin = Path::new(env!("CARGO_BIN_EXE_shipshape"));
    let spec = repo_root().join(SMALL_SPEC);
    let out = dir.join("out");
    if !case.files.keys().any(|k| k.starts_with("out/")) {
        let (code, _, err) = run(
            bin,
            &[
                "--spec",
                spec.to_str().unwrap(),
                "generate",
                "--out",
                out.to_str().unwrap(),
            ],
            &[],
        );
        assert_eq!(code, 0, "{name}: generating the earlier output: {err}");
    }
    for (rel, text) in &case.files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, expand_repeats(text)).unwrap();
    }
    let tool = dir.join("tool");
    if let Some(script) = &case.tool {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(&tool, script).unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let registry = case
        .registry
        .as_deref()
        .map(|fault| FakeRegistry::start(Fault::from_name(fault)));
    let _mutable = Mutable(dir.clone());
    let mut lock_holder = None;
    let mut size_limit = false;
    for step in &case.setup {
        match step.split_once(' ').unwrap_or((step, "")) {
            ("immutable", path) => {
                let status = Command::new("chattr")
                    .arg("+i")
                    .arg(dir.join(path))
                    .status()
                    .expect("chattr");
                assert!(status.success(), "{name}: chattr +i {path} failed");
            }
            ("folder", path) => std::fs::create_dir_all(dir.join(path)).unwrap(),
            ("hold-lock", "") => {
                let file = std::fs::File::create(dir.join(".out.shipshape-lock")).unwrap();
                // SAFETY: `flock` on a descriptor this test owns.
                let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
                assert_eq!(rc, 0, "{name}: cannot take the lock");
                lock_holder = Some(file);
            }
            ("file-size-limit", "") => size_limit = true,
            other => panic!("{name}: unknown set-up step {other:?}"),
        }
    }
    let substitute = |arg: &str| {
        let mut arg = arg
            .replace("{spec}", spec.to_str().unwrap())
            .replace("{out}", out.to_str().unwrap())
            .replace("{dir}", dir.to_str().unwrap())
            .replace("{tool}", tool.to_str().unwrap());
        if let Some(r) = &registry {
            arg = arg.replace("{registry}", &r.reference());
        }
        expand_repeats(&arg)
    };
    let args: Vec<String> = case.command.iter().map(|a| substitute(a)).collect();
    let before = snapshot(&dir);

    let mut command = if size_limit {
        // A full disk, as far as shipshape can tell: writes past 1 KiB fail (EFBIG).
        let mut c = Command::new("/bin/sh");
        c.arg("-c")
            .arg("trap '' XFSZ; ulimit -f 2; exec \"$0\" \"$@\"")
            .arg(bin);
        c
    } else {
        Command::new(bin)
    };
    command
        .args(&args)
        .env("TMPDIR", &tmp)
        .env("PIDS", log.join("pids"))
        .env("STARTED", log.join("started"))
        .current_dir(&dir);
    let signal = case.signal.as_deref().map(|s| match s {
        "TERM" => libc::SIGTERM,
        "INT" => libc::SIGINT,
        other => panic!("{name}: unknown signal {other}"),
    });
    let outcome = run_shipshape(&mut command, &case.stdin, signal, &log.join("started"));
    drop(lock_holder);

    let said = format!("{}{}", outcome.stdout, outcome.stderr);
    if outcome.code != case.exit {
        problems.push(format!("exit {} instead of {}", outcome.code, case.exit));
    }
    for fragment in &case.message {
        if !said.contains(fragment.as_str()) {
            problems.push(format!("no `{fragment}` in the output"));
        }
    }
    if said.contains("panicked") || outcome.code == 101 || outcome.code == 134 {
        problems.push("it panicked or aborted".into());
    }
    let after = snapshot(&dir);
    let allowed = |path: &String| {
        case.leftover
            .as_deref()
            .is_some_and(|prefix| path.starts_with(prefix))
            || (case.replaced.contains(path) && !after.contains_key(path))
    };
    let changed: Vec<&String> = before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k) && !allowed(k))
        .collect();
    if !changed.is_empty() {
        problems.push(format!("files changed, appeared or vanished: {changed:?}"));
    }
    if let Some(prefix) = &case.leftover {
        if !after.keys().any(|k| k.starts_with(prefix.as_str())) {
            problems.push(format!("the expected leftover `{prefix}` is not there"));
        }
    }
    let temp: Vec<String> = snapshot(&tmp).into_keys().collect();
    if !temp.is_empty() {
        problems.push(format!("left in the temp folder: {temp:?}"));
    }
    let pids = std::fs::read_to_string(log.join("pids")).unwrap_or_default();
    for pid in pids
        .split_whitespace()
        .filter_map(|p| p.parse::<u32>().ok())
    {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !process_gone(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        if !process_gone(pid) {
            problems.push(format!("process {pid} the tool started is still running"));
            // SAFETY: ends the stray process so it does not outlive the test.
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
            }
        }
    }
    if case.tool.is_some() && case.signal.is_some() && pids.trim().is_empty() {
        problems.push("the tool never ran".into());
    }
    problems
        .into_iter()
        .map(|p| {
            format!(
                "{name} (item {}, {}): {p}\n  command: shipshape {}\n  stdout: {}\n  stderr: {}",
                case.item,
                case.about,
                case.command.join(" "),
                outcome.stdout.trim_end(),
                outcome.stderr.trim_end()
            )
        })
        .collect()
}

#[test]
fn hostile_cases_are_refused_and_leave_everything_as_it_was() {
    let all = cases();
    let items: std::collections::BTreeSet<u32> = all.iter().map(|(_, c)| c.item).collect();
    assert_eq!(
        items.into_iter().collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        "one case or more for every line of the issue"
    );
    let scratch = Scratch::new("hostile");
    let failures: Vec<String> = all
        .iter()
        .flat_map(|(name, case)| run_case(name, case, scratch.path()))
        .collect();
    assert!(
        failures.is_empty(),
        "{} problem(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
