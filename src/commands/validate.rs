//! `shipshape validate`: kubeconform on every preset's render, once per Kubernetes
//! version, in a private temporary folder that is deleted however the run ends.

use super::{generate_for, read_spec, signals, write_error, CommandError, Exit};
use crate::external::process::{ProcessError, OUTPUT_LIMIT};
use std::fs;
use std::path::{Path, PathBuf};

/// The schemas kubeconform reads for the custom kinds the chart renders (KEDA's
/// `ScaledObject`, the Prometheus Operator's `ServiceMonitor`), in its
/// `{{ .ResourceKind }}{{ .KindSuffix }}.json` layout.
pub const CRD_SCHEMAS: &[(&str, &str)] = &[
    (
        "scaledobject-keda-v1alpha1.json",
        include_str!("../../schemas/crds/scaledobject-keda-v1alpha1.json"),
    ),
    (
        "servicemonitor-monitoring-v1.json",
        include_str!("../../schemas/crds/servicemonitor-monitoring-v1.json"),
    ),
];

/// Options of `shipshape validate`.
pub struct ValidateOptions {
    /// Kubernetes versions; empty: the spec's `kubernetesVersions`.
    pub kube_versions: Vec<String>,
    /// Extra schema locations, tried before the project's CRD schemas and the default.
    pub schema_locations: Vec<String>,
    /// kubeconform's path; `None`: found on `PATH`.
    pub kubeconform: Option<PathBuf>,
    /// How long one kubeconform run may take.
    pub timeout: std::time::Duration,
}

/// Finds a program on `PATH`.
fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// A private folder under the system temp dir (mode 0700, a name no other run uses),
/// deleted on drop or when a signal ends the run.
struct TempFolder {
    path: PathBuf,
    _cleanup: signals::Registered,
}

impl TempFolder {
    fn new(tag: &str) -> Result<TempFolder, CommandError> {
        use std::os::unix::fs::DirBuilderExt;
        signals::install();
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let mut attempt = 0u32;
        loop {
            let path = base.join(format!(
                "shipshape-{tag}-{}-{nanos:x}{attempt}",
                std::process::id()
            ));
            let cleanup = signals::register(&path);
            // `create` fails when the name exists (never follows a planted symlink).
            match fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    return Ok(TempFolder {
                        path,
                        _cleanup: cleanup,
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                    drop(cleanup);
                    attempt += 1;
                }
                Err(e) => return Err(write_error(&path)(e)),
            }
        }
    }
}

impl Drop for TempFolder {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// What to tell a user about a kubeconform run that did not finish.
fn process_hint(error: &ProcessError, timeout: std::time::Duration) -> String {
    use crate::external::kubeconform::INSTALL_HINT;
    match error {
        ProcessError::NotFound { .. } => INSTALL_HINT.into(),
        ProcessError::InterpreterMissing { .. } => {
            "install the interpreter the script's first line names, or pass `--kubeconform` with the kubeconform binary itself".into()
        }
        ProcessError::Spawn { program, .. } => format!(
            "check that `{}` is the kubeconform binary and executable (`chmod +x`)",
            program.display()
        ),
        ProcessError::TimedOut { .. } => format!(
            "raise `--timeout-seconds` (it was {}), or run the command by hand to see why kubeconform does not finish",
            timeout.as_secs()
        ),
        ProcessError::OutputTooLarge { .. } => format!(
            "kubeconform prints about 1 KiB per object, far below {} MiB; run the command by hand to see what it prints",
            OUTPUT_LIMIT >> 20
        ),
        ProcessError::Io { .. } => "run the command by hand to see what happens".into(),
    }
}

/// `shipshape validate`: renders every preset and runs kubeconform on them, once per
/// Kubernetes version.
pub fn validate(spec_path: &Path, options: &ValidateOptions) -> Result<Exit, CommandError> {
    use crate::external::kubeconform::{
        check_request, kubeconform_args, parse_kubeconform_output, KubeconformRequest, Outcome,
        INSTALL_HINT, SCHEMA_LOCATION_HINT,
    };
    let spec = read_spec(spec_path)?;
    let outputs = generate_for(&spec, spec_path)?;
    let program = match &options.kubeconform {
        Some(p) => p.clone(),
        None => find_on_path("kubeconform").ok_or_else(|| CommandError::Tool {
            message: "`kubeconform` is not on PATH".into(),
            hint: INSTALL_HINT.into(),
        })?,
    };
    let scratch = TempFolder::new("validate")?;
    let crds = scratch.path.join("crds");
    fs::create_dir_all(&crds).map_err(write_error(&crds))?;
    for (name, text) in CRD_SCHEMAS {
        fs::write(crds.join(name), text).map_err(write_error(&crds.join(name)))?;
    }
    let mut files = Vec::new();
    for (rel, text) in outputs.iter().filter(|(k, _)| k.starts_with("rendered/")) {
        let path = scratch.path.join(rel);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(write_error(dir))?;
        }
        fs::write(&path, text).map_err(write_error(&path))?;
        files.push(path.display().to_string());
    }
    let versions = if options.kube_versions.is_empty() {
        spec.kubernetes_versions.clone()
    } else {
        options.kube_versions.clone()
    };
    let mut locations = options.schema_locations.clone();
    locations.push(format!(
        "{}/{{{{ .ResourceKind }}}}{{{{ .KindSuffix }}}}.json",
        crds.display()
    ));
    let mut worst = Exit::Ok;
    for version in &versions {
        let request = KubeconformRequest {
            kubernetes_version: version.clone(),
            schema_locations: locations.clone(),
            files: files.clone(),
        };
        check_request(&request).map_err(|e| CommandError::BadArgument {
            message: e.to_string(),
        })?;
        let args = kubeconform_args(&request);
        let output = crate::external::process::run_process(&program, &args, None, options.timeout)
            .map_err(|e| CommandError::Tool {
                hint: process_hint(&e, options.timeout),
                message: e.to_string(),
            })?;
        let report = parse_kubeconform_output(&output.stdout, &output.stderr, output.status)
            .map_err(|e| CommandError::Tool {
                message: format!("kubeconform {version}: {e}"),
                hint: "run the same command by hand to see what kubeconform says".into(),
            })?;
        let prefix = scratch.path.display().to_string();
        let text = report.to_string().replace(&format!("{prefix}/"), "");
        match report.outcome {
            Outcome::Valid => println!(
                "kubernetes {version}: {} resources valid",
                report.count(Outcome::Valid)
            ),
            Outcome::Invalid => {
                print!("kubernetes {version}: invalid resources:\n{text}");
                worst = Exit::Findings;
            }
            Outcome::NoResources => {
                return Err(CommandError::Tool {
                    message: format!("kubeconform {version} validated no resource"),
                    hint: "check that the rendered files end in `.yaml`".into(),
                })
            }
            Outcome::MissingSchema => {
                return Err(CommandError::Tool {
                    message: format!(
                        "kubeconform {version} found no schema for: {}\n{text}",
                        report.missing_schema_kinds().join(", ")
                    ),
                    hint: SCHEMA_LOCATION_HINT.into(),
                })
            }
            Outcome::Error => {
                return Err(CommandError::Tool {
                    message: format!("kubeconform {version} could not check everything:\n{text}"),
                    hint: "pass `--schema-location` with the Kubernetes schemas when offline"
                        .into(),
                })
            }
        }
    }
    Ok(worst)
}
