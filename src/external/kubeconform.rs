//! kubeconform: the arguments to run it with and the reading of its JSON report.
//!
//! This module is pure: it neither runs kubeconform nor touches files. The caller runs
//! `kubeconform` with [`kubeconform_args`] (through `process::run_process`) and hands its
//! standard output and exit code to [`parse_kubeconform_json`] (or its standard output,
//! standard error and exit code to [`parse_kubeconform_output`]).
//!
//! Facts from the recordings in `shared/fixtures/kubeconform` (kubeconform v0.7.x):
//! - the exit status is 1 both for an invalid manifest and for a missing schema, so the
//!   outcome is read from each resource's `status`, never from the exit status alone;
//! - a kind without a schema is `statusError` with `msg` "could not find schema for KIND",
//!   whether it is a CRD or every schema location is wrong;
//! - `-ignore-missing-schemas` turns that into a silent `statusSkipped`, so it is never used;
//! - an invalid `-kubernetes-version` (it must be `x.y.z`) prints Go's flag usage instead of
//!   JSON; reading standard input from a terminal or `/dev/null` prints a log line;
//! - resources are reported in no fixed order (kubeconform validates on several threads).

use std::fmt;

use serde::Deserialize;

/// The `-schema-location` value that stands for kubeconform's built-in schema repository.
pub const DEFAULT_SCHEMA_LOCATION: &str = "default";

/// What to tell a user whose machine has no kubeconform.
pub const INSTALL_HINT: &str =
    "install kubeconform and put it on PATH, or pass `--kubeconform PATH`";

/// What to tell a user when kubeconform found no schema for a kind.
pub const SCHEMA_LOCATION_HINT: &str =
    "add a schema location that has it (kubeconform's `-schema-location`), for a CRD a catalog of CRD schemas";

/// How much of a line of unexpected output an error quotes.
const QUOTE_LIMIT: usize = 200;

/// One kubeconform run: what to validate and against which schemas.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KubeconformRequest {
    /// Kubernetes version to validate against, as a full `x.y.z` (e.g. `1.31.0`).
    pub kubernetes_version: String,
    /// Schema locations tried before kubeconform's default one, in order: a directory, a URL,
    /// or a template such as `DIR/{{ .ResourceKind }}{{ .KindSuffix }}.json`.
    pub schema_locations: Vec<String>,
    /// Manifest files to validate (paths ending in `.yaml`, `.yml` or `.json`).
    pub files: Vec<String>,
}

/// Builds kubeconform's argument list for `req`.
///
/// Always `-strict -summary -verbose -output json -kubernetes-version X
/// [-schema-location L]... -schema-location default -- FILE...`. kubeconform parses its
/// flags with Go's `flag` package, which stops at `--`, so a file name starting with `-`
/// stays a file. `-ignore-missing-schemas` is never passed: it would hide a missing schema
/// as a skipped resource. Check the request first with [`check_request`].
pub fn kubeconform_args(req: &KubeconformRequest) -> Vec<String> {
    let mut args: Vec<String> = [
        "-strict",
        "-summary",
        "-verbose",
        "-output",
        "json",
        "-kubernetes-version",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(req.kubernetes_version.clone());
    // The project's own locations come first: kubeconform moves to the next location
    // only on a 404, so behind an unreachable default one they would never be read.
    for location in &req.schema_locations {
        args.push("-schema-location".to_string());
        args.push(location.clone());
    }
    args.push("-schema-location".to_string());
    args.push(DEFAULT_SCHEMA_LOCATION.to_string());
    args.push("--".to_string());
    args.extend(req.files.iter().cloned());
    args
}

/// A request that kubeconform would reject or misread.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KubeconformRequestError {
    /// kubeconform accepts only `master` or a full `x.y.z` version.
    #[error(
        "kubernetes version `{version}` is not a full `x.y.z` version: kubeconform rejects it; write it like `1.31.0`"
    )]
    BadKubernetesVersion {
        /// The version as given.
        version: String,
    },
    /// With no file kubeconform reads standard input instead.
    #[error("no manifest file to validate: kubeconform would read standard input instead")]
    NoFiles,
    /// kubeconform silently skips files whose names do not end in a YAML or JSON extension.
    #[error(
        "manifest file `{file}` does not end in `.yaml`, `.yml` or `.json`: kubeconform would skip it without a word; rename it"
    )]
    NotManifestFile {
        /// The file as given.
        file: String,
    },
}

/// Checks that kubeconform will accept `req` and validate every file in it.
pub fn check_request(req: &KubeconformRequest) -> Result<(), KubeconformRequestError> {
    if !is_kubeconform_version(&req.kubernetes_version) {
        return Err(KubeconformRequestError::BadKubernetesVersion {
            version: req.kubernetes_version.clone(),
        });
    }
    if req.files.is_empty() {
        return Err(KubeconformRequestError::NoFiles);
    }
    for file in &req.files {
        let lower = file.to_ascii_lowercase();
        if ![".yaml", ".yml", ".json"]
            .iter()
            .any(|ext| lower.ends_with(ext))
        {
            return Err(KubeconformRequestError::NotManifestFile { file: file.clone() });
        }
    }
    Ok(())
}

/// `master` or `digits.digits.digits`, as kubeconform's flag parser demands.
fn is_kubeconform_version(version: &str) -> bool {
    if version == "master" {
        return true;
    }
    let parts: Vec<&str> = version.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// A resource's `status` as kubeconform reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceStatus {
    /// `statusValid`.
    Valid,
    /// `statusInvalid`: the resource breaks its schema.
    Invalid,
    /// `statusError`: the resource could not be checked (missing schema, unreadable YAML…).
    Error,
    /// `statusSkipped`: the kind was excluded (`-skip`, or `-ignore-missing-schemas`).
    Skipped,
    /// An empty status: an empty YAML document, listed only with `-verbose`.
    Empty,
}

impl ResourceStatus {
    /// The lowercase word used in summaries: `valid`, `invalid`, `error`, `skipped`, `empty`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Valid => "valid",
            Self::Invalid => "invalid",
            Self::Error => "error",
            Self::Skipped => "skipped",
            Self::Empty => "empty",
        }
    }

    fn from_kubeconform(status: &str) -> Option<Self> {
        Some(match status {
            "statusValid" => Self::Valid,
            "statusInvalid" => Self::Invalid,
            "statusError" => Self::Error,
            "statusSkipped" => Self::Skipped,
            "" => Self::Empty,
            _ => return None,
        })
    }
}

impl fmt::Display for ResourceStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a run, or one resource in it, means for the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything that was checked is valid (skipped and empty documents included).
    Valid,
    /// kubeconform reported no resource at all: nothing was validated.
    NoResources,
    /// A manifest is wrong: it breaks its schema, or is not well-formed YAML (duplicate
    /// key, unparsable document).
    Invalid,
    /// No schema location had a schema for a kind: add one (see [`SCHEMA_LOCATION_HINT`]).
    MissingSchema,
    /// kubeconform failed for another reason (a schema download failed, a file could not
    /// be read…): the manifests were not fully checked.
    Error,
}

impl Outcome {
    /// Rank used to pick a run's outcome: the higher one wins.
    fn severity(self) -> u8 {
        match self {
            Self::Valid => 0,
            Self::NoResources => 1,
            Self::Invalid => 2,
            Self::MissingSchema => 3,
            Self::Error => 4,
        }
    }
}

/// One entry of kubeconform's `validationErrors`, or one `- at 'PATH': MSG` part of `msg`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ValidationError {
    /// JSON pointer into the resource, e.g. `/spec/replicas`.
    pub path: String,
    /// What is wrong there.
    pub msg: String,
}

/// The verdict on one resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceResult {
    /// File the resource came from (`stdin` when read from standard input).
    pub filename: String,
    /// `kind`; empty when the document could not be read.
    pub kind: String,
    /// `metadata.name`.
    pub name: String,
    /// `apiVersion`, e.g. `apps/v1`.
    pub version: String,
    /// kubeconform's status.
    pub status: ResourceStatus,
    /// kubeconform's message (empty for valid and skipped resources).
    pub msg: String,
    /// `validationErrors` as kubeconform lists them; v0.7 lists only the top path
    /// (`/spec`: "validation failed"), see [`ResourceResult::details`] for the rest.
    pub validation_errors: Vec<ValidationError>,
}

impl ResourceResult {
    /// What this resource means for the user.
    pub fn outcome(&self) -> Outcome {
        match self.status {
            ResourceStatus::Valid | ResourceStatus::Skipped | ResourceStatus::Empty => {
                Outcome::Valid
            }
            ResourceStatus::Invalid => Outcome::Invalid,
            ResourceStatus::Error => {
                if self.missing_schema_kind().is_some() {
                    Outcome::MissingSchema
                } else if MANIFEST_ERROR_PREFIXES
                    .iter()
                    .any(|p| self.msg.starts_with(p))
                {
                    Outcome::Invalid
                } else {
                    Outcome::Error
                }
            }
        }
    }

    /// The kind kubeconform found no schema for, if that is this resource's error.
    pub fn missing_schema_kind(&self) -> Option<&str> {
        if self.status != ResourceStatus::Error {
            return None;
        }
        self.msg
            .strip_prefix(MISSING_SCHEMA_PREFIX)
            .map(str::trim)
            .filter(|kind| !kind.is_empty())
    }

    /// Every `- at 'PATH': MSG` in `msg`, leaving out the bare "validation failed" parents,
    /// sorted by path (kubeconform's order varies from run to run).
    pub fn details(&self) -> Vec<ValidationError> {
        let mut details = parse_details(&self.msg);
        details.retain(|d| d.msg != "validation failed");
        details.sort_by(|a, b| a.path.cmp(&b.path).then_with(|| a.msg.cmp(&b.msg)));
        details
    }

    /// The message on one line: for a schema violation each `PATH: MSG` joined with `; `,
    /// otherwise `msg` with its line breaks and runs of spaces collapsed.
    pub fn message(&self) -> String {
        let details = self.details();
        if self.status == ResourceStatus::Invalid && !details.is_empty() {
            return details
                .iter()
                .map(|d| format!("{}: {}", d.path, d.msg))
                .collect::<Vec<_>>()
                .join("; ");
        }
        collapse_whitespace(&self.msg)
    }
}

/// How kubeconform words a missing schema.
const MISSING_SCHEMA_PREFIX: &str = "could not find schema for ";

/// How kubeconform words an error that lies in the manifest, not in the tool.
const MANIFEST_ERROR_PREFIXES: &[&str] = &[
    "error unmarshalling resource",
    "error while parsing",
    "resource missing a Kind",
    "prohibited resource kind",
];

impl fmt::Display for ResourceResult {
    /// `<file>: <Kind>/<name>: <status>: <message>`, without the parts that are empty.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.filename)?;
        if !self.kind.is_empty() || !self.name.is_empty() {
            write!(f, ": {}/{}", self.kind, self.name)?;
        }
        write!(f, ": {}", self.status)?;
        let message = self.message();
        if !message.is_empty() {
            write!(f, ": {message}")?;
        }
        Ok(())
    }
}

/// kubeconform's counts (`-summary`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub struct Summary {
    /// Valid resources.
    pub valid: u64,
    /// Invalid resources.
    pub invalid: u64,
    /// Resources that could not be checked.
    pub errors: u64,
    /// Skipped resources.
    pub skipped: u64,
}

impl Summary {
    /// All resources counted.
    pub fn total(&self) -> u64 {
        self.valid + self.invalid + self.errors + self.skipped
    }
}

/// A parsed kubeconform JSON report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeconformReport {
    /// Resources in kubeconform's order (all of them with `-verbose`, else the non-valid).
    pub resources: Vec<ResourceResult>,
    /// The counts, when kubeconform ran with `-summary`.
    pub summary: Option<Summary>,
    /// The run's outcome: the most severe of the resources' outcomes, ranked
    /// `Error` > `MissingSchema` > `Invalid` > `NoResources` > `Valid` (an incomplete check
    /// outranks findings; every finding still shows in [`summarize`]).
    pub outcome: Outcome,
}

impl KubeconformReport {
    /// How many resources have `outcome`.
    pub fn count(&self, outcome: Outcome) -> usize {
        self.resources
            .iter()
            .filter(|r| r.outcome() == outcome)
            .count()
    }

    /// The kinds that had no schema, sorted and without repeats.
    pub fn missing_schema_kinds(&self) -> Vec<&str> {
        let mut kinds: Vec<&str> = self
            .resources
            .iter()
            .filter_map(ResourceResult::missing_schema_kind)
            .collect();
        kinds.sort_unstable();
        kinds.dedup();
        kinds
    }
}

impl fmt::Display for KubeconformReport {
    /// The lines of [`summarize`], one per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in summarize(self) {
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}

/// One line per resource that is not valid (empty documents left out):
/// `<file>: <Kind>/<name>: <status>: <message>`, sorted by file, kind and name so that the
/// text does not depend on kubeconform's thread scheduling.
pub fn summarize(report: &KubeconformReport) -> Vec<String> {
    let mut listed: Vec<&ResourceResult> = report
        .resources
        .iter()
        .filter(|r| !matches!(r.status, ResourceStatus::Valid | ResourceStatus::Empty))
        .collect();
    listed.sort_by(|a, b| {
        (&a.filename, &a.kind, &a.name, &a.msg).cmp(&(&b.filename, &b.kind, &b.name, &b.msg))
    });
    listed.iter().map(|r| r.to_string()).collect()
}

/// Why kubeconform's output could not be read as a report.
#[derive(Debug, thiserror::Error)]
pub enum KubeconformParseError {
    /// kubeconform printed nothing.
    #[error("kubeconform printed nothing ({}): look at its standard error", describe_exit(*exit_code))]
    EmptyOutput {
        /// kubeconform's exit code.
        exit_code: Option<i32>,
    },
    /// kubeconform printed its usage: it rejected an argument.
    #[error("kubeconform rejected its arguments: `{first_line}`{hint}")]
    BadArguments {
        /// The first line kubeconform printed.
        first_line: String,
        /// A fix hint (`; ...`), or empty.
        hint: String,
    },
    /// kubeconform printed text, not JSON (a log line, the text format…).
    #[error("kubeconform printed text instead of a JSON report ({}): `{first_line}`", describe_exit(*exit_code))]
    NotJson {
        /// The first line kubeconform printed.
        first_line: String,
        /// kubeconform's exit code.
        exit_code: Option<i32>,
    },
    /// The output looks like JSON but is not kubeconform's report.
    #[error("kubeconform's JSON report is malformed (first line `{first_line}`): {source}")]
    Malformed {
        /// The first line kubeconform printed.
        first_line: String,
        /// What serde found wrong.
        source: serde_json::Error,
    },
    /// A resource has a status this parser does not know.
    #[error("kubeconform reported unknown status `{status}` for `{filename}`: {kind}/{name}")]
    UnknownStatus {
        /// The status as printed.
        status: String,
        /// The resource's file.
        filename: String,
        /// The resource's kind.
        kind: String,
        /// The resource's name.
        name: String,
    },
    /// The exit code contradicts the report.
    #[error(
        "kubeconform {} but its report says {}: not trusting it",
        describe_exit(*exit_code),
        if *reported_failure { "some resources failed" } else { "no resource failed" }
    )]
    ExitCodeMismatch {
        /// kubeconform's exit code.
        exit_code: Option<i32>,
        /// Whether the report holds an invalid or error resource.
        reported_failure: bool,
    },
}

fn describe_exit(exit_code: Option<i32>) -> String {
    match exit_code {
        Some(code) => format!("exited with status {code}"),
        None => "was ended by a signal".to_string(),
    }
}

#[derive(Deserialize)]
struct RawReport {
    #[serde(deserialize_with = "null_as_empty")]
    resources: Vec<RawResource>,
    #[serde(default)]
    summary: Option<Summary>,
}

#[derive(Deserialize)]
struct RawResource {
    #[serde(default)]
    filename: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    version: String,
    status: String,
    #[serde(default)]
    msg: String,
    #[serde(
        default,
        rename = "validationErrors",
        deserialize_with = "null_as_empty"
    )]
    validation_errors: Vec<ValidationError>,
}

/// Reads a JSON array that Go may print as `null`.
fn null_as_empty<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<Vec<T>>::deserialize(deserializer).map(Option::unwrap_or_default)
}

/// Parses the standard output of `kubeconform -output json` (with `-summary -verbose`) and
/// decides the run's outcome from the resources.
///
/// `exit_code` is only cross-checked: kubeconform exits 1 exactly when a resource is
/// invalid or in error, so a disagreement means the output is not to be trusted.
pub fn parse_kubeconform_json(
    stdout: &str,
    exit_code: Option<i32>,
) -> Result<KubeconformReport, KubeconformParseError> {
    let text = stdout.trim();
    if text.is_empty() {
        return Err(KubeconformParseError::EmptyOutput { exit_code });
    }
    if !text.starts_with('{') {
        return Err(text_error(text, exit_code));
    }
    let raw: RawReport =
        serde_json::from_str(text).map_err(|source| KubeconformParseError::Malformed {
            first_line: first_line(text),
            source,
        })?;

    let mut resources = Vec::with_capacity(raw.resources.len());
    for r in raw.resources {
        let Some(status) = ResourceStatus::from_kubeconform(&r.status) else {
            return Err(KubeconformParseError::UnknownStatus {
                status: r.status,
                filename: r.filename,
                kind: r.kind,
                name: r.name,
            });
        };
        resources.push(ResourceResult {
            filename: r.filename,
            kind: r.kind,
            name: r.name,
            version: r.version,
            status,
            msg: r.msg,
            validation_errors: r.validation_errors,
        });
    }

    let counted = raw.summary.map_or(0, |s| s.total());
    let listed = resources
        .iter()
        .filter(|r| r.status != ResourceStatus::Empty)
        .count();
    let outcome = if listed == 0 && counted == 0 {
        Outcome::NoResources
    } else {
        resources
            .iter()
            .map(ResourceResult::outcome)
            .max_by_key(|o| o.severity())
            .unwrap_or(Outcome::Valid)
    };

    let reported_failure = resources
        .iter()
        .any(|r| matches!(r.status, ResourceStatus::Invalid | ResourceStatus::Error))
        || raw.summary.is_some_and(|s| s.invalid + s.errors > 0);
    let expected_exit = if reported_failure { 1 } else { 0 };
    if exit_code != Some(expected_exit) {
        return Err(KubeconformParseError::ExitCodeMismatch {
            exit_code,
            reported_failure,
        });
    }

    Ok(KubeconformReport {
        resources,
        summary: raw.summary,
        outcome,
    })
}

/// Like [`parse_kubeconform_json`], but when standard output is empty, explains the failure
/// from standard error (where kubeconform prints its usage and its fatal log lines).
pub fn parse_kubeconform_output(
    stdout: &str,
    stderr: &str,
    exit_code: Option<i32>,
) -> Result<KubeconformReport, KubeconformParseError> {
    let err_text = stderr.trim();
    if stdout.trim().is_empty() && !err_text.is_empty() {
        return Err(text_error(err_text, exit_code));
    }
    parse_kubeconform_json(stdout, exit_code)
}

/// The error for output that is text, not JSON.
fn text_error(text: &str, exit_code: Option<i32>) -> KubeconformParseError {
    let first = first_line(text);
    let usage = text.lines().any(|l| l.starts_with("Usage: "))
        || first.starts_with("invalid value ")
        || first.starts_with("flag provided but not defined")
        || first.starts_with("failed parsing command line")
        || first.starts_with("failed initialising schema location registry");
    if usage {
        let hint = if first.contains("-kubernetes-version") {
            "; give the Kubernetes version as a full `x.y.z`, e.g. `1.31.0`".to_string()
        } else if first.contains("schema location") {
            "; check the `-schema-location` values".to_string()
        } else {
            String::new()
        };
        KubeconformParseError::BadArguments {
            first_line: first,
            hint,
        }
    } else {
        KubeconformParseError::NotJson {
            first_line: first,
            exit_code,
        }
    }
}

/// The first non-blank line of `text`, trimmed and cut to [`QUOTE_LIMIT`] characters.
fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.chars().count() > QUOTE_LIMIT {
        let cut: String = line.chars().take(QUOTE_LIMIT).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

/// Splits kubeconform's `... - at 'PATH': MSG   - at 'PATH': MSG` into its parts.
fn parse_details(msg: &str) -> Vec<ValidationError> {
    const MARK: &str = "- at '";
    let mut details = Vec::new();
    let mut rest = msg;
    while let Some(start) = rest.find(MARK) {
        let after = &rest[start + MARK.len()..];
        let Some(end_path) = after.find("': ") else {
            break;
        };
        let path = &after[..end_path];
        let body = &after[end_path + 3..];
        let end_msg = body.find(MARK).unwrap_or(body.len());
        details.push(ValidationError {
            path: path.to_string(),
            msg: collapse_whitespace(&body[..end_msg]),
        });
        rest = &body[end_msg..];
    }
    details
}

/// Joins all runs of whitespace (line breaks included) into single spaces.
fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// The recordings; `shared/` sits beside the crate (`<repo>/../shared`).
    fn fixtures_dir() -> PathBuf {
        PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../shared/fixtures/kubeconform"
        ))
    }

    /// A recording's combined output and exit code (`None` when it has no `.rc`).
    fn recording(name: &str) -> (String, Option<i32>) {
        let dir = fixtures_dir().join("outputs");
        let out_path = dir.join(format!("{name}.out"));
        let out = std::fs::read_to_string(&out_path)
            .unwrap_or_else(|e| panic!("read {}: {e}", out_path.display()));
        let rc = std::fs::read_to_string(dir.join(format!("{name}.rc")))
            .ok()
            .map(|s| s.trim().parse::<i32>().expect("numeric .rc"));
        (out, rc)
    }

    fn parse(name: &str) -> KubeconformReport {
        let (out, rc) = recording(name);
        parse_kubeconform_json(&out, rc).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn parse_err(name: &str) -> KubeconformParseError {
        let (out, rc) = recording(name);
        match parse_kubeconform_json(&out, rc) {
            Ok(report) => panic!("{name}: expected an error, got {report:?}"),
            Err(e) => e,
        }
    }

    fn find<'a>(report: &'a KubeconformReport, kind: &str, name: &str) -> &'a ResourceResult {
        report
            .resources
            .iter()
            .find(|r| r.kind == kind && r.name == name)
            .unwrap_or_else(|| panic!("no {kind}/{name} in {report:?}"))
    }

    fn summary(valid: u64, invalid: u64, errors: u64, skipped: u64) -> Option<Summary> {
        Some(Summary {
            valid,
            invalid,
            errors,
            skipped,
        })
    }

    /// Every recording has a test below; a new recording without one fails here.
    #[test]
    fn every_recording_is_covered() {
        let covered = [
            "bad-version-flag",
            "crd-ignore-missing-json",
            "crd-missing-schema-json",
            "crd-monitoring-gateway-invalid-json",
            "crd-monitoring-gateway-valid-json",
            "crd-skip-kind-json",
            "dupkey-json",
            "invalid-text",
            "invalid-verbose-json",
            "no-schemas-json",
            "stdin-empty-json",
            "stdin-multi-verbose-json",
            "valid-json",
            "valid-verbose-json",
            "version",
        ];
        let mut found: Vec<String> = std::fs::read_dir(fixtures_dir().join("outputs"))
            .expect("fixtures dir: symlink shared/ beside the crate")
            .filter_map(|e| {
                let name = e.expect("dir entry").file_name().into_string().ok()?;
                name.strip_suffix(".out").map(str::to_string)
            })
            .collect();
        found.sort();
        assert_eq!(found, covered);
    }

    #[test]
    fn valid_json_without_verbose_lists_nothing_but_counts() {
        let report = parse("valid-json");
        assert!(report.resources.is_empty());
        assert_eq!(report.summary, summary(2, 0, 0, 0));
        assert_eq!(report.outcome, Outcome::Valid);
        assert!(summarize(&report).is_empty());
    }

    #[test]
    fn valid_verbose_json() {
        let report = parse("valid-verbose-json");
        assert_eq!(report.outcome, Outcome::Valid);
        assert_eq!(report.summary, summary(2, 0, 0, 0));
        assert_eq!(
            report.resources[0],
            ResourceResult {
                filename: "valid.yaml".into(),
                kind: "Service".into(),
                name: "demo-api".into(),
                version: "v1".into(),
                status: ResourceStatus::Valid,
                msg: String::new(),
                validation_errors: vec![],
            }
        );
        let deploy = find(&report, "Deployment", "demo-api");
        assert_eq!(deploy.version, "apps/v1");
        assert_eq!(deploy.status, ResourceStatus::Valid);
        assert!(summarize(&report).is_empty());
        assert_eq!(report.to_string(), "");
    }

    #[test]
    fn crd_schemas_as_a_second_location_validate_monitoring_and_gateway_kinds() {
        let report = parse("crd-monitoring-gateway-valid-json");
        assert_eq!(report.outcome, Outcome::Valid);
        assert_eq!(report.summary, summary(2, 0, 0, 0));
        for kind in ["ServiceMonitor", "HTTPRoute"] {
            assert_eq!(find(&report, kind, "r-api").status, ResourceStatus::Valid);
        }
    }

    #[test]
    fn crd_schema_violations_are_invalid_with_the_crd_path() {
        let report = parse("crd-monitoring-gateway-invalid-json");
        assert_eq!(report.outcome, Outcome::Invalid);
        assert_eq!(report.summary, summary(0, 2, 0, 0));
        let monitor = find(&report, "ServiceMonitor", "r-api");
        assert_eq!(monitor.status, ResourceStatus::Invalid);
        assert_eq!(
            monitor.details(),
            vec![ValidationError {
                path: "/spec/endpoints/0".into(),
                msg: "additional properties 'pathh' not allowed".into()
            }]
        );
        let route = find(&report, "HTTPRoute", "r-api");
        assert_eq!(route.status, ResourceStatus::Invalid);
        assert_eq!(
            route.details(),
            vec![ValidationError {
                path: "/spec/rules/0/backendRefs/0/port".into(),
                msg: "got string, want integer".into()
            }]
        );
    }

    #[test]
    fn invalid_verbose_json() {
        let report = parse("invalid-verbose-json");
        assert_eq!(report.outcome, Outcome::Invalid);
        assert_eq!(report.summary, summary(1, 1, 0, 0));
        assert_eq!(report.count(Outcome::Invalid), 1);
        assert_eq!(
            find(&report, "HorizontalPodAutoscaler", "demo-api").status,
            ResourceStatus::Valid
        );
        let deploy = find(&report, "Deployment", "demo-jobs");
        assert_eq!(deploy.status, ResourceStatus::Invalid);
        assert_eq!(deploy.filename, "invalid.yaml");
        assert!(deploy.msg.starts_with("problem validating schema."));
        assert_eq!(
            deploy.validation_errors,
            vec![ValidationError {
                path: "/spec".into(),
                msg: "validation failed".into()
            }]
        );
        assert_eq!(
            deploy.details(),
            vec![
                ValidationError {
                    path: "/spec/replicas".into(),
                    msg: "got string, want null or integer".into()
                },
                ValidationError {
                    path: "/spec/template/spec/containers/0".into(),
                    msg: "additional properties 'bogusField' not allowed".into()
                },
            ]
        );
        assert_eq!(
            summarize(&report),
            vec![
                "invalid.yaml: Deployment/demo-jobs: invalid: /spec/replicas: got string, want null or integer; \
                 /spec/template/spec/containers/0: additional properties 'bogusField' not allowed"
            ]
        );
    }

    #[test]
    fn details_do_not_depend_on_kubeconform_order() {
        // The two recordings list the same two errors in opposite orders.
        let a = parse("invalid-verbose-json");
        let b = parse("stdin-multi-verbose-json");
        assert_eq!(
            find(&a, "Deployment", "demo-jobs").message(),
            find(&b, "Deployment", "demo-jobs").message()
        );
    }

    #[test]
    fn invalid_text_is_not_json() {
        let err = parse_err("invalid-text");
        match &err {
            KubeconformParseError::NotJson {
                first_line,
                exit_code,
            } => {
                assert!(first_line.starts_with(
                    "invalid.yaml - Deployment demo-jobs is invalid: problem validating schema."
                ));
                assert!(
                    first_line.ends_with('…'),
                    "long lines are cut: {first_line}"
                );
                assert_eq!(*exit_code, Some(1));
            }
            other => panic!("expected NotJson, got {other:?}"),
        }
        assert!(err
            .to_string()
            .starts_with("kubeconform printed text instead of a JSON report (exited with status 1): `invalid.yaml - Deployment"));
    }

    #[test]
    fn crd_missing_schema_is_its_own_outcome() {
        let report = parse("crd-missing-schema-json");
        assert_eq!(report.outcome, Outcome::MissingSchema);
        assert_eq!(report.summary, summary(0, 0, 1, 0));
        let so = find(&report, "ScaledObject", "demo-api");
        assert_eq!(so.status, ResourceStatus::Error);
        assert_eq!(so.version, "keda.sh/v1alpha1");
        assert_eq!(so.msg, "could not find schema for ScaledObject");
        assert_eq!(so.missing_schema_kind(), Some("ScaledObject"));
        assert_eq!(report.missing_schema_kinds(), vec!["ScaledObject"]);
        assert_eq!(
            summarize(&report),
            vec!["crd.yaml: ScaledObject/demo-api: error: could not find schema for ScaledObject"]
        );
    }

    #[test]
    fn ignore_missing_schemas_hides_the_problem_as_a_skip() {
        let report = parse("crd-ignore-missing-json");
        // The very reason `-ignore-missing-schemas` is never passed: nothing says "missing".
        assert_eq!(report.outcome, Outcome::Valid);
        assert_eq!(report.summary, summary(0, 0, 0, 1));
        assert_eq!(report.resources[0].status, ResourceStatus::Skipped);
        assert!(report.missing_schema_kinds().is_empty());
        assert_eq!(
            summarize(&report),
            vec!["crd.yaml: ScaledObject/demo-api: skipped"]
        );
    }

    #[test]
    fn crd_skip_kind_is_skipped() {
        let report = parse("crd-skip-kind-json");
        assert_eq!(report.outcome, Outcome::Valid);
        assert_eq!(report.summary, summary(0, 0, 0, 1));
        let so = find(&report, "ScaledObject", "demo-api");
        assert_eq!(so.status, ResourceStatus::Skipped);
        assert_eq!(so.msg, "");
    }

    #[test]
    fn duplicate_key_is_an_invalid_manifest_not_a_tool_error() {
        let report = parse("dupkey-json");
        assert_eq!(report.summary, summary(0, 0, 1, 0));
        let cm = find(&report, "ConfigMap", "demo-config");
        assert_eq!(cm.status, ResourceStatus::Error);
        assert_eq!(cm.outcome(), Outcome::Invalid);
        assert_eq!(cm.missing_schema_kind(), None);
        assert_eq!(report.outcome, Outcome::Invalid);
        assert_eq!(
            summarize(&report),
            vec![
                "dupkey.yaml: ConfigMap/demo-config: error: error unmarshalling resource: \
                 error converting YAML to JSON: yaml: unmarshal errors: line 7: key \"a\" already set in map"
            ]
        );
    }

    #[test]
    fn no_schemas_looks_like_missing_schemas() {
        let report = parse("no-schemas-json");
        assert_eq!(report.outcome, Outcome::MissingSchema);
        assert_eq!(report.summary, summary(0, 0, 2, 0));
        assert_eq!(report.count(Outcome::MissingSchema), 2);
        assert_eq!(report.missing_schema_kinds(), vec!["Deployment", "Service"]);
        assert_eq!(
            report.to_string(),
            "valid.yaml: Deployment/demo-api: error: could not find schema for Deployment\n\
             valid.yaml: Service/demo-api: error: could not find schema for Service\n"
        );
    }

    #[test]
    fn stdin_multi_verbose_json() {
        let report = parse("stdin-multi-verbose-json");
        assert_eq!(report.outcome, Outcome::Invalid);
        assert_eq!(report.summary, summary(3, 1, 0, 0));
        assert_eq!(report.resources.len(), 4);
        assert!(report.resources.iter().all(|r| r.filename == "stdin"));
        let kinds: Vec<(&str, &str, ResourceStatus)> = report
            .resources
            .iter()
            .map(|r| (r.kind.as_str(), r.name.as_str(), r.status))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("Service", "demo-api", ResourceStatus::Valid),
                ("HorizontalPodAutoscaler", "demo-api", ResourceStatus::Valid),
                ("Deployment", "demo-api", ResourceStatus::Valid),
                ("Deployment", "demo-jobs", ResourceStatus::Invalid),
            ]
        );
        assert_eq!(summarize(&report).len(), 1);
        assert!(summarize(&report)[0]
            .starts_with("stdin: Deployment/demo-jobs: invalid: /spec/replicas: "));
    }

    #[test]
    fn stdin_empty_is_a_log_line_not_json() {
        let err = parse_err("stdin-empty-json");
        match &err {
            KubeconformParseError::NotJson {
                first_line,
                exit_code,
            } => {
                assert_eq!(
                    first_line,
                    "2026/11/29 19:00:28 failing to read data from stdin"
                );
                assert_eq!(*exit_code, Some(1));
            }
            other => panic!("expected NotJson, got {other:?}"),
        }
    }

    #[test]
    fn bad_version_flag_is_bad_arguments_with_a_hint() {
        let err = parse_err("bad-version-flag");
        assert!(
            matches!(&err, KubeconformParseError::BadArguments { first_line, .. }
                if first_line.starts_with("invalid value \"1.31\" for flag -kubernetes-version: 1.31 is not a valid version.")),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(text.starts_with("kubeconform rejected its arguments: `invalid value \"1.31\""));
        assert!(text.ends_with("; give the Kubernetes version as a full `x.y.z`, e.g. `1.31.0`"));
    }

    #[test]
    fn bad_version_flag_via_stderr() {
        // In a real run the usage goes to standard error and standard output stays empty.
        let (out, rc) = recording("bad-version-flag");
        assert!(matches!(
            parse_kubeconform_json("", rc),
            Err(KubeconformParseError::EmptyOutput { exit_code: Some(1) })
        ));
        let err = parse_kubeconform_output("", &out, rc).expect_err("usage is an error");
        assert!(
            matches!(err, KubeconformParseError::BadArguments { .. }),
            "{err:?}"
        );
        // With a report on stdout, stderr noise does not matter.
        let (json, rc) = recording("valid-verbose-json");
        let report = parse_kubeconform_output(&json, "some warning", rc).expect("parse");
        assert_eq!(report.outcome, Outcome::Valid);
    }

    #[test]
    fn version_output_is_not_json() {
        let (out, _) = recording("version");
        let err = parse_kubeconform_json(&out, Some(0)).expect_err("not a report");
        assert!(
            matches!(&err, KubeconformParseError::NotJson { first_line, exit_code: Some(0) } if first_line == "development"),
            "{err:?}"
        );
    }

    #[test]
    fn empty_input_is_an_error() {
        let err = parse_kubeconform_json(" \n", Some(1)).expect_err("empty");
        assert!(matches!(
            err,
            KubeconformParseError::EmptyOutput { exit_code: Some(1) }
        ));
        assert_eq!(
            err.to_string(),
            "kubeconform printed nothing (exited with status 1): look at its standard error"
        );
    }

    #[test]
    fn malformed_json_quotes_the_first_line() {
        let (out, rc) = recording("valid-verbose-json");
        let truncated = &out[..out.len() / 2];
        let err = parse_kubeconform_json(truncated, rc).expect_err("truncated");
        assert!(
            matches!(&err, KubeconformParseError::Malformed { first_line, .. } if first_line == "{"),
            "{err:?}"
        );
        assert!(err
            .to_string()
            .starts_with("kubeconform's JSON report is malformed (first line `{`): "));

        let err = parse_kubeconform_json(r#"{"items": []}"#, Some(0)).expect_err("wrong shape");
        assert!(
            err.to_string().contains("missing field `resources`"),
            "{err}"
        );
    }

    #[test]
    fn unknown_status_is_an_error() {
        let json = r#"{"resources":[{"filename":"a.yaml","kind":"Pod","name":"p","version":"v1","status":"statusWeird","msg":""}]}"#;
        let err = parse_kubeconform_json(json, Some(0)).expect_err("unknown status");
        assert_eq!(
            err.to_string(),
            "kubeconform reported unknown status `statusWeird` for `a.yaml`: Pod/p"
        );
    }

    #[test]
    fn exit_code_is_cross_checked() {
        let (out, _) = recording("valid-verbose-json");
        let err = parse_kubeconform_json(&out, Some(1)).expect_err("rc 1 with all valid");
        assert_eq!(
            err.to_string(),
            "kubeconform exited with status 1 but its report says no resource failed: not trusting it"
        );
        let (out, _) = recording("crd-missing-schema-json");
        let err = parse_kubeconform_json(&out, Some(0)).expect_err("rc 0 with an error");
        assert!(matches!(
            err,
            KubeconformParseError::ExitCodeMismatch {
                exit_code: Some(0),
                reported_failure: true
            }
        ));
        let err = parse_kubeconform_json(&out, None).expect_err("killed");
        assert!(err
            .to_string()
            .starts_with("kubeconform was ended by a signal"));
    }

    #[test]
    fn empty_documents_and_unreadable_files() {
        // Helm output starts with `---`: kubeconform lists an empty document with status "".
        let json = r#"{
          "resources": [
            {"filename": "chart.yaml", "kind": "", "name": "", "version": "", "status": "", "msg": ""},
            {"filename": "gone.yaml", "kind": "", "name": "", "version": "", "status": "statusError",
             "msg": "lstat gone.yaml: no such file or directory"}
          ],
          "summary": {"valid": 0, "invalid": 0, "errors": 1, "skipped": 0}
        }"#;
        let report = parse_kubeconform_json(json, Some(1)).expect("parse");
        assert_eq!(report.resources[0].status, ResourceStatus::Empty);
        assert_eq!(report.outcome, Outcome::Error);
        assert_eq!(
            summarize(&report),
            vec!["gone.yaml: error: lstat gone.yaml: no such file or directory"]
        );
    }

    #[test]
    fn no_resources_is_its_own_outcome() {
        let json = r#"{"resources": null, "summary": {"valid": 0, "invalid": 0, "errors": 0, "skipped": 0}}"#;
        let report = parse_kubeconform_json(json, Some(0)).expect("parse");
        assert_eq!(report.outcome, Outcome::NoResources);
    }

    #[test]
    fn tool_error_outranks_missing_schema_and_invalid() {
        let json = r#"{"resources": [
            {"filename": "a.yaml", "kind": "Deployment", "name": "d", "version": "apps/v1",
             "status": "statusInvalid", "msg": "x - at '/spec': bad"},
            {"filename": "a.yaml", "kind": "ScaledObject", "name": "s", "version": "keda.sh/v1alpha1",
             "status": "statusError", "msg": "could not find schema for ScaledObject"},
            {"filename": "a.yaml", "kind": "Service", "name": "s", "version": "v1",
             "status": "statusError",
             "msg": "failed downloading schema at https://example.invalid/service-v1.json: dial tcp: lookup failed"}
        ]}"#;
        let report = parse_kubeconform_json(json, Some(1)).expect("parse");
        assert_eq!(report.summary, None);
        assert_eq!(report.outcome, Outcome::Error);
        assert_eq!(report.count(Outcome::Invalid), 1);
        assert_eq!(report.count(Outcome::MissingSchema), 1);
        assert_eq!(report.count(Outcome::Error), 1);
        assert_eq!(
            summarize(&report)[0],
            "a.yaml: Deployment/d: invalid: /spec: bad"
        );
    }

    #[test]
    fn args_for_a_request() {
        let req = KubeconformRequest {
            kubernetes_version: "1.31.0".into(),
            schema_locations: vec![
                "/schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json".into(),
                "https://example.org/crds".into(),
            ],
            files: vec!["out/a.yaml".into(), "-odd.yaml".into()],
        };
        assert_eq!(check_request(&req), Ok(()));
        assert_eq!(
            kubeconform_args(&req),
            [
                "-strict",
                "-summary",
                "-verbose",
                "-output",
                "json",
                "-kubernetes-version",
                "1.31.0",
                "-schema-location",
                "/schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json",
                "-schema-location",
                "https://example.org/crds",
                "-schema-location",
                "default",
                "--",
                "out/a.yaml",
                "-odd.yaml",
            ]
        );
        assert!(!kubeconform_args(&req)
            .iter()
            .any(|a| a == "-ignore-missing-schemas"));
    }

    #[test]
    fn args_without_extra_locations() {
        let req = KubeconformRequest {
            kubernetes_version: "1.28.0".into(),
            schema_locations: vec![],
            files: vec!["x.yml".into()],
        };
        let args = kubeconform_args(&req);
        assert_eq!(
            &args[6..],
            ["1.28.0", "-schema-location", "default", "--", "x.yml"]
        );
    }

    #[test]
    fn check_request_rejects_what_kubeconform_would_misread() {
        let ok = KubeconformRequest {
            kubernetes_version: "1.31.0".into(),
            schema_locations: vec![],
            files: vec!["a.YAML".into(), "b.json".into()],
        };
        assert_eq!(check_request(&ok), Ok(()));
        for bad in ["1.31", "v1.31.0", "1.31.0-rc.1", "", "1..0"] {
            let req = KubeconformRequest {
                kubernetes_version: bad.into(),
                ..ok.clone()
            };
            assert_eq!(
                check_request(&req),
                Err(KubeconformRequestError::BadKubernetesVersion {
                    version: bad.into()
                }),
                "{bad}"
            );
        }
        let master = KubeconformRequest {
            kubernetes_version: "master".into(),
            ..ok.clone()
        };
        assert_eq!(check_request(&master), Ok(()));
        let none = KubeconformRequest {
            files: vec![],
            ..ok.clone()
        };
        assert_eq!(check_request(&none), Err(KubeconformRequestError::NoFiles));
        let txt = KubeconformRequest {
            files: vec!["rendered.txt".into()],
            ..ok
        };
        assert_eq!(
            check_request(&txt).map_err(|e| e.to_string()),
            Err("manifest file `rendered.txt` does not end in `.yaml`, `.yml` or `.json`: kubeconform would skip it without a word; rename it".to_string())
        );
    }
}
