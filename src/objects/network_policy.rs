//! A NetworkPolicy per workload: the api admits its `http` port (from `from` when
//! set); every other class admits nothing, since it serves nothing.

use crate::expr::{val, Expr};
use crate::manifest;
use crate::objects::common::{metadata, selector_labels};
use crate::objects::tree::{if_set, Document, Node};
use crate::objects::Workload;
use crate::spec::WorkloadClass;

pub fn network_policy(w: &Workload<'_>) -> Document {
    let np = w.value("networkPolicy");
    let ingress: Node = if w.class == WorkloadClass::Api {
        manifest!([{
            "ports": [{ "port": "http", "protocol": "TCP" }],
            ..(if_set("from", &np.child("from"))),
        }])
    } else {
        // No ingress rule: nothing may connect to a pod that serves nothing.
        manifest!([])
    };
    Document {
        file: format!("{}-networkpolicy.yaml", w.name),
        when: Some(Expr::And(vec![w.enabled(), val(&np.child("enabled"))])),
        root: manifest!({
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": (metadata(w.spec, w.object_name(), Some(w.name), vec![])),
            "spec": {
                "podSelector": { "matchLabels": { ..(selector_labels(w.spec, Some(w.name))) } },
                "policyTypes": ["Ingress"],
                "ingress": (ingress),
            },
        }),
    }
}
