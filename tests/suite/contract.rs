//! The install-time contract (DESIGN.md invariant 7): no values set that the generated
//! `values.schema.json` accepts, under the `jsonschema` crate and under real Helm 3 and
//! Helm 4, is refused by a guard.
//!
//! The value sets are concentrated at the boundaries: every bounded field of every plan
//! at its bound and one step past it, every numeric field at 2^32, 2^53 + 1 and 1e21,
//! every flag flipped, malformed rollout numbers, and random combinations of several.

use crate::support::*;
use serde_json::{json, Value};
use shipshape::contract::schema::{plan_contracts, values_schema};
use shipshape::guards::{check_guards, Severity};
use shipshape::spec::{load_spec, Spec};

fn load(path: &std::path::Path) -> Spec {
    load_spec(
        &std::fs::read_to_string(path).unwrap(),
        &path.display().to_string(),
    )
    .unwrap()
}

/// Every leaf of a values tree: its path and value (lists are leaves).
fn leaves(v: &Value, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, Value)>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, child) in m {
                path.push(k.clone());
                leaves(child, path, out);
                path.pop();
            }
        }
        other => out.push((path.clone(), other.clone())),
    }
}

fn set(values: &mut Value, path: &[String], new: Value) {
    let mut node = values;
    for key in &path[..path.len() - 1] {
        node = node
            .as_object_mut()
            .unwrap()
            .entry(key.clone())
            .or_insert(json!({}));
    }
    node.as_object_mut()
        .unwrap()
        .insert(path[path.len() - 1].clone(), new);
}

/// Numbers as Helm reads them from a values file: floats.
fn float(n: f64) -> Value {
    json!(n)
}

const HUGE: [f64; 4] = [
    4_294_967_296.0,
    9_007_199_254_740_993.0,
    1e21,
    2_147_483_648.0,
];

/// Candidate replacements for a leaf, around its bounds when it has some.
fn candidates(current: &Value, bounds: &[(Option<f64>, Option<f64>)]) -> Vec<Value> {
    let mut out = Vec::new();
    match current {
        Value::Number(n) => {
            let v = n.as_f64().unwrap_or(0.0);
            let step = if v.fract() != 0.0 || v.abs() < 1.0 && v != 0.0 {
                0.1
            } else {
                1.0
            };
            for x in [0.0, 1.0, v - step, v, v + step, v * 2.0, 2_147_483_647.0] {
                out.push(float(x));
            }
            for (max, min) in bounds {
                for b in [max, min].into_iter().flatten() {
                    for x in [b - step, *b, b + step, b + 1.0] {
                        out.push(float(x));
                    }
                }
            }
            out.extend(HUGE.iter().map(|h| float(*h)));
            out.push(float(-1.0));
            out.push(float(1.5));
        }
        Value::Bool(b) => out.push(Value::Bool(!b)),
        Value::String(s) => {
            for x in [
                "0", "0%", "2", "12.5%", "-5%", "abc%", "1.5", "25%", "100%", "101%",
            ] {
                out.push(json!(x));
            }
            out.push(json!(format!("{s}x")));
            out.push(json!(""));
        }
        _ => {}
    }
    out
}

struct Outcome {
    sets: usize,
    schema_accepted: usize,
    guard_accepted: usize,
    guard_accepted_schema_refused: usize,
    for_helm: Vec<(Value, bool)>,
}

/// Generates the value sets of one example and checks each with the schema and the
/// guards; returns the counts and a sample for Helm.
fn check_example(name: &str, spec: &Spec, rng: &mut Rng) -> Outcome {
    let schema = values_schema(spec);
    let validator = jsonschema::draft7::new(&schema).expect("values.schema.json compiles");
    let plans = plan_contracts(spec);
    let mut sets: Vec<Value> = Vec::new();
    for plan in &plans {
        let preset = (plan.name != "default").then_some(plan.name.as_str());
        let base = shipshape::capacity::fit::preset_values(spec, preset).unwrap();
        let mut all = Vec::new();
        leaves(&base, &mut Vec::new(), &mut all);
        let bounded: Vec<&shipshape::contract::plans::PlanBound> = plan.bounds.iter().collect();
        let bounds_of = |path: &[String]| -> Vec<(Option<f64>, Option<f64>)> {
            let dotted = path.join(".");
            bounded
                .iter()
                .filter(|b| b.path == dotted)
                .map(|b| (b.at_most, b.at_least))
                .collect()
        };
        // One field at a time: every candidate of every bounded leaf of every plan,
        // and of every other leaf of the defaults.
        let first = plan.name == "default";
        for (path, value) in &all {
            if path.first().is_some_and(|p| p == "config") || !first && bounds_of(path).is_empty() {
                continue;
            }
            for c in candidates(value, &bounds_of(path)) {
                let mut v = base.clone();
                set(&mut v, path, c);
                sets.push(v);
            }
        }
        // Random combinations of two to six fields.
        let numeric: Vec<&(Vec<String>, Value)> = all
            .iter()
            .filter(|(p, v)| {
                p.first().is_none_or(|k| k != "config")
                    && matches!(v, Value::Number(_) | Value::Bool(_) | Value::String(_))
            })
            .collect();
        for _ in 0..300 {
            let mut v = base.clone();
            for _ in 0..2 + rng.below(5) {
                let (path, value) = rng.pick(&numeric);
                let options = candidates(value, &bounds_of(path));
                if !options.is_empty() {
                    set(&mut v, path, rng.pick(&options).clone());
                }
            }
            sets.push(v);
        }
    }
    let mut outcome = Outcome {
        sets: sets.len(),
        schema_accepted: 0,
        guard_accepted: 0,
        guard_accepted_schema_refused: 0,
        for_helm: Vec::new(),
    };
    let mut unsound = Vec::new();
    for v in &sets {
        let schema_ok = validator.is_valid(v);
        let errors: Vec<String> = check_guards(spec, v)
            .into_iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| f.to_string())
            .collect();
        outcome.schema_accepted += usize::from(schema_ok);
        if errors.is_empty() {
            outcome.guard_accepted += 1;
            outcome.guard_accepted_schema_refused += usize::from(!schema_ok);
        } else if schema_ok && unsound.len() < 5 {
            unsound.push(format!(
                "{}\n  {}",
                serde_json::to_string(v)
                    .unwrap()
                    .chars()
                    .take(300)
                    .collect::<String>(),
                errors.join("\n  ")
            ));
        }
    }
    assert!(
        unsound.is_empty(),
        "{name}: values the schema accepts are refused by the guards:\n{}",
        unsound.join("\n")
    );
    // A seeded sample for Helm: half accepted by the schema, half refused.
    let (accepted, refused): (Vec<&Value>, Vec<&Value>) =
        sets.iter().partition(|v| validator.is_valid(v));
    for i in 0..110 {
        if !accepted.is_empty() {
            outcome
                .for_helm
                .push(((*rng.pick(&accepted)).clone(), true));
        }
        if !refused.is_empty() && i < 100 {
            outcome
                .for_helm
                .push(((*rng.pick(&refused)).clone(), false));
        }
    }
    outcome
}

#[test]
fn no_values_the_schema_accepts_are_refused_by_a_guard() {
    let mut rng = Rng(0x5eed_0007);
    for (name, spec_path) in examples() {
        let spec = load(&spec_path);
        let outcome = check_example(&name, &spec, &mut rng);
        assert!(
            outcome.sets >= 2000,
            "{name}: only {} value sets",
            outcome.sets
        );
        assert!(
            outcome.schema_accepted > 0,
            "{name}: the schema accepted nothing"
        );
        eprintln!(
            "{name}: {} value sets, {} accepted by the schema, {} by the guards; the schema refuses {} of the guard-accepted ({:.1} %)",
            outcome.sets,
            outcome.schema_accepted,
            outcome.guard_accepted,
            outcome.guard_accepted_schema_refused,
            100.0 * outcome.guard_accepted_schema_refused as f64 / outcome.guard_accepted.max(1) as f64
        );

        // The sample through real Helm 3 and Helm 4: each must agree with the schema
        // verdict of the `jsonschema` crate, and nothing Helm accepts is refused by a
        // guard.
        let scratch = Scratch::new(&format!("contract-{name}"));
        write_generated(&spec, scratch.path());
        let chart = scratch.path().join("chart");
        let sample: Vec<(std::path::PathBuf, bool, Value)> = outcome
            .for_helm
            .iter()
            .enumerate()
            .map(|(i, (v, accepted))| {
                let file = scratch.path().join(format!("values-{i}.json"));
                std::fs::write(&file, serde_json::to_string(v).unwrap()).unwrap();
                (file, *accepted, v.clone())
            })
            .collect();
        assert!(
            sample.len() >= 200,
            "{name}: Helm sample of {}",
            sample.len()
        );
        let chart_arg = chart.to_str().unwrap().to_string();
        std::thread::scope(|scope| {
            for helm_bin in [helm3(), helm4()] {
                let sample = &sample;
                let chart_arg = &chart_arg;
                let spec = &spec;
                let name = &name;
                let scratch = scratch.path();
                scope.spawn(move || {
                    for (file, accepted, v) in sample {
                        let (code, _, err) = helm(
                            &helm_bin,
                            &["template", chart_arg, "-f", file.to_str().unwrap()],
                            scratch,
                        );
                        let helm_ok = code == 0;
                        assert_eq!(
                            helm_ok,
                            *accepted,
                            "{name}: {} and the jsonschema crate disagree on {}: {err}",
                            helm_bin.display(),
                            file.display()
                        );
                        if helm_ok {
                            let errors: Vec<String> = check_guards(spec, v)
                                .into_iter()
                                .filter(|f| f.severity == Severity::Error)
                                .map(|f| f.to_string())
                                .collect();
                            assert!(
                                errors.is_empty(),
                                "{name}: {} accepts {} but the guards refuse it:\n{}",
                                helm_bin.display(),
                                file.display(),
                                errors.join("\n")
                            );
                        }
                    }
                });
            }
        });
    }
}

/// 2^32, 2^53 + 1 and 1e21 in every numeric field: where the schema accepts one (free
/// text such as a probe's period), the guards accept it and the capacity arithmetic is
/// unchanged; where a guard reads the field, the schema refuses it and the guards
/// report it (`values.types`) instead of reading a default such as a budget of 0.
#[test]
fn huge_numbers_never_change_the_arithmetic_silently() {
    for (name, spec_path) in examples() {
        let spec = load(&spec_path);
        let schema = values_schema(&spec);
        let validator = jsonschema::draft7::new(&schema).unwrap();
        let base = shipshape::capacity::fit::preset_values(&spec, None).unwrap();
        let base_report = shipshape::capacity::capacity_report(&spec, &base).unwrap();
        let mut all = Vec::new();
        leaves(&base, &mut Vec::new(), &mut all);
        let (mut refused, mut accepted) = (0, 0);
        for (path, value) in &all {
            if !value.is_number() || path.first().is_some_and(|p| p == "config") {
                continue;
            }
            let dotted = path.join(".");
            for huge in [4_294_967_296.0, 9_007_199_254_740_993.0, 1e21] {
                let mut v = base.clone();
                set(&mut v, path, float(huge));
                let errors: Vec<String> = check_guards(&spec, &v)
                    .into_iter()
                    .filter(|f| f.severity == Severity::Error)
                    .map(|f| f.rule.to_string())
                    .collect();
                if validator.is_valid(&v) {
                    accepted += 1;
                    assert!(
                        errors.is_empty(),
                        "{name}: {huge} at `{dotted}`: {errors:?}"
                    );
                    let report = shipshape::capacity::capacity_report(&spec, &v).unwrap();
                    assert_eq!(
                        report, base_report,
                        "{name}: {huge} at `{dotted}` is accepted and changes the arithmetic"
                    );
                } else {
                    refused += 1;
                    let counted = dotted.starts_with("dependencyCapacity")
                        || dotted.ends_with(".size")
                        || dotted.ends_with("replicaCount")
                        || dotted.ends_with("maxReplicas")
                        || dotted.ends_with("processesPerPod");
                    if counted {
                        assert!(
                            errors
                                .iter()
                                .any(|r| r == "values.types" || r.starts_with("capacity.")),
                            "{name}: {huge} at `{dotted}` is read silently: {errors:?}"
                        );
                    }
                }
            }
        }
        eprintln!("{name}: huge numbers refused by the schema in {refused} cases, accepted (free-form fields) in {accepted}");
        assert!(refused > 30, "{name}: only {refused} refusals");
    }
}

/// The cases of the install-time issue, refused by Helm 3, Helm 4 and `shipshape
/// render` with a message naming the field.
#[test]
fn the_known_unsafe_values_are_refused_at_install_time() {
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "agent-platform",
            &["--set", "workloads.api.autoscaling.enabled=true,workloads.api.autoscaling.maxReplicas=12,stores.a2a-tasks.backend=redis,stores.abuse-throttles.backend=redis,stores.mcp-registry.backend=redis,stores.guardrail-procedure-state.backend=redis,stores.resumable-streams.backend=redis,stores.studio-approvals.backend=redis,stores.sandbox-files.backend=redis,stores.e2b-quota.backend=redis,stores.mcp-oauth.backend=redis"],
            "workloads.api.autoscaling.maxReplicas",
        ),
        (
            "llm-gateway",
            &["-f", "values-evaluation.yaml", "--set", "features.durableTelemetry=true"],
            "features.durableTelemetry",
        ),
        (
            "llm-gateway",
            &["-f", "values-production.yaml", "--set", "workloads.api.autoscaling.maxReplicas=15"],
            "workloads.api.autoscaling.maxReplicas",
        ),
        (
            "llm-gateway",
            &["--set", "workloads.batch-worker.postgres.control.size=40"],
            "workloads.batch-worker.postgres.control",
        ),
        (
            "llm-gateway",
            &["--set", "startupSettings.foreground.statement.seconds=3"],
            "startupSettings.foreground.statement.seconds",
        ),
        (
            "llm-gateway",
            &["--set", "dependencyCapacity.redis.servers.critical.maxmemoryPolicy=allkeys-lru"],
            "dependencyCapacity.redis.servers.critical.maxmemoryPolicy",
        ),
        (
            "agent-platform",
            &["--set", "workloads.api.terminationGracePeriodSeconds=40"],
            "workloads.api.terminationGracePeriodSeconds",
        ),
        (
            "agent-platform",
            &["--set", "workloads.api.podDisruptionBudget.maxUnavailable=0"],
            "workloads.api.podDisruptionBudget.maxUnavailable",
        ),
        (
            "agent-platform",
            &["-f", "values-ingest-pool.yaml", "--set", "scheduling.pools.ingest.jobs={KnowledgeIngestionPoller,KnowledgeUrlPoller,AgentJobSweeper}"],
            "scheduling",
        ),
        (
            "llm-gateway",
            &["--set", "dependencyCapacity.postgres.maxConnections=4294967296"],
            "dependencyCapacity.postgres.maxConnections",
        ),
        (
            "llm-gateway",
            &["--set", "dependencyCapacity.redis.maxConnections=4294967296"],
            "dependencyCapacity.redis.maxConnections",
        ),
        (
            "agent-platform",
            &["--set", "workloads.api.args={--workers 4}"],
            "workloads.api.args",
        ),
        (
            "agent-platform",
            &["--set", "workloads.api.command={sh,-c,exec app --workers 4}"],
            "workloads.api.command",
        ),
        (
            "llm-gateway",
            &["--set", "workloads.api.command={sh,-c,WEB_CONCURRENCY=8 exec app}"],
            "workloads.api.command",
        ),
        (
            "agent-platform",
            &["--set", "workloads.api.rollingUpdate.maxSurge=12.5%"],
            "workloads.api.rollingUpdate.maxSurge",
        ),
        (
            "agent-platform",
            &["--set", "workloads.api.rollingUpdate.maxSurge=-5%"],
            "workloads.api.rollingUpdate.maxSurge",
        ),
        (
            "agent-platform",
            &["--set", "workloads.api.rollingUpdate.maxSurge=abc%"],
            "workloads.api.rollingUpdate.maxSurge",
        ),
        (
            "agent-platform",
            &["--set-string", "workloads.api.rollingUpdate.maxSurge=2"],
            "workloads.api.rollingUpdate.maxSurge",
        ),
        (
            "agent-platform",
            &["--set", "workloads.api.rollingUpdate.maxSurge=1.5"],
            "workloads.api.rollingUpdate.maxSurge",
        ),
        (
            "agent-platform",
            &["--set", "workloads.api.rollingUpdate.maxSurge=0"],
            "workloads.api.rollingUpdate",
        ),
    ];
    let mut charts = std::collections::BTreeMap::new();
    let scratch = Scratch::new("contract-cases");
    for (name, spec_path) in examples() {
        let spec = load(&spec_path);
        let dir = scratch.path().join(&name);
        write_generated(&spec, &dir);
        charts.insert(name, (spec_path, dir.join("chart")));
    }
    for (example, args, field) in cases {
        let (spec_path, chart) = &charts[*example];
        let args: Vec<String> = args
            .iter()
            .map(|a| {
                if a.starts_with("values-") {
                    chart.join(a).display().to_string()
                } else {
                    a.to_string()
                }
            })
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let helm_field = field.replace('.', "/");
        for helm_bin in [helm3(), helm4()] {
            let mut all = vec!["template", chart.to_str().unwrap()];
            all.extend_from_slice(&args);
            let (code, _, err) = helm(&helm_bin, &all, scratch.path());
            assert_ne!(
                code,
                0,
                "{} accepted {example} {args:?}",
                helm_bin.display()
            );
            assert!(
                err.contains(field) || err.contains(&helm_field),
                "{} refused {example} {args:?} without naming `{field}`: {err}",
                helm_bin.display()
            );
        }
        // shipshape render has no --set-string: the same string through a values file.
        let mut render_args: Vec<String> = vec![
            "--spec".into(),
            spec_path.display().to_string(),
            "render".into(),
        ];
        let mut i = 0;
        while i < args.len() {
            if args[i] == "--set-string" {
                let (k, v) = args[i + 1].split_once('=').unwrap();
                let file = scratch.path().join("set-string.json");
                let mut tree = json!({});
                set(
                    &mut tree,
                    &k.split('.').map(str::to_string).collect::<Vec<_>>(),
                    json!(v),
                );
                std::fs::write(&file, tree.to_string()).unwrap();
                render_args.extend(["-f".into(), file.display().to_string()]);
            } else {
                render_args.push(args[i].to_string());
                render_args.push(args[i + 1].to_string());
            }
            i += 2;
        }
        let render_args: Vec<&str> = render_args.iter().map(String::as_str).collect();
        let (code, _, err) = run(
            std::path::Path::new(env!("CARGO_BIN_EXE_shipshape")),
            &render_args,
            &[],
        );
        assert_ne!(code, 0, "shipshape render accepted {example} {args:?}");
        assert!(
            err.contains(&format!("`{field}")),
            "shipshape render refused {example} {args:?} without naming `{field}`: {err}"
        );
    }
}
