//! `shipshape package` and `shipshape push`: the release steps.

use super::{generate_for, read_spec, signals, write_error, CommandError, Exit};
use crate::generate::OutputFiles;
use crate::spec::Spec;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The chart's files, as packaging takes them.
fn chart_files(outputs: &OutputFiles) -> Vec<crate::publish::package::ChartFile> {
    outputs
        .iter()
        .filter_map(|(rel, text)| {
            rel.strip_prefix("chart/")
                .map(|p| crate::publish::package::ChartFile {
                    path: p.to_string(),
                    bytes: text.as_bytes().to_vec(),
                })
        })
        .collect()
}

fn packaged_chart(spec: &Spec, spec_path: &Path) -> Result<(Vec<u8>, u64), CommandError> {
    let outputs = generate_for(spec, spec_path)?;
    let epoch_var = std::env::var("SOURCE_DATE_EPOCH").ok();
    let epoch = crate::publish::package::source_date_epoch(epoch_var.as_deref()).map_err(|e| {
        CommandError::BadArgument {
            message: e.to_string(),
        }
    })?;
    let bytes =
        crate::publish::package::package_chart(&spec.chart.name, &chart_files(&outputs), epoch)
            .map_err(|e| CommandError::BadArgument {
                message: e.to_string(),
            })?;
    Ok((bytes, epoch))
}

/// Writes `bytes` to `path` through `.NAME.shipshape-new-PID` beside it and a rename:
/// `path` is the old file or the complete new one, never a part. Refuses a folder at
/// `path` before writing anything; a failed write (a full disk) deletes its part file.
fn write_file_atomically(path: &Path, bytes: &[u8]) -> Result<(), CommandError> {
    if path.is_dir() {
        return Err(CommandError::PackageTarget {
            path: path.display().to_string(),
        });
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir).map_err(write_error(&dir))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let staging = dir.join(format!(".{name}.shipshape-new-{}", std::process::id()));
    signals::install();
    let _cleanup = signals::register(&staging);
    let written = (|| -> io::Result<()> {
        use std::io::Write;
        let mut file = fs::File::options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&staging)?;
        file.write_all(bytes)?;
        file.sync_all()
    })();
    let result = written
        .map_err(write_error(&staging))
        .and_then(|()| fs::rename(&staging, path).map_err(write_error(path)));
    if result.is_err() {
        let _ = fs::remove_file(&staging);
    }
    result
}

/// `shipshape package`: writes `<name>-<version>.tgz`, byte-identical across runs.
pub fn package(spec_path: &Path, out_dir: &Path) -> Result<Exit, CommandError> {
    let spec = read_spec(spec_path)?;
    let (bytes, _) = packaged_chart(&spec, spec_path)?;
    let path = out_dir.join(format!("{}-{}.tgz", spec.chart.name, spec.chart.version));
    write_file_atomically(&path, &bytes)?;
    let hex = crate::expr::sha256_hex(&bytes);
    println!("{}  sha256:{hex}", path.display());
    Ok(Exit::Ok)
}

/// Options of `shipshape push`.
pub struct PushOptions {
    pub reference: String,
    pub plain_http: bool,
    pub username: Option<String>,
    pub password_stdin: bool,
    pub timeout: std::time::Duration,
}

/// `shipshape push`: packages the chart and pushes it as a Helm OCI artifact.
pub fn push(spec_path: &Path, options: &PushOptions) -> Result<Exit, CommandError> {
    use crate::publish::oci::{
        credentials_from_docker_config, helm_chart_artifact, parse_oci_reference, push_chart,
        rfc3339_utc, Credentials,
    };
    use std::io::Read;
    let reference =
        parse_oci_reference(&options.reference).map_err(|e| CommandError::BadArgument {
            message: e.to_string(),
        })?;
    let credentials = match (&options.username, options.password_stdin) {
        (Some(username), true) => {
            let mut password = String::new();
            io::stdin()
                .read_to_string(&mut password)
                .map_err(|source| CommandError::Read {
                    path: "standard input".into(),
                    source,
                })?;
            Some(Credentials {
                username: username.clone(),
                password: password.trim_end_matches(['\r', '\n']).to_string(),
            })
        }
        (Some(_), false) | (None, true) => {
            return Err(CommandError::BadArgument {
                message: "`--username` and `--password-stdin` go together".into(),
            })
        }
        (None, false) => docker_config_text()
            .and_then(|text| credentials_from_docker_config(&text, &reference.host)),
    };
    let spec = read_spec(spec_path)?;
    let (bytes, epoch) = packaged_chart(&spec, spec_path)?;
    let chart_yaml = generate_for(&spec, spec_path)?
        .remove("chart/Chart.yaml")
        .unwrap_or_default();
    let artifact = helm_chart_artifact(&chart_yaml, &bytes, &rfc3339_utc(epoch)).map_err(|e| {
        CommandError::BadArgument {
            message: e.to_string(),
        }
    })?;
    let outcome = push_chart(
        &reference,
        &artifact,
        credentials.as_ref(),
        options.plain_http,
        options.timeout,
    )
    .map_err(|e| CommandError::Tool {
        hint: push_hint(&e).into(),
        message: e.to_string(),
    })?;
    println!(
        "pushed {}\ndigest: {}",
        outcome.reference, outcome.manifest_digest
    );
    Ok(Exit::Ok)
}

/// What to do about a failed push.
fn push_hint(error: &crate::publish::oci::OciError) -> &'static str {
    use crate::publish::oci::OciError;
    match error {
        OciError::Mismatch { .. } | OciError::UnexpectedStatus { .. } | OciError::Protocol { .. } => {
            "the server does not answer as the OCI distribution spec requires; check that the address is an OCI registry's (a push counts only when the manifest reads back with the same digest)"
        }
        OciError::Broken { .. } => "run the push again; blobs already stored are not uploaded twice",
        _ => "check the registry address, `--plain-http` and the credentials",
    }
}

/// The Docker config file (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`).
fn docker_config_text() -> Option<String> {
    let path = match std::env::var_os("DOCKER_CONFIG") {
        Some(dir) => PathBuf::from(dir).join("config.json"),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".docker/config.json"),
    };
    fs::read_to_string(path).ok()
}
