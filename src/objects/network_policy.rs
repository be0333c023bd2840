//! A NetworkPolicy per workload: the api, and a pool or worker with a `port`, admits
//! its `http` port (from `from` when set); every other workload admits nothing, since
//! it serves nothing. Egress is restricted only when `allowDns` or `egress` rules are
//! set. The migrate Job's policy is a hook created just before the Job, so its pod is
//! covered from its first start.

use crate::expr::{lit, val, Expr};
use crate::manifest;
use crate::objects::common::{hook_annotations, metadata, selector_labels};
use crate::objects::tree::{if_set, items_of, Document, Node};
use crate::objects::Workload;
use crate::spec::WorkloadClass;

/// DNS lookups to the cluster's `kube-dns` pods, on UDP and TCP port 53.
fn dns_rule() -> Node {
    manifest!({
        "to": [{
            "namespaceSelector": {},
            "podSelector": { "matchLabels": { "k8s-app": "kube-dns" } },
        }],
        "ports": [
            { "port": (lit(53)), "protocol": "UDP" },
            { "port": (lit(53)), "protocol": "TCP" },
        ],
    })
}

pub fn network_policy(w: &Workload<'_>) -> Document {
    let np = w.value("networkPolicy");
    // No ingress rule: nothing may connect to a pod that serves nothing.
    let ingress: Node = match w.class {
        WorkloadClass::Api => manifest!([{
            "ports": [{ "port": "http", "protocol": "TCP" }],
            ..(if_set("from", &np.child("from"))),
        }]),
        WorkloadClass::Pool | WorkloadClass::Worker => manifest!([
            {
                "ports": [{ "port": "http", "protocol": "TCP" }],
                ..(if_set("from", &np.child("from"))),
            } if (val(&w.value("port"))),
        ]),
        WorkloadClass::Jobs | WorkloadClass::Migrate => manifest!([]),
    };
    // The hook's policy is `<full name>-<workload>-hook`: a name of its own, whatever
    // name a `takeover` gives the Job.
    let (name, hook) = if w.class == WorkloadClass::Migrate {
        (
            crate::objects::common::release_name_with(w.spec, &format!("{}-hook", w.name)),
            manifest!(entries {
                "annotations": (hook_annotations(w, "-10", "before-hook-creation")),
            }),
        )
    } else {
        (w.object_name(), vec![])
    };
    let restricts_egress = Expr::Or(vec![val(&np.child("allowDns")), val(&np.child("egress"))]);
    Document {
        file: format!("{}-networkpolicy.yaml", w.name),
        when: Some(Expr::And(vec![w.enabled(), val(&np.child("enabled"))])),
        root: manifest!({
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": (metadata(w.spec, name, Some(w.name), hook)),
            "spec": {
                "podSelector": { "matchLabels": { ..(selector_labels(w.spec, Some(w.name))) } },
                "policyTypes": ["Ingress", "Egress" if (restricts_egress.clone())],
                "ingress": (ingress),
                "egress" if (restricts_egress): [
                    (dns_rule()) if (val(&np.child("allowDns"))),
                    ..(items_of(&np.child("egress"))),
                ],
            },
        }),
    }
}

/// A bundled evaluation server's NetworkPolicy: only the release's own pods reach its
/// port.
pub fn bundled_network_policy(
    spec: &crate::spec::Spec,
    component: &str,
    port: &str,
    when: Expr,
) -> Document {
    let name = crate::objects::common::release_name_with(spec, component);
    Document {
        file: format!("{component}-networkpolicy.yaml"),
        when: Some(when),
        root: manifest!({
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": (metadata(spec, name, Some(component), vec![])),
            "spec": {
                "podSelector": { "matchLabels": { ..(selector_labels(spec, Some(component))) } },
                "policyTypes": ["Ingress"],
                "ingress": [{
                    "from": [{ "podSelector": { "matchLabels": { ..(selector_labels(spec, None)) } } }],
                    "ports": [{ "port": (port), "protocol": "TCP" }],
                }],
            },
        }),
    }
}
