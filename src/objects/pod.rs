//! The pod template every workload class shares (Deployment and Job), and its one
//! container, with the class's own parts (the api's port, probes and drain).

use crate::expr::{lit, val, CmpOp, Expr, ValuePath};
use crate::manifest;
use crate::objects::common::{image, service_account_name, standard_labels};
use crate::objects::config_map::{config_checksum, workload_config_map_name};
use crate::objects::env::container_env;
use crate::objects::secret::secrets_checksum;
use crate::objects::tree::{entries_of, if_set, items_of, Node};
use crate::objects::Workload;
use crate::spec::WorkloadClass;

/// The pod template: labels, the config checksum, the pod spec.
pub fn pod_template(w: &Workload<'_>) -> Node {
    let migrate = w.class == WorkloadClass::Migrate;
    let account = if migrate {
        // A pre hook runs before the release's ServiceAccount exists on first install:
        // the Job names its own, if any.
        manifest!(entries {
            "restartPolicy": (w.value("restartPolicy")),
            ..(if_set("serviceAccountName", &w.value("serviceAccountName"))),
        })
    } else {
        manifest!(entries { "serviceAccountName": (service_account_name(w.spec)) })
    };
    let grace = if migrate {
        vec![]
    } else {
        manifest!(entries {
            "terminationGracePeriodSeconds": (w.value("terminationGracePeriodSeconds")),
        })
    };
    // A hook Job reads its own copy of the configuration, a workload with an overlay
    // its own ConfigMap.
    let config_source = workload_config_map_name(w);
    let secrets_checksum = if w.spec.secrets.keys.is_empty() {
        vec![]
    } else {
        manifest!(entries { "checksum/secrets": (secrets_checksum()) })
    };
    manifest!({
        "metadata": {
            "labels": {
                ..(standard_labels(w.spec, Some(w.name))),
                ..(entries_of(&w.value("podLabels"))),
            },
            "annotations": {
                "checksum/config": (config_checksum(w)),
                ..(secrets_checksum),
                ..(entries_of(&w.value("podAnnotations"))),
            },
        },
        "spec": {
            ..(account),
            "automountServiceAccountToken": false,
            ..(if_set("imagePullSecrets", &ValuePath::new(["imagePullSecrets"]))),
            "securityContext": (w.value("podSecurityContext")),
            ..(grace),
            ..(if_set("nodeSelector", &w.value("nodeSelector"))),
            ..(if_set("tolerations", &w.value("tolerations"))),
            ..(if_set("affinity", &w.value("affinity"))),
            ..(if_set("topologySpreadConstraints", &w.value("topologySpreadConstraints"))),
            ..(if_set("priorityClassName", &w.value("priorityClassName"))),
            ..(if_set("initContainers", &w.value("initContainers"))),
            "containers": [(container(w)), ..(items_of(&w.value("sidecars")))],
            "volumes": [
                { "name": "config", "configMap": { "name": (config_source) } },
                { "name": "tmp", "emptyDir": {} },
                ..(items_of(&w.value("extraVolumes"))),
            ],
        },
    })
}

/// The workload's container.
fn container(w: &Workload<'_>) -> Node {
    let api = w.class == WorkloadClass::Api;
    // The api always listens; pool and worker when `port` is set.
    let ports = match w.class {
        WorkloadClass::Api => manifest!(entries {
            "ports": [{ "name": "http", "containerPort": (w.value("port")), "protocol": "TCP" }],
        }),
        WorkloadClass::Pool | WorkloadClass::Worker => manifest!(entries {
            "ports" if (val(&w.value("port"))): [
                { "name": "http", "containerPort": (w.value("port")), "protocol": "TCP" },
            ],
        }),
        WorkloadClass::Jobs | WorkloadClass::Migrate => vec![],
    };
    let drain = w.value("drainSeconds");
    // Readiness and liveness probes: every Deployment's, when set (the api's are by
    // default).
    let probes = match w.class {
        WorkloadClass::Api | WorkloadClass::Jobs | WorkloadClass::Pool | WorkloadClass::Worker => {
            manifest!(entries {
                ..(if_set("readinessProbe", &w.value("readinessProbe"))),
                ..(if_set("livenessProbe", &w.value("livenessProbe"))),
            })
        }
        WorkloadClass::Migrate => vec![],
    };
    let drain_hook = if api {
        manifest!(entries {
            "lifecycle" if (val(&drain).cmp(CmpOp::Gt, lit(0))): {
                "preStop": {
                    "exec": { "command": ["sleep", (Expr::IntString(Box::new(val(&drain))))] },
                },
            },
        })
    } else {
        vec![]
    };
    let (has_env, env) = container_env(w);
    manifest!({
        "name": (w.name),
        "image": (image()),
        "imagePullPolicy": (ValuePath::new(["image", "pullPolicy"])),
        ..(if_set("command", &w.value("command"))),
        ..(if_set("args", &w.value("args"))),
        ..(ports),
        "env" if (has_env): (env),
        ..(if_set("envFrom", &w.value("envFrom"))),
        "resources": (w.value("resources")),
        "securityContext": (w.value("securityContext")),
        ..(probes),
        ..(if_set("startupProbe", &w.value("startupProbe"))),
        ..(drain_hook),
        "volumeMounts": [
            {
                "name": "config",
                "mountPath": (ValuePath::new(["configFile", "mountPath"])),
                "readOnly": true,
            },
            { "name": "tmp", "mountPath": "/tmp" },
            ..(items_of(&w.value("extraVolumeMounts"))),
        ],
    })
}
