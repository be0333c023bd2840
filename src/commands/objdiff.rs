//! Object-aware diff of rendered Kubernetes manifest streams.
//!
//! `helm template` prints a multi-document YAML stream. A plain text diff of two
//! such streams is noisy: moving a template reorders documents, and one changed
//! value shows up as an unreadable hunk. This module instead parses each stream
//! into objects keyed by `apiVersion`, `kind`, `metadata.namespace` and
//! `metadata.name`, pairs the objects of both streams by key, and reports field
//! level changes with paths such as `spec.template.spec.containers[0].image`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

/// Errors raised while reading a manifest stream.
#[derive(Debug, thiserror::Error)]
pub enum ObjDiffError {
    /// A document is not valid YAML.
    #[error("document {doc}{}: invalid yaml: {message}", template_suffix(.template))]
    Parse {
        /// 1-based number of the document among the non-empty documents of the stream.
        doc: usize,
        /// Template path taken from the document's `# Source:` comment, if any.
        template: Option<String>,
        /// The parser's message (first line only).
        message: String,
    },
    /// A document's top level is not a mapping.
    #[error("document {doc}{}: expected a mapping at the top level", template_suffix(.template))]
    NotMapping {
        /// 1-based number of the document among the non-empty documents of the stream.
        doc: usize,
        /// Template path taken from the document's `# Source:` comment, if any.
        template: Option<String>,
    },
    /// A document lacks `kind` or `metadata.name`, or has a non-string value there.
    #[error("document {doc}{}: missing string field `{field}`", template_suffix(.template))]
    MissingField {
        /// 1-based number of the document among the non-empty documents of the stream.
        doc: usize,
        /// Template path taken from the document's `# Source:` comment, if any.
        template: Option<String>,
        /// Dotted name of the missing field.
        field: &'static str,
    },
    /// Two documents of one stream describe the same object.
    #[error("duplicate object `{key}` (`{api_version}`) in documents {first} and {second}")]
    Duplicate {
        /// The object, displayed as `Kind/name`.
        key: String,
        /// The object's `apiVersion`.
        api_version: String,
        /// Number of the first document holding it.
        first: usize,
        /// Number of the second document holding it.
        second: usize,
    },
    /// An error in one of the two streams given to [`diff_manifests`].
    #[error("{side} manifests: {inner}")]
    Stream {
        /// `old` or `new`.
        side: &'static str,
        /// The error within that stream.
        inner: Box<ObjDiffError>,
    },
}

fn template_suffix(template: &Option<String>) -> String {
    match template {
        Some(t) => format!(" (`{t}`)"),
        None => String::new(),
    }
}

/// Identity of a Kubernetes object within a manifest stream.
///
/// Ordered by `apiVersion`, `kind`, namespace and name. Displayed as `Kind/name`,
/// followed by ` (namespace)` when the manifest sets `metadata.namespace`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// The object's `apiVersion` (empty when the manifest has none).
    pub api_version: String,
    /// The object's `kind`.
    pub kind: String,
    /// The object's `metadata.namespace`, when set in the manifest.
    pub namespace: Option<String>,
    /// The object's `metadata.name`.
    pub name: String,
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.kind, self.name)?;
        if let Some(ns) = &self.namespace {
            write!(f, " ({ns})")?;
        }
        Ok(())
    }
}

/// One changed value inside an object.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldChange {
    /// Path of the value, e.g. `spec.template.spec.containers[0].image` or
    /// `metadata.labels["app.kubernetes.io/name"]`; empty for the whole value.
    pub path: String,
    /// The old value, `None` when the path was added.
    pub old: Option<Value>,
    /// The new value, `None` when the path was removed.
    pub new: Option<Value>,
}

/// The change of one object between two manifest streams.
#[derive(Debug, Clone, PartialEq)]
pub enum ObjectChange {
    /// The object exists only in the new stream.
    Added(ObjectKey),
    /// The object exists only in the old stream.
    Removed(ObjectKey),
    /// The object exists in both streams with different content.
    Changed {
        /// The object.
        key: ObjectKey,
        /// Its changed values, in path order.
        fields: Vec<FieldChange>,
    },
}

impl ObjectChange {
    /// The key of the object this change is about.
    pub fn key(&self) -> &ObjectKey {
        match self {
            ObjectChange::Added(key) | ObjectChange::Removed(key) => key,
            ObjectChange::Changed { key, .. } => key,
        }
    }
}

/// A document cut out of a stream, with what is needed to name it in errors.
struct RawDocument<'a> {
    text: String,
    template: Option<&'a str>,
}

/// Splits a stream on lines that are exactly `---` and drops documents holding
/// only whitespace and comments.
fn split_documents(stream: &str) -> Vec<RawDocument<'_>> {
    let mut docs = Vec::new();
    let mut lines: Vec<&str> = Vec::new();
    for line in stream.lines() {
        if line.trim_end() == "---" {
            push_document(&mut docs, &lines);
            lines.clear();
        } else {
            lines.push(line);
        }
    }
    push_document(&mut docs, &lines);
    docs
}

fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// Adds the document made of `lines` unless it holds only whitespace and comments.
fn push_document<'a>(docs: &mut Vec<RawDocument<'a>>, lines: &[&'a str]) {
    if lines.iter().all(|l| is_blank_or_comment(l)) {
        return;
    }
    let template = lines
        .iter()
        .copied()
        .take_while(|l| is_blank_or_comment(l))
        .find_map(|l| l.trim().strip_prefix("# Source:").map(str::trim));
    let mut text = lines.join("\n");
    text.push('\n');
    docs.push(RawDocument { text, template });
}

fn string_at<'v>(value: &'v Value, path: &[&str]) -> Option<&'v str> {
    path.iter()
        .try_fold(value, |v, segment| v.get(segment))
        .and_then(Value::as_str)
}

/// Parses a `helm template` style stream into its objects.
///
/// Documents are separated by lines that are exactly `---`; documents holding
/// only whitespace and comments (such as `# Source: chart/templates/x.yaml`)
/// are skipped, and so are documents that parse to YAML `null`. Errors number
/// documents from 1 among the non-empty ones and name the `# Source:` template
/// when there is one.
///
/// # Errors
///
/// Invalid YAML, a top level that is not a mapping, a missing `kind` or
/// `metadata.name`, or two documents with the same [`ObjectKey`].
pub fn parse_manifest_objects(stream: &str) -> Result<BTreeMap<ObjectKey, Value>, ObjDiffError> {
    let mut objects = BTreeMap::new();
    let mut seen_in: BTreeMap<ObjectKey, usize> = BTreeMap::new();
    for (index, raw) in split_documents(stream).into_iter().enumerate() {
        let doc = index + 1;
        let template = || raw.template.map(str::to_owned);
        let value: Value = serde_saphyr::from_str(&raw.text).map_err(|e| ObjDiffError::Parse {
            doc,
            template: template(),
            message: first_line(&e.to_string()),
        })?;
        if value.is_null() {
            continue;
        }
        if !value.is_object() {
            return Err(ObjDiffError::NotMapping {
                doc,
                template: template(),
            });
        }
        let missing = |field| ObjDiffError::MissingField {
            doc,
            template: template(),
            field,
        };
        let kind = string_at(&value, &["kind"]).ok_or_else(|| missing("kind"))?;
        let name =
            string_at(&value, &["metadata", "name"]).ok_or_else(|| missing("metadata.name"))?;
        let key = ObjectKey {
            api_version: string_at(&value, &["apiVersion"])
                .unwrap_or_default()
                .to_owned(),
            kind: kind.to_owned(),
            namespace: string_at(&value, &["metadata", "namespace"]).map(str::to_owned),
            name: name.to_owned(),
        };
        if let Some(&first) = seen_in.get(&key) {
            return Err(ObjDiffError::Duplicate {
                key: key.to_string(),
                api_version: key.api_version.clone(),
                first,
                second: doc,
            });
        }
        seen_in.insert(key.clone(), doc);
        objects.insert(key, value);
    }
    Ok(objects)
}

/// The first line of a parser message, without its `error: ` prefix.
fn first_line(message: &str) -> String {
    let line = message.lines().next().unwrap_or_default().trim();
    line.strip_prefix("error: ").unwrap_or(line).to_owned()
}

/// Compares two manifest streams object by object.
///
/// The result is sorted by [`ObjectKey`]; objects equal in both streams are
/// omitted, and the order of documents within a stream does not matter.
///
/// # Errors
///
/// Any [`parse_manifest_objects`] error, wrapped in [`ObjDiffError::Stream`]
/// to tell which stream it came from.
pub fn diff_manifests(old: &str, new: &str) -> Result<Vec<ObjectChange>, ObjDiffError> {
    let in_stream = |side| {
        move |e| ObjDiffError::Stream {
            side,
            inner: Box::new(e),
        }
    };
    let old_objects = parse_manifest_objects(old).map_err(in_stream("old"))?;
    let new_objects = parse_manifest_objects(new).map_err(in_stream("new"))?;
    let keys: BTreeSet<&ObjectKey> = old_objects.keys().chain(new_objects.keys()).collect();
    let mut changes = Vec::new();
    for key in keys {
        match (old_objects.get(key), new_objects.get(key)) {
            (Some(_), None) => changes.push(ObjectChange::Removed(key.clone())),
            (None, Some(_)) => changes.push(ObjectChange::Added(key.clone())),
            (Some(o), Some(n)) => {
                let fields = diff_values(o, n);
                if !fields.is_empty() {
                    changes.push(ObjectChange::Changed {
                        key: key.clone(),
                        fields,
                    });
                }
            }
            (None, None) => {}
        }
    }
    Ok(changes)
}

/// Lists the differences between two JSON values.
///
/// Maps are compared key by key (an added key has `old: None`, a removed key
/// `new: None`); arrays element by element by index, extra indices counting as
/// added or removed; differing scalars, and values whose type differs, give one
/// change at their path. Equal values give no change.
pub fn diff_values(old: &Value, new: &Value) -> Vec<FieldChange> {
    let mut out = Vec::new();
    diff_into(&mut out, String::new(), old, new);
    out
}

fn diff_into(out: &mut Vec<FieldChange>, path: String, old: &Value, new: &Value) {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            let keys: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
            for key in keys {
                let child = key_path(&path, key);
                match (o.get(key), n.get(key)) {
                    (Some(ov), Some(nv)) => diff_into(out, child, ov, nv),
                    (ov, nv) => out.push(FieldChange {
                        path: child,
                        old: ov.cloned(),
                        new: nv.cloned(),
                    }),
                }
            }
        }
        (Value::Array(o), Value::Array(n)) => {
            for i in 0..o.len().max(n.len()) {
                let child = format!("{path}[{i}]");
                match (o.get(i), n.get(i)) {
                    (Some(ov), Some(nv)) => diff_into(out, child, ov, nv),
                    (ov, nv) => out.push(FieldChange {
                        path: child,
                        old: ov.cloned(),
                        new: nv.cloned(),
                    }),
                }
            }
        }
        _ if old == new => {}
        _ => out.push(FieldChange {
            path,
            old: Some(old.clone()),
            new: Some(new.clone()),
        }),
    }
}

/// Appends a map key to a path: `.key` for plain keys, `["key"]` otherwise.
fn key_path(parent: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if plain {
        if parent.is_empty() {
            key.to_owned()
        } else {
            format!("{parent}.{key}")
        }
    } else {
        // Serializing a `&str` as JSON cannot fail.
        let quoted = serde_json::to_string(key).unwrap_or_else(|_| format!("\"{key}\""));
        format!("{parent}[{quoted}]")
    }
}

fn compact(value: Option<&Value>) -> String {
    match value {
        Some(v) => v.to_string(),
        None => "(absent)".to_owned(),
    }
}

fn display_path(path: &str) -> &str {
    if path.is_empty() {
        "(root)"
    } else {
        path
    }
}

/// Renders changes as plain text for a terminal.
///
/// `~` marks a changed object, followed by one indented `path: old -> new` line
/// per field with values as compact JSON and a missing side as `(absent)`;
/// `+` marks an added object and `-` a removed one.
pub fn format_text(changes: &[ObjectChange]) -> String {
    if changes.is_empty() {
        return "no object changes\n".to_owned();
    }
    let mut out = String::new();
    for change in changes {
        match change {
            ObjectChange::Added(key) => out.push_str(&format!("+ {key}\n")),
            ObjectChange::Removed(key) => out.push_str(&format!("- {key}\n")),
            ObjectChange::Changed { key, fields } => {
                out.push_str(&format!("~ {key}\n"));
                for f in fields {
                    out.push_str(&format!(
                        "    {}: {} -> {}\n",
                        display_path(&f.path),
                        compact(f.old.as_ref()),
                        compact(f.new.as_ref())
                    ));
                }
            }
        }
    }
    out
}

/// Renders changes as Markdown for a pull-request comment.
///
/// A `### Rendered object changes` heading, a summary line, then for each
/// changed object a bullet followed by a `| Path | Old | New |` table whose
/// values are code spans (`|` escaped as `\|`, newlines as `\n`), and a bullet
/// for each added or removed object.
pub fn format_markdown(changes: &[ObjectChange]) -> String {
    let mut out = String::from("### Rendered object changes\n\n");
    if changes.is_empty() {
        out.push_str("No object changes.\n");
        return out;
    }
    let count = |pred: fn(&ObjectChange) -> bool| changes.iter().filter(|c| pred(c)).count();
    out.push_str(&format!(
        "{} added, {} removed, {} changed\n",
        count(|c| matches!(c, ObjectChange::Added(_))),
        count(|c| matches!(c, ObjectChange::Removed(_))),
        count(|c| matches!(c, ObjectChange::Changed { .. })),
    ));
    // Blank line needed before a bullet that follows a table or the summary.
    let mut need_blank = true;
    for change in changes {
        if need_blank {
            out.push('\n');
        }
        match change {
            ObjectChange::Added(key) => {
                out.push_str(&format!("- **Added** {}\n", code_span(&key.to_string())));
                need_blank = false;
            }
            ObjectChange::Removed(key) => {
                out.push_str(&format!("- **Removed** {}\n", code_span(&key.to_string())));
                need_blank = false;
            }
            ObjectChange::Changed { key, fields } => {
                out.push_str(&format!(
                    "- **Changed** {}\n\n",
                    code_span(&key.to_string())
                ));
                out.push_str("| Path | Old | New |\n| --- | --- | --- |\n");
                for f in fields {
                    out.push_str(&format!(
                        "| {} | {} | {} |\n",
                        code_span(display_path(&f.path)),
                        md_value(f.old.as_ref()),
                        md_value(f.new.as_ref())
                    ));
                }
                need_blank = true;
            }
        }
    }
    out
}

fn md_value(value: Option<&Value>) -> String {
    match value {
        Some(v) => code_span(&v.to_string()),
        None => "_(absent)_".to_owned(),
    }
}

/// A Markdown code span safe inside a table cell: `|` becomes `\|`, line
/// breaks become `\n`, and the backtick fence outgrows any backtick run inside.
fn code_span(text: &str) -> String {
    let escaped = text
        .replace('\r', "\\r")
        .replace('\n', "\\n")
        .replace('|', "\\|");
    let mut longest = 0;
    let mut run = 0;
    for c in escaped.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    if longest == 0 {
        format!("`{escaped}`")
    } else {
        let fence = "`".repeat(longest + 1);
        format!("{fence} {escaped} {fence}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const DEPLOY_V1: &str = "\
---
# Source: app/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: rel-api
  labels:
    app.kubernetes.io/name: api
spec:
  replicas: 1
  template:
    spec:
      containers:
        - name: api
          image: api:1.0
          ports:
            - containerPort: \"8080\"
---
# Source: app/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: rel-y
data:
  a: b
";

    fn key(api_version: &str, kind: &str, name: &str) -> ObjectKey {
        ObjectKey {
            api_version: api_version.into(),
            kind: kind.into(),
            namespace: None,
            name: name.into(),
        }
    }

    fn change(path: &str, old: Option<Value>, new: Option<Value>) -> FieldChange {
        FieldChange {
            path: path.into(),
            old,
            new,
        }
    }

    #[test]
    fn identical_streams_have_no_changes() {
        let changes = diff_manifests(DEPLOY_V1, DEPLOY_V1).expect("diff");
        assert!(changes.is_empty(), "{changes:?}");
        assert_eq!(format_text(&changes), "no object changes\n");
    }

    #[test]
    fn replica_change_is_reported_at_its_path() {
        let new = DEPLOY_V1.replace("replicas: 1", "replicas: 3");
        let changes = diff_manifests(DEPLOY_V1, &new).expect("diff");
        assert_eq!(
            changes,
            vec![ObjectChange::Changed {
                key: key("apps/v1", "Deployment", "rel-api"),
                fields: vec![change("spec.replicas", Some(json!(1)), Some(json!(3)))],
            }]
        );
        assert_eq!(
            format_text(&changes),
            "~ Deployment/rel-api\n    spec.replicas: 1 -> 3\n"
        );
    }

    #[test]
    fn added_and_removed_objects() {
        let new = DEPLOY_V1
            .replace("kind: ConfigMap", "kind: Service")
            .replace("rel-y", "rel-x");
        let changes = diff_manifests(DEPLOY_V1, &new).expect("diff");
        assert_eq!(
            changes,
            vec![
                ObjectChange::Removed(key("v1", "ConfigMap", "rel-y")),
                ObjectChange::Added(key("v1", "Service", "rel-x")),
            ]
        );
        assert_eq!(
            format_text(&changes),
            "- ConfigMap/rel-y\n+ Service/rel-x\n"
        );
    }

    #[test]
    fn text_format_matches_the_documented_example() {
        let changes = vec![
            ObjectChange::Changed {
                key: key("apps/v1", "Deployment", "rel-api"),
                fields: vec![
                    change("spec.replicas", Some(json!(1)), Some(json!(3))),
                    change("metadata.labels.x", None, Some(json!("y"))),
                ],
            },
            ObjectChange::Added(key("v1", "Service", "rel-x")),
            ObjectChange::Removed(ObjectKey {
                namespace: Some("prod".into()),
                ..key("v1", "ConfigMap", "rel-y")
            }),
        ];
        assert_eq!(
            format_text(&changes),
            "~ Deployment/rel-api\n    spec.replicas: 1 -> 3\n    metadata.labels.x: (absent) -> \"y\"\n\
             + Service/rel-x\n- ConfigMap/rel-y (prod)\n"
        );
    }

    #[test]
    fn label_key_with_dots_and_slashes_uses_brackets() {
        let new = DEPLOY_V1.replace("app.kubernetes.io/name: api", "app.kubernetes.io/name: web");
        let changes = diff_manifests(DEPLOY_V1, &new).expect("diff");
        let ObjectChange::Changed { fields, .. } = &changes[0] else {
            panic!("expected a change, got {changes:?}");
        };
        assert_eq!(
            fields,
            &vec![change(
                "metadata.labels[\"app.kubernetes.io/name\"]",
                Some(json!("api")),
                Some(json!("web"))
            )]
        );
        let top = diff_values(&json!({"a b": 1}), &json!({"a b": 2}));
        assert_eq!(top[0].path, "[\"a b\"]");
    }

    #[test]
    fn array_length_change_gives_added_and_removed_indices() {
        let old = json!({"c": [{"name": "a"}]});
        let new = json!({"c": [{"name": "a"}, {"name": "b"}]});
        assert_eq!(
            diff_values(&old, &new),
            vec![change("c[1]", None, Some(json!({"name": "b"})))]
        );
        assert_eq!(
            diff_values(&new, &old),
            vec![change("c[1]", Some(json!({"name": "b"})), None)]
        );
        let deeper = json!({"c": [{"name": "z"}]});
        assert_eq!(
            diff_values(&old, &deeper),
            vec![change("c[0].name", Some(json!("a")), Some(json!("z")))]
        );
    }

    #[test]
    fn map_keys_added_and_removed() {
        let old = json!({"a": 1, "b": {"x": 1}});
        let new = json!({"a": 1, "c": true});
        assert_eq!(
            diff_values(&old, &new),
            vec![
                change("b", Some(json!({"x": 1})), None),
                change("c", None, Some(json!(true))),
            ]
        );
    }

    #[test]
    fn type_change_is_one_change() {
        let new = DEPLOY_V1.replace("containerPort: \"8080\"", "containerPort: 8080");
        let changes = diff_manifests(DEPLOY_V1, &new).expect("diff");
        let ObjectChange::Changed { fields, .. } = &changes[0] else {
            panic!("expected a change, got {changes:?}");
        };
        assert_eq!(
            fields,
            &vec![change(
                "spec.template.spec.containers[0].ports[0].containerPort",
                Some(json!("8080")),
                Some(json!(8080))
            )]
        );
        assert_eq!(
            diff_values(&json!({"a": [1]}), &json!({"a": {"0": 1}})),
            vec![change("a", Some(json!([1])), Some(json!({"0": 1})))]
        );
    }

    #[test]
    fn document_order_does_not_matter() {
        let docs: Vec<&str> = DEPLOY_V1.split("---\n").collect();
        let reversed = docs.iter().rev().copied().collect::<Vec<_>>().join("---\n");
        assert_ne!(reversed, DEPLOY_V1);
        assert!(diff_manifests(DEPLOY_V1, &reversed)
            .expect("diff")
            .is_empty());
    }

    #[test]
    fn source_comments_and_empty_documents_are_ignored() {
        let noisy = format!(
            "---\n# Source: app/templates/empty.yaml\n\n---\n   \n---\n# only a comment\n{DEPLOY_V1}---\n"
        );
        let objects = parse_manifest_objects(&noisy).expect("parse");
        assert_eq!(objects.len(), 2);
        assert!(diff_manifests(DEPLOY_V1, &noisy).expect("diff").is_empty());
        let other_source = DEPLOY_V1.replace("# Source: app/", "# Source: other/");
        assert!(diff_manifests(DEPLOY_V1, &other_source)
            .expect("diff")
            .is_empty());
    }

    #[test]
    fn bad_yaml_error_names_the_document() {
        let bad =
            format!("{DEPLOY_V1}---\n# Source: app/templates/bad.yaml\nkind: [x\nmetadata: y: z\n");
        let err = parse_manifest_objects(&bad).expect_err("must fail");
        assert!(matches!(err, ObjDiffError::Parse { doc: 3, .. }), "{err:?}");
        let message = err.to_string();
        assert!(
            message.starts_with("document 3 (`app/templates/bad.yaml`): invalid yaml: "),
            "{message}"
        );
        assert!(!message.contains('\n'), "{message}");
        let err = diff_manifests(DEPLOY_V1, &bad).expect_err("must fail");
        assert!(
            err.to_string().starts_with("new manifests: document 3 "),
            "{err}"
        );
    }

    #[test]
    fn missing_kind_or_name_and_duplicates_are_errors() {
        let err = parse_manifest_objects("apiVersion: v1\nmetadata:\n  name: a\n")
            .expect_err("must fail");
        assert_eq!(err.to_string(), "document 1: missing string field `kind`");
        let err = parse_manifest_objects("---\nkind: A\n---\nkind: B\nmetadata: {}\n")
            .expect_err("must fail");
        assert_eq!(
            err.to_string(),
            "document 1: missing string field `metadata.name`"
        );
        let err = parse_manifest_objects("- 1\n").expect_err("must fail");
        assert_eq!(
            err.to_string(),
            "document 1: expected a mapping at the top level"
        );
        let dup =
            format!("{DEPLOY_V1}---\nkind: ConfigMap\napiVersion: v1\nmetadata:\n  name: rel-y\n");
        let err = parse_manifest_objects(&dup).expect_err("must fail");
        assert_eq!(
            err.to_string(),
            "duplicate object `ConfigMap/rel-y` (`v1`) in documents 2 and 3"
        );
        let other_ns = format!("{dup}  namespace: b\n");
        assert_eq!(parse_manifest_objects(&other_ns).expect("parse").len(), 3);
    }

    #[test]
    fn markdown_escapes_pipes_and_newlines() {
        let changes = vec![
            ObjectChange::Changed {
                key: key("v1", "ConfigMap", "rel-y"),
                fields: vec![change("data[\"a|b\"]", Some(json!("x | y\nz")), None)],
            },
            ObjectChange::Added(key("v1", "Service", "rel-x")),
        ];
        let md = format_markdown(&changes);
        assert_eq!(
            md,
            "### Rendered object changes\n\n\
                   1 added, 0 removed, 1 changed\n\n\
                   - **Changed** `ConfigMap/rel-y`\n\n\
                   | Path | Old | New |\n| --- | --- | --- |\n\
                   | `data[\"a\\|b\"]` | `\"x \\| y\\nz\"` | _(absent)_ |\n\n\
                   - **Added** `Service/rel-x`\n"
        );
        for row in md.lines().filter(|l| l.starts_with("| `")) {
            let unescaped_pipes = row.matches('|').count() - row.matches("\\|").count();
            assert_eq!(unescaped_pipes, 4, "{row}");
        }
        assert_eq!(
            format_markdown(&[]),
            "### Rendered object changes\n\nNo object changes.\n"
        );
    }

    #[test]
    fn markdown_code_span_outgrows_backticks_and_raw_newlines() {
        assert_eq!(code_span("a`b"), "`` a`b ``");
        assert_eq!(code_span("a\nb|c"), "`a\\nb\\|c`");
    }
}
