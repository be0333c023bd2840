//! The command layer: the only code that reads and writes files, prints, and runs
//! processes. Each command returns an [`Exit`] or a [`CommandError`] that knows its
//! exit code.

pub mod init;
pub mod objdiff;
pub mod output;
pub mod preflight;
pub mod release;
pub mod render;
pub mod review;
pub mod signals;
pub mod validate;

pub use init::init;
pub use output::{output_drift, read_tree, write_tree_atomically};
pub use preflight::{preflight, PreflightFormat, PreflightOptions};
pub use release::{package, push, PushOptions};
pub use render::{render, render_parsed_by};
pub use validate::{validate, ValidateOptions};

use crate::backends::native::Release;
use crate::capacity::fit::presets_over;
use crate::contract::schema::{spec_schema, values_schema, values_schema_with};
use crate::contract::Contract;
use crate::generate::{generate_outputs_leaving, GenerateError, OutputFiles};
use crate::spec::{load_spec, Spec, SpecError};
use crate::values::{
    check_values_schema, parse_set_args, parse_values_yaml, ValuesError, ValuesSource,
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
    /// 3: an external tool or service failed (kubeconform, a registry), or the output
    /// could not be written or is held by another run. (A signal ends the process with
    /// 128 + N, see `signals`.)
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
    #[error("`{path}` is larger than {limit}, the most shipshape reads from a spec or values file\n  hint: a chart's values are far smaller; check that `{path}` is the file you meant")]
    TooLarge { path: String, limit: String },
    #[error(
        "cannot write `{path}`: {source}\n  hint: the previous output, if any, is left as it was"
    )]
    Write { path: String, source: io::Error },
    #[error("`{path}` was not written by shipshape (it has files but no `.shipshape-output` marker), so it is not replaced\n  hint: pass `--out` naming a new or empty folder, or one shipshape generated; a folder from a shipshape version before the marker: check it holds nothing of yours, delete it and run again")]
    ForeignOutput { path: String },
    #[error(
        "cannot use `{path}` as the output folder: {problem}\n  hint: pass `--out` naming a folder"
    )]
    BadOutput { path: String, problem: String },
    #[error("another shipshape run holds `{path}` (lock file `{lock}`)\n  hint: wait for that run to finish, then run again")]
    Locked { path: String, lock: String },
    #[error("`{path}` is a folder, so the package cannot be written there\n  hint: move the folder away or pass another `-o`")]
    PackageTarget { path: String },
    #[error("release name \"{name}\": {problem}\n  hint: a release name is lowercase letters, digits, `-` and `.`, starts and ends with a letter or digit, at most 53 characters, e.g. `my-release`")]
    ReleaseName { name: String, problem: &'static str },
    #[error("{0}")]
    ObjectTooLarge(#[from] crate::backends::limits::ObjectTooLarge),
    #[error("render failed: {0}")]
    Render(#[from] crate::expr::EvalError),
    #[error("{message}")]
    BadArgument { message: String },
    #[error("{message}\n  hint: {hint}")]
    Tool { message: String, hint: String },
    #[error(transparent)]
    Starter(#[from] crate::spec::starter::StarterError),
    #[error("`{path}` already exists, and `shipshape init` never overwrites a file\n  hint: pass `--spec` naming a new file, or move `{path}` away")]
    Exists { path: String },
}

impl CommandError {
    /// The exit code this error ends the process with.
    pub fn exit(&self) -> Exit {
        match self {
            CommandError::Spec(_)
            | CommandError::Values(_)
            | CommandError::Read { .. }
            | CommandError::TooLarge { .. }
            | CommandError::ObjectTooLarge(_)
            | CommandError::ForeignOutput { .. }
            | CommandError::BadOutput { .. }
            | CommandError::PackageTarget { .. }
            | CommandError::ReleaseName { .. }
            | CommandError::Render(_)
            | CommandError::BadArgument { .. }
            | CommandError::Exists { .. } => Exit::BadInput,
            CommandError::Starter(crate::spec::starter::StarterError::Template(_)) => {
                Exit::ExternalTool
            }
            CommandError::Starter(_) => Exit::BadInput,
            CommandError::Tool { .. } => Exit::ExternalTool,
            CommandError::Generate {
                source: GenerateError::Template(_),
                ..
            } => Exit::ExternalTool,
            CommandError::Generate {
                source: GenerateError::Values(_) | GenerateError::TooLarge { .. },
                ..
            } => Exit::BadInput,
            CommandError::Generate { .. } => Exit::Findings,
            CommandError::Write { .. } | CommandError::Locked { .. } => Exit::ExternalTool,
        }
    }
}

/// Reads a spec or values file, at most [`MAX_INPUT_BYTES`] of it: a larger file (or
/// an endless one such as `/dev/zero`) is refused after reading one byte more.
fn read_text(path: &Path) -> Result<String, CommandError> {
    use crate::spec::limits::{human_size, MAX_INPUT_BYTES};
    use std::io::Read;
    let read_error = |source| CommandError::Read {
        path: path.display().to_string(),
        source,
    };
    let mut bytes = Vec::new();
    fs::File::open(path)
        .and_then(|f| f.take(MAX_INPUT_BYTES as u64 + 1).read_to_end(&mut bytes))
        .map_err(read_error)?;
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(CommandError::TooLarge {
            path: path.display().to_string(),
            limit: human_size(MAX_INPUT_BYTES as u64),
        });
    }
    String::from_utf8(bytes).map_err(|e| {
        read_error(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        ))
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

/// Leaves `data` to the end of the process instead of freeing it node by node: for
/// what a command holds until it returns (the spec, the values, the object tree, the
/// text), and only there, since freed memory is reused by what comes after. At 400
/// workloads it saves about 15 ms of a 390 ms `render` (fastest of 25 runs).
fn left_to_exit<T>(data: T) {
    std::mem::forget(data);
}

/// What a command leaves of a generation ([`crate::generate::Leave`]): everything, to
/// the end of the process ([`left_to_exit`]).
struct LeftToExit;

impl crate::generate::Leave for LeftToExit {
    fn leave<T>(&self, data: T) {
        left_to_exit(data);
    }
}

/// Generates in memory, printing warning-level findings to standard error.
fn generate_for(spec: &Spec, spec_path: &Path) -> Result<OutputFiles, CommandError> {
    generate_for_with(spec, spec_path, &|_| {})
}

/// [`generate_for`], handing files to `files_ready` as soon as they are done: the
/// chart's, then each rendered preset's ([`generate_outputs_leaving`]).
fn generate_for_with(
    spec: &Spec,
    spec_path: &Path,
    files_ready: &crate::generate::FilesReady<'_>,
) -> Result<OutputFiles, CommandError> {
    let generated = generate_outputs_leaving(spec, &LeftToExit, files_ready).map_err(|source| {
        CommandError::Generate {
            file: spec_path.display().to_string(),
            source,
        }
    })?;
    if !generated.warnings.is_empty() {
        eprintln!("{}", crate::generate::format_findings(&generated.warnings));
    }
    Ok(generated.files)
}

/// `shipshape generate`: writes the chart and the renders, atomically.
pub fn generate(spec_path: &Path, out: &Path) -> Result<Exit, CommandError> {
    let spec = read_spec(spec_path)?;
    let staging = output::OutputSlot::claim(out)?.stage()?;
    // The chart (2,830 of 2,842 files at 400 workloads) is written while the presets
    // are reviewed, and each rendered preset's files when its review ends; a failure
    // to write them is reported after generation, whose own errors come first.
    // Whatever fails, the staging folder is deleted and the previous output stays.
    let write_failed = std::sync::OnceLock::new();
    let files = generate_for_with(&spec, spec_path, &|files| {
        if let Err(e) = staging.add(files) {
            let _ = write_failed.set(e);
        }
    })?;
    if let Some(e) = write_failed.into_inner() {
        return Err(e);
    }
    let written = staging.finish(&files)?;
    println!("wrote {} files to {}", files.len(), out.display());
    if let Some(warning) = written.warning() {
        eprintln!("{warning}");
    }
    left_to_exit((spec, files));
    Ok(Exit::Ok)
}

fn write_error(path: &Path) -> impl Fn(io::Error) -> CommandError + '_ {
    move |source| CommandError::Write {
        path: path.display().to_string(),
        source,
    }
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
#[derive(Clone)]
pub struct RenderOptions {
    pub preset: Option<String>,
    pub values_files: Vec<PathBuf>,
    pub set: Vec<String>,
    pub release: Release,
}

/// Longest release name Helm accepts (it leaves room for suffixes in object names).
const MAX_RELEASE_NAME: usize = 53;

/// Helm's release name rule, with Helm's words: a DNS-1123 subdomain
/// (`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`) of at most 53
/// characters.
pub fn check_release_name(name: &str) -> Result<(), CommandError> {
    let fail = |problem| {
        Err(CommandError::ReleaseName {
            name: name.escape_debug().to_string(),
            problem,
        })
    };
    if name.is_empty() {
        return fail("no name provided");
    }
    let label_ok = |label: &str| {
        let b = label.as_bytes();
        let edge = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        !b.is_empty()
            && edge(b[0])
            && edge(b[b.len() - 1])
            && b.iter().all(|&c| edge(c) || c == b'-')
    };
    if name.len() > MAX_RELEASE_NAME || !name.split('.').all(label_ok) {
        return fail("invalid release name, must match regex ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ and the length must not be longer than 53");
    }
    Ok(())
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
    let chart = chart_values_of(spec);
    let merged = merge_values_for(&chart, options)?;
    merged.check(spec)?;
    // A copy of their own: the chart's defaults they share end here.
    Ok(serde_json::Value::clone(&merged.values))
}

/// The chart's own values: its defaults, and its presets fitted over them.
struct ChartValues {
    defaults: serde_json::Value,
    presets: std::collections::BTreeMap<String, crate::values::presets::Preset>,
}

/// The chart's defaults and presets of `spec`.
fn chart_values_of(spec: &Spec) -> ChartValues {
    let defaults = crate::values::default_values(spec);
    let presets = presets_over(spec, crate::values::entries_of(&defaults));
    ChartValues { defaults, presets }
}

/// The values of a command, merged and not yet checked, with what checking them and
/// placing a violation in its source need.
struct MergedValues<'c> {
    /// The values, sharing the defaults' objects and arrays they do not change
    /// ([`crate::values::resolve_values_sharing_defaults`]).
    values: crate::values::SharingDefaults<'c>,
    presets: &'c std::collections::BTreeMap<String, crate::values::presets::Preset>,
    defaults: &'c serde_json::Value,
    /// Each `-f` file's name and text.
    texts: Vec<(String, String)>,
    set: serde_json::Map<String, serde_json::Value>,
    /// Where the values came from, for messages.
    describe: String,
}

/// Merges the chart's defaults, the preset, each `-f` file and `--set`, as Helm does.
fn merge_values_for<'c>(
    chart: &'c ChartValues,
    options: &RenderOptions,
) -> Result<MergedValues<'c>, CommandError> {
    merge_values_over(&chart.defaults, &chart.presets, options)
}

/// [`merge_values_for`] over the chart's `defaults` and `presets` apart; of the
/// presets, only the one `options` names is read.
fn merge_values_over<'c>(
    defaults: &'c serde_json::Value,
    presets: &'c std::collections::BTreeMap<String, crate::values::presets::Preset>,
    options: &RenderOptions,
) -> Result<MergedValues<'c>, CommandError> {
    let mut sources = Vec::new();
    let mut texts = Vec::new();
    for file in &options.values_files {
        let name = file.display().to_string();
        let text = read_text(file)?;
        let values = parse_values_yaml(&text, &name)?;
        sources.push(ValuesSource::File {
            name: name.clone(),
            values,
        });
        texts.push((name, text));
    }
    let set = parse_set_args(&options.set)?;
    if !options.set.is_empty() {
        sources.push(ValuesSource::Set(set.clone()));
    }
    let overlay = match &options.preset {
        None => None,
        Some(name) => Some(
            &presets
                .get(name)
                .ok_or_else(|| ValuesError::UnknownPreset {
                    name: name.escape_debug().to_string(),
                    known: presets.keys().cloned().collect(),
                })?
                .values,
        ),
    };
    let values = crate::values::resolve_values_sharing_defaults(
        crate::values::entries_of(defaults),
        overlay,
        &sources,
    );
    Ok(MergedValues {
        values,
        presets,
        defaults,
        texts,
        set,
        describe: describe_sources(options),
    })
}

impl MergedValues<'_> {
    /// Checks the values against `values.schema.json`, as Helm does before it renders
    /// (exit 2 with each violation placed in its source).
    fn check(&self, spec: &Spec) -> Result<(), CommandError> {
        let verdict = self.plan().and_then(|p| {
            crate::contract::plan_schema_verdict(spec, self.presets, p, self.defaults, &self.values)
        });
        self.check_after(spec, verdict)
    }

    /// The plan the values name (`capacityPlan`).
    fn plan(&self) -> Option<&str> {
        self.values
            .get(crate::values::presets::PLAN_KEY)
            .and_then(serde_json::Value::as_str)
    }

    /// [`MergedValues::check`] once the walk of the plan's schema has given `verdict`
    /// ([`crate::contract::plan_schema_verdict`], or its two halves computed apart).
    fn check_after(&self, spec: &Spec, verdict: Option<bool>) -> Result<(), CommandError> {
        let (values, describe) = (&self.values, self.describe.as_str());
        let whole_schema = || check_values_schema(values, &values_schema(spec), describe);
        // The schema of the plan the values name decides them as the whole schema does;
        // values it refuses are checked again with the whole schema, for its words.
        let plan = self.plan();
        // Accepted values, the usual case, are checked one rule at a time without
        // holding the plan's schema; only refused ones build it, to word the violations.
        if verdict == Some(true) {
            return Ok(());
        }
        let checked = match plan
            .and_then(|p| Contract::for_plan_over(spec, self.presets.clone(), p, self.defaults))
        {
            Some(contract) => {
                // The plan's rules are moved into the schema, not copied. Both are
                // freed here: what follows reuses their memory.
                let mut contract = contract;
                let schema = values_schema_with(
                    spec,
                    contract.take_rule_schemas(),
                    contract.pods,
                    self.defaults,
                );
                drop(contract);
                check_values_schema(values, &schema, describe).or_else(|_| whole_schema())
            }
            None => whole_schema(),
        };
        match checked {
            Err(ValuesError::Schema {
                source_name,
                mut violations,
            }) => {
                crate::values::place_violations(&mut violations, &self.texts, &self.set);
                Err(ValuesError::Schema {
                    source_name,
                    violations,
                }
                .into())
            }
            other => other.map_err(CommandError::from),
        }
    }
}

/// `shipshape schema`: prints the JSON schema of `shipshape.yaml`.
pub fn schema() -> Result<Exit, CommandError> {
    print!("{}", crate::backends::helm::pretty_json(&spec_schema()));
    Ok(Exit::Ok)
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
            DiffFormat::Markdown => {
                if !report.is_empty() {
                    report.push('\n');
                }
                report.push_str(&format_markdown(&changes).replacen(
                    "### Rendered object changes",
                    &format!("### Rendered object changes: preset `{preset}`"),
                    1,
                ))
            }
        }
    }
    Ok(report)
}

/// `shipshape diff`: what would change against a committed output folder: first the
/// capacity of every preset and budget and the guard findings that appear or
/// disappear, then the rendered objects. Guard errors do not stop it: a change the
/// guards refuse is reviewed like any other (exit 1).
pub fn diff(spec_path: &Path, against: &Path, format: DiffFormat) -> Result<Exit, CommandError> {
    let spec = read_spec(spec_path)?;
    let fresh = crate::generate::generate_review_leaving(&spec, &LeftToExit, &|_| {}).map_err(
        |source| CommandError::Generate {
            file: spec_path.display().to_string(),
            source,
        },
    )?;
    let mut committed = read_tree(against)?;
    let before = review::committed_records(&committed, &against.display().to_string())
        .map_err(|message| CommandError::BadArgument { message })?;
    // A preset whose values break the schema has no render now: its objects are not
    // compared (the findings say why), rather than listed as removed.
    for preset in &fresh.unrendered {
        committed.remove(&format!("rendered/{preset}.yaml"));
    }
    let capacity = match format {
        DiffFormat::Text => review::capacity_text(&before, &fresh.records),
        DiffFormat::Markdown => review::capacity_markdown(&before, &fresh.records),
    };
    let objects = rendered_object_changes(&committed, &fresh.files, format)?;
    let unrendered: Vec<String> = fresh
        .unrendered
        .iter()
        .map(|p| {
            format!("preset `{p}` is not rendered: its values are refused (see the guard findings)")
        })
        .collect();
    let mut out = capacity.text;
    match format {
        DiffFormat::Text => {
            for line in &unrendered {
                out.push_str(&format!("{line}\n"));
            }
            if objects.is_empty() {
                out.push_str("no object changes\n");
            } else {
                out.push_str(&objects);
            }
        }
        DiffFormat::Markdown => {
            for line in &unrendered {
                out.push_str(&format!("> {line}\n\n"));
            }
            if objects.is_empty() {
                out.push_str("### Rendered object changes\n\nNo object changes.\n");
            } else {
                out.push_str(&objects);
            }
        }
    }
    print!("{out}");
    let refused = fresh
        .findings
        .iter()
        .any(|(_, f)| f.severity == crate::guards::Severity::Error);
    if objects.is_empty() && !capacity.changed && !refused {
        Ok(Exit::Ok)
    } else {
        Ok(Exit::Findings)
    }
}

/// How `capacity` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapacityFormat {
    Table,
    Markdown,
    Json,
    /// The figure `generate` writes to `capacity/<preset>.svg`.
    Svg,
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
        CapacityFormat::Svg => {
            let preset = options
                .preset
                .as_deref()
                .unwrap_or(crate::values::presets::DEFAULT_PRESET);
            let mut title = crate::capacity::svg::figure_title(&spec.chart.name, preset);
            let mut extra: Vec<String> = options
                .values_files
                .iter()
                .map(|f| format!("`-f {}`", f.display()))
                .collect();
            if !options.set.is_empty() {
                extra.push("`--set`".into());
            }
            if !extra.is_empty() {
                title.push_str(&format!(" with {}", extra.join(" + ")));
            }
            let budgets = crate::capacity::breakdown::budget_uses(&capacity, &report)?;
            crate::capacity::svg::capacity_svg(&title, &budgets)
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
