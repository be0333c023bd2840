//! The api's HorizontalPodAutoscaler (`autoscaling/v2`): CPU, the in-flight requests
//! per pod when `podsMetric` names the series (it needs a custom metrics adapter),
//! and the user's metrics, with the slow scale-in policy.

use crate::expr::{val, Expr};
use crate::manifest;
use crate::objects::common::{metadata, scale_down_behavior, scale_target};
use crate::objects::tree::{items_of, Document};
use crate::objects::Workload;

pub fn autoscaler(w: &Workload<'_>) -> Document {
    let hpa = w.value("autoscaling");
    Document {
        file: format!("{}-hpa.yaml", w.name),
        when: Some(Expr::And(vec![w.enabled(), val(&hpa.child("enabled"))])),
        root: manifest!({
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": (metadata(w.spec, w.object_name(), Some(w.name), vec![])),
            "spec": {
                "scaleTargetRef": (scale_target(w)),
                "minReplicas": (hpa.child("minReplicas")),
                "maxReplicas": (hpa.child("maxReplicas")),
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {
                                "type": "Utilization",
                                "averageUtilization": (hpa.child("targetCPUUtilizationPercentage")),
                            },
                        },
                    },
                    {
                        "type": "Pods",
                        "pods": {
                            "metric": { "name": (hpa.child("podsMetric")) },
                            "target": {
                                "type": "AverageValue",
                                "averageValue": (hpa.child("inFlightRequestsPerPod")),
                            },
                        },
                    } if (val(&hpa.child("podsMetric"))),
                    ..(items_of(&hpa.child("extraMetrics"))),
                ],
                "behavior": (scale_down_behavior(w)),
            },
        }),
    }
}
