//! The api's KEDA ScaledObject (`keda.sh/v1alpha1`), the opt-in alternative to the
//! HPA: a Prometheus trigger on the in-flight series of this workload's pods.

use crate::expr::{lit, val, Builtin, Expr};
use crate::manifest;
use crate::objects::common::{metadata, scale_down_behavior, scale_target};
use crate::objects::tree::Document;
use crate::objects::Workload;

/// The PromQL query of the in-flight series summed over this workload's pods.
fn in_flight_query(w: &Workload<'_>) -> Expr {
    Expr::Concat(vec![
        lit("sum("),
        val(&w.value("keda").child("metric")),
        lit("{namespace=\""),
        Expr::Builtin(Builtin::ReleaseNamespace),
        lit("\",pod=~\""),
        w.object_name(),
        lit("-.*\"})"),
    ])
}

pub fn scaled_object(w: &Workload<'_>) -> Document {
    let keda = w.value("keda");
    Document {
        file: format!("{}-scaledobject.yaml", w.name),
        when: Some(Expr::And(vec![w.enabled(), val(&keda.child("enabled"))])),
        root: manifest!({
            "apiVersion": "keda.sh/v1alpha1",
            "kind": "ScaledObject",
            "metadata": (metadata(w.spec, w.object_name(), Some(w.name), vec![])),
            "spec": {
                "scaleTargetRef": (scale_target(w)),
                "minReplicaCount": (keda.child("minReplicas")),
                "maxReplicaCount": (keda.child("maxReplicas")),
                "pollingInterval": (keda.child("pollingInterval")),
                "advanced": {
                    "horizontalPodAutoscalerConfig": { "behavior": (scale_down_behavior(w)) },
                },
                "triggers": [{
                    "type": "prometheus",
                    "metadata": {
                        "serverAddress": (keda.child("serverAddress")),
                        "query": (in_flight_query(w)),
                        "threshold": (keda.child("threshold")),
                    },
                }],
            },
        }),
    }
}
