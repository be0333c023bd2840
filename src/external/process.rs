//! Running external programs: the only place in the crate that starts a process.
//!
//! Programs run through [`std::process::Command`] with an argument list, never through a
//! shell, each in a process group of its own. Every run has a timeout: the child is
//! polled, and when the deadline passes its whole group (a wrapper script's children
//! too) is killed and the child reaped. Standard output and standard error are drained
//! on their own threads, each up to [`OUTPUT_LIMIT`] bytes (a program that writes more
//! is stopped), and standard input is fed on a third, so a child that writes a lot, or
//! never reads its input, cannot block the caller past the deadline. When the child
//! exits, what is left of its group is killed too, so nothing it started outlives the
//! run. [`kill_running_children`] kills every running group, for a signal handler.

use std::collections::BTreeSet;
use std::io::{self, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Longest pause between two checks of a running child.
const POLL_INTERVAL: Duration = Duration::from_millis(10);

/// The most a program may write to standard output, and to standard error, before it is
/// stopped: far above what kubeconform prints for any chart (about 1 KiB per object).
pub const OUTPUT_LIMIT: usize = 16 << 20;

/// Process groups of the children running now.
static RUNNING: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn running() -> MutexGuard<'static, BTreeSet<i32>> {
    RUNNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Kills the process group of every child running now (for a signal handler that is
/// about to end the process). The groups stay listed, so no new child starts.
pub fn kill_running_children() {
    let groups = running();
    for &group in groups.iter() {
        kill_group(group);
    }
    // Keep the lock: a thread about to spawn waits until the process exits.
    std::mem::forget(groups);
}

fn kill_group(group: i32) {
    // SAFETY: `kill` with a negative id signals a process group; no memory involved.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
    }
}

/// What a finished program printed, and how it ended.
///
/// A non-zero exit status is not an error here: the caller decides what it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessOutput {
    /// Exit code; `None` when the program was ended by a signal.
    pub status: Option<i32>,
    /// Standard output, decoded as UTF-8 (invalid sequences replaced).
    pub stdout: String,
    /// Standard error, decoded as UTF-8 (invalid sequences replaced).
    pub stderr: String,
}

impl ProcessOutput {
    /// Whether the program exited with status 0.
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }
}

/// Why a program could not be run to completion.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The program does not exist (not on `PATH`, or no file at the given path).
    #[error("program `{}` not found: install it and put it on PATH, or pass its full path", program.display())]
    NotFound {
        /// The program as it was given.
        program: PathBuf,
    },
    /// The program is a script whose `#!` interpreter does not exist.
    #[error("`{}` cannot start: its interpreter `{interpreter}` (the script's `#!` line) does not exist; install it or correct the `#!` line", program.display())]
    InterpreterMissing {
        /// The script as it was given.
        program: PathBuf,
        /// The interpreter its first line names.
        interpreter: String,
    },
    /// The program exists but could not be started (for example it is not executable).
    #[error("failed to start `{}`: {source}", program.display())]
    Spawn {
        /// The program as it was given.
        program: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// The program ran past its timeout; its process group was killed and it was reaped.
    #[error(
        "`{}` timed out after {seconds} s and was killed",
        display_command(program, args)
    )]
    TimedOut {
        /// The program as it was given.
        program: PathBuf,
        /// Its full argument list.
        args: Vec<String>,
        /// The timeout, in seconds.
        seconds: f64,
    },
    /// The program wrote more than [`OUTPUT_LIMIT`] bytes to one stream; it was killed.
    #[error(
        "`{}` wrote more than {} MiB to {stream} and was killed",
        display_command(program, args),
        OUTPUT_LIMIT >> 20
    )]
    OutputTooLarge {
        /// The program as it was given.
        program: PathBuf,
        /// Its full argument list.
        args: Vec<String>,
        /// `standard output` or `standard error`.
        stream: &'static str,
    },
    /// Feeding, reading or waiting for the program failed.
    #[error("i/o error while running `{}`: {source}", program.display())]
    Io {
        /// The program as it was given.
        program: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

/// Runs `program` with `args`, feeds it `stdin` (or `/dev/null` when `None`), and collects
/// its output.
///
/// Returns the output for any exit status. Fails with [`ProcessError::TimedOut`] when the
/// program, or a child of it still holding its output pipes, is not done within `timeout`
/// (a timeout too large to add to the clock means none), and with
/// [`ProcessError::OutputTooLarge`] when it writes more than [`OUTPUT_LIMIT`] bytes to a
/// stream. Either way its process group is killed and nothing it started is left running.
pub fn run_process(
    program: &Path,
    args: &[String],
    stdin: Option<&[u8]>,
    timeout: Duration,
) -> Result<ProcessOutput, ProcessError> {
    let deadline = Instant::now().checked_add(timeout);
    let timed_out = || ProcessError::TimedOut {
        program: program.to_path_buf(),
        args: args.to_vec(),
        seconds: timeout.as_secs_f64(),
    };
    let io_error = |source: io::Error| ProcessError::Io {
        program: program.to_path_buf(),
        source,
    };

    let mut child = {
        let mut groups = running();
        let child = Command::new(program)
            .args(args)
            .process_group(0)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| spawn_error(program, source))?;
        groups.insert(child.id() as i32);
        Group {
            child,
            reaped: false,
        }
    };

    let writer = match (child.child.stdin.take(), stdin) {
        (Some(mut pipe), Some(bytes)) => {
            let bytes = bytes.to_vec();
            Some(thread::spawn(move || -> io::Result<()> {
                match pipe.write_all(&bytes) {
                    // The child may exit without reading all of its input; that is its call.
                    Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
                    other => other,
                }
                // `pipe` is dropped here, which closes the child's standard input.
            }))
        }
        _ => None,
    };
    let overflow = Arc::new(AtomicBool::new(false));
    let stdout_reader = child
        .child
        .stdout
        .take()
        .map(|p| spawn_reader(p, Arc::clone(&overflow)));
    let stderr_reader = child
        .child
        .stderr
        .take()
        .map(|p| spawn_reader(p, Arc::clone(&overflow)));
    let too_large = |reader: &Option<Reader>| {
        let stream = if reader.as_ref().is_some_and(|r| r.overflowed()) {
            "standard output"
        } else {
            "standard error"
        };
        ProcessError::OutputTooLarge {
            program: program.to_path_buf(),
            args: args.to_vec(),
            stream,
        }
    };

    // Wait for the child, then for the pipes (a grandchild may hold them), within the
    // deadline; `child` kills the group when it drops on any early return.
    let pipes_open = || {
        !(stdout_reader.as_ref().is_none_or(Reader::is_finished)
            && stderr_reader.as_ref().is_none_or(Reader::is_finished))
    };
    let mut status: Option<ExitStatus> = None;
    loop {
        if overflow.load(Ordering::SeqCst) {
            return Err(too_large(&stdout_reader));
        }
        if status.is_none() {
            status = child.exited().map_err(io_error)?;
        }
        if status.is_some() && !pipes_open() {
            break;
        }
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            return Err(timed_out());
        }
        let pause = deadline.map_or(POLL_INTERVAL, |d| POLL_INTERVAL.min(d - now));
        thread::sleep(pause);
    }
    let status = status.unwrap_or_else(|| unreachable!("the loop ends only after the exit"));
    drop(child);

    let stdout = join_reader(stdout_reader).map_err(io_error)?;
    let stderr = join_reader(stderr_reader).map_err(io_error)?;
    if let Some(writer) = writer {
        writer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("stdin writer thread panicked")))
            .map_err(io_error)?;
    }

    Ok(ProcessOutput {
        status: status.code(),
        stdout,
        stderr,
    })
}

/// A spawned child in its own process group. Dropping it kills the whole group and
/// reaps the child, whether it is still running or not.
struct Group {
    child: Child,
    reaped: bool,
}

impl Group {
    /// The child's exit status once it has exited. Until then the child is not reaped,
    /// so its process id, which names the group, cannot be reused: once it has exited,
    /// what is left of its group is killed, and only then is it reaped.
    fn exited(&mut self) -> io::Result<Option<ExitStatus>> {
        // SAFETY: `waitid` writes into the zeroed `siginfo_t` it is given.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                self.child.id() as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: filled in by `waitid` above; 0 means the child has not exited.
        if unsafe { info.si_pid() } == 0 {
            return Ok(None);
        }
        kill_group(self.child.id() as i32);
        let status = self.child.wait()?;
        self.reaped = true;
        Ok(Some(status))
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let id = self.child.id() as i32;
        if !self.reaped {
            kill_group(id);
            // Fails only if the child was already reaped, which is fine.
            let _ = self.child.wait();
        }
        running().remove(&id);
    }
}

/// The error of a failed spawn: a missing program, a script whose interpreter is
/// missing (the system says "not found" for both), or another reason.
fn spawn_error(program: &Path, source: io::Error) -> ProcessError {
    if source.kind() != io::ErrorKind::NotFound {
        return ProcessError::Spawn {
            program: program.to_path_buf(),
            source,
        };
    }
    let on_disk = if program.components().count() > 1 {
        Some(program.to_path_buf())
    } else {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(program))
                .find(|p| p.is_file())
        })
    };
    match on_disk.as_deref().and_then(interpreter_of) {
        Some(interpreter) => ProcessError::InterpreterMissing {
            program: program.to_path_buf(),
            interpreter,
        },
        None => ProcessError::NotFound {
            program: program.to_path_buf(),
        },
    }
}

/// The interpreter a script's `#!` line names, if the file starts with one.
fn interpreter_of(path: &Path) -> Option<String> {
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next()?;
    let text = String::from_utf8_lossy(line);
    text.split_whitespace().next().map(str::to_string)
}

/// Formats a program and its arguments as one copy-pasteable command line, quoting each
/// word that a POSIX shell would otherwise split or expand.
pub fn display_command(program: &Path, args: &[String]) -> String {
    let mut line = shell_quote(&program.display().to_string());
    for arg in args {
        line.push(' ');
        line.push_str(&shell_quote(arg));
    }
    line
}

/// Quotes `word` in single quotes when it holds anything but plain characters.
fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A thread reading one pipe to its end, keeping at most [`OUTPUT_LIMIT`] bytes.
struct Reader {
    handle: JoinHandle<io::Result<Vec<u8>>>,
    overflowed: Arc<AtomicBool>,
}

impl Reader {
    fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }

    fn overflowed(&self) -> bool {
        self.overflowed.load(Ordering::SeqCst)
    }
}

/// Reads `pipe` to its end on a new thread; past [`OUTPUT_LIMIT`] bytes it stops and
/// sets its own flag and `any_overflow`.
fn spawn_reader<R: Read + Send + 'static>(pipe: R, any_overflow: Arc<AtomicBool>) -> Reader {
    let overflowed = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&overflowed);
    let handle = thread::spawn(move || {
        let mut buf = Vec::new();
        let limit = OUTPUT_LIMIT as u64 + 1;
        pipe.take(limit).read_to_end(&mut buf)?;
        if buf.len() > OUTPUT_LIMIT {
            buf.truncate(OUTPUT_LIMIT);
            flag.store(true, Ordering::SeqCst);
            any_overflow.store(true, Ordering::SeqCst);
        }
        Ok(buf)
    });
    Reader { handle, overflowed }
}

/// Collects what a reader thread read, as lossy UTF-8.
fn join_reader(reader: Option<Reader>) -> io::Result<String> {
    let Some(reader) = reader else {
        return Ok(String::new());
    };
    let bytes = reader
        .handle
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("output reader thread panicked")))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: Duration = Duration::from_secs(10);

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn sh(script: &str) -> Result<ProcessOutput, ProcessError> {
        run_process(Path::new("sh"), &args(&["-c", script]), None, LONG)
    }

    #[test]
    fn true_exits_zero_with_no_output() {
        let out = run_process(Path::new("true"), &[], None, LONG).expect("run `true`");
        assert_eq!(
            out,
            ProcessOutput {
                status: Some(0),
                stdout: String::new(),
                stderr: String::new(),
            }
        );
        assert!(out.success());
    }

    #[test]
    fn false_is_output_not_error() {
        let out = run_process(Path::new("false"), &[], None, LONG).expect("run `false`");
        assert_eq!(out.status, Some(1));
        assert!(!out.success());
    }

    #[test]
    fn separates_stdout_stderr_and_exit_code() {
        let out = sh("echo x; echo y >&2; exit 3").expect("run sh");
        assert_eq!(out.status, Some(3));
        assert_eq!(out.stdout, "x\n");
        assert_eq!(out.stderr, "y\n");
    }

    #[test]
    fn arguments_are_not_interpreted_by_a_shell() {
        let out = run_process(
            Path::new("printf"),
            &args(&["%s|", "a b", "$HOME", ";", "*"]),
            None,
            LONG,
        )
        .expect("run printf");
        assert_eq!(out.stdout, "a b|$HOME|;|*|");
    }

    #[test]
    fn signal_death_has_no_exit_code() {
        let out = sh("kill -9 $$").expect("run sh");
        assert_eq!(out.status, None);
    }

    #[test]
    fn chatty_child_does_not_deadlock() {
        // Far more than a pipe buffer (64 KiB) on both streams.
        let out =
            sh("head -c 1000000 /dev/zero | tr '\\0' a; head -c 500000 /dev/zero | tr '\\0' b >&2")
                .expect("run sh");
        assert_eq!(out.status, Some(0));
        assert_eq!(out.stdout.len(), 1_000_000);
        assert_eq!(out.stderr.len(), 500_000);
        assert!(out.stderr.bytes().all(|b| b == b'b'));
    }

    #[test]
    fn timeout_kills_the_child_quickly() {
        let start = Instant::now();
        let err = run_process(
            Path::new("sleep"),
            &args(&["5"]),
            None,
            Duration::from_millis(200),
        )
        .expect_err("sleep must time out");
        let elapsed = start.elapsed();
        assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
        match &err {
            ProcessError::TimedOut {
                program,
                args,
                seconds,
            } => {
                assert_eq!(program, Path::new("sleep"));
                assert_eq!(args, &["5".to_string()]);
                assert!((seconds - 0.2).abs() < 1e-9);
            }
            other => panic!("expected TimedOut, got {other:?}"),
        }
        assert_eq!(
            err.to_string(),
            "`sleep 5` timed out after 0.2 s and was killed"
        );
    }

    /// Whether process `pid` is gone (or a zombie waiting for its parent).
    fn dead(pid: u32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
        }
    }

    /// Waits up to 5 s for `pid` to be gone.
    fn ends_soon(pid: u32) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if dead(pid) {
                return true;
            }
            thread::sleep(Duration::from_millis(10));
        }
        false
    }

    fn scratch_file(tag: &str) -> PathBuf {
        std::env::temp_dir().join(format!("shipshape-process-{tag}-{}", std::process::id()))
    }

    #[test]
    fn a_grandchild_is_killed_when_the_child_exits() {
        // The shell exits at once but leaves `sleep` running with our stdout.
        let start = Instant::now();
        let out = sh("sleep 30 & echo $!").expect("run sh");
        assert!(start.elapsed() < Duration::from_secs(5));
        let pid: u32 = out.stdout.trim().parse().unwrap();
        assert!(ends_soon(pid), "the background sleep {pid} survived");
    }

    #[test]
    fn timeout_kills_the_whole_process_group() {
        let file = scratch_file("group");
        let script = format!("sleep 30 & echo $! > '{}'; wait", file.display());
        let start = Instant::now();
        let err = run_process(
            Path::new("sh"),
            &args(&["-c", &script]),
            None,
            Duration::from_millis(300),
        )
        .expect_err("must time out");
        assert!(matches!(err, ProcessError::TimedOut { .. }), "{err:?}");
        assert!(start.elapsed() < Duration::from_secs(5));
        let pid: u32 = std::fs::read_to_string(&file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        std::fs::remove_file(&file).unwrap();
        assert!(ends_soon(pid), "the wrapper's sleep {pid} survived");
    }

    #[test]
    fn a_flood_of_output_is_cut_off() {
        let start = Instant::now();
        let err = sh("yes").expect_err("must be stopped");
        assert!(
            matches!(
                &err,
                ProcessError::OutputTooLarge {
                    stream: "standard output",
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "`sh -c yes` wrote more than 16 MiB to standard output and was killed"
        );
        assert!(start.elapsed() < Duration::from_secs(5));
        let err = sh("yes >&2").expect_err("must be stopped");
        assert!(err.to_string().contains("to standard error"), "{err}");
    }

    #[test]
    fn a_script_without_its_interpreter_says_so() {
        use std::os::unix::fs::PermissionsExt;
        let path = scratch_file("interp");
        std::fs::write(&path, "#!/nonexistent/bin/interp -x\necho hi\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = run_process(&path, &[], None, LONG).expect_err("cannot start");
        std::fs::remove_file(&path).unwrap();
        assert!(
            matches!(&err, ProcessError::InterpreterMissing { interpreter, .. } if interpreter == "/nonexistent/bin/interp"),
            "{err:?}"
        );
        assert!(
            err.to_string()
                .contains("its interpreter `/nonexistent/bin/interp`"),
            "{err}"
        );
    }

    #[test]
    fn a_timeout_past_the_end_of_time_is_no_timeout() {
        let out = run_process(Path::new("true"), &[], None, Duration::from_secs(u64::MAX))
            .expect("run true");
        assert!(out.success());
    }

    #[test]
    fn missing_binary_is_not_found() {
        let program = Path::new("shipshape-no-such-program-4242");
        let err = run_process(program, &[], None, LONG).expect_err("must fail");
        assert!(
            matches!(&err, ProcessError::NotFound { program: p } if p == program),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "program `shipshape-no-such-program-4242` not found: install it and put it on PATH, or pass its full path"
        );
    }

    #[test]
    fn non_executable_file_is_a_spawn_error() {
        let path = std::env::temp_dir().join(format!("shipshape-not-exec-{}", std::process::id()));
        std::fs::write(&path, "data").expect("write temp file");
        let result = run_process(&path, &[], None, LONG);
        std::fs::remove_file(&path).expect("remove temp file");
        let err = result.expect_err("a data file cannot be run");
        assert!(matches!(err, ProcessError::Spawn { .. }), "{err:?}");
        assert!(
            err.to_string()
                .starts_with(&format!("failed to start `{}`: ", path.display())),
            "{err}"
        );
    }

    #[test]
    fn stdin_is_piped() {
        let out =
            run_process(Path::new("cat"), &[], Some(b"hello\nworld\n"), LONG).expect("run cat");
        assert_eq!(out.status, Some(0));
        assert_eq!(out.stdout, "hello\nworld\n");
    }

    #[test]
    fn large_stdin_is_piped_while_output_is_drained() {
        let input = vec![b'z'; 2_000_000];
        let out = run_process(Path::new("cat"), &[], Some(&input), LONG).expect("run cat");
        assert_eq!(out.stdout.len(), input.len());
    }

    #[test]
    fn child_that_ignores_stdin_is_fine() {
        let input = vec![b'z'; 1_000_000];
        let out = run_process(Path::new("true"), &[], Some(&input), LONG).expect("run true");
        assert_eq!(out.status, Some(0));
    }

    #[test]
    fn no_stdin_means_empty_stdin() {
        let out = run_process(Path::new("cat"), &[], None, LONG).expect("run cat");
        assert_eq!(out.stdout, "");
        assert_eq!(out.status, Some(0));
    }

    #[test]
    fn display_command_quotes_what_a_shell_would_split() {
        assert_eq!(
            display_command(
                Path::new("kubeconform"),
                &args(&["-schema-location", "a b/{{ .X }}.json", "it's", ""])
            ),
            r"kubeconform -schema-location 'a b/{{ .X }}.json' 'it'\''s' ''"
        );
    }
}
