//! The Deployment of every long-running workload class (api, jobs, pool, worker).

use crate::expr::Expr;
use crate::manifest;
use crate::objects::common::{autoscaled, metadata, selector_labels};
use crate::objects::pod::pod_template;
use crate::objects::tree::{if_set, Document};
use crate::objects::Workload;

pub fn deployment(w: &Workload<'_>) -> Document {
    let rolling = w.value("rollingUpdate");
    // An autoscaler owns the replica count when one is on.
    let fixed_replicas = Expr::Not(Box::new(autoscaled(w)));
    Document {
        file: format!("{}-deployment.yaml", w.name),
        when: Some(w.enabled()),
        root: manifest!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": (metadata(w.spec, w.object_name(), Some(w.name), vec![])),
            "spec": {
                "replicas" if (fixed_replicas): (w.value("replicaCount")),
                ..(if_set("minReadySeconds", &w.value("minReadySeconds"))),
                "selector": { "matchLabels": { ..(selector_labels(w.spec, Some(w.name))) } },
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {
                        "maxSurge": (rolling.child("maxSurge")),
                        "maxUnavailable": (rolling.child("maxUnavailable")),
                    },
                },
                "template": (pod_template(w)),
            },
        }),
    }
}
