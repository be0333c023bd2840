//! A workload's Service (the api's always, a pool's or worker's when
//! `service.enabled`): its `http` port, selecting that workload's pods only; and each
//! bundled evaluation server's.

use crate::expr::{val, Expr};
use crate::manifest;
use crate::objects::common::{metadata, release_name_with, selector_labels, standard_labels};
use crate::objects::tree::{entries_of, Document};
use crate::objects::Workload;
use crate::spec::Spec;

pub fn service(w: &Workload<'_>) -> Document {
    let svc = w.value("service");
    let annotations = svc.child("annotations");
    let more = manifest!(entries {
        "annotations" if (val(&annotations)): { ..(entries_of(&annotations)) },
    });
    Document {
        file: format!("{}-service.yaml", w.name),
        when: Some(Expr::And(vec![w.enabled(), val(&svc.child("enabled"))])),
        root: manifest!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": (w.object_name()),
                "labels": {
                    ..(standard_labels(w.spec, Some(w.name))),
                    ..(entries_of(&svc.child("labels"))),
                },
                ..(more),
            },
            "spec": {
                "type": (svc.child("type")),
                "selector": { ..(selector_labels(w.spec, Some(w.name))) },
                "ports": [{
                    "name": "http",
                    "port": (svc.child("port")),
                    "targetPort": "http",
                    "protocol": "TCP",
                }],
            },
        }),
    }
}

/// A bundled server's Service: one port, selecting that server's pod only.
pub fn bundled_service(spec: &Spec, component: &str, port_name: &str, port: i64) -> Document {
    let enabled = if component == crate::objects::stateful_set::POSTGRES {
        val(&crate::objects::stateful_set::postgres_value("enabled"))
    } else {
        let server = component.trim_start_matches("bundled-valkey-");
        val(&crate::objects::stateful_set::redis_value(
            server, "enabled",
        ))
    };
    Document {
        file: format!("{component}-service.yaml"),
        when: Some(enabled),
        root: manifest!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": (metadata(spec, release_name_with(spec, component), Some(component), vec![])),
            "spec": {
                "type": "ClusterIP",
                "selector": { ..(selector_labels(spec, Some(component))) },
                "ports": [{
                    "name": (port_name),
                    "port": (port),
                    "targetPort": (port_name),
                    "protocol": "TCP",
                }],
            },
        }),
    }
}
