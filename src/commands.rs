//! The command layer: the only code that reads and writes files, prints, and runs
//! processes. Each command returns an [`Exit`] or a [`CommandError`] that knows its
//! exit code.

use crate::generate::{generate_outputs, presets, GenerateError, OutputFiles};
use crate::objects::build_objects;
use crate::render::{render_manifests, Release};
use crate::schema::{spec_schema, values_schema};
use crate::spec::{load_spec, Spec, SpecError};
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
}

impl CommandError {
    /// The exit code this error ends the process with.
    pub fn exit(&self) -> Exit {
        match self {
            CommandError::Spec(_)
            | CommandError::Values(_)
            | CommandError::Read { .. }
            | CommandError::ForeignOutput { .. }
            | CommandError::Render(_) => Exit::BadInput,
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

fn generate_for(spec: &Spec, spec_path: &Path) -> Result<OutputFiles, CommandError> {
    generate_outputs(spec).map_err(|source| CommandError::Generate {
        file: spec_path.display().to_string(),
        source,
    })
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
        let mut stdout = io::stdout().lock();
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

/// `shipshape render`: prints what `helm template` prints for these values.
pub fn render(spec_path: &Path, options: &RenderOptions) -> Result<Exit, CommandError> {
    let spec = read_spec(spec_path)?;
    let mut sources = Vec::new();
    for file in &options.values_files {
        let name = file.display().to_string();
        let values = parse_values_yaml(&read_text(file)?, &name)?;
        sources.push(ValuesSource::File { name, values });
    }
    if !options.set.is_empty() {
        sources.push(ValuesSource::Set(parse_set_args(&options.set)?));
    }
    let all = presets(&spec);
    let overlay = match &options.preset {
        None => None,
        Some(name) => Some(all.get(name).ok_or_else(|| ValuesError::UnknownPreset {
            name: name.clone(),
            known: all.keys().cloned().collect(),
        })?),
    };
    let values = resolve_values(&spec, overlay, &sources);
    check_values_schema(&values, &values_schema(&spec), "values")?;
    let docs = build_objects(&spec);
    let text = render_manifests(&spec, &docs, &values, &options.release)?;
    let _ = io::stdout().lock().write_all(text.as_bytes());
    Ok(Exit::Ok)
}

/// `shipshape schema`: prints the JSON schema of `shipshape.yaml`.
pub fn schema() -> Result<Exit, CommandError> {
    print!("{}", crate::chart::pretty_json(&spec_schema()));
    Ok(Exit::Ok)
}
