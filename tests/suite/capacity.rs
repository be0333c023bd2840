//! Capacity budgets: the seeds' figures reproduced from the example presets, the
//! ConfigMap the chart renders agreeing with the report, and presets over budget refused.

use crate::support::*;
use serde_json::Value;
use shipshape::capacity::capacity_report;
use shipshape::capacity::fit::{preset_values, presets};
use shipshape::generate::generate_outputs;
use shipshape::spec::{load_spec, Spec};
use std::path::Path;

fn example(name: &str) -> Spec {
    let path = repo_root()
        .join("examples")
        .join(name)
        .join("shipshape.yaml");
    load_spec(&std::fs::read_to_string(path).unwrap(), name).unwrap()
}

/// The `<release>-dependency-capacity` ConfigMap's data of a rendered preset.
fn configmap_data(rendered: &str) -> serde_json::Map<String, Value> {
    parse_objects(rendered)
        .into_iter()
        .find(|o| {
            o["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.ends_with("-dependency-capacity"))
        })
        .expect("capacity ConfigMap")["data"]
        .as_object()
        .unwrap()
        .clone()
}

fn figure(data: &serde_json::Map<String, Value>, key: &str) -> u64 {
    data[key].as_str().unwrap().parse().unwrap()
}

#[test]
fn gateway_presets_reproduce_the_seed_figures() {
    let spec = example("llm-gateway");
    let files = generate_outputs(&spec).unwrap().files;
    let production = configmap_data(&files["rendered/production.yaml"]);
    assert_eq!(figure(&production, "api.peakProcesses"), 37);
    assert_eq!(figure(&production, "api.postgres"), 37 * (20 + 8 + 5 + 5));
    assert_eq!(figure(&production, "api.postgres"), 1406);
    assert_eq!(figure(&production, "api.redis"), 3552);
    assert_eq!(figure(&production, "postgres.peak"), 1508);
    assert_eq!(figure(&production, "redis.peak"), 3680);
    let split = configmap_data(&files["rendered/production-split.yaml"]);
    assert_eq!(figure(&split, "batch-worker.peakProcesses"), 7);
    assert_eq!(figure(&split, "batch-worker.postgres"), 266);
    assert_eq!(figure(&split, "batch-worker.redis"), 672);
    assert_eq!(figure(&split, "postgres.peak"), 1774);
    assert_eq!(figure(&split, "redis.peak"), 4352);
    let evaluation = configmap_data(&files["rendered/evaluation.yaml"]);
    assert_eq!(figure(&evaluation, "api.postgres"), 3 * (20 + 8));
    assert_eq!(figure(&evaluation, "postgres.peak"), 84);
    assert_eq!(
        figure(&evaluation, "postgres.budget"),
        100 - 16,
        "exactly met passes"
    );
    assert!(files["capacity/production.txt"].contains("1508"));
}

#[test]
fn evaluation_with_outboxes_or_more_replicas_is_refused() {
    let spec = example("llm-gateway").to_owned();
    let spec_path = repo_root().join("examples/llm-gateway/shipshape.yaml");
    let bin = Path::new(env!("CARGO_BIN_EXE_shipshape"));
    // Plain Helm refuses these through the evaluation plan's bounds in
    // `values.schema.json` (exit 2), before any guard runs; the guard's own arithmetic
    // for the same values is checked on the library below.
    for (set, field) in [
        (
            "features.durableTelemetry=true",
            "`features.durableTelemetry`",
        ),
        (
            "workloads.api.replicaCount=2",
            "`workloads.api.replicaCount`",
        ),
    ] {
        let (code, out, err) = run(
            bin,
            &[
                "--spec",
                spec_path.to_str().unwrap(),
                "capacity",
                "--preset",
                "evaluation",
                "--set",
                set,
            ],
            &[],
        );
        assert_eq!(code, 2, "{set}: {out}{err}");
        assert!(
            err.contains(field) && err.contains("capacityPlan: evaluation"),
            "{set}: {err}"
        );
        let mut values =
            shipshape::capacity::fit::preset_values(&spec, Some("evaluation")).unwrap();
        let (path, value) = set.split_once('=').unwrap();
        let keys: Vec<&str> = path.split('.').collect();
        let mut node = &mut values;
        for k in &keys[..keys.len() - 1] {
            node = node.get_mut(*k).unwrap();
        }
        node[keys[keys.len() - 1]] = serde_json::from_str(value).unwrap();
        let findings = shipshape::guards::check_guards(&spec, &values);
        assert!(
            findings
                .iter()
                .any(|f| f.rule == "capacity.postgres" && f.message.contains("budget of 84")),
            "{set}: {findings:?}"
        );
    }
    let (code, out, _) = run(
        bin,
        &[
            "--spec",
            spec_path.to_str().unwrap(),
            "capacity",
            "--preset",
            "evaluation",
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(code, 0);
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["postgres"]["peak"], 84);
    drop(spec);
}

#[test]
fn agent_platform_pools_match_adr_0014() {
    let spec = example("agent-platform");
    let files = generate_outputs(&spec).unwrap().files;
    let per_process = |rendered: &str, workload: &str| {
        let data = configmap_data(rendered);
        figure(&data, &format!("{workload}.postgres"))
            / figure(&data, &format!("{workload}.peakProcesses")).max(1)
    };
    let all = &files["rendered/all-pools.yaml"];
    assert_eq!(per_process(all, "api"), 12);
    assert_eq!(per_process(all, "jobs"), 10);
    assert_eq!(per_process(all, "ingest"), 6);
    assert_eq!(per_process(all, "temporal"), 8);
    assert_eq!(per_process(all, "migrate"), 10);
    // Without a jobs workload the api runs the sweeps and gets the larger pool.
    let without_jobs = shipshape::values::resolve_values(
        &spec,
        None,
        &[shipshape::values::ValuesSource::Set(
            shipshape::values::parse_set_args(&["workloads.jobs.enabled=false".to_string()])
                .unwrap(),
        )],
    );
    let report = capacity_report(&spec, &without_jobs).unwrap();
    let api = report.workloads.iter().find(|r| r.name == "api").unwrap();
    assert_eq!(
        api.postgres_per_process, 15,
        "the api runs the sweeps without jobs"
    );
    let data = configmap_data(&files["rendered/default.yaml"]);
    assert_eq!(figure(&data, "postgres.budget"), 200 - 20);
    // (1 + 1 + 1) x 12 + (1 + 1 + 1) x 10 + (1 + 1 + 1) x 8 + 1 x 10
    assert_eq!(figure(&data, "postgres.peak"), 36 + 30 + 24 + 10);
    let native = shipshape::backends::native::render_manifests(
        &spec,
        &shipshape::objects::build_objects(&spec),
        &without_jobs,
        &shipshape::backends::native::Release::default(),
    )
    .unwrap();
    let api_env = parse_objects(&native)
        .into_iter()
        .find(|o| {
            o["kind"] == "Deployment" && o["metadata"]["name"] == "release-name-agent-platform-api"
        })
        .unwrap()["spec"]["template"]["spec"]["containers"][0]["env"]
        .clone();
    assert!(
        api_env
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "SPRING_DATASOURCE_HIKARI_MAXIMUMPOOLSIZE" && e["value"] == "15"),
        "{api_env}"
    );
}

#[test]
fn capacity_configmap_agrees_with_the_report_for_every_preset() {
    for name in ["agent-platform", "llm-gateway"] {
        let spec = example(name);
        let files = generate_outputs(&spec).unwrap().files;
        let mut names: Vec<Option<String>> = vec![None];
        names.extend(presets(&spec).into_keys().map(Some));
        for preset in names {
            let label = preset.clone().unwrap_or_else(|| "default".into());
            let values = preset_values(&spec, preset.as_deref()).unwrap();
            let report = capacity_report(&spec, &values).unwrap();
            let data = configmap_data(&files[&format!("rendered/{label}.yaml")]);
            assert_eq!(
                figure(&data, "postgres.peak"),
                report.postgres.peak,
                "{name}/{label}"
            );
            assert_eq!(
                figure(&data, "redis.peak"),
                report.redis_total.peak,
                "{name}/{label}"
            );
            for row in &report.workloads {
                assert_eq!(
                    figure(&data, &format!("{}.peakProcesses", row.name)),
                    row.peak_processes,
                    "{name}/{label}/{}",
                    row.name
                );
                assert_eq!(
                    figure(&data, &format!("{}.postgres", row.name)),
                    row.postgres,
                    "{name}/{label}/{}",
                    row.name
                );
                assert_eq!(
                    figure(&data, &format!("{}.redis", row.name)),
                    row.redis,
                    "{name}/{label}/{}",
                    row.name
                );
            }
            for (server, total) in &report.redis_servers {
                assert_eq!(
                    figure(&data, &format!("redis.{server}.peak")),
                    total.peak,
                    "{name}/{label}/{server}"
                );
            }
        }
    }
}

#[test]
fn gateway_env_tells_the_application_the_counted_sizes() {
    let spec = example("llm-gateway");
    let files = generate_outputs(&spec).unwrap().files;
    let env = |preset: &str| {
        parse_objects(&files[&format!("rendered/{preset}.yaml")])
            .into_iter()
            .find(|o| {
                o["kind"] == "Deployment" && o["metadata"]["name"] == "release-name-llm-gateway-api"
            })
            .unwrap()["spec"]["template"]["spec"]["containers"][0]["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["name"].as_str().unwrap().to_string(),
                    e["value"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    let production = env("production");
    for (k, v) in [
        ("WEB_CONCURRENCY", "1"),
        ("UVICORN_WORKERS", "1"),
        ("DELTALLM_DB_POOL_SIZE", "20"),
        ("DELTALLM_TELEMETRY_DB_POOL_SIZE", "5"),
        ("DELTALLM_REDIS_CRITICAL_MAX_CONNECTIONS", "64"),
    ] {
        assert!(
            production.contains(&(k.to_string(), v.to_string())),
            "{k}={v} missing: {production:?}"
        );
    }
    let evaluation = env("evaluation");
    assert!(
        !evaluation
            .iter()
            .any(|(k, _)| k == "DELTALLM_TELEMETRY_DB_POOL_SIZE"),
        "telemetry is off in evaluation"
    );
}

#[test]
fn the_guard_reports_capacity_inputs_it_cannot_count() {
    let spec = example("llm-gateway");
    let mut values = preset_values(&spec, None).unwrap();
    values["dependencyCapacity"]["postgres"]["maxConnections"] = serde_json::json!(-1);
    let findings = shipshape::guards::check_guards(&spec, &values);
    let capacity: Vec<_> = findings
        .iter()
        .filter(|f| f.rule == "capacity.postgres")
        .collect();
    assert_eq!(capacity.len(), 1, "{findings:?}");
    assert!(
        capacity[0].message.starts_with(
            "the capacity inputs cannot be evaluated: cannot evaluate `.Values.dependencyCapacity`"
        ),
        "{}",
        capacity[0].message
    );
}
