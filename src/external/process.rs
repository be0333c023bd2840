//! Running external programs: the only place in the crate that starts a process.
//!
//! Programs run through [`std::process::Command`] with an argument list, never through a
//! shell. Every run has a timeout: the child is polled with `try_wait`, killed and reaped
//! when the deadline passes. Standard output and standard error are drained on their own
//! threads (and standard input is fed on a third), so a child that writes a lot, or that
//! never reads its input, cannot block the caller past the deadline.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Longest pause between two checks of a running child.
const POLL_INTERVAL: Duration = Duration::from_millis(10);

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
    /// The program exists but could not be started (for example it is not executable).
    #[error("failed to start `{}`: {source}", program.display())]
    Spawn {
        /// The program as it was given.
        program: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
    /// The program ran past its timeout; it was killed and reaped.
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
/// program, or a child of it still holding its output pipes, is not done within `timeout`.
pub fn run_process(
    program: &Path,
    args: &[String],
    stdin: Option<&[u8]>,
    timeout: Duration,
) -> Result<ProcessOutput, ProcessError> {
    let deadline = Instant::now() + timeout;
    let timed_out = || ProcessError::TimedOut {
        program: program.to_path_buf(),
        args: args.to_vec(),
        seconds: timeout.as_secs_f64(),
    };
    let io_error = |source: io::Error| ProcessError::Io {
        program: program.to_path_buf(),
        source,
    };

    let mut child = Command::new(program)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| {
            if source.kind() == io::ErrorKind::NotFound {
                ProcessError::NotFound {
                    program: program.to_path_buf(),
                }
            } else {
                ProcessError::Spawn {
                    program: program.to_path_buf(),
                    source,
                }
            }
        })?;

    let writer = match (child.stdin.take(), stdin) {
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
    let stdout_reader = child.stdout.take().map(spawn_reader);
    let stderr_reader = child.stderr.take().map(spawn_reader);

    let status = match wait_until(&mut child, deadline).map_err(io_error)? {
        Some(status) => status,
        None => {
            kill_and_reap(&mut child);
            // The reader threads are left to finish on their own: a grandchild may still
            // hold the pipes open, and waiting for it would defeat the timeout.
            return Err(timed_out());
        }
    };

    // A grandchild that outlives the child can keep the pipes open; do not wait for it
    // past the deadline.
    let pipes_open = || {
        !(stdout_reader.as_ref().is_none_or(JoinHandle::is_finished)
            && stderr_reader.as_ref().is_none_or(JoinHandle::is_finished))
    };
    while pipes_open() {
        let now = Instant::now();
        if now >= deadline {
            return Err(timed_out());
        }
        thread::sleep(POLL_INTERVAL.min(deadline - now));
    }

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

/// Polls `child` until it exits (`Some`) or `deadline` passes (`None`).
fn wait_until(child: &mut Child, deadline: Instant) -> io::Result<Option<ExitStatus>> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        thread::sleep(POLL_INTERVAL.min(deadline - now));
    }
}

/// Kills `child` and waits for it so that no zombie is left behind.
fn kill_and_reap(child: &mut Child) {
    // Either call can fail only if the child already exited, which is what we want.
    let _ = child.kill();
    let _ = child.wait();
}

/// Reads `pipe` to its end on a new thread.
fn spawn_reader<R: Read + Send + 'static>(mut pipe: R) -> JoinHandle<io::Result<Vec<u8>>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        pipe.read_to_end(&mut buf)?;
        Ok(buf)
    })
}

/// Collects what a reader thread read, as lossy UTF-8.
fn join_reader(reader: Option<JoinHandle<io::Result<Vec<u8>>>>) -> io::Result<String> {
    let Some(reader) = reader else {
        return Ok(String::new());
    };
    let bytes = reader
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

    #[test]
    fn timeout_is_not_defeated_by_a_grandchild_holding_the_pipes() {
        // The shell exits at once but leaves `sleep` running with our stdout.
        let start = Instant::now();
        let err = run_process(
            Path::new("sh"),
            &args(&["-c", "sleep 5 & echo started"]),
            None,
            Duration::from_millis(300),
        )
        .expect_err("must time out waiting for the pipes");
        assert!(matches!(err, ProcessError::TimedOut { .. }), "{err:?}");
        assert!(start.elapsed() < Duration::from_secs(2));
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
