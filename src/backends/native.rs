//! The render back end: the manifests `helm template` prints, produced natively by
//! evaluating the object tree against resolved values.

use crate::backends::emit::{document_kind, render_document_into};
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
/// after those in alphabetical order, then template files by name.
fn order_key(doc: &Document) -> (bool, usize, String, String) {
    let kind = document_kind(doc).unwrap_or("");
    match INSTALL_ORDER.iter().position(|o| *o == kind) {
        Some(rank) => (is_hook(doc), rank, String::new(), doc.file.clone()),
        None => (
            is_hook(doc),
            INSTALL_ORDER.len(),
            kind.to_string(),
            doc.file.clone(),
        ),
    }
}

/// Renders every document for the values, in Helm's order, each preceded by
/// `---` and `# Source: <chart>/templates/<file>` as `helm template` prints them.
pub fn render_manifests(
    spec: &Spec,
    docs: &[Document],
    values: &Value,
    release: &Release,
) -> Result<String, EvalError> {
    let ctx = EvalContext {
        values,
        item: None,
        release_name: &release.name,
        release_namespace: &release.namespace,
        chart_name: &spec.chart.name,
        chart_version: &spec.chart.version,
        chart_app_version: &spec.chart.app_version,
    };
    let mut ordered: Vec<&Document> = docs.iter().collect();
    ordered.sort_by_key(|d| order_key(d));
    // One buffer for the whole render.
    let mut out = String::new();
    for doc in ordered {
        let header = format!(
            "---\n# Source: {}/templates/{}\n",
            spec.chart.name, doc.file
        );
        render_document_into(doc, &ctx, &header, &mut out)?;
    }
    Ok(out)
}
