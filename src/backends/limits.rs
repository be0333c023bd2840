//! Kubernetes' size limits on a rendered object: the API server refuses an object
//! larger than about 1 MiB (a ConfigMap's or Secret's data at most 1 MiB, etcd's
//! request limit a little above) and annotations of more than 256 KiB in total (keys
//! and values, per `metadata`). `render` and `generate` refuse such objects instead of
//! printing a manifest no cluster accepts.

use crate::spec::limits::human_size;
use serde_json::Value;

/// The largest object, in bytes of its JSON encoding: 1 MiB.
pub const MAX_OBJECT_BYTES: u64 = 1024 * 1024;

/// The largest total of one `metadata.annotations` (keys plus values): 256 KiB.
pub const MAX_ANNOTATION_BYTES: u64 = 256 * 1024;

/// A rendered object over one of the limits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} `{name}`: {problem}\n  hint: {hint}")]
pub struct ObjectTooLarge {
    pub kind: String,
    pub name: String,
    pub problem: String,
    pub hint: String,
}

/// The most bytes of JSON one byte of a rendered document can stand for: a character
/// the YAML text holds as itself and JSON escapes as `\u00XX`. Every key and string of
/// the render is written JSON-quoted or as a block of its own lines, so the YAML text
/// is at least as long as the keys and values it holds, and its JSON at most this many
/// times as long.
const JSON_BYTES_PER_TEXT_BYTE: u64 = 6;

/// Whether a document of `len` bytes of text may break a limit: only one longer than
/// a sixth of the object limit can (its annotations are shorter than its text, and a
/// sixth of the object limit is under the annotation limit).
fn may_exceed_limits(len: usize) -> bool {
    (len as u64).saturating_mul(JSON_BYTES_PER_TEXT_BYTE) > MAX_OBJECT_BYTES
}

const _: () = assert!(MAX_OBJECT_BYTES / JSON_BYTES_PER_TEXT_BYTE < MAX_ANNOTATION_BYTES);

/// Checks every object of a rendered stream (`---` between documents, as the render
/// back end prints it: values are JSON-encoded, so a `---` line is always a separator).
/// Documents too short to break a limit are not parsed.
pub fn check_object_limits(rendered: &str) -> Result<(), ObjectTooLarge> {
    for doc in rendered.split("\n---\n") {
        let doc = doc.strip_prefix("---\n").unwrap_or(doc);
        if !may_exceed_limits(doc.len()) || doc.trim().is_empty() {
            continue;
        }
        let Ok(object) = serde_saphyr::from_str::<Value>(doc) else {
            continue;
        };
        check_object(&object)?;
    }
    Ok(())
}

/// Checks one object.
pub fn check_object(object: &Value) -> Result<(), ObjectTooLarge> {
    let text = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("?")
            .escape_debug()
            .to_string()
    };
    let (kind, name) = (text("/kind"), text("/metadata/name"));
    let size = serde_json::to_string(object).map_or(0, |s| s.len() as u64);
    if size > MAX_OBJECT_BYTES {
        return Err(ObjectTooLarge {
            kind,
            name,
            problem: format!(
                "the object is {} ({size} bytes as JSON); Kubernetes stores objects of at most {}",
                human_size(size),
                human_size(MAX_OBJECT_BYTES)
            ),
            hint: "make the values that fill it smaller (the application's `config` is one ConfigMap), or mount large data from a volume".into(),
        });
    }
    for (path, annotations) in annotation_maps(object, String::new()) {
        let total: u64 = annotations
            .iter()
            .map(|(k, v)| (k.len() + v.as_str().map_or(0, str::len)) as u64)
            .sum();
        if total > MAX_ANNOTATION_BYTES {
            return Err(ObjectTooLarge {
                kind,
                name,
                problem: format!(
                    "`{path}` holds {} ({total} bytes of keys and values); Kubernetes allows at most {} of annotations",
                    human_size(total),
                    human_size(MAX_ANNOTATION_BYTES)
                ),
                hint: "shorten the annotations the values add".into(),
            });
        }
    }
    Ok(())
}

/// Every `metadata.annotations` map in an object (its own, a pod template's, a job
/// template's), with its dotted path.
fn annotation_maps(node: &Value, path: String) -> Vec<(String, &serde_json::Map<String, Value>)> {
    let mut out = Vec::new();
    if let Value::Object(map) = node {
        for (key, value) in map {
            let here = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            if key == "metadata" {
                if let Some(Value::Object(a)) = value.get("annotations") {
                    out.push((format!("{here}.annotations"), a));
                }
            } else if value.is_object() {
                out.extend(annotation_maps(value, here));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config_map(bytes: usize) -> Value {
        json!({"kind": "ConfigMap", "metadata": {"name": "r-app"}, "data": {"c": "x".repeat(bytes)}})
    }

    #[test]
    fn an_object_of_one_mib_passes_and_one_byte_more_does_not() {
        let overhead = serde_json::to_string(&config_map(0)).unwrap().len();
        let limit = MAX_OBJECT_BYTES as usize - overhead;
        assert!(check_object(&config_map(limit)).is_ok());
        let err = check_object(&config_map(limit + 1)).unwrap_err();
        assert_eq!(
            (err.kind.as_str(), err.name.as_str()),
            ("ConfigMap", "r-app")
        );
        assert!(err.problem.contains("1048577 bytes"), "{}", err.problem);
        assert!(err.problem.contains("at most 1 MiB"), "{}", err.problem);
    }

    #[test]
    fn pod_template_annotations_count_up_to_256_kib() {
        let pod = |bytes: usize| {
            json!({"kind": "Deployment", "metadata": {"name": "d"},
                   "spec": {"template": {"metadata": {"annotations": {"ab": "x".repeat(bytes)}}}}})
        };
        let limit = MAX_ANNOTATION_BYTES as usize - 2;
        assert!(check_object(&pod(limit)).is_ok());
        let err = check_object(&pod(limit + 1)).unwrap_err();
        assert!(
            err.problem
                .starts_with("`spec.template.metadata.annotations` holds 256 KiB (262145 bytes"),
            "{}",
            err.problem
        );
    }

    #[test]
    fn only_documents_past_a_sixth_of_the_object_limit_are_parsed() {
        assert!(!may_exceed_limits(174_762));
        assert!(may_exceed_limits(174_763));
        assert!(may_exceed_limits(usize::MAX));
        assert!(!may_exceed_limits(0));
    }

    /// The bound the skip relies on: a document's JSON is at most six times its text,
    /// its annotations at most its text, here for the worst characters (escaped in
    /// JSON, plain in a block scalar) and for every golden render.
    #[test]
    fn json_is_at_most_six_times_the_text_and_annotations_at_most_the_text() {
        let worst = "kind: ConfigMap\nmetadata:\n  annotations:\n    a: \"\\u0001\"\ndata:\n  c: |\n    \t\"\\\"\\\t\n".to_string();
        let mut docs = vec![worst];
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("golden");
        for example in std::fs::read_dir(&root).unwrap() {
            let rendered = example.unwrap().path().join("rendered");
            for file in std::fs::read_dir(rendered).unwrap() {
                let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
                docs.extend(text.split("\n---\n").map(str::to_string));
            }
        }
        assert!(docs.len() > 50, "{}", docs.len());
        for doc in &docs {
            let object: Value = serde_saphyr::from_str(doc).unwrap();
            let json = serde_json::to_string(&object).unwrap().len() as u64;
            assert!(json <= JSON_BYTES_PER_TEXT_BYTE * doc.len() as u64, "{doc}");
            for (_, annotations) in annotation_maps(&object, String::new()) {
                let total: usize = annotations
                    .iter()
                    .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
                    .sum();
                assert!(total <= doc.len(), "{doc}");
            }
        }
    }

    #[test]
    fn a_stream_is_checked_object_by_object_and_names_are_escaped() {
        let big = format!(
            "---\nkind: Service\nmetadata:\n  name: s\n---\n# Source: x\nkind: ConfigMap\nmetadata:\n  name: \"a\\u001b[31m\"\ndata:\n  c: \"{}\"\n",
            "y".repeat(MAX_OBJECT_BYTES as usize)
        );
        let err = check_object_limits(&big).unwrap_err();
        assert_eq!(err.name, "a\\u{1b}[31m");
        assert!(check_object_limits("---\nkind: Service\nmetadata:\n  name: s\n").is_ok());
    }
}
