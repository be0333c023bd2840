//! Stage 4, build objects: every Kubernetes object of the chart, built once per
//! workload class as a tree with value holes ([`crate::tree`]).
//!
//! Workload names are the only spec text that appears outside value references:
//! they are validated DNS labels (see [`crate::spec`]) and become path segments,
//! component labels and name suffixes.

use crate::expr::{lit, val, Builtin, Expr, ValuePath};
use crate::spec::{Spec, WorkloadClass};
use crate::tree::{Document, ListPart, MapBuilder, Node};

/// Builds every document of the chart, in a stable order.
pub fn build_objects(spec: &Spec) -> Vec<Document> {
    let mut docs = vec![service_account(), config_map()];
    for (name, workload) in spec.workloads.all() {
        let w = Workload {
            name,
            class: workload.class(),
        };
        match w.class {
            WorkloadClass::Api => {
                docs.push(deployment(&w));
                docs.push(service(&w));
                docs.push(disruption_budget(&w));
                docs.push(network_policy(&w));
                docs.push(autoscaler(&w));
                docs.push(scaled_object(&w));
            }
            WorkloadClass::Jobs | WorkloadClass::Pool | WorkloadClass::Worker => {
                docs.push(deployment(&w));
                docs.push(network_policy(&w));
            }
            WorkloadClass::Migrate => {
                docs.push(hook_config_map(&w));
                docs.push(migrate_job(&w));
            }
        }
    }
    docs
}

/// One workload being built.
struct Workload<'a> {
    name: &'a str,
    class: WorkloadClass,
}

impl Workload<'_> {
    fn path(&self) -> ValuePath {
        ValuePath::new(["workloads", self.name])
    }

    fn value(&self, key: &str) -> ValuePath {
        self.path().child(key)
    }

    fn enabled(&self) -> Expr {
        val(&self.value("enabled"))
    }

    /// `<release>-<workload>`, cut to 63 characters.
    fn object_name(&self) -> Expr {
        release_name_with(self.name)
    }
}

/// `<release>-<suffix>` as a Kubernetes name.
fn release_name_with(suffix: &str) -> Expr {
    Expr::DnsName(Box::new(Expr::Concat(vec![
        Expr::Builtin(Builtin::ReleaseName),
        lit(format!("-{suffix}")),
    ])))
}

fn config_map_name() -> Expr {
    release_name_with("config")
}

fn service_account_name() -> Expr {
    Expr::Default(
        Box::new(Expr::Builtin(Builtin::ReleaseName)),
        Box::new(val(&ValuePath::new(["serviceAccount", "name"]))),
    )
}

/// The chart label: `<chart>-<version>` with `+` replaced, cut to 63 characters.
fn chart_label() -> Expr {
    Expr::DnsName(Box::new(Expr::ReplacePlus(Box::new(Expr::Concat(vec![
        Expr::Builtin(Builtin::ChartName),
        lit("-"),
        Expr::Builtin(Builtin::ChartVersion),
    ])))))
}

/// The labels a workload's pods are selected by. Components differ per workload, so
/// no two workloads' selectors overlap.
fn selector_labels(component: Option<&str>) -> MapBuilder {
    let b = MapBuilder::new()
        .entry(
            "app.kubernetes.io/name",
            Node::Leaf(Expr::Builtin(Builtin::ChartName)),
        )
        .entry(
            "app.kubernetes.io/instance",
            Node::Leaf(Expr::Builtin(Builtin::ReleaseName)),
        );
    match component {
        Some(c) => b.entry("app.kubernetes.io/component", Node::text(c)),
        None => b,
    }
}

/// The standard labels of every object.
fn standard_labels(component: Option<&str>) -> MapBuilder {
    selector_labels(component)
        .entry(
            "app.kubernetes.io/version",
            Node::Leaf(Expr::Builtin(Builtin::ChartAppVersion)),
        )
        .entry(
            "app.kubernetes.io/managed-by",
            Node::Leaf(Expr::Builtin(Builtin::ReleaseService)),
        )
        .entry("helm.sh/chart", Node::Leaf(chart_label()))
}

fn metadata(name: Expr, component: Option<&str>) -> MapBuilder {
    MapBuilder::new()
        .entry("name", Node::Leaf(name))
        .entry("labels", standard_labels(component).build())
}

fn service_account() -> Document {
    let sa = ValuePath::new(["serviceAccount"]);
    let annotations = sa.child("annotations");
    Document {
        file: "serviceaccount.yaml".into(),
        when: Some(val(&sa.child("create"))),
        root: MapBuilder::new()
            .entry("apiVersion", Node::text("v1"))
            .entry("kind", Node::text("ServiceAccount"))
            .entry(
                "metadata",
                metadata(service_account_name(), None)
                    .entry_when(
                        "annotations",
                        MapBuilder::new().entries_of(&annotations).build(),
                        val(&annotations),
                    )
                    .build(),
            )
            .entry("automountServiceAccountToken", Node::Leaf(lit(false)))
            .build(),
    }
}

/// The application's configuration file.
fn config_data() -> Node {
    MapBuilder::new()
        .dynamic_entry(
            val(&ValuePath::new(["configFile", "name"])),
            Node::Leaf(Expr::JsonText(Box::new(val(&ValuePath::new(["config"]))))),
        )
        .build()
}

fn config_map() -> Document {
    Document {
        file: "configmap.yaml".into(),
        when: None,
        root: MapBuilder::new()
            .entry("apiVersion", Node::text("v1"))
            .entry("kind", Node::text("ConfigMap"))
            .entry("metadata", metadata(config_map_name(), None).build())
            .entry("data", config_data())
            .build(),
    }
}

/// The annotations of a `pre-install,pre-upgrade` hook.
fn hook_annotations(weight: &str, delete_policy: &str) -> Node {
    Node::map(vec![
        ("helm.sh/hook", Node::text("pre-install,pre-upgrade")),
        ("helm.sh/hook-weight", Node::text(weight)),
        ("helm.sh/hook-delete-policy", Node::text(delete_policy)),
    ])
}

/// A copy of the configuration for a hook Job: hooks run before the release's own
/// ConfigMap exists on first install.
fn hook_config_map(w: &Workload<'_>) -> Document {
    Document {
        file: format!("{}-configmap.yaml", w.name),
        when: Some(w.enabled()),
        root: MapBuilder::new()
            .entry("apiVersion", Node::text("v1"))
            .entry("kind", Node::text("ConfigMap"))
            .entry(
                "metadata",
                metadata(w.object_name(), Some(w.name))
                    .entry(
                        "annotations",
                        hook_annotations("-10", "before-hook-creation"),
                    )
                    .build(),
            )
            .entry("data", config_data())
            .build(),
    }
}

fn image() -> Expr {
    Expr::Concat(vec![
        val(&ValuePath::new(["image", "repository"])),
        lit(":"),
        Expr::Default(
            Box::new(Expr::Builtin(Builtin::ChartAppVersion)),
            Box::new(val(&ValuePath::new(["image", "tag"]))),
        ),
    ])
}

/// The pod template every workload class shares, with the class's own parts.
fn pod_template(w: &Workload<'_>) -> Node {
    let pod_labels = w.value("podLabels");
    let pod_annotations = w.value("podAnnotations");
    let labels = standard_labels(Some(w.name))
        .entries_of(&pod_labels)
        .build();
    let annotations = MapBuilder::new()
        .entry(
            "checksum/config",
            Node::Leaf(Expr::Sha256Json(Box::new(val(&ValuePath::new(["config"]))))),
        )
        .entries_of(&pod_annotations)
        .build();

    let mut spec = MapBuilder::new();
    if w.class == WorkloadClass::Migrate {
        // Hooks run before the release's ServiceAccount exists on first install.
        spec = spec.entry("restartPolicy", Node::text("Never"));
    } else {
        spec = spec.entry("serviceAccountName", Node::Leaf(service_account_name()));
    }
    spec = spec
        .entry("automountServiceAccountToken", Node::Leaf(lit(false)))
        .value_if_set("imagePullSecrets", &ValuePath::new(["imagePullSecrets"]))
        .entry(
            "securityContext",
            Node::value(&w.value("podSecurityContext")),
        );
    if w.class != WorkloadClass::Migrate {
        spec = spec.entry(
            "terminationGracePeriodSeconds",
            Node::value(&w.value("terminationGracePeriodSeconds")),
        );
    }
    spec = spec
        .value_if_set("nodeSelector", &w.value("nodeSelector"))
        .value_if_set("tolerations", &w.value("tolerations"))
        .value_if_set("affinity", &w.value("affinity"))
        .value_if_set(
            "topologySpreadConstraints",
            &w.value("topologySpreadConstraints"),
        )
        .entry("containers", Node::list(vec![container(w)]))
        .entry(
            "volumes",
            Node::list(vec![
                Node::map(vec![
                    ("name", Node::text("config")),
                    (
                        "configMap",
                        Node::map(vec![(
                            "name",
                            Node::Leaf(if w.class == WorkloadClass::Migrate {
                                w.object_name()
                            } else {
                                config_map_name()
                            }),
                        )]),
                    ),
                ]),
                Node::map(vec![
                    ("name", Node::text("tmp")),
                    ("emptyDir", Node::map::<&str>(vec![])),
                ]),
            ]),
        );

    MapBuilder::new()
        .entry(
            "metadata",
            MapBuilder::new()
                .entry("labels", labels)
                .entry("annotations", annotations)
                .build(),
        )
        .entry("spec", spec.build())
        .build()
}

fn container(w: &Workload<'_>) -> Node {
    let env = w.value("env");
    let mut c = MapBuilder::new()
        .entry("name", Node::text(w.name))
        .entry("image", Node::Leaf(image()))
        .entry(
            "imagePullPolicy",
            Node::value(&ValuePath::new(["image", "pullPolicy"])),
        )
        .value_if_set("command", &w.value("command"))
        .value_if_set("args", &w.value("args"));
    if w.class == WorkloadClass::Api {
        c = c.entry(
            "ports",
            Node::list(vec![Node::map(vec![
                ("name", Node::text("http")),
                ("containerPort", Node::value(&w.value("port"))),
                ("protocol", Node::text("TCP")),
            ])]),
        );
    }
    c = c
        .entry_when(
            "env",
            Node::List(vec![ListPart::ItemsOf(env.clone())]),
            val(&env),
        )
        .value_if_set("envFrom", &w.value("envFrom"))
        .entry("resources", Node::value(&w.value("resources")))
        .entry("securityContext", Node::value(&w.value("securityContext")));
    if w.class == WorkloadClass::Api {
        let drain = w.value("drainSeconds");
        c = c
            .value_if_set("readinessProbe", &w.value("readinessProbe"))
            .value_if_set("livenessProbe", &w.value("livenessProbe"))
            .entry_when(
                "lifecycle",
                Node::map(vec![(
                    "preStop",
                    Node::map(vec![(
                        "exec",
                        Node::map(vec![(
                            "command",
                            Node::list(vec![
                                Node::text("sleep"),
                                Node::Leaf(Expr::IntString(Box::new(val(&drain)))),
                            ]),
                        )]),
                    )]),
                )]),
                val(&drain).cmp(crate::expr::CmpOp::Gt, lit(0)),
            );
    }
    c.entry(
        "volumeMounts",
        Node::list(vec![
            Node::map(vec![
                ("name", Node::text("config")),
                (
                    "mountPath",
                    Node::value(&ValuePath::new(["configFile", "mountPath"])),
                ),
                ("readOnly", Node::Leaf(lit(true))),
            ]),
            Node::map(vec![
                ("name", Node::text("tmp")),
                ("mountPath", Node::text("/tmp")),
            ]),
        ]),
    )
    .build()
}

fn deployment(w: &Workload<'_>) -> Document {
    let rolling = w.value("rollingUpdate");
    Document {
        file: format!("{}-deployment.yaml", w.name),
        when: Some(w.enabled()),
        root: MapBuilder::new()
            .entry("apiVersion", Node::text("apps/v1"))
            .entry("kind", Node::text("Deployment"))
            .entry("metadata", metadata(w.object_name(), Some(w.name)).build())
            .entry(
                "spec",
                MapBuilder::new()
                    .entry_when(
                        "replicas",
                        Node::value(&w.value("replicaCount")),
                        Expr::Not(Box::new(autoscaled(w))),
                    )
                    .entry(
                        "selector",
                        Node::map(vec![("matchLabels", selector_labels(Some(w.name)).build())]),
                    )
                    .entry(
                        "strategy",
                        Node::map(vec![
                            ("type", Node::text("RollingUpdate")),
                            (
                                "rollingUpdate",
                                Node::map(vec![
                                    ("maxSurge", Node::value(&rolling.child("maxSurge"))),
                                    (
                                        "maxUnavailable",
                                        Node::value(&rolling.child("maxUnavailable")),
                                    ),
                                ]),
                            ),
                        ]),
                    )
                    .entry("template", pod_template(w))
                    .build(),
            )
            .build(),
    }
}

fn service(w: &Workload<'_>) -> Document {
    let svc = w.value("service");
    let annotations = svc.child("annotations");
    Document {
        file: format!("{}-service.yaml", w.name),
        when: Some(w.enabled()),
        root: MapBuilder::new()
            .entry("apiVersion", Node::text("v1"))
            .entry("kind", Node::text("Service"))
            .entry(
                "metadata",
                metadata(w.object_name(), Some(w.name))
                    .entry_when(
                        "annotations",
                        MapBuilder::new().entries_of(&annotations).build(),
                        val(&annotations),
                    )
                    .build(),
            )
            .entry(
                "spec",
                Node::map(vec![
                    ("type", Node::value(&svc.child("type"))),
                    ("selector", selector_labels(Some(w.name)).build()),
                    (
                        "ports",
                        Node::list(vec![Node::map(vec![
                            ("name", Node::text("http")),
                            ("port", Node::value(&svc.child("port"))),
                            ("targetPort", Node::text("http")),
                            ("protocol", Node::text("TCP")),
                        ])]),
                    ),
                ]),
            )
            .build(),
    }
}

fn disruption_budget(w: &Workload<'_>) -> Document {
    let pdb = w.value("podDisruptionBudget");
    Document {
        file: format!("{}-pdb.yaml", w.name),
        when: Some(Expr::And(vec![w.enabled(), val(&pdb.child("enabled"))])),
        root: MapBuilder::new()
            .entry("apiVersion", Node::text("policy/v1"))
            .entry("kind", Node::text("PodDisruptionBudget"))
            .entry("metadata", metadata(w.object_name(), Some(w.name)).build())
            .entry(
                "spec",
                Node::map(vec![
                    ("maxUnavailable", Node::value(&pdb.child("maxUnavailable"))),
                    (
                        "selector",
                        Node::map(vec![("matchLabels", selector_labels(Some(w.name)).build())]),
                    ),
                ]),
            )
            .build(),
    }
}

fn network_policy(w: &Workload<'_>) -> Document {
    let np = w.value("networkPolicy");
    let mut spec = MapBuilder::new()
        .entry(
            "podSelector",
            Node::map(vec![("matchLabels", selector_labels(Some(w.name)).build())]),
        )
        .entry("policyTypes", Node::list(vec![Node::text("Ingress")]));
    if w.class == WorkloadClass::Api {
        let from = np.child("from");
        spec = spec.entry(
            "ingress",
            Node::list(vec![MapBuilder::new()
                .entry(
                    "ports",
                    Node::list(vec![Node::map(vec![
                        ("port", Node::text("http")),
                        ("protocol", Node::text("TCP")),
                    ])]),
                )
                .value_if_set("from", &from)
                .build()]),
        );
    } else {
        // No ingress rule: nothing may connect to a pod that serves nothing.
        spec = spec.entry("ingress", Node::list(vec![]));
    }
    Document {
        file: format!("{}-networkpolicy.yaml", w.name),
        when: Some(Expr::And(vec![w.enabled(), val(&np.child("enabled"))])),
        root: MapBuilder::new()
            .entry("apiVersion", Node::text("networking.k8s.io/v1"))
            .entry("kind", Node::text("NetworkPolicy"))
            .entry("metadata", metadata(w.object_name(), Some(w.name)).build())
            .entry("spec", spec.build())
            .build(),
    }
}

fn migrate_job(w: &Workload<'_>) -> Document {
    Document {
        file: format!("{}-job.yaml", w.name),
        when: Some(w.enabled()),
        root: MapBuilder::new()
            .entry("apiVersion", Node::text("batch/v1"))
            .entry("kind", Node::text("Job"))
            .entry(
                "metadata",
                metadata(w.object_name(), Some(w.name))
                    .entry(
                        "annotations",
                        hook_annotations("-5", "before-hook-creation,hook-succeeded"),
                    )
                    .build(),
            )
            .entry(
                "spec",
                Node::map(vec![
                    ("backoffLimit", Node::value(&w.value("backoffLimit"))),
                    (
                        "activeDeadlineSeconds",
                        Node::value(&w.value("activeDeadlineSeconds")),
                    ),
                    ("template", pod_template(w)),
                ]),
            )
            .build(),
    }
}

/// Whether an autoscaler owns the workload's replica count (only the api class has one).
fn autoscaled(w: &Workload<'_>) -> Expr {
    if w.class == WorkloadClass::Api {
        Expr::Or(vec![
            val(&w.value("autoscaling").child("enabled")),
            val(&w.value("keda").child("enabled")),
        ])
    } else {
        lit(false)
    }
}

/// The slow scale-in policy both autoscalers share.
fn scale_down_behavior(w: &Workload<'_>) -> Node {
    let down = w.value("autoscaling").child("scaleDown");
    Node::map(vec![(
        "scaleDown",
        Node::map(vec![
            (
                "stabilizationWindowSeconds",
                Node::value(&down.child("stabilizationWindowSeconds")),
            ),
            (
                "policies",
                Node::list(vec![Node::map(vec![
                    ("type", Node::text("Pods")),
                    ("value", Node::value(&down.child("pods"))),
                    ("periodSeconds", Node::value(&down.child("periodSeconds"))),
                ])]),
            ),
        ]),
    )])
}

fn scale_target(w: &Workload<'_>) -> Node {
    Node::map(vec![
        ("apiVersion", Node::text("apps/v1")),
        ("kind", Node::text("Deployment")),
        ("name", Node::Leaf(w.object_name())),
    ])
}

fn autoscaler(w: &Workload<'_>) -> Document {
    let hpa = w.value("autoscaling");
    let metrics = Node::List(vec![
        ListPart::Item {
            value: Node::map(vec![
                ("type", Node::text("Resource")),
                (
                    "resource",
                    Node::map(vec![
                        ("name", Node::text("cpu")),
                        (
                            "target",
                            Node::map(vec![
                                ("type", Node::text("Utilization")),
                                (
                                    "averageUtilization",
                                    Node::value(&hpa.child("targetCPUUtilizationPercentage")),
                                ),
                            ]),
                        ),
                    ]),
                ),
            ]),
            when: None,
        },
        ListPart::Item {
            value: Node::map(vec![
                ("type", Node::text("Pods")),
                (
                    "pods",
                    Node::map(vec![
                        (
                            "metric",
                            Node::map(vec![("name", Node::text(crate::model::IN_FLIGHT_METRIC))]),
                        ),
                        (
                            "target",
                            Node::map(vec![
                                ("type", Node::text("AverageValue")),
                                (
                                    "averageValue",
                                    Node::value(&hpa.child("inFlightRequestsPerPod")),
                                ),
                            ]),
                        ),
                    ]),
                ),
            ]),
            when: None,
        },
        ListPart::ItemsOf(hpa.child("extraMetrics")),
    ]);
    Document {
        file: format!("{}-hpa.yaml", w.name),
        when: Some(Expr::And(vec![w.enabled(), val(&hpa.child("enabled"))])),
        root: MapBuilder::new()
            .entry("apiVersion", Node::text("autoscaling/v2"))
            .entry("kind", Node::text("HorizontalPodAutoscaler"))
            .entry("metadata", metadata(w.object_name(), Some(w.name)).build())
            .entry(
                "spec",
                Node::map(vec![
                    ("scaleTargetRef", scale_target(w)),
                    ("minReplicas", Node::value(&hpa.child("minReplicas"))),
                    ("maxReplicas", Node::value(&hpa.child("maxReplicas"))),
                    ("metrics", metrics),
                    ("behavior", scale_down_behavior(w)),
                ]),
            )
            .build(),
    }
}

/// The PromQL query of the in-flight series summed over this workload's pods.
fn in_flight_query(w: &Workload<'_>) -> Expr {
    Expr::Concat(vec![
        lit(format!(
            "sum({}{{namespace=\"",
            crate::model::IN_FLIGHT_METRIC
        )),
        Expr::Builtin(Builtin::ReleaseNamespace),
        lit("\",pod=~\""),
        w.object_name(),
        lit("-.*\"})"),
    ])
}

fn scaled_object(w: &Workload<'_>) -> Document {
    let keda = w.value("keda");
    Document {
        file: format!("{}-scaledobject.yaml", w.name),
        when: Some(Expr::And(vec![w.enabled(), val(&keda.child("enabled"))])),
        root: MapBuilder::new()
            .entry("apiVersion", Node::text("keda.sh/v1alpha1"))
            .entry("kind", Node::text("ScaledObject"))
            .entry("metadata", metadata(w.object_name(), Some(w.name)).build())
            .entry(
                "spec",
                Node::map(vec![
                    ("scaleTargetRef", scale_target(w)),
                    ("minReplicaCount", Node::value(&keda.child("minReplicas"))),
                    ("maxReplicaCount", Node::value(&keda.child("maxReplicas"))),
                    (
                        "pollingInterval",
                        Node::value(&keda.child("pollingInterval")),
                    ),
                    (
                        "advanced",
                        Node::map(vec![(
                            "horizontalPodAutoscalerConfig",
                            Node::map(vec![("behavior", scale_down_behavior(w))]),
                        )]),
                    ),
                    (
                        "triggers",
                        Node::list(vec![Node::map(vec![
                            ("type", Node::text("prometheus")),
                            (
                                "metadata",
                                Node::map(vec![
                                    ("serverAddress", Node::value(&keda.child("serverAddress"))),
                                    ("query", Node::Leaf(in_flight_query(w))),
                                    ("threshold", Node::value(&keda.child("threshold"))),
                                ]),
                            ),
                        ])]),
                    ),
                ]),
            )
            .build(),
    }
}
