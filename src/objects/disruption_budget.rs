//! A workload's PodDisruptionBudget: `minAvailable` when set, else `maxUnavailable`
//! (the `rollout.drain` guard refuses one that allows no pod to be unavailable: it
//! would block every node drain).

use crate::expr::{val, Expr};
use crate::manifest;
use crate::objects::common::{metadata, selector_labels};
use crate::objects::tree::Document;
use crate::objects::Workload;

pub fn disruption_budget(w: &Workload<'_>) -> Document {
    let pdb = w.value("podDisruptionBudget");
    Document {
        file: format!("{}-pdb.yaml", w.name),
        when: Some(Expr::And(vec![w.enabled(), val(&pdb.child("enabled"))])),
        root: manifest!({
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": (metadata(w.spec, w.object_name(), Some(w.name), vec![])),
            "spec": {
                "minAvailable" if (val(&pdb.child("minAvailable"))): (pdb.child("minAvailable")),
                "maxUnavailable" if (Expr::Not(Box::new(val(&pdb.child("minAvailable"))))): (pdb.child("maxUnavailable")),
                "selector": { "matchLabels": { ..(selector_labels(w.spec, Some(w.name))) } },
            },
        }),
    }
}
