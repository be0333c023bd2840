//! The runtime settings contract: the startup settings the application reads are the
//! values the capacity report counts, managed variables cannot be overridden, and Helm
//! refuses what the guards refuse.

use crate::support::*;
use serde_json::Value;
use shipshape::backends::native::{render_manifests, Release};
use shipshape::generate::generate_outputs;
use shipshape::objects::build_objects;
use shipshape::spec::{load_spec, Spec};
use shipshape::values::{parse_set_args, resolve_values, ValuesSource};

fn gateway() -> Spec {
    let path = repo_root().join("examples/llm-gateway/shipshape.yaml");
    load_spec(&std::fs::read_to_string(path).unwrap(), "llm-gateway").unwrap()
}

fn render_with(spec: &Spec, sets: &[&str]) -> Vec<Value> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let values = resolve_values(
        spec,
        None,
        &[ValuesSource::Set(parse_set_args(&sets).unwrap())],
    );
    parse_objects(
        &render_manifests(spec, &build_objects(spec), &values, &Release::default()).unwrap(),
    )
}

fn general_settings(objects: &[Value]) -> Value {
    let cm = objects
        .iter()
        .find(|o| {
            o["kind"] == "ConfigMap" && o["metadata"]["name"] == "release-name-llm-gateway-config"
        })
        .unwrap();
    let file: Value = serde_json::from_str(cm["data"]["config.yaml"].as_str().unwrap()).unwrap();
    file["general_settings"].clone()
}

fn api_pod(objects: &[Value]) -> Value {
    objects
        .iter()
        .find(|o| {
            o["kind"] == "Deployment" && o["metadata"]["name"] == "release-name-llm-gateway-api"
        })
        .unwrap()["spec"]["template"]
        .clone()
}

#[test]
fn the_config_file_states_the_sizes_the_report_counts_and_a_change_rolls_the_pods() {
    let spec = gateway();
    let objects = render_with(&spec, &[]);
    let settings = general_settings(&objects);
    assert_eq!(settings["db_pool_size"], 20);
    assert_eq!(settings["db_foreground_pool_size"], 8);
    assert_eq!(settings["telemetry_db_pool_size"], 5);
    assert_eq!(settings["spend_settlement_db_pool_size"], 1);
    assert_eq!(settings["redis_critical_max_connections"], 64);
    assert_eq!(settings["db_lock_timeout_seconds"], 0.2);
    assert_eq!(settings["db_background_transaction_timeout_seconds"], 10);
    assert_eq!(
        settings["redis_bulk_url"],
        "os.environ/DELTALLM_REDIS_BULK_URL"
    );
    let before = api_pod(&objects)["metadata"]["annotations"]["checksum/config"].clone();

    let resized = render_with(
        &spec,
        &[
            "workloads.api.postgres.control.size=25",
            "workloads.batch-worker.postgres.control.size=25",
        ],
    );
    assert_eq!(general_settings(&resized)["db_pool_size"], 25);
    let env = api_pod(&resized)["spec"]["containers"][0]["env"].clone();
    assert!(
        env.as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "DELTALLM_DB_POOL_SIZE" && e["value"] == "25"),
        "{env}"
    );
    assert_ne!(
        api_pod(&resized)["metadata"]["annotations"]["checksum/config"],
        before,
        "a settings change rolls the pods"
    );
}

#[test]
fn probes_and_termination_follow_the_gateway() {
    let spec = gateway();
    let pod = api_pod(&render_with(&spec, &[]));
    assert_eq!(pod["spec"]["terminationGracePeriodSeconds"], 90);
    let container = &pod["spec"]["containers"][0];
    assert_eq!(
        container["readinessProbe"]["httpGet"]["path"],
        "/health/readiness"
    );
    assert_eq!(
        container["livenessProbe"]["httpGet"]["path"],
        "/health/liveliness"
    );
    let bulk = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "DELTALLM_REDIS_BULK_URL")
        .unwrap()
        .clone();
    assert_eq!(
        bulk["valueFrom"]["secretKeyRef"],
        serde_json::json!({"name": "gateway-redis-cache", "key": "url"})
    );
    assert!(
        bulk.get("value").is_none(),
        "the cache URL never appears in plain text"
    );
    let readme = &generate_outputs(&spec).unwrap().files["chart/README.md"];
    assert!(
        readme.contains("/health/readiness") && readme.contains("/health/liveliness"),
        "README explains the probes"
    );
}

#[test]
fn helm_3_and_4_refuse_managed_env_worker_flags_and_a_plain_settings_section() {
    let spec = gateway();
    let scratch = Scratch::new("settings-rules");
    write_generated(&spec, scratch.path());
    assert_helm_schema_verdicts(
        &scratch.path().join("chart"),
        scratch.path(),
        &[
            &[
                "--set",
                "workloads.api.env[0].name=DELTALLM_DB_POOL_SIZE,workloads.api.env[0].value=40",
            ],
            &["--set", "workloads.api.args={--workers,4}"],
            &["--set", "workloads.batch-worker.command={gateway,-w4}"],
            &[
                "--set",
                "config.general_settings.redis_bulk_url=redis://cache:6379",
            ],
        ],
        &[
            &[
                "--set",
                "workloads.api.env[0].name=LOG_LEVEL,workloads.api.env[0].value=debug",
            ],
            &["--set", "workloads.api.args={--port=4000,--log-level=info}"],
        ],
    );
}
