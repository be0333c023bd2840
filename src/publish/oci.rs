//! Pushing a packaged chart to an OCI registry (`shipshape push oci://...`).
//!
//! Two halves:
//! - pure: [`parse_oci_reference`], [`helm_chart_artifact`] (config blob, layer and
//!   manifest exactly as Helm lays them out, with reproducible digests),
//!   [`credentials_from_docker_config`], [`rfc3339_utc`];
//! - I/O: [`push_chart`], the OCI distribution push protocol over HTTP(S): blobs by
//!   monolithic upload (HEAD, POST, PUT), then the manifest under the chart version
//!   tag, with Basic or Bearer-token authentication on a 401 challenge.
//!
//! Every error is an [`OciError`]; the command layer maps them all to exit code 3.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serialize};
use sha2::{Digest, Sha256};

/// Media type of the OCI image manifest.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// Media type of Helm's config blob (the chart metadata as JSON).
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.cncf.helm.config.v1+json";
/// Media type of Helm's chart layer (the `.tgz` as is).
pub const CHART_LAYER_MEDIA_TYPE: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";

const EXAMPLE_REFERENCE: &str = "oci://localhost:5000/charts";

/// Errors of OCI reference parsing, artifact building and pushing.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    /// The `oci://` reference is malformed.
    #[error(
        "invalid OCI reference `{input}`: {problem}; expected `oci://HOST[:PORT][/NAMESPACE]`, e.g. `{EXAMPLE_REFERENCE}`"
    )]
    InvalidReference {
        /// The rejected reference.
        input: String,
        /// What is wrong with it.
        problem: String,
    },
    /// `Chart.yaml` cannot be read as chart metadata.
    #[error("cannot read `Chart.yaml` for the OCI config: {message}")]
    ChartYaml {
        /// The parser's message (with line and column).
        message: String,
    },
    /// The chart metadata cannot be used as an OCI repository name or tag.
    #[error("chart `{field}` value `{value}` cannot be used in an OCI reference: {problem}")]
    InvalidChart {
        /// `name`, `version` or `created`.
        field: &'static str,
        /// The rejected value.
        value: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The connection to the registry failed (refused, DNS, timeout, TLS).
    #[error(
        "cannot reach registry `{host}` at `{url}`: {message}; check the address, that the registry runs, and `--plain-http` for a registry without TLS"
    )]
    Unreachable {
        /// `host[:port]` of the registry.
        host: String,
        /// The URL being requested.
        url: String,
        /// The transport error.
        message: String,
    },
    /// The registry answered 401 after the authentication attempt.
    #[error(
        "registry `{host}` refused the credentials ({status}) at `{method} {url}`: {detail}; pass `--username` and `--password-stdin`"
    )]
    Unauthorized {
        /// `host[:port]` of the registry.
        host: String,
        /// HTTP method.
        method: &'static str,
        /// The URL being requested.
        url: String,
        /// HTTP status (401).
        status: u16,
        /// Whether credentials were given, and the registry's words.
        detail: String,
    },
    /// The registry answered 403.
    #[error(
        "registry `{host}` denied `{method} {url}` (403): {detail}; check that the user may push to `{repository}`"
    )]
    Denied {
        /// `host[:port]` of the registry.
        host: String,
        /// HTTP method.
        method: &'static str,
        /// The URL being requested.
        url: String,
        /// The repository pushed to.
        repository: String,
        /// The registry's words.
        detail: String,
    },
    /// Any other unexpected HTTP status.
    #[error("registry `{host}` answered `{method} {url}` with status {status}: {detail}")]
    UnexpectedStatus {
        /// `host[:port]` of the registry.
        host: String,
        /// HTTP method.
        method: &'static str,
        /// The URL being requested.
        url: String,
        /// HTTP status.
        status: u16,
        /// The registry's words (first error of the OCI error body, or the body).
        detail: String,
    },
    /// The registry broke the protocol (missing header, bad token response).
    #[error("registry `{host}` sent an unusable answer to `{method} {url}`: {problem}")]
    Protocol {
        /// `host[:port]` of the registry.
        host: String,
        /// HTTP method.
        method: &'static str,
        /// The URL being requested.
        url: String,
        /// What is wrong with the answer.
        problem: String,
    },
}

/// A parsed `oci://HOST[:PORT][/NAMESPACE...]` reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciReference {
    /// `host[:port]`, e.g. `127.0.0.1:5000` or `[::1]:5000`.
    pub host: String,
    /// Repository path after the host, without leading or trailing `/`; may be empty.
    pub namespace: String,
}

impl OciReference {
    /// The repository of a chart: `<namespace>/<chart name>`, or the name alone.
    pub fn repository(&self, chart_name: &str) -> String {
        if self.namespace.is_empty() {
            chart_name.to_string()
        } else {
            format!("{}/{chart_name}", self.namespace)
        }
    }
}

impl fmt::Display for OciReference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "oci://{}", self.host)
        } else {
            write!(f, "oci://{}/{}", self.host, self.namespace)
        }
    }
}

/// Registry credentials (the password is never printed by `Debug`).
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// User name.
    pub username: String,
    /// Password or token.
    pub password: String,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// One content-addressed blob of the artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    /// OCI media type.
    pub media_type: &'static str,
    /// `sha256:<hex>` of `bytes`.
    pub digest: String,
    /// The content.
    pub bytes: Vec<u8>,
}

impl Blob {
    fn new(media_type: &'static str, bytes: Vec<u8>) -> Blob {
        Blob {
            media_type,
            digest: sha256_digest(&bytes),
            bytes,
        }
    }
}

/// A Helm chart laid out as an OCI artifact, ready to push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChartArtifact {
    /// Chart name (last repository component).
    pub name: String,
    /// Chart version as written in `Chart.yaml`.
    pub version: String,
    /// Tag: the version with `+` replaced by `_` (OCI tags cannot hold `+`).
    pub tag: String,
    /// Config blob: the chart metadata as Helm marshals it.
    pub config: Blob,
    /// The chart `.tgz`.
    pub layer: Blob,
    /// The image manifest; its digest is the artifact's digest.
    pub manifest: Blob,
}

/// What a successful push did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushOutcome {
    /// `sha256:<hex>` of the manifest, as the registry reported it (or computed).
    pub manifest_digest: String,
    /// `HOST/REPO:TAG`, e.g. `127.0.0.1:5000/charts/demo:0.1.0`.
    pub reference: String,
    /// Blobs uploaded by this push.
    pub uploaded_blobs: usize,
    /// Blobs the registry already had.
    pub existing_blobs: usize,
}

/// Parses `oci://HOST[:PORT][/NAMESPACE...]`.
///
/// The namespace follows the OCI repository grammar (lowercase components);
/// a tag or digest is refused: the tag is always the chart version.
pub fn parse_oci_reference(s: &str) -> Result<OciReference, OciError> {
    let fail = |problem: &str| OciError::InvalidReference {
        input: s.to_string(),
        problem: problem.to_string(),
    };
    let rest = match s.strip_prefix("oci://") {
        Some(rest) => rest,
        None => {
            let problem = match s.split_once("://") {
                Some((scheme, _)) => {
                    format!("the scheme `{scheme}://` is not supported, use `oci://`")
                }
                None => "the `oci://` scheme is missing".to_string(),
            };
            return Err(fail(&problem));
        }
    };
    if rest.contains(['?', '#']) {
        return Err(fail("a query or fragment is not allowed"));
    }
    if rest.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(fail("whitespace is not allowed"));
    }
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    if authority.is_empty() {
        return Err(fail("the host is missing"));
    }
    if authority.contains('@') {
        return Err(fail(
            "credentials in the reference are not supported, pass `--username` and `--password-stdin`",
        ));
    }
    validate_authority(authority).map_err(|p| fail(&p))?;

    let path = path.strip_suffix('/').unwrap_or(path);
    if !path.is_empty() {
        if path.contains(['@', ':']) {
            return Err(fail(
                "a tag or digest is not allowed; the tag is always the chart version",
            ));
        }
        for component in path.split('/') {
            if !is_repository_component(component) {
                return Err(fail(&format!(
                    "namespace component `{component}` must be lowercase letters and digits, separated by `.`, `_`, `__` or `-`"
                )));
            }
        }
    }
    Ok(OciReference {
        host: authority.to_string(),
        namespace: path.to_string(),
    })
}

fn validate_authority(authority: &str) -> Result<(), String> {
    let (host, port) = if let Some(after) = authority.strip_prefix('[') {
        let (v6, tail) = after
            .split_once(']')
            .ok_or_else(|| "unclosed `[` in an IPv6 host".to_string())?;
        if v6.is_empty()
            || !v6
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        {
            return Err(format!("`[{v6}]` is not an IPv6 address"));
        }
        match tail {
            "" => (v6, None),
            t => match t.strip_prefix(':') {
                Some(p) => (v6, Some(p)),
                None => return Err(format!("unexpected `{t}` after the IPv6 host")),
            },
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if !authority.starts_with('[') {
        let ok = !host.is_empty()
            && host.split('.').all(|label| {
                !label.is_empty()
                    && !label.starts_with('-')
                    && !label.ends_with('-')
                    && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            });
        if !ok {
            return Err(format!("`{host}` is not a host name or IP address"));
        }
    }
    if let Some(port) = port {
        let valid = !port.is_empty()
            && port.bytes().all(|b| b.is_ascii_digit())
            && matches!(port.parse::<u32>(), Ok(1..=65535));
        if !valid {
            return Err(format!("port `{port}` is not a number from 1 to 65535"));
        }
    }
    Ok(())
}

/// `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`, the OCI distribution path component.
fn is_repository_component(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let mut i = 0;
    loop {
        let start = i;
        while i < b.len() && alnum(b[i]) {
            i += 1;
        }
        if i == start {
            return false;
        }
        if i == b.len() {
            return true;
        }
        match b[i] {
            b'.' => i += 1,
            b'_' => {
                i += 1;
                if b.get(i) == Some(&b'_') {
                    i += 1;
                }
            }
            b'-' => {
                while b.get(i) == Some(&b'-') {
                    i += 1;
                }
            }
            _ => return false,
        }
        if i == b.len() {
            return false;
        }
    }
}

/// `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`, the OCI distribution tag grammar.
fn is_valid_tag(tag: &str) -> bool {
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let b = tag.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && word(b[0])
        && b[1..].iter().all(|&c| word(c) || c == b'.' || c == b'-')
}

/// The OCI tag of a chart version: `+` (build metadata) becomes `_`, as Helm does.
pub fn tag_for_version(version: &str) -> String {
    version.replace('+', "_")
}

/// Formats seconds since the epoch as RFC 3339 in UTC (`1980-01-01T00:00:00Z`),
/// the form Helm writes into `org.opencontainers.image.created`.
pub fn rfc3339_utc(epoch_seconds: u64) -> String {
    let days = epoch_seconds / 86_400;
    let secs = epoch_seconds % 86_400;
    // Civil-from-days (Howard Hinnant), shifted so the era starts on 0000-03-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3_600,
        secs % 3_600 / 60,
        secs % 60
    )
}

// ---- chart metadata as Helm marshals it ------------------------------------

/// Go's `chart.Metadata`, fields in declaration order, `omitempty` everywhere.
///
/// Parsed straight from YAML into typed fields (not through `serde_json::Value`)
/// so that `appVersion: 1.10` stays the string `1.10`: Helm's YAML loader also
/// keeps a plain scalar's text when the Go field is a string.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default)]
struct ChartMetadata {
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "String::is_empty")]
    name: String,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "String::is_empty")]
    home: String,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    sources: Vec<String>,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "String::is_empty")]
    version: String,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "String::is_empty")]
    description: String,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    keywords: Vec<String>,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    maintainers: Vec<Maintainer>,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "String::is_empty")]
    icon: String,
    #[serde(rename = "apiVersion")]
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "String::is_empty")]
    api_version: String,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "String::is_empty")]
    condition: String,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "String::is_empty")]
    tags: String,
    #[serde(rename = "appVersion")]
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "String::is_empty")]
    app_version: String,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "is_false")]
    deprecated: bool,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    annotations: BTreeMap<String, String>,
    #[serde(rename = "kubeVersion")]
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "String::is_empty")]
    kube_version: String,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    dependencies: Vec<Dependency>,
    #[serde(rename = "type")]
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "String::is_empty")]
    chart_type: String,
}

/// Go's `chart.Maintainer`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default)]
struct Maintainer {
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "String::is_empty")]
    name: String,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "String::is_empty")]
    email: String,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "String::is_empty")]
    url: String,
}

/// Go's `chart.Dependency` (`name` and `repository` have no `omitempty`).
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(default)]
struct Dependency {
    #[serde(deserialize_with = "null_default")]
    name: String,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "String::is_empty")]
    version: String,
    #[serde(deserialize_with = "null_default")]
    repository: String,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "String::is_empty")]
    condition: String,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tags: Vec<String>,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "is_false")]
    enabled: bool,
    #[serde(rename = "import-values")]
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    import_values: Vec<serde_json::Value>,
    #[serde(deserialize_with = "null_default")]
    #[serde(skip_serializing_if = "String::is_empty")]
    alias: String,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// YAML `key:` (null) reads as the zero value, as in Go.
fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Option::<T>::deserialize(d).map(Option::unwrap_or_default)
}

/// Serializes like Go's `json.Marshal`: compact, and `<`, `>`, `&`, U+2028,
/// U+2029 escaped (those characters only ever occur inside JSON strings).
fn go_json<T: Serialize>(value: &T) -> Vec<u8> {
    // Serializing these plain structs and maps cannot fail.
    let compact = serde_json::to_string(value).unwrap_or_default();
    let mut out = String::with_capacity(compact.len());
    for c in compact.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out.into_bytes()
}

#[derive(Serialize)]
struct Descriptor<'a> {
    #[serde(rename = "mediaType")]
    #[serde()]
    media_type: &'a str,
    digest: &'a str,
    size: usize,
}

#[derive(Serialize)]
struct Manifest<'a> {
    #[serde(rename = "schemaVersion")]
    #[serde()]
    schema_version: u32,
    #[serde(rename = "mediaType")]
    #[serde()]
    media_type: &'a str,
    config: Descriptor<'a>,
    layers: Vec<Descriptor<'a>>,
    annotations: BTreeMap<String, String>,
}

/// Helm's `generateOCIAnnotations`: chart fields, then the chart's own
/// annotations (which may not override title and version).
fn oci_annotations(meta: &ChartMetadata, created: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut add = |key: &str, value: &str| {
        if !value.trim().is_empty() {
            out.insert(key.to_string(), value.to_string());
        }
    };
    add("org.opencontainers.image.description", &meta.description);
    add("org.opencontainers.image.title", &meta.name);
    add("org.opencontainers.image.version", &meta.version);
    add("org.opencontainers.image.url", &meta.home);
    add("org.opencontainers.image.created", created);
    if let Some(source) = meta.sources.first() {
        add("org.opencontainers.image.source", source);
    }
    if !meta.maintainers.is_empty() {
        let authors: Vec<String> = meta
            .maintainers
            .iter()
            .map(|m| match (m.name.is_empty(), m.email.is_empty()) {
                (_, true) => m.name.clone(),
                (true, false) => format!(" ({})", m.email),
                (false, false) => format!("{} ({})", m.name, m.email),
            })
            .collect();
        add("org.opencontainers.image.authors", &authors.join(", "));
    }
    for (key, value) in &meta.annotations {
        if key != "org.opencontainers.image.title" && key != "org.opencontainers.image.version" {
            out.insert(key.clone(), value.clone());
        }
    }
    out
}

/// Builds the OCI artifact of a packaged chart, as `helm push` lays it out.
///
/// `chart_yaml` is the chart's `Chart.yaml` text, `package` the `.tgz` from
/// `package_chart`, `created` the RFC 3339 time for
/// `org.opencontainers.image.created` (derive it from `SOURCE_DATE_EPOCH`
/// with [`rfc3339_utc`] so the manifest digest is reproducible).
pub fn helm_chart_artifact(
    chart_yaml: &str,
    package: &[u8],
    created: &str,
) -> Result<ChartArtifact, OciError> {
    let meta: ChartMetadata =
        serde_saphyr::from_str(chart_yaml).map_err(|e| OciError::ChartYaml {
            message: e.to_string(),
        })?;
    if !is_repository_component(&meta.name) {
        return Err(OciError::InvalidChart {
            field: "name",
            value: meta.name.clone(),
            problem: "an OCI repository name needs lowercase letters and digits, separated by `.`, `_`, `__` or `-`".to_string(),
        });
    }
    let tag = tag_for_version(&meta.version);
    if !is_valid_tag(&tag) {
        return Err(OciError::InvalidChart {
            field: "version",
            value: meta.version.clone(),
            problem: "an OCI tag needs 1 to 128 letters, digits, `_`, `.` or `-` (with `+` written as `_`)".to_string(),
        });
    }
    if created.trim().is_empty() {
        return Err(OciError::InvalidChart {
            field: "created",
            value: created.to_string(),
            problem: "empty; pass an RFC 3339 time such as `1980-01-01T00:00:00Z`".to_string(),
        });
    }

    let config = Blob::new(CONFIG_MEDIA_TYPE, go_json(&meta));
    let layer = Blob::new(CHART_LAYER_MEDIA_TYPE, package.to_vec());
    let manifest = Manifest {
        schema_version: 2,
        media_type: MANIFEST_MEDIA_TYPE,
        config: Descriptor {
            media_type: config.media_type,
            digest: &config.digest,
            size: config.bytes.len(),
        },
        layers: vec![Descriptor {
            media_type: layer.media_type,
            digest: &layer.digest,
            size: layer.bytes.len(),
        }],
        annotations: oci_annotations(&meta, created),
    };
    let manifest = Blob::new(MANIFEST_MEDIA_TYPE, go_json(&manifest));
    Ok(ChartArtifact {
        name: meta.name,
        version: meta.version,
        tag,
        config,
        layer,
        manifest,
    })
}

/// Reads the credentials for `host` from a Docker or Helm registry config
/// (`config.json`): `auths.<host>.auth` (base64 of `user:password`), or
/// `username`/`password` in the same entry. Keys written as `https://HOST/...`
/// match too. Credential helpers (`credsStore`, `credHelpers`) are not consulted.
pub fn credentials_from_docker_config(config_json: &str, host: &str) -> Option<Credentials> {
    let config: serde_json::Value = serde_json::from_str(config_json).ok()?;
    let auths = config.get("auths")?.as_object()?;
    let normalize = |key: &str| {
        let key = key
            .strip_prefix("https://")
            .or_else(|| key.strip_prefix("http://"))
            .unwrap_or(key);
        key.split('/').next().unwrap_or(key).to_string()
    };
    let entry = auths.get(host).or_else(|| {
        auths
            .iter()
            .find(|(k, _)| normalize(k) == host)
            .map(|(_, v)| v)
    })?;
    if let Some(auth) = entry
        .get("auth")
        .and_then(|a| a.as_str())
        .filter(|a| !a.is_empty())
    {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(auth.trim())
            .ok()?;
        let decoded = String::from_utf8(decoded).ok()?;
        let (username, password) = decoded.split_once(':')?;
        return Some(Credentials {
            username: username.to_string(),
            password: password.to_string(),
        });
    }
    let username = entry.get("username")?.as_str()?;
    let password = entry.get("password")?.as_str()?;
    Some(Credentials {
        username: username.to_string(),
        password: password.to_string(),
    })
}

fn sha256_digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash.iter() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

// ---- push -------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    Head,
    Post,
    Put,
}

impl Method {
    fn as_str(self) -> &'static str {
        match self {
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
        }
    }
}

struct Reply {
    status: u16,
    location: Option<String>,
    content_digest: Option<String>,
    challenge: Option<String>,
    body: String,
}

struct Session<'a> {
    agent: ureq::Agent,
    base: String,
    host: &'a str,
    repository: String,
    credentials: Option<&'a Credentials>,
    authorization: Option<String>,
}

/// Pushes a chart artifact to `reference`, under `<namespace>/<chart name>:<tag>`.
///
/// Blobs the registry already holds are not uploaded again, and the manifest
/// is put under the tag, so pushing the same artifact twice gives the same
/// digest. `plain_http` uses `http://` instead of `https://`; `timeout` bounds
/// each HTTP call.
pub fn push_chart(
    reference: &OciReference,
    artifact: &ChartArtifact,
    credentials: Option<&Credentials>,
    plain_http: bool,
    timeout: Duration,
) -> Result<PushOutcome, OciError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .max_redirects(5)
        .user_agent("shipshape")
        .build()
        .into();
    let scheme = if plain_http { "http" } else { "https" };
    let mut session = Session {
        agent,
        base: format!("{scheme}://{}", reference.host),
        host: &reference.host,
        repository: reference.repository(&artifact.name),
        credentials,
        authorization: None,
    };

    let mut uploaded_blobs = 0;
    let mut existing_blobs = 0;
    for blob in [&artifact.config, &artifact.layer] {
        if session.blob_exists(blob)? {
            existing_blobs += 1;
        } else {
            session.upload_blob(blob)?;
            uploaded_blobs += 1;
        }
    }

    let url = format!(
        "{}/v2/{}/manifests/{}",
        session.base, session.repository, artifact.tag
    );
    let reply = session.send(
        Method::Put,
        &url,
        Some(MANIFEST_MEDIA_TYPE),
        &artifact.manifest.bytes,
    )?;
    session.check_status(Method::Put, &url, &reply, &[200, 201])?;
    let manifest_digest = reply
        .content_digest
        .filter(|d| d.starts_with("sha256:"))
        .unwrap_or_else(|| artifact.manifest.digest.clone());
    Ok(PushOutcome {
        manifest_digest,
        reference: format!("{}/{}:{}", reference.host, session.repository, artifact.tag),
        uploaded_blobs,
        existing_blobs,
    })
}

impl Session<'_> {
    fn blob_exists(&mut self, blob: &Blob) -> Result<bool, OciError> {
        let url = format!("{}/v2/{}/blobs/{}", self.base, self.repository, blob.digest);
        let reply = self.send(Method::Head, &url, None, &[])?;
        self.check_status(Method::Head, &url, &reply, &[200, 404])?;
        Ok(reply.status == 200)
    }

    fn upload_blob(&mut self, blob: &Blob) -> Result<(), OciError> {
        let start = format!("{}/v2/{}/blobs/uploads/", self.base, self.repository);
        let reply = self.send(Method::Post, &start, None, &[])?;
        self.check_status(Method::Post, &start, &reply, &[202])?;
        let location = reply.location.ok_or_else(|| OciError::Protocol {
            host: self.host.to_string(),
            method: "POST",
            url: start.clone(),
            problem: "no `Location` header in the upload session answer".to_string(),
        })?;
        let mut url = resolve_location(&self.base, &start, &location);
        url.push(if url.contains('?') { '&' } else { '?' });
        url.push_str("digest=");
        url.push_str(&percent_encode(&blob.digest));
        let reply = self.send(
            Method::Put,
            &url,
            Some("application/octet-stream"),
            &blob.bytes,
        )?;
        self.check_status(Method::Put, &url, &reply, &[201, 204])
    }

    /// Sends a request; on a 401 challenge authenticates once and retries.
    fn send(
        &mut self,
        method: Method,
        url: &str,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Result<Reply, OciError> {
        let reply = self.send_once(method, url, content_type, body)?;
        if reply.status != 401 {
            return Ok(reply);
        }
        let challenge = reply.challenge.clone().unwrap_or_default();
        self.authenticate(method, url, &challenge, &reply)?;
        let retried = self.send_once(method, url, content_type, body)?;
        if retried.status == 401 {
            return Err(self.unauthorized(method, url, &retried));
        }
        Ok(retried)
    }

    fn send_once(
        &self,
        method: Method,
        url: &str,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Result<Reply, OciError> {
        // Credentials go only to the registry itself, never to a foreign
        // upload location (e.g. a storage back end).
        let same_origin = url.starts_with(&format!("{}/", self.base));
        let auth = self.authorization.as_deref().filter(|_| same_origin);
        let result = match method {
            Method::Head => {
                let mut rb = self.agent.head(url);
                if let Some(auth) = auth {
                    rb = rb.header("Authorization", auth);
                }
                rb.call()
            }
            Method::Post | Method::Put => {
                let mut rb = if method == Method::Post {
                    self.agent.post(url)
                } else {
                    self.agent.put(url)
                };
                if let Some(auth) = auth {
                    rb = rb.header("Authorization", auth);
                }
                if let Some(ct) = content_type {
                    rb = rb.header("Content-Type", ct);
                }
                rb.send(body)
            }
        };
        let mut response = result.map_err(|e| self.transport_error(url, e))?;
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let status = response.status().as_u16();
        let location = header("Location");
        let content_digest = header("Docker-Content-Digest");
        let challenge = header("WWW-Authenticate");
        let body = if method == Method::Head {
            String::new()
        } else {
            response
                .body_mut()
                .with_config()
                .limit(1 << 20)
                .read_to_string()
                .unwrap_or_default()
        };
        Ok(Reply {
            status,
            location,
            content_digest,
            challenge,
            body,
        })
    }

    fn authenticate(
        &mut self,
        method: Method,
        url: &str,
        challenge: &str,
        reply: &Reply,
    ) -> Result<(), OciError> {
        let (scheme, params) = parse_challenge(challenge);
        if scheme.eq_ignore_ascii_case("basic") {
            let creds = self
                .credentials
                .ok_or_else(|| self.unauthorized(method, url, reply))?;
            self.authorization = Some(basic_auth(creds));
            return Ok(());
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(OciError::Protocol {
                host: self.host.to_string(),
                method: method.as_str(),
                url: url.to_string(),
                problem: format!(
                    "401 with an unsupported `WWW-Authenticate` challenge `{challenge}`; expected `Basic` or `Bearer`"
                ),
            });
        }
        let realm = params
            .get("realm")
            .cloned()
            .ok_or_else(|| OciError::Protocol {
                host: self.host.to_string(),
                method: method.as_str(),
                url: url.to_string(),
                problem: "the `Bearer` challenge has no `realm`".to_string(),
            })?;
        let mut token_url = realm.clone();
        let mut query = Vec::new();
        if let Some(service) = params.get("service") {
            query.push(format!("service={}", percent_encode(service)));
        }
        let scope = params
            .get("scope")
            .cloned()
            .unwrap_or_else(|| format!("repository:{}:pull,push", self.repository));
        query.push(format!("scope={}", percent_encode(&scope)));
        token_url.push(if token_url.contains('?') { '&' } else { '?' });
        token_url.push_str(&query.join("&"));

        let mut rb = self.agent.get(&token_url);
        if let Some(creds) = self.credentials {
            rb = rb.header("Authorization", basic_auth(creds));
        }
        let mut response = rb.call().map_err(|e| self.transport_error(&token_url, e))?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(1 << 20)
            .read_to_string()
            .unwrap_or_default();
        if status == 401 || status == 403 {
            return Err(OciError::Unauthorized {
                host: self.host.to_string(),
                method: "GET",
                url: realm,
                status,
                detail: self.credential_detail(&body),
            });
        }
        if !(200..300).contains(&status) {
            return Err(OciError::UnexpectedStatus {
                host: self.host.to_string(),
                method: "GET",
                url: realm,
                status,
                detail: error_detail(&body),
            });
        }
        let json: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        let token = json
            .get("token")
            .or_else(|| json.get("access_token"))
            .and_then(|t| t.as_str())
            .filter(|t| !t.is_empty())
            .ok_or_else(|| OciError::Protocol {
                host: self.host.to_string(),
                method: "GET",
                url: realm.clone(),
                problem: "the token answer has neither `token` nor `access_token`".to_string(),
            })?;
        self.authorization = Some(format!("Bearer {token}"));
        Ok(())
    }

    fn credential_detail(&self, body: &str) -> String {
        let who = match self.credentials {
            None => "no credentials were given".to_string(),
            Some(c) => format!("the credentials of user `{}` were rejected", c.username),
        };
        let said = error_detail(body);
        if said.is_empty() {
            who
        } else {
            format!("{who} ({said})")
        }
    }

    fn unauthorized(&self, method: Method, url: &str, reply: &Reply) -> OciError {
        OciError::Unauthorized {
            host: self.host.to_string(),
            method: method.as_str(),
            url: url.to_string(),
            status: reply.status,
            detail: self.credential_detail(&reply.body),
        }
    }

    fn check_status(
        &self,
        method: Method,
        url: &str,
        reply: &Reply,
        ok: &[u16],
    ) -> Result<(), OciError> {
        if ok.contains(&reply.status) {
            return Ok(());
        }
        let detail = error_detail(&reply.body);
        Err(match reply.status {
            401 => self.unauthorized(method, url, reply),
            403 => OciError::Denied {
                host: self.host.to_string(),
                method: method.as_str(),
                url: url.to_string(),
                repository: self.repository.clone(),
                detail,
            },
            status => OciError::UnexpectedStatus {
                host: self.host.to_string(),
                method: method.as_str(),
                url: url.to_string(),
                status,
                detail,
            },
        })
    }

    fn transport_error(&self, url: &str, error: ureq::Error) -> OciError {
        match error {
            ureq::Error::ConnectionFailed
            | ureq::Error::HostNotFound
            | ureq::Error::Io(_)
            | ureq::Error::Timeout(_)
            | ureq::Error::Tls(_)
            | ureq::Error::Protocol(_) => OciError::Unreachable {
                host: self.host.to_string(),
                url: url.to_string(),
                message: error.to_string(),
            },
            other => OciError::Protocol {
                host: self.host.to_string(),
                method: "HTTP",
                url: url.to_string(),
                problem: other.to_string(),
            },
        }
    }
}

fn basic_auth(creds: &Credentials) -> String {
    let raw = format!("{}:{}", creds.username, creds.password);
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(raw)
    )
}

/// The first error of an OCI error body (`{"errors":[{"code","message"}]}`),
/// else the trimmed body, shortened.
fn error_detail(body: &str) -> String {
    let first_error = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|json| json.get("errors")?.get(0).cloned());
    if let Some(first) = first_error {
        let code = first.get("code").and_then(|c| c.as_str()).unwrap_or("");
        let message = first.get("message").and_then(|m| m.as_str()).unwrap_or("");
        return match (code.is_empty(), message.is_empty()) {
            (false, false) => format!("{code}: {message}"),
            (false, true) => code.to_string(),
            _ => message.to_string(),
        };
    }
    let trimmed = body.trim();
    match trimmed.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &trimmed[..cut]),
        None => trimmed.to_string(),
    }
}

/// Resolves an upload `Location`: absolute URL, absolute path, or relative path.
fn resolve_location(base: &str, request_url: &str, location: &str) -> String {
    if location.starts_with("http://") || location.starts_with("https://") {
        location.to_string()
    } else if location.starts_with('/') {
        format!("{base}{location}")
    } else {
        let dir = match request_url.rfind('/') {
            Some(i) => &request_url[..=i],
            None => request_url,
        };
        format!("{dir}{location}")
    }
}

/// Splits `Bearer realm="...",service="...",scope="a:b:pull,push"` into the
/// scheme and its parameters (quoted values may hold commas).
fn parse_challenge(header: &str) -> (String, BTreeMap<String, String>) {
    let header = header.trim();
    let (scheme, rest) = header.split_once(' ').unwrap_or((header, ""));
    let mut params = BTreeMap::new();
    let mut chars = rest.chars().peekable();
    loop {
        while matches!(chars.peek(), Some(c) if *c == ',' || c.is_whitespace()) {
            chars.next();
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c == ',' {
                break;
            }
            key.push(c);
            chars.next();
        }
        if key.is_empty() && chars.peek().is_none() {
            break;
        }
        let mut value = String::new();
        if chars.peek() == Some(&'=') {
            chars.next();
            if chars.peek() == Some(&'"') {
                chars.next();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some(escaped) = chars.next() {
                                value.push(escaped);
                            }
                        }
                        '"' => break,
                        c => value.push(c),
                    }
                }
            } else {
                while let Some(&c) = chars.peek() {
                    if c == ',' {
                        break;
                    }
                    value.push(c);
                    chars.next();
                }
            }
        }
        let key = key.trim().to_ascii_lowercase();
        if !key.is_empty() {
            params.insert(key, value.trim().to_string());
        }
        if chars.peek().is_none() {
            break;
        }
    }
    (scheme.to_string(), params)
}

/// Percent-encodes a query value (everything but RFC 3986 unreserved characters).
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::{Arc, Mutex};

    const CHART_YAML: &str = "apiVersion: v2\nname: demo\nversion: 1.2.3+build.7\ndescription: Demo <chart> & co\nhome: https://example.org/demo\nsources:\n  - https://example.org/src\n  - https://example.org/other\nmaintainers:\n  - name: Ada\n    email: ada@example.org\n  - name: Bob\nappVersion: 1.10\nannotations:\n  org.opencontainers.image.title: ignored\n  team: platform\ntype: application\nunknownField: kept-out\n";

    #[test]
    fn parses_references() {
        let r = parse_oci_reference("oci://127.0.0.1:5000/charts").unwrap();
        assert_eq!(r.host, "127.0.0.1:5000");
        assert_eq!(r.namespace, "charts");
        assert_eq!(r.repository("demo"), "charts/demo");
        assert_eq!(r.to_string(), "oci://127.0.0.1:5000/charts");

        let r = parse_oci_reference("oci://localhost").unwrap();
        assert_eq!((r.host.as_str(), r.namespace.as_str()), ("localhost", ""));
        assert_eq!(r.repository("demo"), "demo");

        let r = parse_oci_reference("oci://reg.internal:443/a/b-c/d__e/").unwrap();
        assert_eq!(r.namespace, "a/b-c/d__e");
        let r = parse_oci_reference("oci://[::1]:5000/x").unwrap();
        assert_eq!(r.host, "[::1]:5000");
    }

    #[test]
    fn rejects_bad_references_with_a_clear_message() {
        let cases = [
            ("127.0.0.1:5000/charts", "the `oci://` scheme is missing"),
            (
                "https://h/charts",
                "the scheme `https://` is not supported, use `oci://`",
            ),
            ("oci://", "the host is missing"),
            ("oci:///charts", "the host is missing"),
            (
                "oci://u:p@h/charts",
                "credentials in the reference are not supported",
            ),
            ("oci://h:0/c", "port `0` is not a number from 1 to 65535"),
            ("oci://h:99999/c", "port `99999`"),
            ("oci://h:/c", "port ``"),
            ("oci://h_x/c", "`h_x` is not a host name"),
            (
                "oci://h/Charts",
                "namespace component `Charts` must be lowercase",
            ),
            ("oci://h/a//b", "namespace component ``"),
            ("oci://h/charts:1.0", "a tag or digest is not allowed"),
            ("oci://h/charts@sha256:00", "a tag or digest is not allowed"),
            ("oci://h/c?x=1", "a query or fragment is not allowed"),
            ("oci://h/c-", "namespace component `c-`"),
        ];
        for (input, expected) in cases {
            let err = parse_oci_reference(input).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("invalid OCI reference `{input}`: "))
                    && err.contains(expected),
                "{input}: {err}"
            );
            assert!(err.ends_with(
                "expected `oci://HOST[:PORT][/NAMESPACE]`, e.g. `oci://localhost:5000/charts`"
            ));
        }
    }

    #[test]
    fn tags_replace_plus() {
        assert_eq!(tag_for_version("1.2.3+build.7"), "1.2.3_build.7");
        assert_eq!(tag_for_version("0.1.0"), "0.1.0");
        assert!(is_valid_tag("1.2.3_build.7"));
        assert!(!is_valid_tag("-1"));
        assert!(!is_valid_tag(""));
        assert!(!is_valid_tag(&"a".repeat(129)));
    }

    #[test]
    fn rfc3339_from_epoch() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(315_532_800), "1980-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339_utc(4_102_444_799), "2099-12-31T23:59:59Z");
    }

    #[test]
    fn config_json_matches_helm_field_order_and_escaping() {
        let a = helm_chart_artifact(CHART_YAML, b"tgz", "1980-01-01T00:00:00Z").unwrap();
        assert_eq!(
            String::from_utf8(a.config.bytes.clone()).unwrap(),
            concat!(
                r#"{"name":"demo","home":"https://example.org/demo","sources":["https://example.org/src","https://example.org/other"],"#,
                r#""version":"1.2.3+build.7","description":"Demo \u003cchart\u003e \u0026 co","#,
                r#""maintainers":[{"name":"Ada","email":"ada@example.org"},{"name":"Bob"}],"#,
                r#""apiVersion":"v2","appVersion":"1.10","#,
                r#""annotations":{"org.opencontainers.image.title":"ignored","team":"platform"},"type":"application"}"#
            )
        );
        assert_eq!(a.name, "demo");
        assert_eq!(a.version, "1.2.3+build.7");
        assert_eq!(a.tag, "1.2.3_build.7");
        assert_eq!(a.config.media_type, CONFIG_MEDIA_TYPE);
        assert_eq!(a.config.digest, sha256_digest(&a.config.bytes));
        assert_eq!(a.layer.bytes, b"tgz");
        assert_eq!(a.layer.digest, sha256_digest(b"tgz"));
    }

    #[test]
    fn dependencies_keep_name_and_repository() {
        let yaml = "apiVersion: v2\nname: d\nversion: 1.0.0\ndependencies:\n  - name: redis\n    version: ~18\n    condition: redis.enabled\n    import-values: [a, {child: x, parent: y2}]\ndeprecated: false\nkeywords: []\nhome:\n";
        let a = helm_chart_artifact(yaml, b"", "t").unwrap();
        assert_eq!(
            String::from_utf8(a.config.bytes).unwrap(),
            r#"{"name":"d","version":"1.0.0","apiVersion":"v2","dependencies":[{"name":"redis","version":"~18","repository":"","condition":"redis.enabled","import-values":["a",{"child":"x","parent":"y2"}]}]}"#
        );
    }

    #[test]
    fn manifest_json_is_helm_like() {
        let a = helm_chart_artifact(CHART_YAML, b"tgz", "1980-01-01T00:00:00Z").unwrap();
        let expected = format!(
            concat!(
                r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","#,
                r#""config":{{"mediaType":"application/vnd.cncf.helm.config.v1+json","digest":"{}","size":{}}},"#,
                r#""layers":[{{"mediaType":"application/vnd.cncf.helm.chart.content.v1.tar+gzip","digest":"{}","size":3}}],"#,
                r#""annotations":{{"org.opencontainers.image.authors":"Ada (ada@example.org), Bob","#,
                r#""org.opencontainers.image.created":"1980-01-01T00:00:00Z","#,
                r#""org.opencontainers.image.description":"Demo \u003cchart\u003e \u0026 co","#,
                r#""org.opencontainers.image.source":"https://example.org/src","#,
                r#""org.opencontainers.image.title":"demo","#,
                r#""org.opencontainers.image.url":"https://example.org/demo","#,
                r#""org.opencontainers.image.version":"1.2.3+build.7","team":"platform"}}}}"#
            ),
            a.config.digest,
            a.config.bytes.len(),
            a.layer.digest
        );
        assert_eq!(
            String::from_utf8(a.manifest.bytes.clone()).unwrap(),
            expected
        );
        assert_eq!(a.manifest.digest, sha256_digest(expected.as_bytes()));
        let again = helm_chart_artifact(CHART_YAML, b"tgz", "1980-01-01T00:00:00Z").unwrap();
        assert_eq!(a, again);
        let later = helm_chart_artifact(CHART_YAML, b"tgz", "1980-01-01T00:00:01Z").unwrap();
        assert_ne!(a.manifest.digest, later.manifest.digest);
        assert_eq!(a.config.digest, later.config.digest);
    }

    #[test]
    fn artifact_errors() {
        let err = helm_chart_artifact("name: [", b"", "t")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("cannot read `Chart.yaml` for the OCI config: "),
            "{err}"
        );
        let err = helm_chart_artifact("name: Demo\nversion: 1.0.0\n", b"", "t")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("chart `name` value `Demo` cannot be used in an OCI reference"),
            "{err}"
        );
        let err = helm_chart_artifact("name: demo\n", b"", "t")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("chart `version` value `` cannot be used"),
            "{err}"
        );
        let err = helm_chart_artifact("name: demo\nversion: 1.0.0\n", b"", " ")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("chart `created` value ` `"), "{err}");
    }

    #[test]
    fn docker_config_credentials() {
        let auth = base64::engine::general_purpose::STANDARD.encode("alice:s3:cret");
        let config = format!(
            r#"{{"auths":{{"127.0.0.1:5000":{{"auth":"{auth}"}},"https://reg.internal/v1/":{{"auth":"{auth}"}},"plain:1":{{"username":"u","password":"p"}},"broken:1":{{"auth":"!!"}}}}}}"#
        );
        let c = credentials_from_docker_config(&config, "127.0.0.1:5000").unwrap();
        assert_eq!(
            (c.username.as_str(), c.password.as_str()),
            ("alice", "s3:cret")
        );
        assert!(credentials_from_docker_config(&config, "reg.internal").is_some());
        let c = credentials_from_docker_config(&config, "plain:1").unwrap();
        assert_eq!((c.username.as_str(), c.password.as_str()), ("u", "p"));
        assert!(credentials_from_docker_config(&config, "broken:1").is_none());
        assert!(credentials_from_docker_config(&config, "other:5000").is_none());
        assert!(credentials_from_docker_config("not json", "127.0.0.1:5000").is_none());
        assert!(credentials_from_docker_config(r#"{"credsStore":"desktop"}"#, "h").is_none());
        let shown = format!("{c:?}");
        assert!(
            shown.contains("<redacted>") && !shown.contains("\"p\""),
            "{shown}"
        );
    }

    #[test]
    fn challenge_parsing_and_locations() {
        let (scheme, p) = parse_challenge(
            r#"Bearer realm="http://127.0.0.1:1/token",service="reg",scope="repository:charts/demo:pull,push",error="insufficient_scope""#,
        );
        assert_eq!(scheme, "Bearer");
        assert_eq!(p["realm"], "http://127.0.0.1:1/token");
        assert_eq!(p["service"], "reg");
        assert_eq!(p["scope"], "repository:charts/demo:pull,push");
        let (scheme, p) = parse_challenge(r#"Basic realm="Registry Realm""#);
        assert_eq!(
            (scheme.as_str(), p["realm"].as_str()),
            ("Basic", "Registry Realm")
        );

        let base = "http://h:1";
        let req = "http://h:1/v2/c/d/blobs/uploads/";
        assert_eq!(
            resolve_location(base, req, "http://x:2/u/1?s=a"),
            "http://x:2/u/1?s=a"
        );
        assert_eq!(
            resolve_location(base, req, "/v2/c/d/blobs/uploads/1"),
            "http://h:1/v2/c/d/blobs/uploads/1"
        );
        assert_eq!(
            resolve_location(base, req, "1?s=a"),
            "http://h:1/v2/c/d/blobs/uploads/1?s=a"
        );
        assert_eq!(percent_encode("sha256:ab"), "sha256%3Aab");
    }

    #[test]
    fn unreachable_registry() {
        let port = {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let reference = parse_oci_reference(&format!("oci://127.0.0.1:{port}/charts")).unwrap();
        let a = helm_chart_artifact(CHART_YAML, b"tgz", "t").unwrap();
        let err = push_chart(&reference, &a, None, true, Duration::from_secs(5)).unwrap_err();
        assert!(matches!(err, OciError::Unreachable { .. }), "{err:?}");
        assert!(
            err.to_string().starts_with(&format!(
                "cannot reach registry `127.0.0.1:{port}` at `http://127.0.0.1:{port}/v2/charts/demo/blobs/sha256:"
            )),
            "{err}"
        );
    }

    // ---- a scripted in-process registry: Bearer tokens, relative Locations ----

    #[derive(Debug, Clone)]
    struct Req {
        method: String,
        target: String,
        headers: HashMap<String, String>,
        body: Vec<u8>,
    }

    #[derive(Default)]
    struct State {
        requests: Vec<(String, String, Option<String>)>,
        blobs: HashMap<String, Vec<u8>>,
        manifests: HashMap<String, Vec<u8>>,
        uploads: usize,
    }

    struct MockRegistry {
        port: u16,
        state: Arc<Mutex<State>>,
    }

    impl MockRegistry {
        /// Serves until the test process ends (each connection is closed after one answer).
        fn start(password: &'static str) -> MockRegistry {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let port = listener.local_addr().unwrap().port();
            let state = Arc::new(Mutex::new(State::default()));
            let shared = Arc::clone(&state);
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    let Ok(stream) = stream else { continue };
                    let _ = serve(stream, port, password, &shared);
                }
            });
            MockRegistry { port, state }
        }
    }

    fn read_request(stream: &mut TcpStream) -> std::io::Result<Req> {
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let target = parts.next().unwrap_or("").to_string();
        let mut headers = HashMap::new();
        loop {
            let mut h = String::new();
            reader.read_line(&mut h)?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
            }
        }
        let len: usize = headers
            .get("content-length")
            .and_then(|l| l.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        reader.read_exact(&mut body)?;
        Ok(Req {
            method,
            target,
            headers,
            body,
        })
    }

    fn serve(
        mut stream: TcpStream,
        port: u16,
        password: &str,
        state: &Mutex<State>,
    ) -> std::io::Result<()> {
        let req = read_request(&mut stream)?;
        let (status, headers, body) = handle(&req, port, password, state);
        let mut out = format!(
            "HTTP/1.1 {status} X\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        out.push_str("\r\n");
        stream.write_all(out.as_bytes())?;
        if req.method != "HEAD" {
            stream.write_all(&body)?;
        }
        stream.flush()
    }

    fn handle(
        req: &Req,
        port: u16,
        password: &str,
        state: &Mutex<State>,
    ) -> (u16, Vec<(String, String)>, Vec<u8>) {
        let mut st = state.lock().unwrap();
        let auth = req.headers.get("authorization").cloned();
        st.requests
            .push((req.method.clone(), req.target.clone(), auth.clone()));
        let (path, query) = req.target.split_once('?').unwrap_or((&req.target, ""));
        if path == "/token" {
            let expected = basic_auth(&Credentials {
                username: "alice".into(),
                password: password.into(),
            });
            if auth.as_deref() != Some(expected.as_str()) {
                return (
                    401,
                    vec![],
                    br#"{"errors":[{"code":"UNAUTHORIZED","message":"bad password"}]}"#.to_vec(),
                );
            }
            assert!(query.contains("service=mock"), "{query}");
            let scope = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("scope="))
                .unwrap_or("");
            let token = if scope.contains("push") {
                "push-token"
            } else {
                "pull-token"
            };
            return (
                200,
                vec![],
                format!(r#"{{"access_token":"{token}"}}"#).into_bytes(),
            );
        }
        let repo_path = path.strip_prefix("/v2/charts/demo/").unwrap_or("");
        let needs_push = req.method != "HEAD" && req.method != "GET";
        let scope = if needs_push { "pull,push" } else { "pull" };
        let token_ok = match auth.as_deref() {
            Some("Bearer push-token") => true,
            Some("Bearer pull-token") => !needs_push,
            _ => false,
        };
        if !token_ok {
            let challenge = format!(
                r#"Bearer realm="http://127.0.0.1:{port}/token",service="mock",scope="repository:charts/demo:{scope}""#
            );
            return (
                401,
                vec![("WWW-Authenticate".into(), challenge)],
                br#"{"errors":[{"code":"UNAUTHORIZED"}]}"#.to_vec(),
            );
        }
        match (req.method.as_str(), repo_path) {
            ("HEAD", p) if p.starts_with("blobs/sha256:") => {
                let found = st.blobs.contains_key(&p["blobs/".len()..]);
                (if found { 200 } else { 404 }, vec![], vec![])
            }
            ("POST", "blobs/uploads/") => {
                st.uploads += 1;
                // A relative Location that already carries a query string.
                let loc = format!("/v2/charts/demo/blobs/uploads/u{}?_state=abc", st.uploads);
                (202, vec![("Location".into(), loc)], vec![])
            }
            ("PUT", p) if p.starts_with("blobs/uploads/u") => {
                assert!(query.starts_with("_state=abc&digest=sha256%3A"), "{query}");
                let digest = query.split("digest=").nth(1).unwrap().replace("%3A", ":");
                assert_eq!(
                    digest,
                    sha256_digest(&req.body),
                    "uploaded bytes match the digest"
                );
                st.blobs.insert(digest.clone(), req.body.clone());
                (201, vec![("Docker-Content-Digest".into(), digest)], vec![])
            }
            ("PUT", p) if p.starts_with("manifests/") => {
                assert_eq!(
                    req.headers.get("content-type").map(String::as_str),
                    Some(MANIFEST_MEDIA_TYPE)
                );
                let digest = sha256_digest(&req.body);
                st.manifests
                    .insert(p["manifests/".len()..].to_string(), req.body.clone());
                (201, vec![("Docker-Content-Digest".into(), digest)], vec![])
            }
            _ => (
                404,
                vec![],
                br#"{"errors":[{"code":"NOT_FOUND","message":"no route"}]}"#.to_vec(),
            ),
        }
    }

    #[test]
    fn bearer_token_flow_with_relative_locations() {
        let mock = MockRegistry::start("pw");
        let reference =
            parse_oci_reference(&format!("oci://127.0.0.1:{}/charts", mock.port)).unwrap();
        let artifact =
            helm_chart_artifact(CHART_YAML, b"pretend tgz", "1980-01-01T00:00:00Z").unwrap();
        let creds = Credentials {
            username: "alice".into(),
            password: "pw".into(),
        };
        let timeout = Duration::from_secs(10);

        let first = push_chart(&reference, &artifact, Some(&creds), true, timeout).unwrap();
        assert_eq!(first.manifest_digest, artifact.manifest.digest);
        assert_eq!(
            first.reference,
            format!("127.0.0.1:{}/charts/demo:1.2.3_build.7", mock.port)
        );
        assert_eq!((first.uploaded_blobs, first.existing_blobs), (2, 0));
        {
            let st = mock.state.lock().unwrap();
            assert_eq!(st.manifests["1.2.3_build.7"], artifact.manifest.bytes);
            assert_eq!(st.blobs[&artifact.layer.digest], b"pretend tgz");
            // Tokens were fetched and then sent as Bearer.
            assert!(st.requests.iter().any(|(m, t, _)| m == "GET"
                && t.starts_with(
                    "/token?service=mock&scope=repository%3Acharts%2Fdemo%3Apull%2Cpush"
                )));
            assert!(st
                .requests
                .iter()
                .any(|(m, _, a)| m == "PUT" && a.as_deref() == Some("Bearer push-token")));
        }

        let second = push_chart(&reference, &artifact, Some(&creds), true, timeout).unwrap();
        assert_eq!(second.manifest_digest, first.manifest_digest);
        assert_eq!((second.uploaded_blobs, second.existing_blobs), (0, 2));

        let wrong = Credentials {
            username: "alice".into(),
            password: "nope".into(),
        };
        let err = push_chart(&reference, &artifact, Some(&wrong), true, timeout).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "registry `127.0.0.1:{}` refused the credentials (401) at `GET http://127.0.0.1:{}/token`: the credentials of user `alice` were rejected (UNAUTHORIZED: bad password); pass `--username` and `--password-stdin`",
                mock.port, mock.port
            )
        );
    }
}
