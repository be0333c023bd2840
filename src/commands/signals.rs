//! Ctrl-C, SIGTERM and SIGHUP end a run cleanly: running child process groups are
//! killed, the temporary files and folders a command registered are deleted, and
//! the process exits with `128 + signal` (130 for Ctrl-C, 143 for SIGTERM).
//!
//! A command registers what it creates ([`register`]; the registration ends when the
//! returned guard drops) and wraps steps that must not be cut in half, such as
//! swapping the output folder, in [`critical`]: the handler waits for them.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, Once};

/// Paths to delete when a signal ends the run (one entry per registration).
static REGISTERED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn registered() -> MutexGuard<'static, Vec<PathBuf>> {
    REGISTERED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts the thread that handles SIGINT, SIGTERM and SIGHUP (once per process).
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            // Without a handler the default action applies: the run ends, and what
            // it registered may stay behind. Not worth failing the command for.
            return;
        };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                clean_up_and_exit(signal);
            }
        });
    });
}

fn clean_up_and_exit(signal: i32) -> ! {
    // Held until the process ends: no critical step starts or is left half done.
    let paths = registered();
    crate::external::process::kill_running_children();
    for path in paths.iter() {
        let _ = if path.is_dir() {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_file(path)
        };
    }
    let name = match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "SIGHUP",
    };
    eprintln!("error: interrupted by {name}; stopped child processes and deleted temporary files");
    std::process::exit(128 + signal);
}

/// Deletes `path` (file or folder) if a signal ends the run before the guard drops.
#[must_use = "the registration ends when the guard drops"]
pub struct Registered(PathBuf);

/// Registers `path` for deletion on a signal.
pub fn register(path: &Path) -> Registered {
    registered().push(path.to_path_buf());
    Registered(path.to_path_buf())
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut paths = registered();
        if let Some(i) = paths.iter().rposition(|p| *p == self.0) {
            paths.remove(i);
        }
    }
}

/// Runs `step` with signal handling held off, so it completes or does not start.
pub fn critical<T>(step: impl FnOnce() -> T) -> T {
    let _held = registered();
    step()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registrations_end_with_their_guard() {
        let path = Path::new("/nonexistent/shipshape-signal-test");
        let count = || registered().iter().filter(|p| *p == path).count();
        let a = register(path);
        let b = register(path);
        assert_eq!(count(), 2);
        drop(a);
        assert_eq!(count(), 1);
        drop(b);
        assert_eq!(count(), 0);
        assert_eq!(critical(|| 7), 7);
    }
}
