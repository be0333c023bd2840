//! What every kind shares: object names, the standard labels, metadata, the image,
//! hook annotations and the autoscalers' common parts.
//!
//! Names, labels, selector labels and the configuration are named templates: the
//! Helm back end writes each once into `templates/_helpers.tpl` and uses it through
//! `include`; the render back end writes the same text in place.

use crate::expr::{lit, val, Builtin, Expr, ValuePath};
use crate::manifest;
use crate::objects::tree::{MapPart, Node};
use crate::objects::Workload;
use crate::spec::{Spec, WorkloadClass};

/// The name of a named template of the chart: `<chart>.<name>`.
pub fn template_name(spec: &Spec, name: &str) -> String {
    format!("{}.{name}", spec.chart.name)
}

/// What a named template of the chart holds, for its comment in `_helpers.tpl`.
pub fn describe_template(spec: &Spec, template: &str) -> String {
    let name = template
        .strip_prefix(&format!("{}.", spec.chart.name))
        .unwrap_or(template);
    match name {
        "labels" => "The standard labels of every object (each adds its component).".into(),
        "selectorLabels" => {
            "The labels pods are selected by (each workload adds its component).".into()
        }
        "config" => "The application's configuration file as JSON; its checksum rolls the pods \
            that read it."
            .into(),
        _ => match name.strip_prefix("name.") {
            Some(suffix) => format!("`<release>-{suffix}`, cut to 63 characters: an object name."),
            None => format!("The named template {name}."),
        },
    }
}

/// `<release>-<suffix>` as a Kubernetes name (`<chart>.name.<suffix>`).
pub fn release_name_with(spec: &Spec, suffix: &str) -> Expr {
    Expr::Named(
        template_name(spec, &format!("name.{suffix}")),
        Box::new(Expr::DnsName(Box::new(Expr::Concat(vec![
            Expr::Builtin(Builtin::ReleaseName),
            lit(format!("-{suffix}")),
        ])))),
    )
}

/// The release's configuration ConfigMap.
pub fn config_map_name(spec: &Spec) -> Expr {
    release_name_with(spec, "config")
}

/// The ServiceAccount the pods run as.
pub fn service_account_name() -> Expr {
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

/// The labels a workload's pods are selected by (`<chart>.selectorLabels`, then the
/// component). Components differ per workload, so no two selectors overlap.
pub fn selector_labels(spec: &Spec, component: Option<&str>) -> Vec<MapPart> {
    let shared = manifest!({
        "app.kubernetes.io/name": (Expr::Builtin(Builtin::ChartName)),
        "app.kubernetes.io/instance": (Expr::Builtin(Builtin::ReleaseName)),
    });
    with_component(spec, "selectorLabels", shared, component)
}

/// The standard labels of every object (`<chart>.labels`, then the component).
pub fn standard_labels(spec: &Spec, component: Option<&str>) -> Vec<MapPart> {
    let shared = manifest!({
        "app.kubernetes.io/name": (Expr::Builtin(Builtin::ChartName)),
        "app.kubernetes.io/instance": (Expr::Builtin(Builtin::ReleaseName)),
        "app.kubernetes.io/version": (Expr::Builtin(Builtin::ChartAppVersion)),
        "app.kubernetes.io/managed-by": (Expr::Builtin(Builtin::ReleaseService)),
        "helm.sh/chart": (chart_label()),
    });
    with_component(spec, "labels", shared, component)
}

fn with_component(
    spec: &Spec,
    template: &str,
    shared: Node,
    component: Option<&str>,
) -> Vec<MapPart> {
    let Node::Map(parts) = shared else {
        unreachable!("manifest!({{..}}) is a mapping")
    };
    let mut out = vec![MapPart::Named {
        template: template_name(spec, template),
        parts,
    }];
    if let Some(c) = component {
        let Node::Map(component) = manifest!({ "app.kubernetes.io/component": (c) }) else {
            unreachable!("manifest!({{..}}) is a mapping")
        };
        out.extend(component);
    }
    out
}

/// `name` and `labels`, plus whatever else the kind's metadata holds.
pub fn metadata(spec: &Spec, name: Expr, component: Option<&str>, more: Vec<MapPart>) -> Node {
    manifest!({
        "name": (name),
        "labels": { ..(standard_labels(spec, component)) },
        ..(more),
    })
}

/// The annotations of the migrate workload's hooks: `pre-install,pre-upgrade` or
/// `post-install,post-upgrade` by its `hookPhase`.
pub fn hook_annotations(w: &Workload<'_>, weight: &str, delete_policy: &str) -> Node {
    let post = Expr::StrEq(Box::new(val(&w.value("hookPhase"))), Box::new(lit("post")));
    let phase = Expr::If(
        Box::new(post),
        Box::new(lit("post-install,post-upgrade")),
        Box::new(lit("pre-install,pre-upgrade")),
    );
    manifest!({
        "helm.sh/hook": (phase),
        "helm.sh/hook-weight": (weight),
        "helm.sh/hook-delete-policy": (delete_policy),
    })
}

/// `<repository>@<digest>` when a digest is set, else `<repository>:<tag, or the
/// chart's appVersion>`.
pub fn image() -> Expr {
    let repository = val(&ValuePath::new(["image", "repository"]));
    let digest = val(&ValuePath::new(["image", "digest"]));
    Expr::If(
        Box::new(digest.clone()),
        Box::new(Expr::Concat(vec![repository.clone(), lit("@"), digest])),
        Box::new(Expr::Concat(vec![
            repository,
            lit(":"),
            Expr::Default(
                Box::new(Expr::Builtin(Builtin::ChartAppVersion)),
                Box::new(val(&ValuePath::new(["image", "tag"]))),
            ),
        ])),
    )
}

/// Whether an autoscaler owns the workload's replica count.
pub fn autoscaled(w: &Workload<'_>) -> Expr {
    autoscaler_on(&w.path(), w.class)
}

/// Whether one of the class's autoscalers is on (false for a class without one).
fn autoscaler_on(path: &ValuePath, class: WorkloadClass) -> Expr {
    match class.autoscalers() {
        [] => lit(false),
        [one] => val(&path.child(one).child("enabled")),
        several => Expr::Or(
            several
                .iter()
                .map(|key| val(&path.child(key).child("enabled")))
                .collect(),
        ),
    }
}

/// The slow scale-in policy both autoscalers share.
pub fn scale_down_behavior(w: &Workload<'_>) -> Node {
    let down = w.value("autoscaling").child("scaleDown");
    manifest!({
        "scaleDown": {
            "stabilizationWindowSeconds": (down.child("stabilizationWindowSeconds")),
            "policies": [{
                "type": "Pods",
                "value": (down.child("pods")),
                "periodSeconds": (down.child("periodSeconds")),
            }],
        },
    })
}

/// The Deployment an autoscaler scales.
pub fn scale_target(w: &Workload<'_>) -> Node {
    manifest!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": (w.object_name()),
    })
}

/// Whether the workload can run more than one pod: replicas above one or an
/// autoscaler on (the replica mode is then `multi`).
pub fn can_run_several_pods(w_name: &str, class: WorkloadClass) -> Expr {
    let path = ValuePath::new(["workloads", w_name]);
    let several = val(&path.child("replicaCount")).cmp(crate::expr::CmpOp::Gt, lit(1));
    match class {
        WorkloadClass::Migrate => lit(false),
        WorkloadClass::Jobs => several,
        _ => {
            let mut any = vec![several];
            any.extend(
                class
                    .autoscalers()
                    .iter()
                    .map(|key| val(&path.child(key).child("enabled"))),
            );
            Expr::Or(any)
        }
    }
}
