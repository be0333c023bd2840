//! The chart surface a team needs to switch: the generated chart works as a subchart
//! of an umbrella chart (Helm's `global` key), under both Helms.

use crate::support::*;
use shipshape::spec::load_spec;

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn the_chart_renders_as_a_subchart_with_globals_under_both_helms() {
    let (name, spec_path) = examples().into_iter().next().unwrap();
    let spec = load_spec(&std::fs::read_to_string(&spec_path).unwrap(), &name).unwrap();
    let scratch = Scratch::new("umbrella");
    let generated = scratch.path().join("generated");
    write_generated(&spec, &generated);
    let umbrella = scratch.path().join("umbrella");
    let chart = &spec.chart.name;
    copy_dir(
        &generated.join("chart"),
        &umbrella.join("charts").join(chart),
    );
    std::fs::write(
        umbrella.join("Chart.yaml"),
        format!(
            "apiVersion: v2\nname: umbrella\nversion: 1.0.0\ndependencies:\n  - name: {chart}\n    version: {}\n",
            spec.chart.version
        ),
    )
    .unwrap();
    std::fs::write(
        umbrella.join("values.yaml"),
        format!("global:\n  imageRegistry: registry.example.com\n  labels: {{team: shop}}\n{chart}:\n  replicaStrict: true\n"),
    )
    .unwrap();
    for helm_bin in [helm3(), helm4()] {
        let (code, out, err) = helm(
            &helm_bin,
            &["template", "shop", umbrella.to_str().unwrap()],
            scratch.path(),
        );
        assert_eq!(code, 0, "{}: {err}", helm_bin.display());
        let objects = parse_objects(&out);
        assert!(
            objects.iter().any(|o| o["kind"] == "Deployment"),
            "{}: no Deployment rendered",
            helm_bin.display()
        );
        // The subchart's own values still go through its schema: a refused value is
        // refused inside the umbrella too.
        std::fs::write(
            umbrella.join("bad.yaml"),
            format!("{chart}:\n  workloads:\n    api:\n      replicaCount: 99\n"),
        )
        .unwrap();
        let (code, _, err) = helm(
            &helm_bin,
            &[
                "template",
                "shop",
                umbrella.to_str().unwrap(),
                "-f",
                umbrella.join("bad.yaml").to_str().unwrap(),
            ],
            scratch.path(),
        );
        assert_ne!(code, 0, "{}: replicaCount 99 accepted", helm_bin.display());
        assert!(
            err.contains("replicaCount"),
            "{}: {err}",
            helm_bin.display()
        );
    }
}

/// Every custom kind the chart renders has its schema in `schemas/crds/`, and the
/// rendered objects of every preset (and of a render with every custom kind on) pass
/// it; the schemas are strict, so a misspelt field fails.
#[test]
fn custom_kinds_validate_against_the_shipped_crd_schemas() {
    use shipshape::backends::native::{render_manifests, Release};
    use shipshape::commands::validate::CRD_SCHEMAS;
    let schema_for = |object: &serde_json::Value| {
        let kind = object["kind"].as_str().unwrap_or("").to_lowercase();
        let api = object["apiVersion"].as_str().unwrap_or("");
        let (group, version) = api.split_once('/').unwrap_or(("", api));
        let file = format!(
            "{kind}-{}-{version}.json",
            group.split('.').next().unwrap_or("")
        );
        CRD_SCHEMAS
            .iter()
            .find(|(name, _)| *name == file)
            .map(|(_, text)| serde_json::from_str::<serde_json::Value>(text).unwrap())
    };
    let mut checked = std::collections::BTreeSet::new();
    for (name, spec_path) in examples() {
        let spec = load_spec(&std::fs::read_to_string(&spec_path).unwrap(), &name).unwrap();
        let outputs = shipshape::generate::generate_outputs(&spec).unwrap().files;
        let mut streams: Vec<String> = outputs
            .iter()
            .filter(|(k, _)| k.starts_with("rendered/"))
            .map(|(_, v)| v.clone())
            .collect();
        let docs = shipshape::objects::build_objects(&spec);
        let mut values = shipshape::capacity::fit::preset_values(&spec, None).unwrap();
        for (w, workload) in spec.workloads.all() {
            if workload.class() == shipshape::spec::WorkloadClass::Api {
                values["workloads"][w]["serviceMonitor"]["enabled"] = true.into();
                values["workloads"][w]["keda"]["enabled"] = true.into();
            }
        }
        streams.push(render_manifests(&spec, &docs, &values, &Release::default()).unwrap());
        for stream in &streams {
            for object in parse_objects(stream) {
                let core = object["apiVersion"]
                    .as_str()
                    .is_some_and(|a| !a.contains('.') || a.contains("k8s.io/"));
                if core {
                    continue;
                }
                let kind = object["kind"].as_str().unwrap_or("").to_string();
                let schema = schema_for(&object)
                    .unwrap_or_else(|| panic!("{name}: no schema in schemas/crds/ for {kind}"));
                let validator = jsonschema::validator_for(&schema).unwrap();
                let errors: Vec<String> = validator
                    .iter_errors(&object)
                    .map(|e| e.to_string())
                    .collect();
                assert!(errors.is_empty(), "{name}: {kind}: {errors:?}");
                let mut misspelt = object.clone();
                misspelt["spec"]["endpionts"] = serde_json::json!([]);
                assert!(
                    !validator.is_valid(&misspelt),
                    "{kind}: a misspelt field passes"
                );
                checked.insert(kind);
            }
        }
    }
    assert!(
        checked.contains("ServiceMonitor") && checked.contains("ScaledObject"),
        "{checked:?}"
    );
}

/// Secrets: without an existing Secret, both Helms refuse an install whose `data`
/// lacks a key the application requires (or has one it does not declare); the pods
/// read every declared key from whichever Secret holds them, and roll when the values
/// change.
#[test]
fn a_missing_secret_key_is_refused_at_install_and_keys_reach_every_container() {
    let spec_path = repo_root().join("examples/web-shop/shipshape.yaml");
    let spec = load_spec(&std::fs::read_to_string(&spec_path).unwrap(), "web-shop").unwrap();
    assert!(spec.secrets.keys.len() >= 2);
    let scratch = Scratch::new("secrets");
    let outputs = write_generated(&spec, scratch.path());
    let chart = scratch.path().join("chart");
    let evaluation = chart.join("values-evaluation.yaml");
    let evaluation = evaluation.to_str().unwrap();
    assert_helm_schema_verdicts(
        &chart,
        scratch.path(),
        &[
            &["-f", evaluation, "--set", "secrets.data.STRIPE_API_KEY="],
            &["-f", evaluation, "--set", "secrets.data.UNDECLARED=x"],
            &["--set", "secrets.existingSecret="],
        ],
        &[
            &["-f", evaluation],
            &[
                "-f",
                evaluation,
                "--set",
                "secrets.existingSecret=shop-vault",
            ],
            &[],
        ],
    );
    // The default render reads every key from the existing Secret; the evaluation
    // render creates the Secret and reads from it.
    for (preset, secret) in [
        ("default", "web-shop-credentials"),
        ("evaluation", "release-name-web-shop-secrets"),
    ] {
        let objects = parse_objects(&outputs[&format!("rendered/{preset}.yaml")]);
        let created = objects.iter().any(|o| o["kind"] == "Secret");
        assert_eq!(
            created,
            preset == "evaluation",
            "{preset}: Secret created: {created}"
        );
        let mut containers = 0;
        for o in objects
            .iter()
            .filter(|o| matches!(o["kind"].as_str(), Some("Deployment" | "Job")))
        {
            let pod = &o["spec"]["template"];
            assert!(
                pod["metadata"]["annotations"]["checksum/secrets"].is_string(),
                "{preset}: {} has no checksum/secrets",
                o["metadata"]["name"]
            );
            let env = pod["spec"]["containers"][0]["env"].as_array().unwrap();
            for key in spec.secrets.keys.keys() {
                let entry = env
                    .iter()
                    .find(|e| e["name"] == key.as_str())
                    .unwrap_or_else(|| panic!("{preset}: {} lacks {key}", o["metadata"]["name"]));
                assert_eq!(entry["valueFrom"]["secretKeyRef"]["name"], secret);
                assert_eq!(entry["valueFrom"]["secretKeyRef"]["key"], key.as_str());
            }
            containers += 1;
        }
        assert!(containers >= 3, "{preset}: {containers} workloads");
    }
}
