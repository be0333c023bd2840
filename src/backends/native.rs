//! The render back end: the manifests `helm template` prints, produced natively by
//! evaluating the object tree against resolved values.

use crate::backends::emit::{document_kind, render_document_text};
use crate::expr::gojson::to_go_json;
use crate::expr::{EvalContext, EvalError};
use crate::objects::tree::{Document, Key, MapPart, Node};
use crate::spec::Spec;
use serde_json::Value;

/// The release a render is for, as `helm template NAME --namespace NS` takes it.
#[derive(Debug, Clone)]
pub struct Release {
    pub name: String,
    pub namespace: String,
}

impl Default for Release {
    fn default() -> Self {
        Release {
            name: "release-name".into(),
            namespace: "default".into(),
        }
    }
}

/// Helm's install order of kinds (`releaseutil.InstallOrder`); others come last.
const INSTALL_ORDER: &[&str] = &[
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
];

/// Whether a document is a Helm hook (printed after the release's manifests).
pub fn is_hook(doc: &Document) -> bool {
    let Node::Map(parts) = &doc.root else {
        return false;
    };
    parts.iter().any(|p| match p {
        MapPart::Entry {
            key: Key::Static(k),
            value: Node::Map(meta),
            ..
        } if k == "metadata" => meta.iter().any(|m| match m {
            MapPart::Entry {
                key: Key::Static(k),
                value: Node::Map(annotations),
                ..
            } if k == "annotations" => annotations.iter().any(
                |a| matches!(a, MapPart::Entry { key: Key::Static(k), .. } if k == "helm.sh/hook"),
            ),
            _ => false,
        }),
        _ => false,
    })
}

/// Helm's order: hooks last, then kinds by install order, kinds it does not know
/// after those in alphabetical order, then template files by name, then documents in
/// a file by position.
type OrderKey = (bool, usize, String, String, usize);

fn order_key(hook: bool, kind: &str, file: &str, index: usize) -> OrderKey {
    match INSTALL_ORDER.iter().position(|o| *o == kind) {
        Some(rank) => (hook, rank, String::new(), file.to_string(), index),
        None => (
            hook,
            INSTALL_ORDER.len(),
            kind.to_string(),
            file.to_string(),
            index,
        ),
    }
}

/// The template file of `extraObjects`.
pub const EXTRA_OBJECTS_FILE: &str = "extra-objects.yaml";

/// The template of `extraObjects`: every item printed as given, as JSON, each its own
/// document. No `tpl`: text in values never becomes template code.
pub fn extra_objects_template() -> String {
    "{{- range $.Values.extraObjects }}\n---\n{{ toJson . }}\n{{- end }}\n".to_string()
}

/// The `extraObjects` of the values, as [`extra_objects_template`] prints them.
fn extra_objects(values: &Value) -> Vec<(OrderKey, String)> {
    let Some(items) = values.get("extraObjects").and_then(Value::as_array) else {
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let kind = item.get("kind").and_then(Value::as_str).unwrap_or("");
            let hook = item
                .pointer("/metadata/annotations")
                .and_then(Value::as_object)
                .is_some_and(|a| a.contains_key("helm.sh/hook"));
            let key = order_key(hook, kind, EXTRA_OBJECTS_FILE, index);
            (key, format!("{}\n", to_go_json(item)))
        })
        .collect()
}

/// Renders every document for the values, in Helm's order, each preceded by
/// `---` and `# Source: <chart>/templates/<file>` as `helm template` prints them.
pub fn render_manifests(
    spec: &Spec,
    docs: &[Document],
    values: &Value,
    release: &Release,
) -> Result<String, EvalError> {
    let mut manifests = Manifests::new(spec, values, release);
    for doc in docs {
        manifests.add(doc)?;
    }
    Ok(manifests.finish())
}

/// [`render_manifests`] of documents with the workload each is of
/// ([`crate::objects::build_objects_of`]).
pub fn render_manifests_of(
    spec: &Spec,
    docs: &[Document],
    workloads: &[Option<String>],
    values: &Value,
    release: &Release,
) -> Result<String, EvalError> {
    let mut manifests = Manifests::new(spec, values, release);
    for (doc, workload) in docs.iter().zip(workloads) {
        manifests.add_of(doc, workload.as_deref())?;
    }
    Ok(manifests.finish())
}

/// The manifests of one release, rendered a document at a time: what
/// [`render_manifests`] prints, without holding every document's tree.
pub struct Manifests<'a> {
    spec: &'a Spec,
    ctx: EvalContext<'a>,
    rendered: Vec<(OrderKey, String)>,
}

impl<'a> Manifests<'a> {
    /// No document rendered yet.
    pub fn new(spec: &'a Spec, values: &'a Value, release: &'a Release) -> Self {
        Manifests {
            spec,
            ctx: EvalContext {
                values,
                item: None,
                release_name: &release.name,
                release_namespace: &release.namespace,
                chart_name: &spec.chart.name,
                chart_version: &spec.chart.version,
                chart_app_version: &spec.chart.app_version,
                named: Some(std::rc::Rc::default()),
                base: None,
            },
            rendered: Vec::new(),
        }
    }

    /// Renders one document (nothing when its condition is false).
    pub fn add(&mut self, doc: &Document) -> Result<(), EvalError> {
        self.add_of(doc, None)
    }

    /// [`Manifests::add`] of one of `workload`'s documents, whose values it reads from
    /// `workloads.<workload>` ([`EvalContext::within`]).
    pub fn add_of(&mut self, doc: &Document, workload: Option<&str>) -> Result<(), EvalError> {
        let within;
        let ctx = match workload {
            Some(name) => {
                within = self.ctx.within("workloads", name);
                &within
            }
            None => &self.ctx,
        };
        if let Some(text) = render_document_text(doc, ctx)? {
            let kind = document_kind(doc).unwrap_or("");
            self.rendered
                .push((order_key(is_hook(doc), kind, &doc.file, 0), text));
        }
        Ok(())
    }

    /// The stream `helm template` prints: the `extraObjects` added, every document in
    /// Helm's install order, each under its `# Source:` line.
    pub fn finish(self) -> String {
        let (spec, values) = (self.spec, self.ctx.values);
        print_manifests(spec, values, vec![self.into_rendered()])
    }

    /// The documents rendered so far, to print with those of other [`Manifests`] of the
    /// same release ([`print_manifests`]): each part of a render on its own core.
    pub fn into_rendered(self) -> RenderedDocuments {
        RenderedDocuments(self.rendered)
    }
}

/// Documents one [`Manifests`] rendered, not yet printed.
pub struct RenderedDocuments(Vec<(OrderKey, String)>);

/// [`Manifests::finish`] of the documents of every part, rendered for `values`: what
/// one [`Manifests`] given every part's documents, part after part, prints.
pub fn print_manifests(spec: &Spec, values: &Value, parts: Vec<RenderedDocuments>) -> String {
    let mut rendered: Vec<(OrderKey, String)> = parts.into_iter().flat_map(|p| p.0).collect();
    rendered.extend(extra_objects(values));
    rendered.sort_by(|a, b| a.0.cmp(&b.0));
    // Each document's separator and `# Source:` line, around the chart's and the file's
    // names.
    const AROUND: usize = "---\n# Source: /templates/\n".len();
    let name = spec.chart.name.as_str();
    // Sized once: grown a push at a time, the text of a large render was copied into
    // fresh memory about twice its size.
    let size: usize = rendered
        .iter()
        .map(|((_, _, _, file, _), text)| AROUND + name.len() + file.len() + text.len())
        .sum();
    let mut out = String::with_capacity(size);
    for ((_, _, _, file, _), text) in rendered {
        for piece in ["---\n# Source: ", name, "/templates/", &file, "\n", &text] {
            out.push_str(piece);
        }
    }
    debug_assert_eq!(out.len(), size, "the size computed is the size printed");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, values};
    use crate::objects::build_objects;

    /// Each printed document as (hook, kind, file), in the order printed.
    fn printed(spec: &Spec, text: &str) -> Vec<(bool, String, String)> {
        let prefix = format!("# Source: {}/templates/", spec.chart.name);
        let mut out = Vec::new();
        for document in text.split("---\n").skip(1) {
            let mut lines = document.lines();
            let file = lines.next().unwrap().strip_prefix(&prefix).unwrap();
            let kind = document
                .lines()
                .find_map(|l| l.strip_prefix("kind: "))
                .or_else(|| document.split("\"kind\":\"").nth(1)?.split('"').next())
                .unwrap_or_default();
            let hook = document.contains("helm.sh/hook");
            out.push((hook, kind.to_string(), file.to_string()));
        }
        out
    }

    /// Every document whose condition holds is printed once, under its `# Source:`
    /// line, hooks last, kinds in Helm's install order and files by name within a kind;
    /// the documents of a disabled workload are not; `extraObjects` are; and
    /// [`Manifests`] filled a document at a time prints the same text.
    #[test]
    fn manifests_are_printed_once_each_in_helms_order() {
        let spec = example("agent-platform");
        let docs = build_objects(&spec);
        let mut v = values(&spec, None);
        let release = Release::default();
        let text = render_manifests(&spec, &docs, &v, &release).unwrap();
        let all = printed(&spec, &text);
        assert!(all.len() >= 10, "{}", all.len());
        assert!(all.iter().any(|(hook, ..)| *hook));
        let rank = |(hook, kind, file): &(bool, String, String)| {
            let known = INSTALL_ORDER.iter().position(|k| k == kind);
            (
                *hook,
                known.unwrap_or(INSTALL_ORDER.len()),
                known.map_or(kind.clone(), |_| String::new()),
                file.clone(),
            )
        };
        let ranks: Vec<_> = all.iter().map(rank).collect();
        let mut sorted = ranks.clone();
        sorted.sort();
        assert_eq!(ranks, sorted);
        let mut files: Vec<&String> = all.iter().map(|(_, _, f)| f).collect();
        files.sort();
        files.dedup();
        assert_eq!(files.len(), all.len());
        assert!(all.iter().any(|(_, _, f)| f == "api-deployment.yaml"));

        let mut manifests = Manifests::new(&spec, &v, &release);
        for doc in &docs {
            manifests.add(doc).unwrap();
        }
        assert_eq!(manifests.finish(), text);
        // The documents rendered in parts, printed together.
        for cut in [0, 1, docs.len() / 2, docs.len()] {
            let mut parts = Vec::new();
            for half in [&docs[..cut], &docs[cut..]] {
                let mut manifests = Manifests::new(&spec, &v, &release);
                for doc in half {
                    manifests.add(doc).unwrap();
                }
                parts.push(manifests.into_rendered());
            }
            assert_eq!(print_manifests(&spec, &v, parts), text, "cut at {cut}");
        }

        v["workloads"]["api"]["enabled"] = serde_json::json!(false);
        v["extraObjects"] = serde_json::json!([
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "extra"}}
        ]);
        let changed = printed(
            &spec,
            &render_manifests(&spec, &docs, &v, &release).unwrap(),
        );
        assert!(!changed.iter().any(|(_, _, f)| f.starts_with("api-")));
        assert!(changed
            .iter()
            .any(|(_, kind, f)| f == EXTRA_OBJECTS_FILE && kind == "ConfigMap"));
    }
}
