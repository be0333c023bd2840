//! Replica safety and job ownership: the rendered scheduling configuration runs every
//! job exactly once for all 16 combinations of pools, and Helm refuses what the
//! install-time rules refuse.

use crate::support::*;
use serde_json::{json, Value};
use shipshape::backends::native::{render_manifests, Release};
use shipshape::generate::generate_outputs;
use shipshape::guards::partition::enumerate_placements;
use shipshape::model::ScheduledJob;
use shipshape::objects::build_objects;
use shipshape::spec::{load_spec, Spec};
use shipshape::values::{parse_values_yaml, resolve_values, ValuesSource};
use std::collections::BTreeMap;

fn agent_platform() -> Spec {
    let path = repo_root().join("examples/agent-platform/shipshape.yaml");
    load_spec(&std::fs::read_to_string(path).unwrap(), "agent-platform").unwrap()
}

fn env_of(objects: &[Value], workload: &str) -> Option<BTreeMap<String, String>> {
    let d = objects.iter().find(|o| {
        o["kind"] == "Deployment"
            && o["metadata"]["name"] == format!("release-name-agent-platform-{workload}")
    })?;
    Some(
        d["spec"]["template"]["spec"]["containers"][0]["env"]
            .as_array()?
            .iter()
            .filter_map(|e| {
                Some((
                    e["name"].as_str()?.to_string(),
                    e["value"].as_str()?.to_string(),
                ))
            })
            .collect(),
    )
}

fn split(list: &str) -> Vec<String> {
    list.split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn every_combination_of_pools_runs_each_job_exactly_once_in_the_rendered_config() {
    let spec = agent_platform();
    let pools: Vec<String> = spec.workloads.pool.keys().cloned().collect();
    assert_eq!(pools.len(), 4);
    let all_jobs: Vec<String> = spec
        .scheduling
        .jobs
        .iter()
        .map(|j| j.name.clone())
        .collect();
    let docs = build_objects(&spec);
    let mut combinations = 0;
    for mask in 0..(1u32 << pools.len()) {
        let enabled: Vec<&String> = pools
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, p)| p)
            .collect();
        let mut workloads = serde_json::Map::new();
        for p in &pools {
            workloads.insert(p.clone(), json!({"enabled": enabled.contains(&p)}));
        }
        let overlay = json!({"workloads": workloads});
        let user = parse_values_yaml(&overlay.to_string(), "combination").unwrap();
        let values = resolve_values(
            &spec,
            None,
            &[ValuesSource::File {
                name: "c".into(),
                values: user,
            }],
        );
        let objects =
            parse_objects(&render_manifests(&spec, &docs, &values, &Release::default()).unwrap());
        let mut runs: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let jobs_env = env_of(&objects, "jobs").expect("jobs workload");
        let skipped = split(&jobs_env["APP_SCHEDULING_SKIP_BEAN_CLASSES"]);
        let mut offloaded = split(&jobs_env["APP_SCHEDULING_OFFLOADED_POOLS"]);
        offloaded.sort();
        let mut expected: Vec<String> = enabled.iter().map(|p| p.to_string()).collect();
        expected.sort();
        assert_eq!(offloaded, expected, "mask {mask}");
        for job in all_jobs.iter().filter(|j| !skipped.contains(j)) {
            runs.entry(job.clone()).or_default().push("jobs".into());
        }
        for p in &pools {
            if let Some(env) = env_of(&objects, p) {
                assert_eq!(env["APP_SCHEDULING_POOL"], *p);
                for job in split(&env["APP_SCHEDULING_KEEP_BEAN_CLASSES"]) {
                    runs.entry(job).or_default().push(p.clone());
                }
            } else {
                assert!(!enabled.contains(&p), "pool `{p}` enabled but not rendered");
            }
        }
        for job in &all_jobs {
            let at = runs.get(job).cloned().unwrap_or_default();
            assert_eq!(at.len(), 1, "mask {mask}: `{job}` runs in {at:?}");
        }
        combinations += 1;
    }
    assert_eq!(combinations, 16);

    // The brute-force enumeration of the partition module agrees.
    let registry: Vec<ScheduledJob> = spec.scheduling.jobs.clone();
    let pool_defs: Vec<shipshape::guards::partition::Pool> = spec
        .scheduling
        .pools
        .iter()
        .map(|(n, p)| shipshape::guards::partition::Pool {
            name: n.clone(),
            jobs: p.jobs.clone(),
            allowed: p.allowed.clone(),
        })
        .collect();
    let enumerated = enumerate_placements(&registry, &pool_defs, true, true);
    assert_eq!(enumerated.len(), 16);
    for (subset, placements) in enumerated {
        for (job, at) in placements {
            assert_eq!(at.len(), 1, "{subset:?}: `{job}` at {at:?}");
        }
    }
}

#[test]
fn a_multi_replica_workload_gets_replica_mode_multi_and_shared_stores_on_redis() {
    let spec = agent_platform();
    let files = generate_outputs(&spec).unwrap().files;
    let scale_out = parse_objects(&files["rendered/scale-out.yaml"]);
    let api = env_of(&scale_out, "api").unwrap();
    assert_eq!(api["APP_REPLICA_MODE"], "multi");
    assert_eq!(api["APP_REPLICA_STRICT"], "true");
    assert_eq!(api["MCP_OAUTH_STORE"], "redis");
    assert_eq!(api["APP_VALKEY_URL"], "redis://valkey:6379");
    let jobs = env_of(&scale_out, "jobs").unwrap();
    assert_eq!(jobs["APP_REPLICA_MODE"], "single");
    let default = parse_objects(&files["rendered/default.yaml"]);
    let api = env_of(&default, "api").unwrap();
    assert_eq!(api["APP_REPLICA_MODE"], "single");
    assert_eq!(api["MCP_OAUTH_STORE"], "memory");
    assert!(!api.contains_key("APP_VALKEY_URL"), "no store uses Redis");
    let autoscaling = parse_objects(&files["rendered/autoscaling.yaml"]);
    assert_eq!(
        env_of(&autoscaling, "api").unwrap()["APP_REPLICA_MODE"],
        "multi"
    );
}

#[test]
fn helm_3_and_4_refuse_unsafe_replicas_pools_and_poolers() {
    let spec = agent_platform();
    let scratch = Scratch::new("replica-rules");
    write_generated(&spec, scratch.path());
    let chart = scratch.path().join("chart");
    let scale_out = scratch.path().join("chart/values-scale-out.yaml");
    let scale_out = scale_out.to_str().unwrap();
    let failover = scratch.path().join("chart/values-ingest-failover.yaml");
    let failover = failover.to_str().unwrap();
    assert_helm_schema_verdicts(
        &chart,
        scratch.path(),
        &[
            &["--set", "workloads.api.replicaCount=2"],
            &["-f", scale_out, "--set", "stores.mcp-oauth.backend=memory"],
            &[
                "-f",
                failover,
                "--set",
                "workloads.ingest.leaderElection=false",
            ],
            &[
                "--set",
                "postgresPooler.enabled=true,postgresPooler.poolMode=transaction",
            ],
        ],
        &[
            &["-f", scale_out],
            &["-f", failover],
            &[
                "-f",
                failover,
                "--set",
                "workloads.ingest.leaderElection=false,workloads.ingest.claiming=true",
            ],
            &[
                "--set",
                "postgresPooler.enabled=true,postgresPooler.poolMode=session",
            ],
        ],
    );
}
