//! The output folder of `generate`: owned only when it carries shipshape's marker,
//! written under a lock beside it, and put in place by one atomic exchange.
//!
//! A run on `DIR/out`:
//! 1. resolves `DIR/out` to a real folder path (`..` and symlinks resolved), so every
//!    later step names the same folder;
//! 2. takes `DIR/.out.shipshape-lock` (`flock`, never waiting: a second run is
//!    refused with "another shipshape run holds `DIR/out`");
//! 3. refuses a non-empty `DIR/out` without [`OUTPUT_MARKER`];
//! 4. compares the files, as they are ready, with those of `DIR/out`; while every one
//!    is unchanged, nothing is written. When `DIR/out` holds exactly the new files
//!    and the folders they are in, nothing else, it is left in place as it is and
//!    steps 5 to 7 are skipped (a rerun on an unchanged spec touches no folder);
//! 5. from the first file that differs (at once when there is no `DIR/out`), writes
//!    the new tree into `DIR/.out.shipshape-new-PID`, using every core, hard-linking
//!    each file whose bytes are unchanged from `DIR/out` (never writing into a linked
//!    file); files are added as they are ready ([`Staging`]), so `generate` writes
//!    the chart while it still reviews the presets;
//! 6. swaps it with `DIR/out` in one step (Linux `renameat2(RENAME_EXCHANGE)`;
//!    elsewhere, or where the file system lacks it, two renames with a rollback);
//! 7. deletes the old tree and the lock file.
//!
//! A failure before step 6 leaves `DIR/out` as it was; after step 6 the new output is
//! in place whatever happens. Staging folders and the lock file are registered with
//! [`super::signals`], so Ctrl-C or SIGTERM removes them too.
//!
//! [`output_drift`] is what `check` reports: how a committed output differs from a
//! fresh one.

use super::signals;
use super::CommandError;
use crate::generate::{OutputFiles, OUTPUT_MARKER, OUTPUT_MARKER_HEADER};
use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

fn write_error(path: &Path) -> impl Fn(io::Error) -> CommandError + '_ {
    move |source| CommandError::Write {
        path: path.display().to_string(),
        source,
    }
}

/// The output folder as a real parent folder and a name in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputTarget {
    /// The folder that holds the output folder, canonical.
    pub parent: PathBuf,
    /// The output folder's name.
    pub name: String,
}

impl OutputTarget {
    /// Resolves `out`: an existing path through `fs::canonicalize` (so `a/p/../p` and a
    /// symlink name the real folder), a new one through its canonical parent, which is
    /// created when missing.
    pub fn resolve(out: &Path) -> Result<OutputTarget, CommandError> {
        let not_a_folder = |problem: &str| CommandError::BadOutput {
            path: out.display().to_string(),
            problem: problem.to_string(),
        };
        let full = if out.exists() {
            let real = fs::canonicalize(out).map_err(write_error(out))?;
            if !real.is_dir() {
                return Err(not_a_folder("it is a file, not a folder"));
            }
            real
        } else {
            let name = out
                .file_name()
                .ok_or_else(|| not_a_folder("the path does not end in a folder name"))?;
            let parent = match out.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            fs::create_dir_all(&parent).map_err(write_error(&parent))?;
            fs::canonicalize(&parent)
                .map_err(write_error(&parent))?
                .join(name)
        };
        match (full.parent(), full.file_name()) {
            (Some(parent), Some(name)) => Ok(OutputTarget {
                parent: parent.to_path_buf(),
                name: name.to_string_lossy().into_owned(),
            }),
            _ => Err(not_a_folder("the root folder cannot be an output folder")),
        }
    }

    /// The output folder itself.
    pub fn path(&self) -> PathBuf {
        self.parent.join(&self.name)
    }

    /// A sibling of the output folder: `.NAME.shipshape-SUFFIX`.
    pub fn sibling(&self, suffix: &str) -> PathBuf {
        self.parent
            .join(format!(".{}.shipshape-{suffix}", self.name))
    }
}

/// Whether `dir` may be replaced: it is empty or carries shipshape's marker.
fn owned(dir: &Path) -> bool {
    let marker = fs::read_to_string(dir.join(OUTPUT_MARKER)).unwrap_or_default();
    if marker.starts_with(OUTPUT_MARKER_HEADER) {
        return true;
    }
    fs::read_dir(dir)
        .map(|mut d| d.next().is_none())
        .unwrap_or(false)
}

/// An exclusive lock on one output folder: the file `.NAME.shipshape-lock` beside it,
/// locked with `flock`, deleted when the lock is released.
pub struct OutputLock {
    file: fs::File,
    path: PathBuf,
    _cleanup: signals::Registered,
}

impl OutputLock {
    /// Takes the lock of `target`, or fails at once when another run holds it.
    pub fn acquire(target: &OutputTarget) -> Result<OutputLock, CommandError> {
        let path = target.sibling("lock");
        // The holder deletes the file when it is done; a run that opened the old file
        // just before then finds it unlinked after locking it, and opens it again.
        for _ in 0..100 {
            let file = fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .map_err(write_error(&path))?;
            // SAFETY: `flock` on a descriptor this function owns.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc != 0 {
                let error = io::Error::last_os_error();
                if error.kind() == io::ErrorKind::WouldBlock {
                    return Err(CommandError::Locked {
                        path: target.path().display().to_string(),
                        lock: path.display().to_string(),
                    });
                }
                return Err(write_error(&path)(error));
            }
            if same_file(&file, &path) {
                let cleanup = signals::register(&path);
                return Ok(OutputLock {
                    file,
                    path,
                    _cleanup: cleanup,
                });
            }
        }
        Err(CommandError::Locked {
            path: target.path().display().to_string(),
            lock: path.display().to_string(),
        })
    }
}

/// Whether the open `file` is still the file at `path`.
fn same_file(file: &fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Unlinked while still locked: a waiting run then sees an unlinked file and
        // opens a fresh one (see `acquire`).
        if same_file(&self.file, &self.path) {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Swaps two existing folders in one step. `Ok(false)` when the system or the file
/// system cannot (the caller falls back to two renames).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<bool> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let a = CString::new(a.as_os_str().as_bytes()).map_err(io::Error::other)?;
    let b = CString::new(b.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: two valid NUL-terminated paths; the syscall reads them only.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        return Ok(true);
    }
    let error = io::Error::last_os_error();
    match error.raw_os_error() {
        Some(libc::ENOSYS) | Some(libc::EINVAL) | Some(libc::ENOTSUP) => Ok(false),
        _ => Err(error),
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_a: &Path, _b: &Path) -> io::Result<bool> {
    Ok(false)
}

/// Puts the folder `new` in place of the existing folder `out`; afterwards `new` names
/// the old tree. Atomic where [`exchange`] works; else `out` is moved to `retired`,
/// `new` renamed into place, and the old tree moved back to `new`'s name (on failure
/// `out` is moved back, so the old output stays).
fn swap(new: &Path, out: &Path, retired: &Path) -> io::Result<()> {
    if exchange(new, out)? {
        return Ok(());
    }
    swap_by_renames(new, out, retired)
}

/// The portable [`swap`]: three renames, the second undone when it fails.
fn swap_by_renames(new: &Path, out: &Path, retired: &Path) -> io::Result<()> {
    fs::rename(out, retired)?;
    if let Err(e) = fs::rename(new, out) {
        fs::rename(retired, out)?;
        return Err(e);
    }
    fs::rename(retired, new)
}

/// What writing the output left to say.
#[derive(Debug, Default)]
pub struct Written {
    /// The previous output, in place but not deleted, and why.
    pub leftover: Option<(PathBuf, io::Error)>,
}

impl Written {
    /// A warning for standard error when something was left behind.
    pub fn warning(&self) -> Option<String> {
        self.leftover.as_ref().map(|(path, error)| {
            format!(
                "warning: the new output is in place, but the previous output could not be deleted from `{}`: {error}\n  hint: delete `{}` by hand",
                path.display(),
                path.display()
            )
        })
    }
}

/// Writes `files` as the folder `out`, replacing the previous output in one atomic
/// step (see the module documentation). A failure leaves the previous output as it
/// was; only a folder shipshape wrote (or an empty one) is replaced.
pub fn write_tree_atomically(out: &Path, files: &OutputFiles) -> Result<Written, CommandError> {
    OutputSlot::claim(out)?.write(files)
}

/// An output folder claimed for one run: resolved, locked, and checked to be
/// shipshape's own. `generate` claims it before generating, so a second run is
/// refused at once.
pub struct OutputSlot {
    target: OutputTarget,
    given: PathBuf,
    _lock: OutputLock,
}

impl OutputSlot {
    /// Resolves `out`, takes its lock and refuses a folder shipshape did not write.
    pub fn claim(out: &Path) -> Result<OutputSlot, CommandError> {
        signals::install();
        let target = OutputTarget::resolve(out)?;
        let lock = OutputLock::acquire(&target)?;
        let path = target.path();
        if path.exists() && !owned(&path) {
            return Err(CommandError::ForeignOutput {
                path: out.display().to_string(),
            });
        }
        Ok(OutputSlot {
            target,
            given: out.to_path_buf(),
            _lock: lock,
        })
    }

    /// Writes `files` as the output folder and releases the lock.
    pub fn write(self, files: &OutputFiles) -> Result<Written, CommandError> {
        self.stage()?.finish(files)
    }

    /// [`OutputSlot::write`] with the deletion of the old tree as a parameter (tests
    /// make it fail).
    pub fn write_with(
        self,
        files: &OutputFiles,
        remove_old: impl Fn(&Path) -> io::Result<()>,
    ) -> Result<Written, CommandError> {
        self.stage()?.finish_with(files, remove_old)
    }

    /// Starts the new tree. Files are added to it as they are ready, from any thread:
    /// `generate` adds the chart while the presets are still being reviewed. Without
    /// a previous output the staging folder beside the output is made at once; with
    /// one, at the first file that differs from it ([`Staging::add`]). It is removed
    /// again unless [`Staging::finish`] puts it in place.
    pub fn stage(self) -> Result<Staging, CommandError> {
        let target = &self.target;
        let final_path = target.path();
        remove_stale_siblings(target);
        let pid = std::process::id();
        let staging = target.sibling(&format!("new-{pid}"));
        let retired = target.sibling(&format!("old-{pid}"));
        let cleanups = (signals::register(&staging), signals::register(&retired));
        let previous = final_path.is_dir().then_some(final_path);
        if previous.is_none() {
            fs::create_dir(&staging).map_err(write_error(&staging))?;
        }
        Ok(Staging {
            added: Mutex::new(Added {
                paths: BTreeSet::new(),
                started: previous.is_none(),
            }),
            previous,
            staging,
            retired,
            in_place: false,
            _cleanups: cleanups,
            slot: self,
        })
    }
}

/// A new output tree being written beside the output folder ([`OutputSlot::stage`]):
/// deleted when dropped before [`Staging::finish`] put it in place, so a run that fails
/// leaves the previous output as it was.
pub struct Staging {
    slot: OutputSlot,
    staging: PathBuf,
    retired: PathBuf,
    /// The output folder, when there is one: each file unchanged from it is linked.
    previous: Option<PathBuf>,
    /// The files added so far, and whether the staging folder holds them.
    added: Mutex<Added>,
    /// Whether the tree is in place (then it is not deleted on drop).
    in_place: bool,
    _cleanups: (signals::Registered, signals::Registered),
}

/// What [`Staging::add`] has done so far.
struct Added {
    /// The files added, by path.
    paths: BTreeSet<String>,
    /// Whether the staging folder is made and holds every file of `paths`. Until then
    /// each of them is unchanged from the previous output, and nothing is written.
    started: bool,
}

impl Staging {
    /// Adds `files` (path in the output, text) to the new tree, but those already
    /// added: a file there may be a link to the previous output's, which is never
    /// written to. While each file added is unchanged from the previous output, they
    /// are only compared with it; at the first that differs, the staging folder is
    /// made, the unchanged ones linked into it ([`Staging::start`]), and the rest
    /// written or linked (`write_files`).
    pub fn add(&self, files: &[(&str, &str)]) -> Result<(), CommandError> {
        let mut added = self.added.lock().unwrap_or_else(|p| p.into_inner());
        let new: Vec<(&str, &str)> = files
            .iter()
            .filter(|(path, _)| !added.paths.contains(*path))
            .copied()
            .collect();
        let mut rest = new.as_slice();
        if let (false, Some(old)) = (added.started, self.previous.as_deref()) {
            let unchanged = unchanged_prefix(old, rest);
            added
                .paths
                .extend(rest[..unchanged].iter().map(|(path, _)| path.to_string()));
            if unchanged == rest.len() {
                return Ok(());
            }
            self.start(old, &mut added)?;
            rest = &rest[unchanged..];
        }
        write_files(&self.staging, self.previous.as_deref(), rest)?;
        added
            .paths
            .extend(rest.iter().map(|(path, _)| path.to_string()));
        Ok(())
    }

    /// Makes the staging folder and links into it each file added so far, every one
    /// found unchanged in the previous output `old`. A file that cannot be linked is
    /// taken out of `added`, so that [`Staging::finish`], which is given every file,
    /// writes it.
    fn start(&self, old: &Path, added: &mut Added) -> Result<(), CommandError> {
        fs::create_dir(&self.staging).map_err(write_error(&self.staging))?;
        make_folders_of(&self.staging, added.paths.iter().map(String::as_str))?;
        added
            .paths
            .retain(|rel| link_unchanged(&old.join(rel), &self.staging.join(rel)));
        added.started = true;
        Ok(())
    }

    /// Writes the files of `files` not added yet, puts the new tree in place of the
    /// output in one step, deletes the old tree and releases the lock. When every file
    /// is unchanged and the output holds nothing else, the output is left as it is.
    pub fn finish(self, files: &OutputFiles) -> Result<Written, CommandError> {
        // One thread deletes the old tree: unlinking takes the folder's lock, and 2,842
        // files unlinked in parts on two cores took longer than on one.
        self.finish_with(files, |old| fs::remove_dir_all(old))
    }

    /// [`Staging::finish`] with the deletion of the old tree as a parameter.
    fn finish_with(
        mut self,
        files: &OutputFiles,
        remove_old: impl Fn(&Path) -> io::Result<()>,
    ) -> Result<Written, CommandError> {
        self.add(&entries_of(files))?;
        let mut added = self.added.lock().unwrap_or_else(|p| p.into_inner());
        let started_here = match (added.started, self.previous.as_deref()) {
            (false, Some(old)) if holds_only(old, &added.paths) => return Ok(Written::default()),
            (false, Some(old)) => {
                self.start(old, &mut added)?;
                true
            }
            _ => false,
        };
        drop(added);
        if started_here {
            // What could not be linked is written.
            self.add(&entries_of(files))?;
        }
        let final_path = self.slot.target.path();
        let (staging, retired) = (&self.staging, &self.retired);
        let swapped = signals::critical(|| {
            if final_path.exists() {
                swap(staging, &final_path, retired)?;
                // `staging` now holds the previous output.
                fs::rename(staging, retired)?;
                Ok(true)
            } else {
                fs::rename(staging, &final_path).map(|()| false)
            }
        });
        match swapped {
            Err(e) => Err(write_error(&self.slot.given)(e)),
            Ok(false) => {
                self.in_place = true;
                Ok(Written::default())
            }
            Ok(true) => {
                self.in_place = true;
                Ok(Written {
                    leftover: remove_old(retired).err().map(|e| (retired.clone(), e)),
                })
            }
        }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.in_place {
            let _ = fs::remove_dir_all(&self.staging);
        }
    }
}

/// The files of `files` as (path, text) pairs, in the paths' order.
fn entries_of(files: &OutputFiles) -> Vec<(&str, &str)> {
    files
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .collect()
}

/// How many parts [`write_files`] splits the files of a first output into: more than
/// the cores, so that a part of large files does not leave a core idle at the end.
const WRITE_PARTS: usize = 8;

/// Writes `entries` (path, text) under the folder `staging`, none of them there yet,
/// each folder made once, not once per file in it (a `mkdir` and a `stat` each, for
/// thousands of files). With a previous output `previous`, each file unchanged from it
/// is linked rather than written: a helper thread compares the files with the previous
/// ones ahead of this thread, which links or writes them in order. Linking changes the
/// folder, under the folder's lock, and two threads linking into `chart/templates/`
/// (2,811 files at 400 workloads) spent their time waiting on each other: comparing on
/// one core while linking on the other took 2,842 files from about 24 to about 16 ms
/// here. A first output is written in [`WRITE_PARTS`] parts on every core. The error
/// is the first in the files' order, as when they are written one by one.
fn write_files(
    staging: &Path,
    previous: Option<&Path>,
    entries: &[(&str, &str)],
) -> Result<(), CommandError> {
    make_folders_of(staging, entries.iter().map(|(rel, _)| *rel))?;
    let write = |rel: &str, text: &str| {
        let path = staging.join(rel);
        fs::write(&path, text).map_err(write_error(&path))
    };
    if let Some(old) = previous {
        return crate::parallel::prepared_ahead(
            entries,
            |(rel, text)| holds_exactly(&old.join(rel), text.as_bytes()),
            |(rel, text), unchanged| {
                if unchanged && link_unchanged(&old.join(rel), &staging.join(rel)) {
                    return Ok(());
                }
                write(rel, text)
            },
        );
    }
    let size = entries.len().div_ceil(WRITE_PARTS).max(1);
    let parts: Vec<&[(&str, &str)]> = entries.chunks(size).collect();
    crate::parallel::map_in_parallel(&parts, |part| {
        part.iter().try_for_each(|(rel, text)| write(rel, text))
    })
    .into_iter()
    .collect()
}

/// Makes under `root` the folders the files `paths` (relative to it) are in, each
/// once.
fn make_folders_of<'p>(
    root: &Path,
    paths: impl Iterator<Item = &'p str>,
) -> Result<(), CommandError> {
    let folders: BTreeSet<&Path> = paths
        .filter_map(|rel| Path::new(rel).parent())
        .filter(|dir| !dir.as_os_str().is_empty())
        .collect();
    for dir in folders {
        let dir = root.join(dir);
        fs::create_dir_all(&dir).map_err(write_error(&dir))?;
    }
    Ok(())
}

/// How many of `entries`, from the first, the previous output `old` holds exactly
/// ([`holds_exactly`]): compared in order, on this thread with a helper comparing
/// ahead, up to the first that differs.
fn unchanged_prefix(old: &Path, entries: &[(&str, &str)]) -> usize {
    let mut unchanged = 0;
    let _ = crate::parallel::prepared_ahead(
        entries,
        |(rel, text)| holds_exactly(&old.join(rel), text.as_bytes()),
        |_, same| {
            if same {
                unchanged += 1;
                Ok(())
            } else {
                Err(())
            }
        },
    );
    unchanged
}

/// Whether the folder `dir` holds the files `paths` (relative to it, `/` between
/// folders), each already found to be a regular file there ([`holds_exactly`]), the
/// folders they are in, and nothing else: no other file, folder, link or special file.
fn holds_only(dir: &Path, paths: &BTreeSet<String>) -> bool {
    let folders: BTreeSet<&str> = paths
        .iter()
        .flat_map(|rel| rel.match_indices('/').map(move |(at, _)| &rel[..at]))
        .collect();
    fn visit(dir: &Path, prefix: &str, paths: &BTreeSet<String>, folders: &BTreeSet<&str>) -> bool {
        let Ok(entries) = fs::read_dir(dir) else {
            return false;
        };
        entries.into_iter().all(|entry| {
            let Ok(entry) = entry else {
                return false;
            };
            let name = entry.file_name();
            let (Ok(kind), Some(name)) = (entry.file_type(), name.to_str()) else {
                return false;
            };
            let rel = if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}/{name}")
            };
            if kind.is_dir() {
                folders.contains(rel.as_str()) && visit(&entry.path(), &rel, paths, folders)
            } else {
                kind.is_file() && paths.contains(&rel)
            }
        })
    }
    visit(dir, "", paths, &folders)
}

/// Links `new` to the previous output's file `old`, found unchanged
/// ([`holds_exactly`]); false (write the file instead) when linking fails. An unchanged
/// file keeps its inode and modification time, and replacing the output allocates and
/// frees no inode for it (ext4 creates files slowly among recently freed inodes, which
/// made rewriting 2,842 unchanged files take about a second). A linked file is never
/// written to: a later change writes a new file.
fn link_unchanged(old: &Path, new: &Path) -> bool {
    fs::hard_link(old, new).is_ok()
}

/// Whether `path` is a regular file holding exactly `expected`. Opened without
/// following a symlink and without waiting on a FIFO, its type and size asked of the
/// open file, and its bytes read at that size, in blocks of at most [`COMPARE_BLOCK`]:
/// four system calls per unchanged file of up to a block (a `stat` of the path and a
/// last read to see the end were two more). A larger file (a preset's render is about
/// 5 MB at 400 workloads) is read into one block over and over rather than into fresh
/// memory of its size.
fn holds_exactly(path: &Path, expected: &[u8]) -> bool {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(mut file) = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    else {
        return false;
    };
    let regular_of_its_size = file
        .metadata()
        .is_ok_and(|m| m.file_type().is_file() && m.len() == expected.len() as u64);
    if !regular_of_its_size {
        return false;
    }
    let mut block = vec![0; expected.len().min(COMPARE_BLOCK)];
    expected.chunks(COMPARE_BLOCK).all(|part| {
        let read = &mut block[..part.len()];
        file.read_exact(read).is_ok() && read == part
    })
}

/// The most [`holds_exactly`] reads at once.
const COMPARE_BLOCK: usize = 64 * 1024;

/// Deletes `.NAME.shipshape-new-*` and `-old-*` folders of runs that ended without
/// cleaning up (a `kill -9`). Only called with the lock held, so no live run owns them.
fn remove_stale_siblings(target: &OutputTarget) {
    let prefix = format!(".{}.shipshape-", target.name);
    let Ok(entries) = fs::read_dir(&target.parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(&prefix) else {
            continue;
        };
        let pid_part = rest
            .strip_prefix("new-")
            .or_else(|| rest.strip_prefix("old-"));
        if pid_part.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// Reads every file under `dir`, by path relative to it.
pub fn read_tree(dir: &Path) -> Result<OutputFiles, CommandError> {
    let mut files = OutputFiles::new();
    fn visit(root: &Path, dir: &Path, files: &mut OutputFiles) -> Result<(), CommandError> {
        let entries = fs::read_dir(dir).map_err(|source| CommandError::Read {
            path: dir.display().to_string(),
            source,
        })?;
        for entry in entries {
            let entry = entry.map_err(|source| CommandError::Read {
                path: dir.display().to_string(),
                source,
            })?;
            let path = entry.path();
            if path.is_dir() {
                visit(root, &path, files)?;
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                let text = fs::read_to_string(&path).map_err(|source| CommandError::Read {
                    path: path.display().to_string(),
                    source,
                })?;
                files.insert(rel, text);
            }
        }
        Ok(())
    }
    if dir.exists() {
        visit(dir, dir, &mut files)?;
    }
    Ok(files)
}

/// The differences between committed output and what generation produces now, as
/// a unified diff; empty when they agree.
pub fn output_drift(committed: &OutputFiles, fresh: &OutputFiles) -> String {
    let mut report = String::new();
    let paths: BTreeSet<&String> = committed.keys().chain(fresh.keys()).collect();
    for path in paths {
        let old = committed.get(path).map(String::as_str).unwrap_or("");
        let new = fresh.get(path).map(String::as_str).unwrap_or("");
        if committed.contains_key(path) && fresh.contains_key(path) && old == new {
            continue;
        }
        let diff = similar::TextDiff::from_lines(old, new);
        let from = if committed.contains_key(path) {
            format!("a/{path}")
        } else {
            "/dev/null".into()
        };
        let to = if fresh.contains_key(path) {
            format!("b/{path}")
        } else {
            "/dev/null".into()
        };
        report.push_str(
            &diff
                .unified_diff()
                .context_radius(3)
                .header(&from, &to)
                .to_string(),
        );
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("shipshape-output-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn files(text: &str) -> OutputFiles {
        let mut f = OutputFiles::new();
        f.insert(OUTPUT_MARKER.into(), format!("{OUTPUT_MARKER_HEADER}\n"));
        f.insert("chart/Chart.yaml".into(), text.into());
        f
    }

    fn siblings(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn dot_dot_in_the_path_names_the_same_folder() {
        let dir = scratch("dotdot");
        let out = dir.join("p");
        write_tree_atomically(&out, &files("a")).unwrap();
        let twisted = dir.join("p").join("..").join("p");
        write_tree_atomically(&twisted, &files("b")).unwrap();
        assert_eq!(read_tree(&out).unwrap(), files("b"));
        assert_eq!(siblings(&dir), ["p"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_folder_without_the_marker_is_refused_and_kept() {
        let dir = scratch("foreign");
        let out = dir.join("charts");
        fs::create_dir_all(out.join("chart")).unwrap();
        fs::create_dir_all(out.join("docs")).unwrap();
        fs::write(out.join("chart/Chart.yaml"), "name: mine\n").unwrap();
        fs::write(out.join("docs/index.md"), "# mine\n").unwrap();
        let err = write_tree_atomically(&out, &files("x")).unwrap_err();
        assert!(matches!(err, CommandError::ForeignOutput { .. }), "{err}");
        assert!(
            err.to_string().contains(OUTPUT_MARKER),
            "names the marker: {err}"
        );
        assert_eq!(
            fs::read_to_string(out.join("docs/index.md")).unwrap(),
            "# mine\n"
        );
        assert_eq!(siblings(&dir), ["charts"]);
        // An empty folder is fine.
        let empty = dir.join("empty");
        fs::create_dir(&empty).unwrap();
        write_tree_atomically(&empty, &files("x")).unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_old_tree_that_cannot_be_deleted_is_reported_not_rolled_back() {
        let dir = scratch("leftover");
        let out = dir.join("out");
        write_tree_atomically(&out, &files("a")).unwrap();
        let written = OutputSlot::claim(&out)
            .unwrap()
            .write_with(&files("b"), |_| {
                Err(io::Error::from_raw_os_error(libc::EPERM))
            })
            .unwrap();
        assert_eq!(
            read_tree(&out).unwrap(),
            files("b"),
            "the new output is in place"
        );
        let warning = written.warning().unwrap();
        assert!(
            warning.starts_with("warning: the new output is in place, but the previous output could not be deleted from `")
                && warning.contains(".out.shipshape-old-"),
            "{warning}"
        );
        let (leftover, _) = written.leftover.unwrap();
        assert_eq!(read_tree(&leftover).unwrap(), files("a"));
        // The next run deletes what the earlier one left.
        write_tree_atomically(&out, &files("c")).unwrap();
        assert_eq!(siblings(&dir), ["out"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_held_lock_refuses_a_second_run() {
        let dir = scratch("lock");
        let out = dir.join("out");
        write_tree_atomically(&out, &files("a")).unwrap();
        let target = OutputTarget::resolve(&out).unwrap();
        let held = OutputLock::acquire(&target).unwrap();
        let err = write_tree_atomically(&out, &files("b")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("another shipshape run holds `{}`", out.display())),
            "{err}"
        );
        assert_eq!(read_tree(&out).unwrap(), files("a"));
        drop(held);
        assert_eq!(siblings(&dir), ["out"], "the lock file goes with the lock");
        write_tree_atomically(&out, &files("b")).unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_in_the_way_is_refused() {
        let dir = scratch("file");
        let out = dir.join("out");
        fs::write(&out, "x").unwrap();
        let err = write_tree_atomically(&out, &files("a")).unwrap_err();
        assert!(
            err.to_string().contains("it is a file, not a folder"),
            "{err}"
        );
        assert_eq!(fs::read_to_string(&out).unwrap(), "x");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn both_swaps_leave_the_old_tree_under_the_new_name() {
        let dir = scratch("swap");
        let (a, b, r) = (dir.join("a"), dir.join("b"), dir.join("r"));
        for swap in [swap, swap_by_renames] {
            let _ = fs::remove_dir_all(&a);
            let _ = fs::remove_dir_all(&b);
            fs::create_dir_all(a.join("x")).unwrap();
            fs::create_dir_all(b.join("y")).unwrap();
            swap(&a, &b, &r).unwrap();
            assert!(b.join("x").exists() && a.join("y").exists() && !r.exists());
        }
        // A failing second rename moves the old tree back.
        fs::remove_dir_all(&a).unwrap();
        let err = swap_by_renames(&a, &b, &r).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(b.join("x").exists() && !r.exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Replacing the output links each unchanged file (same inode, nothing written)
    /// and writes each changed, new or symlinked one; the tree reads as given.
    #[test]
    fn unchanged_files_are_linked_from_the_previous_output() {
        use std::os::unix::fs::MetadataExt;
        let dir = scratch("link");
        let out = dir.join("out");
        let ino = |rel: &str| fs::symlink_metadata(out.join(rel)).unwrap().ino();
        let mut first = files("same\n");
        first.insert("chart/values.yaml".into(), "a: 1\n".into());
        first.insert("rendered/x.yaml".into(), "kind: A\n".into());
        first.insert("rendered/y.yaml".into(), "kind: Y\n".into());
        OutputSlot::claim(&out).unwrap().write(&first).unwrap();
        // The previous output's `y.yaml` is a symlink to a file with the same text.
        let elsewhere = dir.join("elsewhere.yaml");
        fs::write(&elsewhere, "kind: Y\n").unwrap();
        fs::remove_file(out.join("rendered/y.yaml")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, out.join("rendered/y.yaml")).unwrap();
        let before: Vec<u64> = ["chart/Chart.yaml", "chart/values.yaml", "rendered/x.yaml"]
            .iter()
            .map(|rel| ino(rel))
            .collect();
        let mut second = first.clone();
        // Same length, other bytes; and a new file.
        second.insert("chart/values.yaml".into(), "a: 2\n".into());
        second.insert("rendered/z.yaml".into(), "kind: Z\n".into());
        OutputSlot::claim(&out).unwrap().write(&second).unwrap();
        assert_eq!(read_tree(&out).unwrap(), second);
        assert_eq!(ino("chart/Chart.yaml"), before[0]);
        assert_eq!(ino("rendered/x.yaml"), before[2]);
        assert_ne!(ino("chart/values.yaml"), before[1]);
        assert!(fs::symlink_metadata(out.join("rendered/y.yaml"))
            .unwrap()
            .file_type()
            .is_file());
        assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "kind: Y\n");
        assert_eq!(
            fs::metadata(out.join("chart/Chart.yaml")).unwrap().nlink(),
            1
        );
        assert_eq!(
            siblings(&dir),
            ["elsewhere.yaml", "out"],
            "the old tree and the lock are gone"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    /// What stands in the previous output at a file's path is linked only when it is a
    /// regular file of exactly the text: a FIFO (never waited on), a folder, and files
    /// one byte longer or shorter are replaced by a written file.
    #[test]
    fn only_a_regular_file_of_exactly_the_text_is_linked() {
        use std::os::unix::fs::MetadataExt;
        let dir = scratch("kinds");
        let out = dir.join("out");
        let mut first = files("same\n");
        for name in ["fifo", "folder", "longer", "shorter", "equal"] {
            first.insert(format!("rendered/{name}.yaml"), "kind: K\n".into());
        }
        OutputSlot::claim(&out).unwrap().write(&first).unwrap();
        let at = |name: &str| out.join(format!("rendered/{name}.yaml"));
        fs::remove_file(at("fifo")).unwrap();
        let fifo = std::ffi::CString::new(at("fifo").to_str().unwrap()).unwrap();
        // SAFETY: a valid C string; mkfifo touches nothing else of ours.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        fs::remove_file(at("folder")).unwrap();
        fs::create_dir(at("folder")).unwrap();
        fs::write(at("longer"), "kind: K\n\n").unwrap();
        fs::write(at("shorter"), "kind: K").unwrap();
        let equal = fs::symlink_metadata(at("equal")).unwrap().ino();
        OutputSlot::claim(&out).unwrap().write(&first).unwrap();
        assert_eq!(read_tree(&out).unwrap(), first);
        for name in ["fifo", "folder", "longer", "shorter"] {
            let m = fs::symlink_metadata(at(name)).unwrap();
            assert!(m.file_type().is_file(), "{name}");
            assert_eq!(m.nlink(), 1, "{name} is written, not linked");
        }
        assert_eq!(fs::symlink_metadata(at("equal")).unwrap().ino(), equal);
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Files of more than one block are compared block by block, to the last byte of
    /// the last block; an empty file holds exactly nothing.
    #[test]
    fn holds_exactly_compares_every_block() {
        let dir = scratch("blocks");
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        for size in [
            0,
            1,
            COMPARE_BLOCK - 1,
            COMPARE_BLOCK,
            COMPARE_BLOCK + 1,
            3 * COMPARE_BLOCK,
        ] {
            let text: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            fs::write(&path, &text).unwrap();
            assert!(holds_exactly(&path, &text), "{size} bytes");
            for at in [0, COMPARE_BLOCK - 1, COMPARE_BLOCK, size.saturating_sub(1)] {
                if at < size {
                    let mut other = text.clone();
                    other[at] ^= 1;
                    assert!(
                        !holds_exactly(&path, &other),
                        "{size} bytes, byte {at} differs"
                    );
                }
            }
            let mut longer = text.clone();
            longer.push(b'\n');
            assert!(
                !holds_exactly(&path, &longer),
                "{size} bytes, one more expected"
            );
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    /// More files than [`WRITE_PARTS`], in nested folders: every part is written, and
    /// a rewrite links every unchanged file, whichever part it is in.
    #[test]
    fn many_files_are_written_in_parts_and_each_unchanged_one_linked() {
        use std::os::unix::fs::MetadataExt;
        let dir = scratch("parts");
        let out = dir.join("out");
        let mut first = files("x\n");
        for i in 0..(WRITE_PARTS * 5 + 3) {
            first.insert(
                format!("d{}/e{}/f{i}.yaml", i % 3, i % 2),
                format!("n: {i}\n"),
            );
        }
        OutputSlot::claim(&out).unwrap().write(&first).unwrap();
        assert_eq!(read_tree(&out).unwrap(), first);
        let ino = |rel: &str| fs::symlink_metadata(out.join(rel)).unwrap().ino();
        let before: std::collections::BTreeMap<String, u64> =
            first.keys().map(|k| (k.clone(), ino(k))).collect();
        let mut second = first.clone();
        for (i, text) in second.values_mut().enumerate() {
            if i % 4 == 1 {
                text.push_str("changed: true\n");
            }
        }
        OutputSlot::claim(&out).unwrap().write(&second).unwrap();
        assert_eq!(read_tree(&out).unwrap(), second);
        for (rel, text) in &second {
            assert_eq!(ino(rel) == before[rel], first[rel] == *text, "{rel}");
        }
        assert_eq!(siblings(&dir), ["out"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Of several files that cannot be written, in different parts, the error names
    /// the first in order, and nothing of the run is left.
    #[test]
    fn the_first_file_that_cannot_be_written_is_named() {
        let dir = scratch("first-error");
        let out = dir.join("out");
        write_tree_atomically(&out, &files("a")).unwrap();
        let mut bad = files("b");
        let long = "n".repeat(300);
        for i in 0..(WRITE_PARTS * 4) {
            bad.insert(format!("rendered/{i:03}.yaml"), "ok\n".into());
        }
        bad.insert(format!("rendered/005-{long}.yaml"), "x\n".into());
        bad.insert(format!("rendered/030-{long}.yaml"), "x\n".into());
        let err = write_tree_atomically(&out, &bad).unwrap_err();
        let message = err.to_string();
        assert!(message.contains(&format!("005-{long}")), "{message}");
        assert!(!message.contains("030-"), "{message}");
        assert_eq!(
            read_tree(&out).unwrap(),
            files("a"),
            "the output is as it was"
        );
        assert_eq!(siblings(&dir), ["out"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Files added to the new tree in two steps, the second from another thread, and
    /// the rest written by `finish`, make the same tree as one write: the chart first,
    /// as `generate` adds it, each unchanged file linked in either step, and what
    /// `finish` is given again for a file already added is not written twice.
    #[test]
    fn files_added_in_steps_make_the_same_tree_as_one_write() {
        use std::os::unix::fs::MetadataExt;
        let dir = scratch("steps");
        let out = dir.join("out");
        let ino = |rel: &str| fs::symlink_metadata(out.join(rel)).unwrap().ino();
        let mut first = files("chart\n");
        first.insert("chart/templates/a.yaml".into(), "a\n".into());
        first.insert("rendered/x.yaml".into(), "x\n".into());
        OutputSlot::claim(&out).unwrap().write(&first).unwrap();
        let before = (ino("chart/templates/a.yaml"), ino("rendered/x.yaml"));
        let mut second = first.clone();
        second.insert("chart/templates/b.yaml".into(), "b\n".into());
        second.insert("capacity/x.txt".into(), "1\n".into());
        let chart: OutputFiles = second
            .iter()
            .filter(|(path, _)| path.starts_with("chart/"))
            .map(|(p, t)| (p.clone(), t.clone()))
            .collect();
        let staging = OutputSlot::claim(&out).unwrap().stage().unwrap();
        std::thread::scope(|scope| {
            scope.spawn(|| staging.add(&entries_of(&chart)).unwrap());
        });
        assert_eq!(read_tree(&out).unwrap(), first, "nothing is in place yet");
        // `finish` is given every file; one already added is not written again.
        let mut again = second.clone();
        again.insert("chart/templates/b.yaml".into(), "not written\n".into());
        staging.finish(&again).unwrap();
        assert_eq!(read_tree(&out).unwrap(), second);
        assert_eq!(ino("chart/templates/a.yaml"), before.0);
        assert_eq!(ino("rendered/x.yaml"), before.1);
        assert_eq!(siblings(&dir), ["out"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A rerun whose files are all unchanged, in nested folders, added in steps as
    /// `generate` adds them, leaves the output as it is: no staging folder is made, the
    /// folders are the same (no swap), nothing is deleted, and the lock is released.
    #[test]
    fn an_unchanged_output_is_left_in_place() {
        use std::os::unix::fs::MetadataExt;
        let dir = scratch("unchanged");
        let out = dir.join("out");
        let ino = |rel: &str| fs::symlink_metadata(out.join(rel)).unwrap().ino();
        let mut first = files("x\n");
        for i in 0..(WRITE_PARTS * 2) {
            first.insert(
                format!("d{}/e{}/f{i}.yaml", i % 3, i % 2),
                format!("n: {i}\n"),
            );
        }
        write_tree_atomically(&out, &first).unwrap();
        let rels = [
            ".",
            "chart",
            "d1",
            "d1/e0",
            "chart/Chart.yaml",
            "d2/e1/f5.yaml",
        ];
        let before: Vec<u64> = rels.iter().map(|rel| ino(rel)).collect();
        let staging = OutputSlot::claim(&out).unwrap().stage().unwrap();
        let (d0, rest): (Vec<_>, Vec<_>) = entries_of(&first)
            .into_iter()
            .partition(|(path, _)| path.starts_with("d0/"));
        std::thread::scope(|scope| {
            scope.spawn(|| staging.add(&d0).unwrap());
        });
        staging.add(&rest[..1]).unwrap();
        assert_eq!(
            siblings(&dir).len(),
            2,
            "the output and its lock, nothing staged"
        );
        let written = staging
            .finish_with(&first, |_| panic!("nothing is deleted"))
            .unwrap();
        assert!(written.warning().is_none());
        assert_eq!(read_tree(&out).unwrap(), first);
        let after: Vec<u64> = rels.iter().map(|rel| ino(rel)).collect();
        assert_eq!(after, before, "the same folders and files");
        assert_eq!(siblings(&dir), ["out"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    /// Anything in the output beside the unchanged files and their folders makes the
    /// rerun replace it: another file, at the top or in a folder, an empty folder, a
    /// symlink, a FIFO. The unchanged files are linked into the new tree.
    #[test]
    fn anything_else_in_an_unchanged_output_is_replaced() {
        use std::os::unix::fs::MetadataExt;
        let dir = scratch("else");
        let out = dir.join("out");
        let mut first = files("x\n");
        first.insert("rendered/a/b.yaml".into(), "b\n".into());
        fn fifo(path: &Path) {
            let name = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
            // SAFETY: a valid C string; mkfifo touches nothing else of ours.
            assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
        }
        /// Puts something at a path.
        type Make = fn(&Path);
        let extras: [(&str, Make); 6] = [
            ("stale.yaml", |p| fs::write(p, "old\n").unwrap()),
            ("rendered/a/stale.yaml", |p| fs::write(p, "old\n").unwrap()),
            ("rendered/empty", |p| fs::create_dir(p).unwrap()),
            ("rendered/a/c", |p| fs::create_dir(p).unwrap()),
            ("rendered/link.yaml", |p| {
                std::os::unix::fs::symlink("a/b.yaml", p).unwrap()
            }),
            ("rendered/fifo", fifo),
        ];
        for (extra, make) in extras {
            write_tree_atomically(&out, &first).unwrap();
            make(&out.join(extra));
            let ino = |rel: &str| fs::symlink_metadata(out.join(rel)).unwrap().ino();
            let modified = || {
                fs::metadata(out.join("rendered/a/b.yaml"))
                    .unwrap()
                    .modified()
                    .unwrap()
            };
            let before = (ino("."), ino("rendered/a/b.yaml"), modified());
            write_tree_atomically(&out, &first).unwrap();
            assert_eq!(read_tree(&out).unwrap(), first, "{extra}");
            assert!(fs::symlink_metadata(out.join(extra)).is_err(), "{extra}");
            assert_ne!(ino("."), before.0, "{extra}: a new folder");
            assert_eq!(ino("rendered/a/b.yaml"), before.1, "{extra}: linked");
            assert_eq!(modified(), before.2, "{extra}: not written again");
            assert_eq!(siblings(&dir), ["out"], "{extra}");
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A change found only among the files `finish` adds (the renders, after the
    /// chart) stages the tree then: the files added before, all unchanged, are linked
    /// into it, the changed one written.
    #[test]
    fn a_change_found_at_the_end_links_the_files_compared_before() {
        use std::os::unix::fs::MetadataExt;
        let dir = scratch("late");
        let out = dir.join("out");
        let ino = |rel: &str| fs::symlink_metadata(out.join(rel)).unwrap().ino();
        let mut first = files("chart\n");
        first.insert("chart/templates/a.yaml".into(), "a\n".into());
        first.insert("rendered/x.yaml".into(), "x\n".into());
        write_tree_atomically(&out, &first).unwrap();
        let before = (
            ino("."),
            ino("chart/templates/a.yaml"),
            ino("rendered/x.yaml"),
        );
        let chart: Vec<(&str, &str)> = entries_of(&first)
            .into_iter()
            .filter(|(path, _)| path.starts_with("chart/"))
            .collect();
        let mut second = first.clone();
        second.insert("rendered/x.yaml".into(), "y\n".into());
        let staging = OutputSlot::claim(&out).unwrap().stage().unwrap();
        staging.add(&chart).unwrap();
        assert_eq!(siblings(&dir).len(), 2, "nothing staged yet");
        staging.finish(&second).unwrap();
        assert_eq!(read_tree(&out).unwrap(), second);
        assert_ne!(ino("."), before.0);
        assert_eq!(ino("chart/templates/a.yaml"), before.1);
        assert_ne!(ino("rendered/x.yaml"), before.2);
        assert_eq!(siblings(&dir), ["out"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A new tree never finished (generation failed after the chart was added) is
    /// deleted, and the previous output stays as it was.
    #[test]
    fn a_tree_never_finished_is_deleted_and_the_output_kept() {
        let dir = scratch("unfinished");
        let out = dir.join("out");
        write_tree_atomically(&out, &files("a")).unwrap();
        let staging = OutputSlot::claim(&out).unwrap().stage().unwrap();
        staging.add(&entries_of(&files("b"))).unwrap();
        assert_eq!(
            siblings(&dir).len(),
            3,
            "the lock and the new tree beside the output"
        );
        drop(staging);
        assert_eq!(read_tree(&out).unwrap(), files("a"));
        assert_eq!(siblings(&dir), ["out"]);
        write_tree_atomically(&out, &files("c")).unwrap();
        assert_eq!(
            read_tree(&out).unwrap(),
            files("c"),
            "the lock was released"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
