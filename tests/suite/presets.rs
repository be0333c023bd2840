//! Built-in presets, autoscalers and drain: what the rendered presets contain, the KEDA
//! ScaledObject against KEDA's own CRD schema, and Helm refusing what the schema refuses.

use crate::support::*;
use serde_json::Value;
use shipshape::generate::generate_outputs;
use shipshape::spec::load_spec;

fn example_outputs() -> std::collections::BTreeMap<String, String> {
    let (name, path) = examples().into_iter().next().unwrap();
    let spec = load_spec(&std::fs::read_to_string(path).unwrap(), &name).unwrap();
    generate_outputs(&spec).unwrap().files
}

fn object<'a>(objects: &'a [Value], kind: &str, name: &str) -> Option<&'a Value> {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
}

#[test]
fn in_flight_metric_name_is_pinned() {
    assert_eq!(
        shipshape::model::IN_FLIGHT_METRIC,
        "http_server_requests_active_seconds_count"
    );
}

#[test]
fn scale_out_preset_runs_three_api_pods_with_a_300s_drain() {
    let outputs = example_outputs();
    let objects = parse_objects(&outputs["rendered/scale-out.yaml"]);
    let api =
        object(&objects, "Deployment", "release-name-agent-platform-api").expect("api Deployment");
    assert_eq!(api["spec"]["replicas"], 3);
    assert_eq!(
        api["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"],
        0
    );
    let pod = &api["spec"]["template"]["spec"];
    assert_eq!(pod["terminationGracePeriodSeconds"], 330);
    assert_eq!(
        pod["containers"][0]["lifecycle"]["preStop"]["exec"]["command"],
        serde_json::json!(["sleep", "300"])
    );
    let pdb = object(
        &objects,
        "PodDisruptionBudget",
        "release-name-agent-platform-api",
    )
    .expect("pdb");
    assert_eq!(pdb["spec"]["maxUnavailable"], 1);
    assert!(pdb["spec"].get("minAvailable").is_none());
    assert!(outputs.contains_key("chart/values-scale-out.yaml"));
    assert!(outputs["chart/README.md"].contains("### `scale-out`"));
}

#[test]
fn autoscaling_preset_renders_an_hpa_with_slow_scale_in_and_no_replicas() {
    let outputs = example_outputs();
    let objects = parse_objects(&outputs["rendered/autoscaling.yaml"]);
    let api =
        object(&objects, "Deployment", "release-name-agent-platform-api").expect("api Deployment");
    assert!(
        api["spec"].get("replicas").is_none(),
        "an autoscaled Deployment has no replicas"
    );
    let hpa = object(
        &objects,
        "HorizontalPodAutoscaler",
        "release-name-agent-platform-api",
    )
    .expect("hpa");
    assert_eq!(hpa["apiVersion"], "autoscaling/v2");
    // The agent platform's 180-connection budget fits at most 4 api pods, and the
    // built-in preset derives that maximum (its spec does not set one); the gateway's
    // budgets fit the built-in ceiling of 12.
    assert_eq!(hpa["spec"]["maxReplicas"], 4);
    let gateway = load_spec(
        &std::fs::read_to_string(repo_root().join("examples/llm-gateway/shipshape.yaml")).unwrap(),
        "llm-gateway",
    )
    .unwrap();
    let gateway_objects =
        parse_objects(&generate_outputs(&gateway).unwrap().files["rendered/autoscaling.yaml"]);
    let gateway_hpa = object(
        &gateway_objects,
        "HorizontalPodAutoscaler",
        "release-name-llm-gateway-api",
    )
    .expect("gateway hpa");
    assert_eq!(gateway_hpa["spec"]["maxReplicas"], 12);
    let metrics = hpa["spec"]["metrics"].as_array().unwrap();
    assert!(metrics.iter().any(|m| m["resource"]["name"] == "cpu"));
    assert!(metrics
        .iter()
        .any(|m| m["pods"]["metric"]["name"] == shipshape::model::IN_FLIGHT_METRIC));
    let down = &hpa["spec"]["behavior"]["scaleDown"];
    assert_eq!(down["stabilizationWindowSeconds"], 600);
    assert_eq!(
        down["policies"][0],
        serde_json::json!({"type": "Pods", "value": 1, "periodSeconds": 300})
    );
    assert!(object(&objects, "ScaledObject", "release-name-agent-platform-api").is_none());
    let default = parse_objects(&outputs["rendered/default.yaml"]);
    assert!(object(
        &default,
        "HorizontalPodAutoscaler",
        "release-name-agent-platform-api"
    )
    .is_none());
}

#[test]
fn scaled_objects_validate_against_kedas_crd_schema() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("schemas/crds/scaledobject-keda-v1alpha1.json"))
            .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::draft7::new(&schema).expect("CRD schema compiles");
    let outputs = example_outputs();
    let mut validated = 0;
    for (path, text) in outputs.iter().filter(|(k, _)| k.starts_with("rendered/")) {
        for obj in parse_objects(text)
            .iter()
            .filter(|o| o["kind"] == "ScaledObject")
        {
            let errors: Vec<String> = validator
                .iter_errors(obj)
                .map(|e| format!("{}: {e}", e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{path}: {errors:?}");
            assert!(obj["spec"]["triggers"][0]["metadata"]["query"]
                .as_str()
                .unwrap()
                .starts_with(
                    "sum(http_server_requests_active_seconds_count{namespace=\"default\""
                ));
            validated += 1;
        }
    }
    assert!(validated >= 1, "no preset renders a ScaledObject");
    let mut broken = parse_objects(&outputs["rendered/keda.yaml"])
        .into_iter()
        .find(|o| o["kind"] == "ScaledObject")
        .unwrap();
    broken["spec"]["maxReplicaCount"] = Value::String("many".into());
    broken["spec"]["unknownField"] = Value::Bool(true);
    assert!(!validator.is_valid(&broken), "the CRD schema is strict");
}

#[test]
fn helm_3_and_4_refuse_an_hpa_and_keda_together_but_accept_each_preset() {
    let (name, path) = examples().into_iter().next().unwrap();
    let spec = load_spec(&std::fs::read_to_string(path).unwrap(), &name).unwrap();
    let scratch = Scratch::new("schema-autoscalers");
    write_generated(&spec, scratch.path());
    let autoscaling = scratch.path().join("chart/values-autoscaling.yaml");
    let keda = scratch.path().join("chart/values-keda.yaml");
    let (autoscaling, keda) = (autoscaling.to_str().unwrap(), keda.to_str().unwrap());
    assert_helm_schema_verdicts(
        &scratch.path().join("chart"),
        scratch.path(),
        &[&[
            "-f",
            autoscaling,
            "--set",
            "workloads.api.keda.enabled=true",
        ]],
        &[&["-f", autoscaling], &["-f", keda]],
    );
}

#[test]
fn built_in_autoscaling_fits_a_small_budget_and_is_used_only_when_named() {
    let path = repo_root().join("tests/fixtures/spec/ok/builtin-presets-fit-a-small-budget.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let spec = load_spec(&text, "small").unwrap();
    let files = generate_outputs(&spec).unwrap().files;
    let objects = parse_objects(&files["rendered/autoscaling.yaml"]);
    let hpa = object(
        &objects,
        "HorizontalPodAutoscaler",
        "release-name-small-web",
    )
    .expect("hpa");
    // 120 - 10 = 110 connections; (m + 1 + m) x 2 processes x 5 <= 110 -> m = 5.
    assert_eq!(hpa["spec"]["maxReplicas"], 5);
    assert_eq!(hpa["spec"]["minReplicas"], 3);
    assert!(files["capacity/autoscaling.txt"].contains("ok, 0 spare"));
    assert!(files["chart/values-autoscaling.yaml"].contains("maxReplicas: 5"));
    assert!(files["chart/README.md"].contains("`web` scales to at most 5 pods"));
    // Without the `presets` entries the spec has no built-in preset at all.
    let without = text.split("\npresets:").next().unwrap();
    let files = generate_outputs(&load_spec(without, "small").unwrap())
        .unwrap()
        .files;
    let rendered: Vec<&String> = files
        .keys()
        .filter(|k| k.starts_with("rendered/"))
        .collect();
    assert_eq!(rendered, ["rendered/default.yaml"]);
}
