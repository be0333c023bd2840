//! A workload's Service (the api's always, a pool's or worker's when
//! `service.enabled`): its `http` port, selecting that workload's pods only.

use crate::expr::{val, Expr};
use crate::manifest;
use crate::objects::common::{selector_labels, standard_labels};
use crate::objects::tree::{entries_of, Document};
use crate::objects::Workload;

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
