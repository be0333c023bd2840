//! Stage 4, build objects: every Kubernetes object of the chart, built once per
//! workload class as a tree with value holes ([`crate::objects::tree`]).
//!
//! Workload names are the only spec text that appears outside value references:
//! they are validated DNS labels (see [`crate::spec`]) and become path segments,
//! component labels and name suffixes.

pub mod tree;

use crate::capacity::allocations::{
    effective_postgres_size, effective_size, postgres_allocation_on, stated_allocations,
};
use crate::expr::{lit, val, Builtin, Expr, ValuePath};
use crate::objects::tree::{Document, ListPart, MapBuilder, Node};
use crate::spec::{Spec, WorkloadClass};
use serde_json::Value;

/// Builds every document of the chart, in a stable order.
pub fn build_objects(spec: &Spec) -> Vec<Document> {
    let mut docs = vec![
        service_account(),
        config_map(spec),
        capacity_config_map(spec),
    ];
    for (name, workload) in spec.workloads.all() {
        let w = Workload {
            name,
            class: workload.class(),
            declared: workload.to_values(),
            shared_stores: spec.shared_stores().iter().map(|s| s.to_string()).collect(),
            pool_workloads: spec.workloads.pool.keys().cloned().collect(),
            config: config_content(spec),
            secret_url_servers: secret_url_servers(spec, &workload.to_values()),
            spec,
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
                docs.push(hook_config_map(spec, &w));
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
    /// The spec's declaration of the workload (its default values): which connection
    /// allocations exist and what they depend on.
    declared: Value,
    /// The spec's shared stores.
    shared_stores: Vec<String>,
    /// The names of the spec's `pool` workloads.
    pool_workloads: Vec<String>,
    /// The configuration file's content, whose checksum rolls the pods.
    config: Expr,
    /// Redis servers with a URL from a Secret that this workload has allocations on.
    secret_url_servers: Vec<String>,
    /// The spec, for the sizes its startup settings state.
    spec: &'a Spec,
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

/// The application's configuration: `config`, with the startup settings section
/// written from typed values (timeouts, and the allocation sizes the capacity report
/// counts) when the spec declares one.
pub fn config_content(spec: &Spec) -> Expr {
    let config = val(&ValuePath::new(["config"]));
    let Some(settings) = &spec.startup_settings else {
        return config;
    };
    let base = ValuePath::new(["startupSettings"]);
    let mut pairs: Vec<(Expr, Expr)> = Vec::new();
    for budget in ["foreground", "background"] {
        for step in ["lock", "statement", "transaction"] {
            let t = base.child(budget).child(step);
            pairs.push((val(&t.child("key")), val(&t.child("seconds"))));
        }
    }
    for name in settings.deadlines.keys() {
        let t = base.child("deadlines").child(name);
        pairs.push((val(&t.child("key")), val(&t.child("seconds"))));
    }
    for (dependency, alloc, declared) in stated_allocations(spec) {
        let a = ValuePath::new(["workloads", &settings.sizes_from, dependency, &alloc]);
        let size = if dependency == "postgres" {
            effective_postgres_size(&settings.sizes_from, &alloc, &declared)
        } else {
            val(&a.child("size"))
        };
        pairs.push((val(&a.child("setting")), size));
    }
    if !settings.cache_url_key.is_empty() {
        if let Some((server, _)) = spec
            .dependency_capacity
            .redis
            .servers
            .iter()
            .find(|(_, s)| s.url_secret.is_some())
        {
            let env = ValuePath::new(["dependencyCapacity", "redis", "servers", server, "urlEnv"]);
            pairs.push((
                val(&base.child("cacheUrlKey")),
                Expr::Concat(vec![lit("os.environ/"), val(&env)]),
            ));
        }
    }
    Expr::WithKey(
        Box::new(config),
        Box::new(val(&base.child("section"))),
        Box::new(Expr::Dict(pairs)),
    )
}

/// The application's configuration file.
fn config_data(spec: &Spec) -> Node {
    MapBuilder::new()
        .dynamic_entry(
            val(&ValuePath::new(["configFile", "name"])),
            Node::Leaf(Expr::JsonText(Box::new(config_content(spec)))),
        )
        .build()
}

fn config_map(spec: &Spec) -> Document {
    Document {
        file: "configmap.yaml".into(),
        when: None,
        root: MapBuilder::new()
            .entry("apiVersion", Node::text("v1"))
            .entry("kind", Node::text("ConfigMap"))
            .entry("metadata", metadata(config_map_name(), None).build())
            .entry("data", config_data(spec))
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
fn hook_config_map(spec: &Spec, w: &Workload<'_>) -> Document {
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
            .entry("data", config_data(spec))
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
            Node::Leaf(Expr::Sha256Json(Box::new(w.config.clone()))),
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
        .entry_when("env", managed_and_user_env(w), Expr::Or(env_conditions(w)))
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

/// A declared allocation of the workload: `(name, declaration)` for `postgres`/`redis`.
fn declared_allocations<'v>(w: &'v Workload<'_>, dependency: &str) -> Vec<(&'v String, &'v Value)> {
    w.declared
        .get(dependency)
        .and_then(Value::as_object)
        .map(|m| m.iter().collect())
        .unwrap_or_default()
}

/// An env entry setting the allocation's `env` to an integer, present when `env` is
/// set and `when` holds; with the condition, for the `env` key's own presence.
fn managed_env_item(alloc_path: &ValuePath, value: Expr, when: Expr) -> (ListPart, Expr) {
    let env = val(&alloc_path.child("env"));
    let condition = Expr::And(vec![env.clone(), when]);
    (
        ListPart::Item {
            value: Node::map(vec![
                ("name", Node::Leaf(env)),
                ("value", Node::Leaf(Expr::IntString(Box::new(value)))),
            ]),
            when: Some(condition.clone()),
        },
        condition,
    )
}

/// The env the chart manages (processes per pod, allocation sizes), then the user's.
/// Explicit `env` wins over `envFrom`, so a ConfigMap or Secret cannot raise them.
fn managed_env(w: &Workload<'_>) -> Vec<(ListPart, Expr)> {
    let mut out = vec![(
        ListPart::Each {
            list: w.value("processEnv"),
            item: Node::map(vec![
                ("name", Node::Leaf(Expr::Item)),
                (
                    "value",
                    Node::Leaf(Expr::IntString(Box::new(val(&w.value("processesPerPod"))))),
                ),
            ]),
        },
        val(&w.value("processEnv")),
    )];
    out.extend(replica_and_scheduling_env(w));
    for (alloc, declared) in declared_allocations(w, "postgres") {
        let path = w.value("postgres").child(alloc);
        let size = effective_size(w.spec, w.name, "postgres", alloc, declared);
        out.push(managed_env_item(
            &path,
            size,
            postgres_allocation_on(declared),
        ));
    }
    for (alloc, declared) in declared_allocations(w, "redis") {
        let path = w.value("redis").child(alloc);
        let size = effective_size(w.spec, w.name, "redis", alloc, declared);
        out.push(managed_env_item(&path, size, lit(true)));
    }
    for server in &w.secret_url_servers {
        let path = ValuePath::new(["dependencyCapacity", "redis", "servers", server]);
        let secret = path.child("urlSecret");
        let env = val(&path.child("urlEnv"));
        let condition = Expr::And(vec![env.clone(), val(&secret)]);
        out.push((
            ListPart::Item {
                value: Node::map(vec![
                    ("name", Node::Leaf(env)),
                    (
                        "valueFrom",
                        Node::map(vec![(
                            "secretKeyRef",
                            Node::map(vec![
                                ("name", Node::value(&secret.child("name"))),
                                ("key", Node::value(&secret.child("key"))),
                            ]),
                        )]),
                    ),
                ]),
                when: Some(condition.clone()),
            },
            condition,
        ));
    }
    out
}

/// The Redis servers with a URL from a Secret that a workload has allocations on.
fn secret_url_servers(spec: &Spec, declared: &Value) -> Vec<String> {
    let used: Vec<&str> = declared
        .get("redis")
        .and_then(Value::as_object)
        .map(|m| {
            m.values()
                .filter_map(|a| a.get("server").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    spec.dependency_capacity
        .redis
        .servers
        .iter()
        .filter(|(name, s)| s.url_secret.is_some() && used.contains(&name.as_str()))
        .map(|(name, _)| name.clone())
        .collect()
}

fn managed_and_user_env(w: &Workload<'_>) -> Node {
    let mut parts: Vec<ListPart> = managed_env(w).into_iter().map(|(p, _)| p).collect();
    parts.push(ListPart::ItemsOf(w.value("env")));
    Node::List(parts)
}

fn env_conditions(w: &Workload<'_>) -> Vec<Expr> {
    let mut conditions: Vec<Expr> = managed_env(w).into_iter().map(|(_, c)| c).collect();
    conditions.push(val(&w.value("env")));
    conditions
}

/// `<release>-dependency-capacity`: the peak connections of the values being
/// installed, computed by the template from the same inputs as the capacity guard.
fn capacity_config_map(spec: &Spec) -> Document {
    let capacity = crate::capacity::capacity_exprs(spec);
    let int = |e: Expr| Node::Leaf(Expr::IntString(Box::new(e)));
    let mut data = MapBuilder::new()
        .entry("formula", Node::text(crate::capacity::FORMULA))
        .entry(
            "retiringGenerations",
            int(crate::capacity::formula::retiring_generations()),
        );
    for w in &capacity.workloads {
        data = data
            .entry(&format!("{}.maxPods", w.name), int(w.max_pods.clone()))
            .entry(&format!("{}.surgePods", w.name), int(w.surge_pods.clone()))
            .entry(
                &format!("{}.peakProcesses", w.name),
                int(w.peak_processes()),
            )
            .entry(
                &format!("{}.postgres", w.name),
                int(w.postgres_connections()),
            )
            .entry(&format!("{}.redis", w.name), int(w.redis_connections(None)));
    }
    data = data
        .entry("postgres.peak", int(capacity.postgres_peak()))
        .entry("postgres.budget", int(capacity.postgres_budget()))
        .entry("redis.peak", int(capacity.redis_peak()))
        .entry("redis.budget", int(capacity.redis_max_connections.clone()));
    for server in &capacity.redis_servers {
        data = data
            .entry(
                &format!("redis.{}.peak", server.name),
                int(capacity.redis_server_peak(server)),
            )
            .entry(
                &format!("redis.{}.maxClients", server.name),
                int(server.max_clients.clone()),
            );
    }
    Document {
        file: "dependency-capacity.yaml".into(),
        when: None,
        root: MapBuilder::new()
            .entry("apiVersion", Node::text("v1"))
            .entry("kind", Node::text("ConfigMap"))
            .entry(
                "metadata",
                metadata(release_name_with("dependency-capacity"), None).build(),
            )
            .entry("data", data.build())
            .build(),
    }
}

/// Whether the workload can run more than one pod: replicas above one or an
/// autoscaler on (the replica mode is then `multi`).
pub fn can_run_several_pods(w_name: &str, class: WorkloadClass) -> Expr {
    let path = ValuePath::new(["workloads", w_name]);
    match class {
        WorkloadClass::Migrate => lit(false),
        WorkloadClass::Api => Expr::Or(vec![
            val(&path.child("replicaCount")).cmp(crate::expr::CmpOp::Gt, lit(1)),
            val(&path.child("autoscaling").child("enabled")),
            val(&path.child("keda").child("enabled")),
        ]),
        _ => val(&path.child("replicaCount")).cmp(crate::expr::CmpOp::Gt, lit(1)),
    }
}

/// An env entry whose name comes from `managedEnv.<key>`, present when that name is set.
fn named_env(key: &str, value: Expr, when: Expr) -> (ListPart, Expr) {
    let name = val(&ValuePath::new(["managedEnv", key]));
    let condition = Expr::And(vec![name.clone(), when]);
    (
        ListPart::Item {
            value: Node::map(vec![
                ("name", Node::Leaf(name)),
                ("value", Node::Leaf(value)),
            ]),
            when: Some(condition.clone()),
        },
        condition,
    )
}

fn flag(e: Expr) -> Expr {
    Expr::If(Box::new(e), Box::new(lit("true")), Box::new(lit("false")))
}

/// Replica mode, replica strictness, shared store backends and their Redis URL, and the
/// scheduling configuration of `jobs` and `pool` workloads.
fn replica_and_scheduling_env(w: &Workload<'_>) -> Vec<(ListPart, Expr)> {
    let mut out = vec![
        named_env(
            "replicaMode",
            Expr::If(
                Box::new(can_run_several_pods(w.name, w.class)),
                Box::new(lit("multi")),
                Box::new(lit("single")),
            ),
            lit(true),
        ),
        named_env(
            "replicaStrict",
            flag(val(&ValuePath::new(["replicaStrict"]))),
            lit(true),
        ),
    ];
    let stores = ValuePath::new(["stores"]);
    let mut any_redis = Vec::new();
    for store in &w.shared_stores {
        let path = stores.child(store);
        any_redis.push(Expr::StrEq(
            Box::new(val(&path.child("backend"))),
            Box::new(lit("redis")),
        ));
        let env = val(&path.child("env"));
        out.push((
            ListPart::Item {
                value: Node::map(vec![
                    ("name", Node::Leaf(env.clone())),
                    ("value", Node::Leaf(val(&path.child("backend")))),
                ]),
                when: Some(env.clone()),
            },
            env,
        ));
    }
    if !any_redis.is_empty() {
        out.push(named_env(
            "redisUrl",
            val(&ValuePath::new(["storeRedis", "url"])),
            Expr::Or(any_redis),
        ));
    }
    let pools = ValuePath::new(["scheduling", "pools"]);
    match w.class {
        WorkloadClass::Jobs => {
            let offloaded: Vec<Expr> = w
                .pool_workloads
                .iter()
                .map(|p| {
                    Expr::If(
                        Box::new(val(&ValuePath::new(["workloads", p, "enabled"]))),
                        Box::new(lit(format!("{p},"))),
                        Box::new(lit("")),
                    )
                })
                .collect();
            out.push(named_env(
                "offloadedPools",
                Expr::TrimSuffix(",", Box::new(Expr::Concat(offloaded))),
                lit(true),
            ));
            let skipped: Vec<Expr> = w
                .pool_workloads
                .iter()
                .map(|p| {
                    Expr::ListIf(
                        Box::new(val(&ValuePath::new(["workloads", p, "enabled"]))),
                        Box::new(val(&pools.child(p).child("jobs"))),
                    )
                })
                .collect();
            out.push(named_env(
                "skipJobs",
                Expr::JoinLists(",", skipped),
                lit(true),
            ));
        }
        WorkloadClass::Pool => {
            out.push(named_env("schedulingPool", lit(w.name), lit(true)));
            out.push(named_env(
                "keepJobs",
                Expr::JoinLists(",", vec![val(&pools.child(w.name).child("jobs"))]),
                lit(true),
            ));
            out.push(named_env(
                "leaderElection",
                flag(val(&w.value("leaderElection"))),
                lit(true),
            ));
            out.push(named_env(
                "claiming",
                flag(val(&w.value("claiming"))),
                lit(true),
            ));
        }
        _ => {}
    }
    out
}
