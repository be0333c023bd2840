//! Taking over a release: a spec that reproduces a hand-written chart's object names
//! and selector labels (`tests/fixtures/takeover/`) renders, under real Helm 3 and 4,
//! objects whose immutable fields equal the hand-written chart's, so `helm upgrade`
//! with the generated chart patches them in place. And the object list the
//! `names.unique` guard checks is the one `build_objects` renders.

use crate::support::*;
use serde_json::Value;
use shipshape::backends::native::{render_manifests, Release};
use shipshape::guards::names::named_objects;
use shipshape::model::naming::NameInputs;
use shipshape::objects::build_objects;
use shipshape::spec::load_spec;
use std::collections::BTreeSet;

fn fixture() -> std::path::PathBuf {
    repo_root().join("tests/fixtures/takeover")
}

fn find<'a>(objects: &'a [Value], kind: &str) -> Vec<&'a Value> {
    objects.iter().filter(|o| o["kind"] == kind).collect()
}

fn one<'a>(objects: &'a [Value], kind: &str) -> &'a Value {
    let found = find(objects, kind);
    assert_eq!(found.len(), 1, "one {kind}: {found:#?}");
    found[0]
}

fn is_hook(o: &Value) -> bool {
    !o["metadata"]["annotations"]["helm.sh/hook"].is_null()
}

/// Every label of `small` is in `big` with the same value.
fn labels_within(small: &Value, big: &Value) -> bool {
    small
        .as_object()
        .is_some_and(|m| m.iter().all(|(k, v)| big.get(k) == Some(v)))
}

#[test]
fn a_taken_over_release_keeps_its_immutable_fields_under_helm_3_and_4() {
    let text = std::fs::read_to_string(fixture().join("shipshape.yaml")).unwrap();
    let spec = load_spec(&text, "takeover").unwrap();
    let scratch = Scratch::new("takeover");
    write_generated(&spec, scratch.path());
    let chart = scratch.path().join("chart");
    // The taken-over render is valid Kubernetes too.
    let rendered = scratch.path().join("rendered/default.yaml");
    for version in ["1.28.0", "1.31.0"] {
        let (code, out, err) = run(
            &kubernetes_validate(),
            &["--strict", "-k", version, rendered.to_str().unwrap()],
            &[],
        );
        assert_eq!(code, 0, "{version}: {out}{err}");
    }
    let legacy = fixture().join("legacy-chart");
    // The release names a team would have: short, holding the chart's name (the full
    // name is then the release name), and the longest Helm accepts.
    let long = format!("{}-{}", "a".repeat(44), "b".repeat(8));
    for release in ["prod", "shop-prod", long.as_str()] {
        let (code, old, err) = helm(
            &helm3(),
            &["template", release, legacy.to_str().unwrap()],
            scratch.path(),
        );
        assert_eq!(code, 0, "{err}");
        let old = parse_objects(&old);
        for helm_bin in [helm3(), helm4()] {
            let (code, new, err) = helm(
                &helm_bin,
                &["template", release, chart.to_str().unwrap()],
                scratch.path(),
            );
            assert_eq!(code, 0, "{}: {err}", helm_bin.display());
            let new = parse_objects(&new);
            let at = format!("{} release `{release}`", helm_bin.display());

            // Every object of the old release has a counterpart of the same kind and
            // name: `helm upgrade` patches it instead of deleting and creating it.
            let names = |objects: &[Value]| -> BTreeSet<(String, String)> {
                objects
                    .iter()
                    .map(|o| {
                        (
                            o["kind"].as_str().unwrap().to_string(),
                            o["metadata"]["name"].as_str().unwrap().to_string(),
                        )
                    })
                    .collect()
            };
            let missing: Vec<_> = names(&old).difference(&names(&new)).cloned().collect();
            assert!(
                missing.is_empty(),
                "{at}: not rendered any more: {missing:?}"
            );

            // Deployment: `spec.selector` is immutable and must be equal; the pods
            // still carry it.
            let (d_old, d_new) = (one(&old, "Deployment"), one(&new, "Deployment"));
            assert_eq!(d_old["metadata"]["name"], d_new["metadata"]["name"], "{at}");
            assert_eq!(d_old["spec"]["selector"], d_new["spec"]["selector"], "{at}");
            assert!(
                labels_within(
                    &d_new["spec"]["selector"]["matchLabels"],
                    &d_new["spec"]["template"]["metadata"]["labels"]
                ),
                "{at}: the pods do not carry the selector"
            );

            // Service: `clusterIP` is immutable: neither chart sets it; the selector
            // picks the same pods.
            let (s_old, s_new) = (one(&old, "Service"), one(&new, "Service"));
            assert_eq!(s_old["metadata"]["name"], s_new["metadata"]["name"], "{at}");
            for s in [s_old, s_new] {
                assert!(s["spec"].get("clusterIP").is_none(), "{at}: {s}");
                assert!(s["spec"].get("clusterIPs").is_none(), "{at}: {s}");
            }
            assert_eq!(s_old["spec"]["type"], s_new["spec"]["type"], "{at}");
            assert_eq!(s_old["spec"]["selector"], s_new["spec"]["selector"], "{at}");

            // The migration Job: a hook in both, in the same phase, replaced before
            // it is created again (`before-hook-creation`), so its template (immutable
            // in a Job) is never patched; the same name and pod labels.
            let (j_old, j_new) = (one(&old, "Job"), one(&new, "Job"));
            assert!(is_hook(j_old) && is_hook(j_new), "{at}");
            assert_eq!(j_old["metadata"]["name"], j_new["metadata"]["name"], "{at}");
            let annotation = |o: &Value, k: &str| o["metadata"]["annotations"][k].clone();
            assert_eq!(
                annotation(j_old, "helm.sh/hook"),
                annotation(j_new, "helm.sh/hook"),
                "{at}"
            );
            for j in [j_old, j_new] {
                let policy = annotation(j, "helm.sh/hook-delete-policy");
                assert!(
                    policy
                        .as_str()
                        .is_some_and(|p| p.split(',').any(|p| p == "before-hook-creation")),
                    "{at}: {policy}"
                );
            }
            assert!(
                labels_within(
                    &j_old["spec"]["template"]["metadata"]["labels"],
                    &j_new["spec"]["template"]["metadata"]["labels"]
                ),
                "{at}: {} vs {}",
                j_old["spec"]["template"]["metadata"]["labels"],
                j_new["spec"]["template"]["metadata"]["labels"]
            );
            assert!(j_new["spec"].get("selector").is_none(), "{at}");
        }
    }
}

/// What the `names.unique` guard checks is what the chart renders: every object of
/// every example and of the takeover fixture, with all its switches on, by kind and
/// name, for a short and a 53-character release name.
#[test]
fn the_guard_checks_the_names_build_objects_renders() {
    let mut specs: Vec<(String, std::path::PathBuf)> = examples();
    specs.push(("takeover".into(), fixture().join("shipshape.yaml")));
    for (label, path) in specs {
        let spec = load_spec(&std::fs::read_to_string(&path).unwrap(), &label).unwrap();
        let mut values = shipshape::capacity::fit::preset_values(&spec, None).unwrap();
        // Every optional object on: each workload, and each kind's switch.
        for (name, _) in spec.workloads.all() {
            let w = &mut values["workloads"][name];
            w["enabled"] = Value::Bool(true);
            for switch in [
                "ingress",
                "service",
                "serviceMonitor",
                "podDisruptionBudget",
                "networkPolicy",
                "autoscaling",
            ] {
                if w.get(switch).is_some() {
                    w[switch]["enabled"] = Value::Bool(true);
                }
            }
            if w.get("port").is_some() {
                w["port"] = Value::from(8080);
            }
            w["configOverlay"] = serde_json::json!({"overlay": {"on": true}});
        }
        values["bundled"]["postgres"]["enabled"] = Value::Bool(true);
        if let Some(servers) = values["bundled"]["redis"].as_object_mut() {
            for server in servers.values_mut() {
                server["enabled"] = Value::Bool(true);
            }
        }
        values["secrets"]["existingSecret"] = Value::String(String::new());
        for release in ["r".to_string(), "x".repeat(53)] {
            let text = render_manifests(
                &spec,
                &build_objects(&spec),
                &values,
                &Release {
                    name: release.clone(),
                    ..Release::default()
                },
            )
            .unwrap();
            let rendered: BTreeSet<(String, String)> = parse_objects(&text)
                .iter()
                .filter(|o| o["kind"] != "ServiceAccount" && o["kind"] != "ScaledObject")
                .map(|o| {
                    (
                        o["kind"].as_str().unwrap().to_string(),
                        o["metadata"]["name"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            let inputs = NameInputs {
                release: &release,
                chart: &spec.chart.name,
                name_override: "",
                fullname_override: "",
            };
            let checked: BTreeSet<(String, String)> = named_objects(&spec)
                .iter()
                .filter(|o| o.kind != "ScaledObject")
                .filter(|o| {
                    o.kind != "Secret"
                        || !spec.secrets.keys.is_empty()
                        || o.what.contains("bundled")
                })
                .map(|o| (o.kind.to_string(), o.pattern.evaluate(&inputs)))
                .collect();
            assert_eq!(rendered, checked, "{label}, release `{release}`");
        }
    }
}

/// A `takeover` selector's label keys cannot be set through any workload's
/// `podLabels` at install time: the pod would carry the key twice, or another
/// workload's pods would match the selector.
#[test]
fn pod_labels_cannot_set_a_taken_over_selector_key() {
    let text = "chart: {name: shop, version: 1.0.0, appVersion: '1', description: d}\nimage: {repository: example/shop}\nworkloads:\n  api: {web: {}}\n  worker: {mail: {}}\ntakeover:\n  web:\n    selectorLabels: {app: shop, tier: web}\n";
    let spec = load_spec(text, "takeover-labels").unwrap();
    let scratch = Scratch::new("takeover-labels");
    write_generated(&spec, scratch.path());
    assert_helm_schema_verdicts(
        &scratch.path().join("chart"),
        scratch.path(),
        &[
            &["--set", "workloads.web.podLabels.app=other"],
            &["--set", "workloads.mail.podLabels.tier=web"],
        ],
        &[&["--set", "workloads.mail.podLabels.team=shop"]],
    );
}

/// The install-time side of `names.unique`: Helm accepts only the overrides the guard
/// covers (empty, or a DNS label of at most 63 characters).
#[test]
fn name_overrides_are_dns_labels_of_at_most_63_characters() {
    let text = std::fs::read_to_string(fixture().join("shipshape.yaml")).unwrap();
    let spec = load_spec(&text, "takeover").unwrap();
    let scratch = Scratch::new("takeover-overrides");
    write_generated(&spec, scratch.path());
    let at_63 = format!("fullnameOverride={}", "a".repeat(63));
    let at_64 = format!("fullnameOverride={}", "a".repeat(64));
    let name_64 = format!("nameOverride={}", "a".repeat(64));
    assert_helm_schema_verdicts(
        &scratch.path().join("chart"),
        scratch.path(),
        &[
            &["--set", &at_64],
            &["--set", &name_64],
            &["--set", "fullnameOverride=Shop"],
            &["--set", "nameOverride=-shop"],
            &["--set", "nameOverride=shop-"],
            &["--set", "fullnameOverride=shop.prod"],
        ],
        &[
            &["--set", &at_63],
            &["--set", "nameOverride=store,fullnameOverride="],
            &["--set", "fullnameOverride=shop-prod-1"],
        ],
    );
}
