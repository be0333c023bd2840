//! What every kind shares: object names, the standard labels, metadata, the image,
//! hook annotations and the autoscalers' common parts.
//!
//! Names, labels, selector labels and the configuration are named templates: the
//! Helm back end writes each once into `templates/_helpers.tpl` and uses it through
//! `include`; the render back end writes the same text in place.

use crate::expr::{lit, named, val, Builtin, Expr, ValuePath};
use crate::manifest;
use crate::model::naming::{
    describe_template as describe_template_text, kept_fullname_length, selector_templates,
    NamePart, NamePattern, COMPONENT_LABEL, INSTANCE_LABEL, MAX_NAME, NAME_LABEL,
};
use crate::objects::tree::{Key, MapPart, Node};
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
        "name" => "The chart's name, or `nameOverride`: the `app.kubernetes.io/name` label.".into(),
        "fullname" => "`fullnameOverride`, else the release name, followed by `-<name>` unless \
            it contains it (as `helm create` writes it), cut to 63 characters."
            .into(),
        _ => {
            if let Some(term) = name.strip_prefix("capacity.") {
                return match term.rsplit_once('.') {
                    Some((workload, "maxPods")) => format!("The most pods `{workload}` runs, as decimal text: the autoscaler's `maxReplicas` when one is on, else `replicaCount`; 0 when disabled (capacity formula)."),
                    Some((workload, "peakProcesses")) => format!("The processes `{workload}` runs at the peak of a rollout, as decimal text: (most pods + surge pods + most pods x retiring generations) x processes per pod (capacity formula)."),
                    Some((workload, "surgePods")) => format!("The pods a rolling update of `{workload}` adds to its most pods, as decimal text: `maxSurge` as a count, or as a percentage rounded up (capacity formula)."),
                    _ => format!("The capacity term {term}."),
                };
            }
            if let Some(workload) = name.strip_prefix("selectorLabels.") {
                return format!(
                    "The labels the pods of `{workload}` are selected by, those of the release it takes over."
                );
            }
            match name.strip_prefix("name.") {
                Some(suffix) => match spec.object_name_pattern(suffix) {
                    NamePattern::Template(parts) => format!(
                        "`{}` cut to 63 characters (taken over): an object name.",
                        describe_template_text(&parts)
                    ),
                    NamePattern::Suffixed(_) => format!(
                        "`<fullname>-{suffix}`, the full name cut so the name fits in 63 characters: an object name."
                    ),
                },
                None => format!("The named template {name}."),
            }
        }
    }
}

/// `default .Chart.Name .Values.nameOverride`.
fn raw_name() -> Expr {
    Expr::Default(
        Box::new(Expr::Builtin(Builtin::ChartName)),
        Box::new(val(&ValuePath::new(["nameOverride"]))),
    )
}

/// The last expression a thread built for a chart with `build`, in `slot`, by the
/// chart's name: for expressions that depend on the chart's name only, which every
/// object holds. A clone of it is a string and a counted reference, not a new tree.
type KeptByChart = std::cell::RefCell<Option<(String, Expr)>>;

fn kept_by_chart(
    slot: &'static std::thread::LocalKey<KeptByChart>,
    spec: &Spec,
    build: fn(&Spec) -> Expr,
) -> Expr {
    slot.with_borrow_mut(|last| match last {
        Some((chart, expr)) if *chart == spec.chart.name => expr.clone(),
        _ => {
            let expr = build(spec);
            *last = Some((spec.chart.name.clone(), expr.clone()));
            expr
        }
    })
}

/// The chart's name or `nameOverride`, cut to 63 characters (`<chart>.name`), kept per
/// thread ([`kept_by_chart`]): every object's labels hold it.
pub fn chart_name(spec: &Spec) -> Expr {
    thread_local! {
        static LAST: KeptByChart = const { std::cell::RefCell::new(None) };
    }
    kept_by_chart(&LAST, spec, |spec| {
        named(
            template_name(spec, "name"),
            Expr::DnsName(MAX_NAME, Box::new(raw_name())),
        )
    })
}

/// Helm's full name (`<chart>.fullname`), as `helm create` writes it, kept per thread
/// ([`kept_by_chart`]): each object name holds it.
pub fn fullname(spec: &Spec) -> Expr {
    thread_local! {
        static LAST: KeptByChart = const { std::cell::RefCell::new(None) };
    }
    kept_by_chart(&LAST, spec, build_fullname)
}

fn build_fullname(spec: &Spec) -> Expr {
    let release = || Expr::Builtin(Builtin::ReleaseName);
    let override_ = val(&ValuePath::new(["fullnameOverride"]));
    named(
        template_name(spec, "fullname"),
        Expr::If(
            Box::new(override_.clone()),
            Box::new(Expr::DnsName(MAX_NAME, Box::new(override_))),
            Box::new(Expr::If(
                Box::new(Expr::Contains(Box::new(raw_name()), Box::new(release()))),
                Box::new(Expr::DnsName(MAX_NAME, Box::new(release()))),
                Box::new(Expr::DnsName(
                    MAX_NAME,
                    Box::new(Expr::Concat(vec![release(), lit("-"), raw_name()])),
                )),
            )),
        ),
    )
}

/// A template's text as an expression (not yet cut).
fn template_expr(spec: &Spec, parts: &[NamePart]) -> Expr {
    Expr::Concat(
        parts
            .iter()
            .map(|p| match p {
                NamePart::Release => Expr::Builtin(Builtin::ReleaseName),
                NamePart::Name => chart_name(spec),
                NamePart::Fullname => fullname(spec),
                NamePart::Text(t) => lit(t.as_str()),
            })
            .collect(),
    )
}

/// An object name as an expression.
pub fn name_expr(spec: &Spec, pattern: &NamePattern) -> Expr {
    match pattern {
        NamePattern::Suffixed(suffix) => Expr::Concat(vec![
            Expr::DnsName(kept_fullname_length(suffix), Box::new(fullname(spec))),
            lit(format!("-{suffix}")),
        ]),
        NamePattern::Template(parts) => {
            Expr::DnsName(MAX_NAME, Box::new(template_expr(spec, parts)))
        }
    }
}

/// The name of `<suffix>`'s objects (`<chart>.name.<suffix>`): `<fullname>-<suffix>`
/// with the full name cut so the suffix fits, or the template of a workload the spec
/// takes over.
pub fn release_name_with(spec: &Spec, suffix: &str) -> Expr {
    named(
        template_name(spec, &format!("name.{suffix}")),
        name_expr(spec, &spec.object_name_pattern(suffix)),
    )
}

/// The release's configuration ConfigMap.
pub fn config_map_name(spec: &Spec) -> Expr {
    release_name_with(spec, "config")
}

/// The ServiceAccount the pods run as: `serviceAccount.name`, else the full name.
pub fn service_account_name(spec: &Spec) -> Expr {
    Expr::Default(
        Box::new(fullname(spec)),
        Box::new(val(&ValuePath::new(["serviceAccount", "name"]))),
    )
}

/// The chart label: `<chart>-<version>` with `+` replaced, cut to 63 characters.
fn chart_label() -> Expr {
    Expr::DnsName(
        MAX_NAME,
        Box::new(Expr::ReplacePlus(Box::new(Expr::Concat(vec![
            Expr::Builtin(Builtin::ChartName),
            lit("-"),
            Expr::Builtin(Builtin::ChartVersion),
        ])))),
    )
}

/// A workload's own selector labels when the spec takes it over.
fn takeover_selector(spec: &Spec, component: Option<&str>) -> Option<Vec<MapPart>> {
    let workload = component?;
    let takeover = spec.takeover.get(workload)?;
    if takeover.selector_labels.is_empty() {
        return None;
    }
    let parts = selector_templates(Some(takeover), workload)
        .into_iter()
        .map(|(key, parts)| MapPart::Entry {
            key: Key::Static(key.into()),
            value: Node::Leaf(Expr::DnsName(
                MAX_NAME,
                Box::new(template_expr(spec, &parts)),
            )),
            when: None,
        })
        .collect();
    Some(vec![MapPart::Named {
        template: template_name(spec, &format!("selectorLabels.{workload}")),
        parts,
    }])
}

/// The labels a workload's pods are selected by (`<chart>.selectorLabels`, then the
/// component; or the labels of the release the spec takes over). Components differ
/// per workload, so no two selectors overlap (`check_spec` proves it for taken-over
/// selectors).
pub fn selector_labels(spec: &Spec, component: Option<&str>) -> Vec<MapPart> {
    if let Some(taken) = takeover_selector(spec, component) {
        return taken;
    }
    let shared = manifest!({
        (NAME_LABEL): (chart_name(spec)),
        (INSTANCE_LABEL): (Expr::Builtin(Builtin::ReleaseName)),
    });
    with_component(spec, "selectorLabels", shared, component)
}

/// The standard labels of every object (`<chart>.labels`, then the component). A
/// workload taken over carries its old selector labels first, then the standard
/// labels whose keys they do not hold.
pub fn standard_labels(spec: &Spec, component: Option<&str>) -> Vec<MapPart> {
    let shared = manifest!({
        (NAME_LABEL): (chart_name(spec)),
        (INSTANCE_LABEL): (Expr::Builtin(Builtin::ReleaseName)),
        "app.kubernetes.io/version": (Expr::Builtin(Builtin::ChartAppVersion)),
        "app.kubernetes.io/managed-by": (Expr::Builtin(Builtin::ReleaseService)),
        "helm.sh/chart": (chart_label()),
    });
    let Some(mut taken) = takeover_selector(spec, component) else {
        return with_component(spec, "labels", shared, component);
    };
    let held: Vec<String> = component
        .and_then(|w| spec.takeover.get(w))
        .map(|t| t.selector_labels.keys().cloned().collect())
        .unwrap_or_default();
    let (Node::Map(parts), Some(c)) = (shared, component) else {
        unreachable!("manifest!({{..}}) is a mapping; a taken-over workload has a name")
    };
    let Node::Map(own) = manifest!({ (COMPONENT_LABEL): (c) }) else {
        unreachable!("manifest!({{..}}) is a mapping")
    };
    taken.extend(parts.into_iter().chain(own).filter(
        |p| !matches!(p, MapPart::Entry { key: Key::Static(k), .. } if held.iter().any(|h| h == k)),
    ));
    taken
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
        let Node::Map(component) = manifest!({ (COMPONENT_LABEL): (c) }) else {
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
    crate::capacity::inputs::autoscaler_on(&w.path(), w.class)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::example;

    /// The kept full name is the one of the spec asked about, whichever was asked
    /// before it on the thread.
    #[test]
    fn the_full_name_is_the_one_of_its_chart() {
        let a = example("web-shop");
        let mut b = example("web-shop");
        b.chart.name = "other-shop".into();
        for spec in [&a, &a, &b, &a, &b, &b] {
            let name = fullname(spec);
            assert_eq!(name, build_fullname(spec));
            assert_eq!(
                name.to_go(),
                format!("(include \"{}.fullname\" $)", spec.chart.name)
            );
        }
    }

    /// The kept chart name is the one of the spec asked about, as the full name.
    #[test]
    fn the_chart_name_is_the_one_of_its_chart() {
        let a = example("web-shop");
        let mut b = example("web-shop");
        b.chart.name = "other-shop".into();
        for spec in [&a, &a, &b, &a, &b, &b] {
            let name = chart_name(spec);
            assert_eq!(
                name,
                named(
                    template_name(spec, "name"),
                    Expr::DnsName(MAX_NAME, Box::new(raw_name()))
                )
            );
            assert_eq!(
                name.to_go(),
                format!("(include \"{}.name\" $)", spec.chart.name)
            );
        }
    }
}
