//! A packaged chart as the OCI artifact `helm push` makes: config blob (the chart
//! metadata as Go marshals it), chart layer, manifest, all content-addressed.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use super::reference::{is_repository_component, is_valid_tag, tag_for_version};
use super::{OciError, CHART_LAYER_MEDIA_TYPE, CONFIG_MEDIA_TYPE, MANIFEST_MEDIA_TYPE};

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

pub(super) fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", crate::expr::sha256_hex(bytes))
}
