//! The command layer: the only code that reads and writes files, prints, and runs
//! processes. Each command returns an [`Exit`] or a [`CommandError`] that knows its
//! exit code.

pub mod objdiff;

use crate::backends::native::{render_manifests, Release};
use crate::contract::schema::{spec_schema, values_schema};
use crate::generate::{generate_outputs, GenerateError, OutputFiles};
use crate::objects::build_objects;
use crate::spec::{load_spec, Spec, SpecError};
use crate::values::presets::presets;
use crate::values::{
    check_values_schema, parse_set_args, parse_values_yaml, resolve_values, ValuesError,
    ValuesSource,
};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Exit codes, as documented in `--help` and the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: success.
    Ok = 0,
    /// 1: guard findings, or committed output that is out of date.
    Findings = 1,
    /// 2: bad input (spec, values, arguments).
    BadInput = 2,
    /// 3: an external tool or service failed (kubeconform, a registry).
    ExternalTool = 3,
}

/// A command failed.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Values(#[from] ValuesError),
    #[error("{file}: {source}")]
    Generate { file: String, source: GenerateError },
    #[error("cannot read `{path}`: {source}")]
    Read { path: String, source: io::Error },
    #[error(
        "cannot write `{path}`: {source}\n  hint: the previous output, if any, is left as it was"
    )]
    Write { path: String, source: io::Error },
    #[error("`{path}` exists and was not written by shipshape (no `chart/Chart.yaml` in it)\n  hint: pass `--out` naming a new folder or one shipshape generated")]
    ForeignOutput { path: String },
    #[error("render failed: {0}")]
    Render(#[from] crate::expr::EvalError),
    #[error("{message}")]
    BadArgument { message: String },
    #[error("{message}\n  hint: {hint}")]
    Tool { message: String, hint: String },
}

impl CommandError {
    /// The exit code this error ends the process with.
    pub fn exit(&self) -> Exit {
        match self {
            CommandError::Spec(_)
            | CommandError::Values(_)
            | CommandError::Read { .. }
            | CommandError::ForeignOutput { .. }
            | CommandError::Render(_)
            | CommandError::BadArgument { .. } => Exit::BadInput,
            CommandError::Tool { .. } => Exit::ExternalTool,
            CommandError::Generate {
                source: GenerateError::Template(_),
                ..
            } => Exit::ExternalTool,
            CommandError::Generate {
                source: GenerateError::Values(_),
                ..
            } => Exit::BadInput,
            CommandError::Generate { .. } => Exit::Findings,
            CommandError::Write { .. } => Exit::ExternalTool,
        }
    }
}

fn read_text(path: &Path) -> Result<String, CommandError> {
    fs::read_to_string(path).map_err(|source| CommandError::Read {
        path: path.display().to_string(),
        source,
    })
}

/// Reads and checks the spec at `path`.
pub fn read_spec(path: &Path) -> Result<Spec, CommandError> {
    let text = read_text(path)?;
    Ok(load_spec(&text, &path.display().to_string())?)
}

/// Where `generate` writes by default: `generated/` beside the spec.
pub fn default_out_dir(spec_path: &Path) -> PathBuf {
    spec_path
        .parent()
        .map(|p| p.join("generated"))
        .unwrap_or_else(|| PathBuf::from("generated"))
}

/// Generates in memory, printing warning-level findings to standard error.
fn generate_for(spec: &Spec, spec_path: &Path) -> Result<OutputFiles, CommandError> {
    let generated = generate_outputs(spec).map_err(|source| CommandError::Generate {
        file: spec_path.display().to_string(),
        source,
    })?;
    if !generated.warnings.is_empty() {
        eprintln!("{}", crate::generate::format_findings(&generated.warnings));
    }
    Ok(generated.files)
}

/// `shipshape generate`: writes the chart and the renders, atomically.
pub fn generate(spec_path: &Path, out: &Path) -> Result<Exit, CommandError> {
    let spec = read_spec(spec_path)?;
    let files = generate_for(&spec, spec_path)?;
    write_tree_atomically(out, &files)?;
    println!("wrote {} files to {}", files.len(), out.display());
    Ok(Exit::Ok)
}

fn write_error(path: &Path) -> impl Fn(io::Error) -> CommandError + '_ {
    move |source| CommandError::Write {
        path: path.display().to_string(),
        source,
    }
}

/// Builds the output folder beside the target and renames it into place, so a
/// failure leaves the previous output untouched.
pub fn write_tree_atomically(out: &Path, files: &OutputFiles) -> Result<(), CommandError> {
    if out.exists() && !out.join("chart").join("Chart.yaml").exists() {
        let empty = fs::read_dir(out)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false);
        if !empty {
            return Err(CommandError::ForeignOutput {
                path: out.display().to_string(),
            });
        }
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent).map_err(write_error(&parent))?;
    let base = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let staging = parent.join(format!(".{base}.shipshape-new-{}", std::process::id()));
    let retired = parent.join(format!(".{base}.shipshape-old-{}", std::process::id()));
    if staging.exists() {
        fs::remove_dir_all(&staging).map_err(write_error(&staging))?;
    }
    let result = (|| {
        for (rel, text) in files {
            let path = staging.join(rel);
            if let Some(dir) = path.parent() {
                fs::create_dir_all(dir).map_err(write_error(dir))?;
            }
            fs::write(&path, text).map_err(write_error(&path))?;
        }
        if out.exists() {
            fs::rename(out, &retired).map_err(write_error(out))?;
            if let Err(e) = fs::rename(&staging, out) {
                let _ = fs::rename(&retired, out);
                return Err(write_error(out)(e));
            }
            fs::remove_dir_all(&retired).map_err(write_error(&retired))?;
        } else {
            fs::rename(&staging, out).map_err(write_error(out))?;
        }
        Ok(())
    })();
    if result.is_err() && staging.exists() {
        let _ = fs::remove_dir_all(&staging);
    }
    result
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
                files.insert(rel, read_text(&path)?);
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
    let paths: std::collections::BTreeSet<&String> = committed.keys().chain(fresh.keys()).collect();
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

/// `shipshape check`: exit 1 with a diff when the committed output is stale.
pub fn check(spec_path: &Path, out: &Path) -> Result<Exit, CommandError> {
    let spec = read_spec(spec_path)?;
    let fresh = generate_for(&spec, spec_path)?;
    let committed = read_tree(out)?;
    let drift = output_drift(&committed, &fresh);
    if drift.is_empty() {
        println!("{} is up to date ({} files)", out.display(), fresh.len());
        Ok(Exit::Ok)
    } else {
        // A committed file that is not a manifest stream still shows in the line diff.
        let objects =
            rendered_object_changes(&committed, &fresh, DiffFormat::Text).unwrap_or_default();
        let mut stdout = io::stdout().lock();
        if !objects.is_empty() {
            let _ = stdout
                .write_all(format!("rendered objects that would change:\n{objects}\n").as_bytes());
        }
        let _ = stdout.write_all(drift.as_bytes());
        eprintln!(
            "error: {} is out of date\n  hint: run `shipshape --spec {} generate --out {}` and commit the result",
            out.display(),
            spec_path.display(),
            out.display()
        );
        Ok(Exit::Findings)
    }
}

/// Options of `shipshape render`.
pub struct RenderOptions {
    pub preset: Option<String>,
    pub values_files: Vec<PathBuf>,
    pub set: Vec<String>,
    pub release: Release,
}

/// `shipshape render`: prints what `helm template` prints for these values, after the
/// values schema and the guards accept them (exit 1 with the findings otherwise).
pub fn render(spec_path: &Path, options: &RenderOptions) -> Result<Exit, CommandError> {
    let spec = read_spec(spec_path)?;
    let values = resolve_for(&spec, options)?;
    let findings = crate::guards::check_guards(&spec, &values);
    for finding in &findings {
        eprintln!("{finding}");
    }
    if findings
        .iter()
        .any(|f| f.severity == crate::guards::Severity::Error)
    {
        return Ok(Exit::Findings);
    }
    let docs = build_objects(&spec);
    let text = render_manifests(&spec, &docs, &values, &options.release)?;
    let _ = io::stdout().lock().write_all(text.as_bytes());
    Ok(Exit::Ok)
}

/// Where merged values came from, for messages: "the chart's defaults + preset `p` +
/// `-f a.yaml` + `--set`".
fn describe_sources(options: &RenderOptions) -> String {
    let mut parts = vec!["the chart's defaults".to_string()];
    if let Some(p) = &options.preset {
        parts.push(format!("preset `{p}`"));
    }
    parts.extend(
        options
            .values_files
            .iter()
            .map(|f| format!("`-f {}`", f.display())),
    );
    if !options.set.is_empty() {
        parts.push("`--set`".into());
    }
    parts.join(" + ")
}

/// The values of a preset, `-f` files and `--set` pairs, checked against the schema.
fn resolve_for(spec: &Spec, options: &RenderOptions) -> Result<serde_json::Value, CommandError> {
    let mut sources = Vec::new();
    for file in &options.values_files {
        let name = file.display().to_string();
        let values = parse_values_yaml(&read_text(file)?, &name)?;
        sources.push(ValuesSource::File { name, values });
    }
    if !options.set.is_empty() {
        sources.push(ValuesSource::Set(parse_set_args(&options.set)?));
    }
    let all = presets(spec);
    let overlay = match &options.preset {
        None => None,
        Some(name) => Some(
            &all.get(name)
                .ok_or_else(|| ValuesError::UnknownPreset {
                    name: name.clone(),
                    known: all.keys().cloned().collect(),
                })?
                .values,
        ),
    };
    let values = resolve_values(spec, overlay, &sources);
    check_values_schema(&values, &values_schema(spec), &describe_sources(options))?;
    Ok(values)
}

/// `shipshape schema`: prints the JSON schema of `shipshape.yaml`.
pub fn schema() -> Result<Exit, CommandError> {
    print!("{}", crate::backends::helm::pretty_json(&spec_schema()));
    Ok(Exit::Ok)
}

/// The KEDA `ScaledObject` schema kubeconform reads for the CRD, in its
/// `{{ .ResourceKind }}{{ .KindSuffix }}.json` layout.
const CRD_SCHEMAS: &[(&str, &str)] = &[(
    "scaledobject-keda-v1alpha1.json",
    include_str!("../../schemas/crds/scaledobject-keda-v1alpha1.json"),
)];

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

/// A folder under the system temp dir, removed on drop.
struct TempFolder(PathBuf);

impl TempFolder {
    fn new(tag: &str) -> Result<TempFolder, CommandError> {
        let dir = std::env::temp_dir().join(format!("shipshape-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).map_err(write_error(&dir))?;
        Ok(TempFolder(dir))
    }
}

impl Drop for TempFolder {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
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
    let crds = scratch.0.join("crds");
    fs::create_dir_all(&crds).map_err(write_error(&crds))?;
    for (name, text) in CRD_SCHEMAS {
        fs::write(crds.join(name), text).map_err(write_error(&crds.join(name)))?;
    }
    let mut files = Vec::new();
    for (rel, text) in outputs.iter().filter(|(k, _)| k.starts_with("rendered/")) {
        let path = scratch.0.join(rel);
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
                message: e.to_string(),
                hint: INSTALL_HINT.into(),
            })?;
        let report = parse_kubeconform_output(&output.stdout, &output.stderr, output.status)
            .map_err(|e| CommandError::Tool {
                message: format!("kubeconform {version}: {e}"),
                hint: "run the same command by hand to see what kubeconform says".into(),
            })?;
        let prefix = scratch.0.display().to_string();
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

/// `shipshape package`: writes `<name>-<version>.tgz`, byte-identical across runs.
pub fn package(spec_path: &Path, out_dir: &Path) -> Result<Exit, CommandError> {
    use sha2::Digest;
    let spec = read_spec(spec_path)?;
    let (bytes, _) = packaged_chart(&spec, spec_path)?;
    fs::create_dir_all(out_dir).map_err(write_error(out_dir))?;
    let path = out_dir.join(format!("{}-{}.tgz", spec.chart.name, spec.chart.version));
    let staging = out_dir.join(format!(
        ".{}.shipshape-new-{}",
        spec.chart.name,
        std::process::id()
    ));
    fs::write(&staging, &bytes).map_err(write_error(&staging))?;
    fs::rename(&staging, &path).map_err(write_error(&path))?;
    let digest = sha2::Sha256::digest(&bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
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
        message: e.to_string(),
        hint: "check the registry address, `--plain-http` and the credentials".into(),
    })?;
    println!(
        "pushed {}\ndigest: {}",
        outcome.reference, outcome.manifest_digest
    );
    Ok(Exit::Ok)
}

/// The Docker config file (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`).
fn docker_config_text() -> Option<String> {
    let path = match std::env::var_os("DOCKER_CONFIG") {
        Some(dir) => PathBuf::from(dir).join("config.json"),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".docker/config.json"),
    };
    fs::read_to_string(path).ok()
}

/// How `diff` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffFormat {
    Text,
    Markdown,
}

/// The object-aware changes between two output trees' renders, per preset;
/// empty when no rendered object differs.
pub fn rendered_object_changes(
    committed: &OutputFiles,
    fresh: &OutputFiles,
    format: DiffFormat,
) -> Result<String, CommandError> {
    use crate::commands::objdiff::{diff_manifests, format_markdown, format_text};
    let presets: std::collections::BTreeSet<&String> = committed
        .keys()
        .chain(fresh.keys())
        .filter(|k| k.starts_with("rendered/"))
        .collect();
    let mut report = String::new();
    for path in presets {
        let old = committed.get(path).map(String::as_str).unwrap_or("");
        let new = fresh.get(path).map(String::as_str).unwrap_or("");
        let changes = diff_manifests(old, new).map_err(|e| CommandError::BadArgument {
            message: format!("{path}: {e}"),
        })?;
        if changes.is_empty() {
            continue;
        }
        let preset = path
            .trim_start_matches("rendered/")
            .trim_end_matches(".yaml");
        match format {
            DiffFormat::Text => {
                report.push_str(&format!("preset `{preset}`:\n{}", format_text(&changes)))
            }
            DiffFormat::Markdown => report.push_str(&format_markdown(&changes).replacen(
                "### Rendered object changes",
                &format!("### Rendered object changes: preset `{preset}`"),
                1,
            )),
        }
    }
    Ok(report)
}

/// `shipshape diff`: what the rendered objects of every preset would change, against a
/// committed output folder.
pub fn diff(spec_path: &Path, against: &Path, format: DiffFormat) -> Result<Exit, CommandError> {
    let spec = read_spec(spec_path)?;
    let fresh = generate_for(&spec, spec_path)?;
    let committed = read_tree(against)?;
    let report = rendered_object_changes(&committed, &fresh, format)?;
    if report.is_empty() {
        match format {
            DiffFormat::Text => println!("no object changes"),
            DiffFormat::Markdown => println!("### Rendered object changes\n\nNo object changes."),
        }
        Ok(Exit::Ok)
    } else {
        print!("{report}");
        Ok(Exit::Findings)
    }
}

/// How `capacity` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapacityFormat {
    Table,
    Markdown,
    Json,
}

/// `shipshape capacity`: the peak connections of a preset (or values) with the
/// arithmetic; exit 1 when a budget is exceeded.
pub fn capacity(
    spec_path: &Path,
    options: &RenderOptions,
    format: CapacityFormat,
) -> Result<Exit, CommandError> {
    let spec = read_spec(spec_path)?;
    let values = resolve_for(&spec, options)?;
    let capacity = crate::capacity::Capacity::of(&spec, &values);
    let report = capacity.report()?;
    let text = match format {
        CapacityFormat::Table => crate::capacity::format_table(&report),
        CapacityFormat::Markdown => crate::capacity::format_markdown(&report),
        CapacityFormat::Json => {
            crate::backends::helm::pretty_json(&serde_json::to_value(&report).unwrap_or_default())
        }
    };
    print!("{text}");
    let findings = capacity.findings(&report)?;
    if findings.is_empty() {
        Ok(Exit::Ok)
    } else {
        for f in &findings {
            eprintln!(
                "error[{}] {}\n{}\n  hint: {}",
                f.rule, f.message, f.arithmetic, f.hint
            );
        }
        Ok(Exit::Findings)
    }
}
