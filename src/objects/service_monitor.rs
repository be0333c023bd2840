//! A workload's ServiceMonitor (`monitoring.coreos.com/v1`): the Prometheus Operator
//! scrapes its Service's `http` port at `path`, in the release's namespace only.

use crate::expr::{val, Builtin, Expr};
use crate::manifest;
use crate::objects::common::{selector_labels, standard_labels};
use crate::objects::tree::{entries_of, if_set, Document};
use crate::objects::Workload;

pub fn service_monitor(w: &Workload<'_>) -> Document {
    let sm = w.value("serviceMonitor");
    Document {
        file: format!("{}-servicemonitor.yaml", w.name),
        when: Some(Expr::And(vec![w.enabled(), val(&sm.child("enabled"))])),
        root: manifest!({
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "ServiceMonitor",
            "metadata": {
                "name": (w.object_name()),
                "labels": {
                    ..(standard_labels(w.spec, Some(w.name))),
                    ..(entries_of(&sm.child("labels"))),
                },
            },
            "spec": {
                "selector": { "matchLabels": { ..(selector_labels(w.spec, Some(w.name))) } },
                "namespaceSelector": {
                    "matchNames": [(Expr::Builtin(Builtin::ReleaseNamespace))],
                },
                "endpoints": [{
                    "port": "http",
                    "path": (sm.child("path")),
                    ..(if_set("interval", &sm.child("interval"))),
                    ..(if_set("scrapeTimeout", &sm.child("scrapeTimeout"))),
                }],
            },
        }),
    }
}
