//! Reproducible Helm chart archives (`shipshape package`).
//!
//! [`package_chart`] turns the in-memory files of a generated chart into the
//! `<name>-<version>.tgz` that `helm package` would produce, byte-identical on
//! every run. It does no I/O: the command layer writes the bytes.
//!
//! Archive layout (checked against `helm package` of Helm 3.17 and 4.1, which
//! also writes file entries only, under one folder named after the chart):
//! - one top-level folder named after the chart, `Chart.yaml` first, then every
//!   other file sorted by path (byte order);
//! - regular-file entries only: no directory entries; Helm's loader and
//!   `helm package` itself do without them;
//! - ustar headers, mode `0644`, uid/gid 0, empty user and group names, the
//!   given modification time, no extended (PAX or GNU) records, so a path must
//!   fit the ustar name and prefix fields (255 bytes in total);
//! - gzip at a fixed level, modification time 0, no file name, OS byte 255.

use std::io::Write;

use flate2::{Compression, GzBuilder};

/// Default modification time when `SOURCE_DATE_EPOCH` is unset: 1980-01-01T00:00:00Z.
///
/// A fixed value (not the current time) keeps archives reproducible by default.
/// 1980 rather than 0 (1970): ZIP, and tools that repack archives through it
/// (Python wheels use the same floor), cannot represent earlier dates, and some
/// unpackers warn about or "fix" a zero mtime. It is also what `helm push`
/// then writes as `org.opencontainers.image.created` when the `.tgz` file is
/// dated `SOURCE_DATE_EPOCH` (Helm takes that annotation from the file's mtime).
pub const DEFAULT_SOURCE_DATE_EPOCH: u64 = 315_532_800;

/// Largest modification time a ustar header can hold (11 octal digits).
const MAX_USTAR_MTIME: u64 = 0o77_777_777_777;

/// Fixed gzip level. The bytes also depend on the `miniz_oxide` version: a
/// dependency bump may change them, which the golden digests in tests reveal.
const GZIP_LEVEL: u32 = 9;

/// One file of a chart, relative to the chart root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartFile {
    /// Path relative to the chart root with `/` separators, e.g. `templates/api-deployment.yaml`.
    pub path: String,
    /// File content.
    pub bytes: Vec<u8>,
}

/// Why a chart could not be packaged or `SOURCE_DATE_EPOCH` not read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PackageError {
    /// The chart name cannot be a folder name.
    #[error("invalid chart name `{name}`: {reason}; use a name like `my-platform`")]
    InvalidChartName {
        /// The rejected name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A file path is not a clean relative path.
    #[error(
        "invalid chart file path `{path}`: {reason}; use a relative path with `/` separators like `templates/api-deployment.yaml`"
    )]
    InvalidPath {
        /// The rejected path.
        path: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Two files have the same path.
    #[error("duplicate chart file path `{path}`; each file may appear once")]
    DuplicatePath {
        /// The repeated path.
        path: String,
    },
    /// No `Chart.yaml` at the chart root.
    #[error("chart `{name}` has no `Chart.yaml` at its root; Helm cannot load a chart without it")]
    MissingChartYaml {
        /// The chart name.
        name: String,
    },
    /// `SOURCE_DATE_EPOCH` is not a usable number of seconds.
    #[error(
        "invalid `SOURCE_DATE_EPOCH` value `{value}`: {reason}; set it to whole seconds since 1970-01-01 UTC, e.g. `git log -1 --format=%ct`, or unset it"
    )]
    InvalidSourceDateEpoch {
        /// The rejected value.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The modification time does not fit a ustar header.
    #[error("modification time `{mtime}` does not fit a tar header (maximum `{max}`)")]
    MtimeOutOfRange {
        /// The rejected time.
        mtime: u64,
        /// The largest accepted time.
        max: u64,
    },
    /// Writing the archive into memory failed (not expected in practice).
    #[error("cannot write archive entry `{path}`: {message}")]
    Archive {
        /// The entry being written.
        path: String,
        /// The underlying error.
        message: String,
    },
}

/// Reads `SOURCE_DATE_EPOCH` (the caller passes the environment value).
///
/// Unset (or empty) gives [`DEFAULT_SOURCE_DATE_EPOCH`]; anything other than
/// whole, non-negative seconds that fit a tar header is an error.
pub fn source_date_epoch(env_value: Option<&str>) -> Result<u64, PackageError> {
    let raw = match env_value {
        None => return Ok(DEFAULT_SOURCE_DATE_EPOCH),
        Some(v) if v.trim().is_empty() => return Ok(DEFAULT_SOURCE_DATE_EPOCH),
        Some(v) => v,
    };
    let invalid = |reason| PackageError::InvalidSourceDateEpoch {
        value: raw.to_string(),
        reason,
    };
    let trimmed = raw.trim();
    if !trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid("not a non-negative whole number"));
    }
    let secs: u64 = trimmed.parse().map_err(|_| invalid("too large"))?;
    if secs > MAX_USTAR_MTIME {
        return Err(invalid("too large for a tar header (after year 2242)"));
    }
    Ok(secs)
}

/// Packages a chart as a reproducible Helm `.tgz`.
///
/// `chart_name` becomes the top-level folder; `files` may come in any order.
/// The same inputs always give the same bytes.
pub fn package_chart(
    chart_name: &str,
    files: &[ChartFile],
    mtime_epoch_seconds: u64,
) -> Result<Vec<u8>, PackageError> {
    validate_chart_name(chart_name)?;
    if mtime_epoch_seconds > MAX_USTAR_MTIME {
        return Err(PackageError::MtimeOutOfRange {
            mtime: mtime_epoch_seconds,
            max: MAX_USTAR_MTIME,
        });
    }
    for file in files {
        validate_path(&file.path)?;
    }

    let mut ordered: Vec<&ChartFile> = files.iter().collect();
    // `Chart.yaml` first, then byte order of the path.
    ordered.sort_by(|a, b| {
        (a.path != "Chart.yaml", a.path.as_bytes())
            .cmp(&(b.path != "Chart.yaml", b.path.as_bytes()))
    });
    for pair in ordered.windows(2) {
        if pair[0].path == pair[1].path {
            return Err(PackageError::DuplicatePath {
                path: pair[0].path.clone(),
            });
        }
    }
    if ordered.first().map(|f| f.path.as_str()) != Some("Chart.yaml") {
        return Err(PackageError::MissingChartYaml {
            name: chart_name.to_string(),
        });
    }

    let mut builder = tar::Builder::new(Vec::new());
    for file in ordered {
        let entry_path = format!("{chart_name}/{}", file.path);
        let archive_err = |e: std::io::Error| PackageError::Archive {
            path: entry_path.clone(),
            message: e.to_string(),
        };
        let mut header = tar::Header::new_ustar();
        header.set_path(&entry_path).map_err(|_| PackageError::InvalidPath {
            path: file.path.clone(),
            reason: "too long for a ustar header (at most 100 bytes after the last `/` split point, 255 in total with the chart name)",
        })?;
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(file.bytes.len() as u64);
        header.set_mode(0o644);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(mtime_epoch_seconds);
        header.set_username("").map_err(archive_err)?;
        header.set_groupname("").map_err(archive_err)?;
        header.set_device_major(0).map_err(archive_err)?;
        header.set_device_minor(0).map_err(archive_err)?;
        header.set_cksum();
        builder
            .append(&header, file.bytes.as_slice())
            .map_err(archive_err)?;
    }
    let tar_bytes = builder.into_inner().map_err(|e| PackageError::Archive {
        path: chart_name.to_string(),
        message: e.to_string(),
    })?;

    let mut encoder = GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), Compression::new(GZIP_LEVEL));
    let gz_err = |e: std::io::Error| PackageError::Archive {
        path: chart_name.to_string(),
        message: e.to_string(),
    };
    encoder.write_all(&tar_bytes).map_err(gz_err)?;
    encoder.finish().map_err(gz_err)
}

fn validate_chart_name(name: &str) -> Result<(), PackageError> {
    let reason = if name.is_empty() {
        Some("empty")
    } else if name == "." || name == ".." {
        Some("`.` and `..` are not names")
    } else if name.contains(['/', '\\']) {
        Some("contains a path separator")
    } else if name.chars().any(|c| c.is_control() || c.is_whitespace()) {
        Some("contains whitespace or a control character")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(PackageError::InvalidChartName {
            name: name.to_string(),
            reason,
        }),
        None => Ok(()),
    }
}

fn validate_path(path: &str) -> Result<(), PackageError> {
    let reason = if path.is_empty() {
        Some("empty")
    } else if path.starts_with('/') || path.as_bytes().get(1) == Some(&b':') {
        Some("absolute")
    } else if path.contains('\\') {
        Some("contains `\\`")
    } else if path.chars().any(char::is_control) {
        Some("contains a control character")
    } else if path.split('/').any(|c| c == "..") {
        Some("contains `..`")
    } else if path.split('/').any(|c| c.is_empty() || c == ".") {
        Some("contains an empty or `.` component")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(PackageError::InvalidPath {
            path: path.to_string(),
            reason,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};
    use std::io::Read;

    const CHART_YAML: &str =
        "apiVersion: v2\nname: demo\nversion: 0.1.0\ndescription: a tiny chart\n";
    const CM_YAML: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  answer: {{ .Values.answer | quote }}\n";

    fn file(path: &str, content: &str) -> ChartFile {
        ChartFile {
            path: path.to_string(),
            bytes: content.as_bytes().to_vec(),
        }
    }

    fn demo_files() -> Vec<ChartFile> {
        vec![
            file("values.yaml", "answer: 42\n"),
            file("templates/cm.yaml", CM_YAML),
            file("Chart.yaml", CHART_YAML),
            file("README.md", "# demo\n"),
            file("templates/NOTES.txt", "hello\n"),
        ]
    }

    fn sha256_hex(bytes: &[u8]) -> String {
        Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    #[test]
    fn byte_identical_across_runs() {
        let a = package_chart("demo", &demo_files(), 1_700_000_000).unwrap();
        let b = package_chart("demo", &demo_files(), 1_700_000_000).unwrap();
        assert_eq!(a, b);
        assert_eq!(sha256_hex(&a), sha256_hex(&b));
    }

    #[test]
    fn independent_of_input_order() {
        let forward = demo_files();
        let mut reversed = demo_files();
        reversed.reverse();
        let a = package_chart("demo", &forward, DEFAULT_SOURCE_DATE_EPOCH).unwrap();
        let b = package_chart("demo", &reversed, DEFAULT_SOURCE_DATE_EPOCH).unwrap();
        assert_eq!(sha256_hex(&a), sha256_hex(&b));
    }

    #[test]
    fn mtime_changes_the_bytes() {
        let a = package_chart("demo", &demo_files(), 1).unwrap();
        let b = package_chart("demo", &demo_files(), 2).unwrap();
        assert_ne!(a, b);
    }

    #[test]
    fn gzip_header_has_no_timestamp_nor_name() {
        let gz = package_chart("demo", &demo_files(), 1_700_000_000).unwrap();
        // magic, method 8, flags 0 (no name, no comment, no extra), mtime 0.
        assert_eq!(&gz[..8], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0]);
        assert_eq!(gz[9], 255, "OS byte");
    }

    #[test]
    fn entries_in_order_with_fixed_metadata() {
        let gz = package_chart("demo", &demo_files(), 1_700_000_000).unwrap();
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(gz.as_slice()));
        let mut seen = Vec::new();
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let h = entry.header();
            assert!(h.as_ustar().is_some(), "ustar header");
            assert_eq!(h.entry_type(), tar::EntryType::Regular);
            assert_eq!(h.mode().unwrap(), 0o644);
            assert_eq!(h.uid().unwrap(), 0);
            assert_eq!(h.gid().unwrap(), 0);
            assert_eq!(h.username().unwrap(), Some(""));
            assert_eq!(h.groupname().unwrap(), Some(""));
            assert_eq!(h.mtime().unwrap(), 1_700_000_000);
            let path = entry.path().unwrap().to_string_lossy().into_owned();
            let mut content = String::new();
            entry.read_to_string(&mut content).unwrap();
            if path == "demo/templates/cm.yaml" {
                assert_eq!(content, CM_YAML);
            }
            seen.push(path);
        }
        assert_eq!(
            seen,
            [
                "demo/Chart.yaml",
                "demo/README.md",
                "demo/templates/NOTES.txt",
                "demo/templates/cm.yaml",
                "demo/values.yaml",
            ]
        );
    }

    #[test]
    fn long_paths_use_the_ustar_prefix() {
        let deep = format!("templates/{}/{}.yaml", "d".repeat(90), "f".repeat(90));
        let files = vec![file("Chart.yaml", CHART_YAML), file(&deep, "x: 1\n")];
        let gz = package_chart("demo", &files, 0).unwrap();
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(gz.as_slice()));
        let paths: Vec<String> = archive
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(paths[1], format!("demo/{deep}"));

        let too_long = format!("templates/{}.yaml", "f".repeat(120));
        let err = package_chart(
            "demo",
            &[file("Chart.yaml", CHART_YAML), file(&too_long, "")],
            0,
        )
        .unwrap_err();
        assert!(matches!(err, PackageError::InvalidPath { .. }), "{err}");
    }

    #[test]
    fn rejects_bad_input() {
        let chart = file("Chart.yaml", CHART_YAML);
        for bad in [
            "/etc/passwd",
            "../x",
            "templates/../../x",
            "a//b",
            "./a",
            "C:/x",
            "a\\b",
            "",
        ] {
            let err = package_chart("demo", &[chart.clone(), file(bad, "")], 0).unwrap_err();
            assert!(
                matches!(err, PackageError::InvalidPath { .. }),
                "{bad}: {err}"
            );
        }
        let err = package_chart(
            "demo",
            &[chart.clone(), file("a.yaml", ""), file("a.yaml", "")],
            0,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "duplicate chart file path `a.yaml`; each file may appear once"
        );
        let err = package_chart("demo", &[file("values.yaml", "")], 0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "chart `demo` has no `Chart.yaml` at its root; Helm cannot load a chart without it"
        );
        let err = package_chart("demo", &[file("sub/Chart.yaml", "")], 0).unwrap_err();
        assert!(matches!(err, PackageError::MissingChartYaml { .. }));
        for bad in ["", "..", "a/b", "a b"] {
            let err = package_chart(bad, std::slice::from_ref(&chart), 0).unwrap_err();
            assert!(
                matches!(err, PackageError::InvalidChartName { .. }),
                "{bad}: {err}"
            );
        }
        let err =
            package_chart("demo", std::slice::from_ref(&chart), MAX_USTAR_MTIME + 1).unwrap_err();
        assert!(matches!(err, PackageError::MtimeOutOfRange { .. }));
    }

    #[test]
    fn source_date_epoch_values() {
        assert_eq!(source_date_epoch(None), Ok(315_532_800));
        assert_eq!(source_date_epoch(Some("")), Ok(315_532_800));
        assert_eq!(source_date_epoch(Some("1700000000")), Ok(1_700_000_000));
        assert_eq!(source_date_epoch(Some(" 0\n")), Ok(0));
        for bad in [
            "-1",
            "1.5",
            "abc",
            "1e9",
            "99999999999999999999999",
            "8589934592",
        ] {
            let err = source_date_epoch(Some(bad)).unwrap_err();
            assert!(
                err.to_string()
                    .starts_with(&format!("invalid `SOURCE_DATE_EPOCH` value `{bad}`")),
                "{err}"
            );
        }
    }
}
