//! The equivalence proof: real Helm 3 and Helm 4 rendering the generated chart give
//! the same objects as `shipshape render`, for every preset and for randomized
//! values; the chart lints clean; rendered presets pass the official schemas.

use crate::support::*;
use serde_json::{json, Map, Value};
use shipshape::backends::native::{render_manifests, Release};
use shipshape::contract::schema::values_schema;
use shipshape::objects::build_objects;
use shipshape::spec::{load_spec, Spec, WorkloadClass};
use shipshape::values::{check_values_schema, parse_values_yaml, resolve_values, ValuesSource};
use std::path::Path;

fn load(path: &Path) -> Spec {
    load_spec(
        &std::fs::read_to_string(path).unwrap(),
        &path.display().to_string(),
    )
    .unwrap()
}

#[test]
fn every_preset_renders_like_helm_3_and_helm_4() {
    for (name, spec_path) in examples() {
        let spec = load(&spec_path);
        let scratch = Scratch::new(&format!("eq-presets-{name}"));
        let outputs = write_generated(&spec, scratch.path());
        let chart = scratch.path().join("chart");
        let mut presets = vec!["default".to_string()];
        presets.extend(spec.presets.keys().cloned());
        for preset in &presets {
            let native = &outputs[&format!("rendered/{preset}.yaml")];
            let values_file = chart.join(format!("values-{preset}.yaml"));
            for helm_bin in [helm3(), helm4()] {
                let mut args = vec!["template", chart.to_str().unwrap()];
                if preset != "default" {
                    args.extend(["-f", values_file.to_str().unwrap()]);
                }
                let (code, out, err) = helm(&helm_bin, &args, scratch.path());
                assert_eq!(
                    code,
                    0,
                    "{name}/{preset}: {} template failed: {err}",
                    helm_bin.display()
                );
                assert_eq!(
                    parse_objects(&out),
                    parse_objects(native),
                    "{name}/{preset}: {} and shipshape render differ",
                    helm_bin.display()
                );
            }
        }
    }
}

#[test]
fn generated_chart_passes_helm_lint_strict() {
    for (name, spec_path) in examples() {
        let spec = load(&spec_path);
        let scratch = Scratch::new(&format!("lint-{name}"));
        write_generated(&spec, scratch.path());
        let chart = scratch.path().join("chart");
        for helm_bin in [helm3(), helm4()] {
            let (code, out, err) = helm(
                &helm_bin,
                &["lint", "--strict", chart.to_str().unwrap()],
                scratch.path(),
            );
            assert_eq!(
                code,
                0,
                "{name}: lint failed under {}:\n{out}\n{err}",
                helm_bin.display()
            );
            assert!(out.contains("0 chart(s) failed"), "{out}");
        }
    }
}

#[test]
fn rendered_presets_pass_kubernetes_1_28_and_1_31_strict_schemas() {
    let validator = kubernetes_validate();
    for (name, spec_path) in examples() {
        let spec = load(&spec_path);
        let scratch = Scratch::new(&format!("kv-{name}"));
        let outputs = write_generated(&spec, scratch.path());
        let rendered: Vec<String> = outputs
            .keys()
            .filter(|k| k.starts_with("rendered/"))
            .map(|k| scratch.path().join(k).to_string_lossy().into_owned())
            .collect();
        assert!(!rendered.is_empty());
        for version in ["1.28.0", "1.31.0"] {
            let mut args = vec!["--strict", "-k", version];
            args.extend(rendered.iter().map(String::as_str));
            let (code, out, err) = run(&validator, &args, &[]);
            assert_eq!(
                code, 0,
                "{name}: Kubernetes {version} schema validation failed:\n{out}\n{err}"
            );
            assert!(!out.contains("ERROR"), "{out}");
        }
    }
}

/// Strings that break naive templates: YAML 1.1 scalars, template delimiters,
/// newlines that would add keys, HTML characters `toJson` escapes, non-ASCII text.
const HOSTILE: &[&str] = &[
    "no",
    "on",
    "off",
    "yes",
    "y",
    "NO",
    "0755",
    "1e3",
    "1_000",
    "~",
    "null",
    "true",
    "{{ .Release.Name }}",
    "{{",
    "}}",
    "{{- fail \"x\" }}",
    "a\nprivileged: true",
    "line1\nline2\n",
    "日本語",
    "émoji 🚀",
    "<script>&amp;</script>",
    "\"quoted\"",
    "back\\slash",
    "tab\there",
    "- item",
    ": colon",
    "# hash",
    "",
    " lead",
    "trail ",
    "key: value",
    "'single'",
    "%s %d %v",
    "\u{2028}sep",
    "0x1F",
    ".inf",
    "=",
    "*alias",
    "&anchor",
    "!tag",
    "@at",
    "`tick`",
];

fn hostile(rng: &mut Rng) -> Value {
    Value::String(rng.pick(HOSTILE).to_string())
}

fn big_number(rng: &mut Rng) -> Value {
    match rng.below(6) {
        0 => json!(1000000),
        1 => json!(4294967296u64),
        2 => json!(0.5),
        3 => json!(-3),
        4 => json!(1e21),
        _ => json!(9007199254740993u64),
    }
}

fn random_tree(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth > 2 { 4 } else { 6 }) {
        0 => hostile(rng),
        1 => big_number(rng),
        2 => Value::Bool(rng.chance(50)),
        3 => Value::Null,
        4 => {
            let mut m = Map::new();
            for _ in 0..rng.below(4) {
                m.insert(rng.pick(HOSTILE).to_string(), random_tree(rng, depth + 1));
            }
            Value::Object(m)
        }
        _ => Value::Array(
            (0..rng.below(3))
                .map(|_| random_tree(rng, depth + 1))
                .collect(),
        ),
    }
}

fn string_map(rng: &mut Rng, avoid: &[&str]) -> Value {
    let mut m = Map::new();
    for _ in 0..rng.below(4) {
        let k = rng.pick(HOSTILE).to_string();
        if !avoid.contains(&k.as_str()) {
            m.insert(k, hostile(rng));
        }
    }
    Value::Object(m)
}

/// A whole number from 0 to `max` (the plan's value: the schema bounds it there).
fn upto(rng: &mut Rng, max: &Value) -> u64 {
    let max = max.as_f64().unwrap_or(0.0) as u64;
    rng.next() % (max + 1)
}

/// Random values for one workload, inside the bounds of the plan whose resolved
/// workload values are `plan`: counts and sizes at most the plan's, flags only where
/// the plan has them on, hostile strings wherever the chart takes free text.
fn random_workload(rng: &mut Rng, class: WorkloadClass, declared: &Value, plan: &Value) -> Value {
    let mut w = Map::new();
    // Keys that only make sense together, inserted after the independent ones.
    let mut together: Vec<(&str, Value)> = Vec::new();
    if rng.chance(40) {
        let most = plan["processesPerPod"].as_f64().unwrap_or(1.0) as u64;
        w.insert(
            "processesPerPod".into(),
            json!(1 + rng.next() % most.max(1)),
        );
    }
    for dependency in ["postgres", "redis"] {
        if let Some(allocations) = declared.get(dependency).and_then(Value::as_object) {
            let mut sizes = Map::new();
            for name in allocations.keys() {
                if rng.chance(40) {
                    let size = upto(rng, &plan[dependency][name]["size"]);
                    sizes.insert(name.clone(), json!({"size": size}));
                }
            }
            w.insert(dependency.into(), Value::Object(sizes));
        }
    }
    let mut maybe = |rng: &mut Rng, key: &str, v: Value| {
        if rng.chance(50) {
            w.insert(key.to_string(), v);
        }
    };
    let on = plan["enabled"].as_bool().unwrap_or(false);
    let enabled = Value::Bool(on && rng.chance(70));
    maybe(rng, "enabled", enabled);
    let hostile_list = Value::Array((0..rng.below(3)).map(|_| hostile(rng)).collect());
    maybe(rng, "args", hostile_list);
    let hostile_list = Value::Array((0..rng.below(3)).map(|_| hostile(rng)).collect());
    maybe(rng, "command", hostile_list);
    let env: Vec<Value> = (0..rng.below(3))
        .map(|i| json!({"name": format!("VAR_{i}"), "value": hostile(rng)}))
        .collect();
    maybe(rng, "env", Value::Array(env));
    let annotations = string_map(rng, &[]);
    maybe(rng, "podAnnotations", annotations);
    let labels = string_map(rng, &[]);
    maybe(rng, "podLabels", labels);
    let selector = string_map(rng, &[]);
    maybe(rng, "nodeSelector", selector);
    let resources =
        json!({"requests": {"cpu": hostile(rng), "memory": big_number(rng)}, "limits": {}});
    maybe(rng, "resources", resources);
    let tolerations = json!([{"key": hostile(rng), "operator": "Exists"}]);
    maybe(rng, "tolerations", tolerations);
    // The chart surface no guard reads: probes, volumes, extra containers.
    let probe = json!({"httpGet": {"path": hostile(rng), "port": "http"}, "failureThreshold": big_number(rng)});
    maybe(rng, "startupProbe", probe);
    let class_name = hostile(rng);
    maybe(rng, "priorityClassName", class_name);
    let volumes = json!([{"name": "cache", "emptyDir": {"sizeLimit": hostile(rng)}}]);
    maybe(rng, "extraVolumes", volumes);
    let mounts = json!([{"name": "cache", "mountPath": hostile(rng)}]);
    maybe(rng, "extraVolumeMounts", mounts);
    let init = json!([{"name": "init", "image": hostile(rng), "args": [hostile(rng)]}]);
    maybe(rng, "initContainers", init);
    let sidecars = json!([{"name": "proxy", "image": hostile(rng)}]);
    maybe(rng, "sidecars", sidecars);
    // A configuration overlay: hostile keys, nested maps, and the values Sprig's
    // merges are known to trip on (`false`, `0`, `""`, `null`, lists).
    let mut overlay = Map::new();
    for _ in 0..rng.below(3) {
        let value = match rng.below(4) {
            0 => random_tree(rng, 0),
            1 => json!({"loops": rng.chance(50), "n": 0, "s": "", "none": null}),
            2 => json!([hostile(rng)]),
            _ => json!(false),
        };
        overlay.insert(rng.pick(HOSTILE).to_string(), value);
    }
    maybe(rng, "configOverlay", Value::Object(overlay));
    if matches!(class, WorkloadClass::Pool | WorkloadClass::Worker) {
        let probe = json!({"exec": {"command": [hostile(rng)]}});
        maybe(rng, "readinessProbe", probe);
        let probe = json!({"tcpSocket": {"port": 8080}});
        maybe(rng, "livenessProbe", probe);
        // A second role: its port, Service, monitor, budget and HPA, mostly in the
        // combinations the guards accept (a Service needs a port, a monitor the
        // Service, a budget keeps a pod evictable, a pool's HPA stays at one pod
        // unless it elects a leader).
        // Port, Service and monitor go in together (a Service without the port it
        // forwards to is refused).
        if rng.chance(50) {
            let port = *rng.pick(&[1u64, 9090, 65535]);
            let service = rng.chance(60);
            let svc = json!({"enabled": service, "type": "ClusterIP", "port": 9090, "annotations": string_map(rng, &[]), "labels": string_map(rng, &[])});
            let monitor = json!({"enabled": service && rng.chance(50), "path": "/metrics", "interval": "", "scrapeTimeout": "", "labels": {}});
            together.push(("port", json!(port)));
            together.push(("service", svc));
            together.push(("serviceMonitor", monitor));
        }
        let min_available = if rng.chance(95) { 0 } else { 1 };
        let pdb =
            json!({"enabled": rng.chance(50), "maxUnavailable": 1, "minAvailable": min_available});
        maybe(rng, "podDisruptionBudget", pdb);
        let most = plan["replicaCount"].as_f64().unwrap_or(1.0).max(1.0) as u64;
        let max = if class == WorkloadClass::Pool {
            1
        } else {
            1 + rng.next() % most
        };
        let hpa = json!({"enabled": rng.chance(50), "minReplicas": 1, "maxReplicas": max, "podsMetric": *rng.pick(&["", "queue_depth"])});
        maybe(rng, "autoscaling", hpa);
    }
    if class == WorkloadClass::Api {
        let hosts: Vec<Value> = (0..rng.below(3))
            .map(|i| json!(format!("h{i}.example.com")))
            .collect();
        let paths = if rng.chance(50) {
            json!([{"path": "/", "pathType": "Prefix"}, {"path": "/x", "pathType": "Exact"}])
        } else {
            json!([])
        };
        let ingress = json!({
            "enabled": rng.chance(60),
            "className": if rng.chance(50) { hostile(rng) } else { json!("") },
            "annotations": string_map(rng, &[]),
            "hosts": hosts,
            "paths": paths,
            "tls": if rng.chance(50) { json!([{"secretName": "tls", "hosts": ["h0.example.com"]}]) } else { json!([]) },
        });
        maybe(rng, "ingress", ingress);
        let monitor = json!({
            "enabled": rng.chance(60),
            "path": *rng.pick(&["/metrics", "/x?y=<z>"]),
            "interval": *rng.pick(&["", "15s", "1m30s"]),
            "scrapeTimeout": *rng.pick(&["", "10s"]),
            "labels": string_map(rng, &[]),
        });
        maybe(rng, "serviceMonitor", monitor);
        let metric = *rng.pick(&[
            "",
            "queue_depth",
            "http_server_requests_active_seconds_count",
        ]);
        maybe(rng, "autoscaling", json!({"podsMetric": metric}));
        maybe(rng, "keda", json!({"metric": "in_flight:sum"}));
    }
    if class != WorkloadClass::Migrate {
        let replicas = upto(rng, &plan["replicaCount"]);
        maybe(rng, "replicaCount", json!(replicas));
        let surge = if rng.chance(50) {
            json!({"maxSurge": plan["rollingUpdate"]["maxSurge"], "maxUnavailable": "25%"})
        } else {
            json!({"maxSurge": 0, "maxUnavailable": 1})
        };
        maybe(rng, "rollingUpdate", surge);
        let egress = if rng.chance(50) {
            json!([{"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}}], "ports": [{"port": 5432}]}])
        } else {
            json!([])
        };
        let np = json!({"enabled": rng.chance(50), "allowDns": rng.chance(50), "egress": egress});
        maybe(rng, "networkPolicy", np);
        let ready = *rng.pick(&[0u64, 10, 2147483647]);
        maybe(rng, "minReadySeconds", json!(ready));
    }
    if class == WorkloadClass::Api {
        let drain = upto(rng, &plan["drainSeconds"]);
        maybe(rng, "drainSeconds", json!(drain));
        let grace = plan["terminationGracePeriodSeconds"]
            .as_f64()
            .unwrap_or(0.0) as u64
            + *rng.pick(&[0u64, 30, 1000000]);
        maybe(rng, "terminationGracePeriodSeconds", json!(grace));
        let svc = json!({"type": "ClusterIP", "port": 8443, "annotations": string_map(rng, &[]), "labels": string_map(rng, &[])});
        maybe(rng, "service", svc);
        let min_available = if rng.chance(95) { 0 } else { 1 };
        let pdb = json!({"enabled": rng.chance(50), "maxUnavailable": "50%", "minAvailable": min_available});
        maybe(rng, "podDisruptionBudget", pdb);
    } else if class != WorkloadClass::Migrate {
        let grace = *rng.pick(&[0u64, 30, 330, 2147483647]);
        maybe(rng, "terminationGracePeriodSeconds", json!(grace));
    }
    if class == WorkloadClass::Migrate {
        let backoff = json!(rng.below(4));
        maybe(rng, "backoffLimit", backoff);
        let phase = json!(*rng.pick(&["pre", "post"]));
        maybe(rng, "hookPhase", phase);
        let restart = json!(*rng.pick(&["Never", "OnFailure"]));
        maybe(rng, "restartPolicy", restart);
        let ttl = json!(*rng.pick(&[0u64, 300]));
        maybe(rng, "ttlSecondsAfterFinished", ttl);
        let account = hostile(rng);
        maybe(rng, "serviceAccountName", account);
    }
    for (key, value) in together {
        w.insert(key.to_string(), value);
    }
    Value::Object(w)
}

/// `overlay` merged over `base` as Helm merges values files (maps deeply).
fn merged(base: &Value, overlay: Value) -> Value {
    match (base, overlay) {
        (Value::Object(b), Value::Object(o)) => {
            let mut out = b.clone();
            for (k, v) in o {
                let next = match b.get(&k) {
                    Some(old) => merged(old, v),
                    None => v,
                };
                out.insert(k, next);
            }
            Value::Object(out)
        }
        (_, o) => o,
    }
}

/// One random values file inside the schema: the resolved values of a random plan
/// (the defaults or a preset, with its `capacityPlan`) with random changes inside
/// that plan's bounds.
fn random_values(rng: &mut Rng, spec: &Spec) -> Value {
    let plans = shipshape::contract::schema::plan_names(spec);
    let plan = rng.pick(&plans).clone();
    let preset = (plan != "default").then_some(plan.as_str());
    let base = shipshape::capacity::fit::preset_values(spec, preset).unwrap();
    let mut root = Map::new();
    if rng.chance(60) {
        root.insert(
            "image".into(),
            json!({"repository": hostile(rng), "tag": hostile(rng), "digest": if rng.chance(30) { json!(format!("sha256:{}", "ab".repeat(32))) } else { json!("") }}),
        );
    }
    if rng.chance(60) {
        let mut config = Map::new();
        for _ in 0..rng.below(5) {
            config.insert(rng.pick(HOSTILE).to_string(), random_tree(rng, 0));
        }
        // `null` for a key the defaults have deletes it; for a new key it stays.
        if rng.chance(30) {
            config.insert("spring".into(), Value::Null);
        }
        root.insert("config".into(), Value::Object(config));
    }
    if rng.chance(30) {
        root.insert(
            "serviceAccount".into(),
            json!({"create": rng.chance(50), "name": hostile(rng), "annotations": string_map(rng, &[])}),
        );
    }
    if rng.chance(20) {
        root.insert("imagePullSecrets".into(), json!([{"name": hostile(rng)}]));
    }
    if rng.chance(25) {
        let mut objects = Vec::new();
        for i in 0..=rng.below(2) {
            let kind = *rng.pick(&["ConfigMap", "Role", "Widget", "Job"]);
            let mut object = json!({
                "apiVersion": if kind == "Widget" { "example.com/v1" } else { "v1" },
                "kind": kind,
                "metadata": {"name": format!("extra-{i}"), "annotations": string_map(rng, &[])},
                "data": {"text": hostile(rng), "tree": random_tree(rng, 0)},
            });
            if rng.chance(10) {
                object["metadata"] = json!({"name": format!("extra-{i}"), "annotations": {"helm.sh/hook": "post-install"}});
            }
            if rng.chance(20) {
                object["metadata"]["annotations"] = json!({"helm.sh/hook": "pre-install"});
            }
            objects.push(object);
        }
        root.insert("extraObjects".into(), Value::Array(objects));
    }
    for key in ["nameOverride", "fullnameOverride"] {
        if rng.chance(30) {
            root.insert(key.into(), name_override(rng, &spec.chart.name));
        }
    }
    let mut workloads = Map::new();
    for (name, w) in spec.workloads.all() {
        if rng.chance(60) {
            // A workload whose sizes the startup settings take from another is fixed.
            let fixed = spec
                .startup_settings
                .as_ref()
                .is_some_and(|s| s.sizes_from != name);
            let mut declared = w.to_values();
            if fixed {
                declared = json!({});
            }
            workloads.insert(
                name.to_string(),
                random_workload(rng, w.class(), &declared, &base["workloads"][name]),
            );
        }
    }
    root.insert("workloads".into(), Value::Object(workloads));
    // Shared stores on Redis and pools with a leader most of the time, so that most sets
    // with several replicas pass the install-time rules and render.
    if rng.chance(80) {
        let stores: Map<String, Value> = spec
            .shared_stores()
            .into_iter()
            .map(|s| (s.to_string(), json!({"backend": "redis"})))
            .collect();
        root.insert("stores".into(), Value::Object(stores));
        if rng.chance(50) {
            root.insert("replicaStrict".into(), Value::Bool(true));
        }
    }
    if let Some(Value::Object(workloads)) = root.get_mut("workloads") {
        for name in spec.workloads.pool.keys() {
            if rng.chance(80) {
                if let Some(Value::Object(w)) = workloads.get_mut(name) {
                    w.insert("leaderElection".into(), Value::Bool(true));
                }
            }
        }
    }
    if spec.startup_settings.is_some() && rng.chance(60) {
        let most = base["startupSettings"]["foreground"]["lock"]["seconds"]
            .as_f64()
            .unwrap_or(0.0);
        let seconds = *rng.pick(&[most, most / 2.0, 1e-7, 0.000001]);
        root.insert(
            "startupSettings".into(),
            json!({"foreground": {"lock": {"seconds": seconds}}}),
        );
    }
    // The bundled servers: on or off, hostile images and Secret names; their limits stay
    // the declared budgets, whatever else changes.
    let mut postgres_bundled = false;
    if rng.chance(40) {
        let mut bundled = Map::new();
        let postgres_on = rng.chance(50);
        postgres_bundled = postgres_on;
        bundled.insert(
            "postgres".into(),
            json!({"enabled": postgres_on, "image": {"repository": hostile(rng), "tag": hostile(rng)}, "database": *rng.pick(&["app", "gw_db"]), "username": *rng.pick(&["app", "_svc"]), "storage": *rng.pick(&["1Gi", "500Mi", "2"])}),
        );
        let mut redis = Map::new();
        for server in base["bundled"]["redis"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
        {
            if rng.chance(70) {
                redis.insert(server.clone(), json!({"enabled": rng.chance(60), "image": {"repository": hostile(rng), "tag": "8"}}));
            }
        }
        bundled.insert("redis".into(), Value::Object(redis));
        if rng.chance(30) {
            bundled.insert("existingSecret".into(), hostile(rng));
        }
        root.insert("bundled".into(), Value::Object(bundled));
        if postgres_on {
            if let Some(Value::Object(workloads)) = root.get_mut("workloads") {
                for name in spec.workloads.migrate.keys() {
                    let w = workloads.entry(name.clone()).or_insert_with(|| json!({}));
                    if let Value::Object(w) = w {
                        w.insert("hookPhase".into(), json!("post"));
                    }
                }
            }
        }
    }
    // The operator's own keys of the settings section, beside the managed ones.
    if let Some(settings) = &spec.startup_settings {
        if rng.chance(40) {
            let mut own = Map::new();
            for _ in 0..rng.below(4) {
                own.insert(format!("own_{}", rng.below(100)), random_tree(rng, 1));
            }
            let config = root.entry("config").or_insert_with(|| json!({}));
            if let Value::Object(config) = config {
                config.insert(settings.section.clone(), Value::Object(own));
            }
        }
    }
    let mut features = Map::new();
    for k in spec.features.keys() {
        if rng.chance(50) && base["features"][k] == json!(true) {
            features.insert(k.clone(), Value::Bool(rng.chance(50)));
        }
    }
    root.insert("features".into(), Value::Object(features));
    // A million connections is more than a bundled PostgreSQL runs (a guard says so).
    if rng.chance(40) && !postgres_bundled {
        let retiring = upto(rng, &base["dependencyCapacity"]["retiringGenerations"]);
        let reserve = upto(rng, &base["dependencyCapacity"]["postgres"]["reserve"]);
        root.insert(
            "dependencyCapacity".into(),
            json!({"retiringGenerations": retiring, "postgres": {"maxConnections": 1000000, "reserve": reserve}}),
        );
    }
    merged(&base, Value::Object(root))
}

/// A `nameOverride` or `fullnameOverride`: mostly DNS labels (the chart's name, 63
/// characters, a `-` where a name is cut), sometimes text the schema refuses.
fn name_override(rng: &mut Rng, chart: &str) -> Value {
    let long = format!("{}-{}", "n".repeat(42), "x".repeat(20));
    let cut_at_dash = format!("{}-{}", "d".repeat(43), "e".repeat(19));
    let choices = [
        "",
        chart,
        "shop",
        "x",
        long.as_str(),
        cut_at_dash.as_str(),
        "release",
    ];
    if rng.chance(10) {
        return hostile(rng);
    }
    Value::String(rng.pick(&choices).to_string())
}

/// A release name for `helm template NAME`: the default, short, one holding the
/// chart's name, and 53 characters (the longest Helm accepts) with a `-` where a full
/// name is cut.
fn release_name(rng: &mut Rng, chart: &str) -> String {
    let choices = [
        "release-name".to_string(),
        "r".to_string(),
        format!("prod-{chart}"),
        chart.to_string(),
        format!("{}-{}", "a".repeat(42), "b".repeat(10)),
        "c".repeat(53),
    ];
    rng.pick(&choices).clone()
}

#[test]
fn randomized_values_render_like_helm_3_and_helm_4() {
    for (seed, (name, spec_path)) in examples().into_iter().enumerate() {
        randomized_example(&name, &spec_path, 0x5eed_0001 + seed as u64);
    }
}

fn randomized_example(name: &str, spec_path: &Path, seed: u64) {
    const SETS: usize = 300;
    const REQUIRED: usize = 200;
    let spec = load(spec_path);
    let scratch = Scratch::new(&format!("eq-random-{name}"));
    write_generated(&spec, scratch.path());
    let chart = scratch.path().join("chart");
    let schema = values_schema(&spec);
    let docs = build_objects(&spec);
    let mut rng = Rng(seed);
    let mut cases = Vec::new();
    for i in 0..SETS {
        let overlay = random_values(&mut rng, &spec);
        let file = scratch.path().join(format!("values-{i:03}.json"));
        // Go's encoding escapes U+2028, which YAML readers otherwise take for a line break.
        std::fs::write(&file, shipshape::expr::gojson::to_go_json(&overlay)).unwrap();
        cases.push((file, release_name(&mut rng, &spec.chart.name)));
    }
    let helms = [helm3(), helm4()];
    let checked = std::sync::atomic::AtomicUsize::new(0);
    let refused = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for worker in 0..2 {
            let (cases, helms, chart, spec, schema, docs, scratch) =
                (&cases, &helms, &chart, &spec, &schema, &docs, &scratch);
            let (checked, refused) = (&checked, &refused);
            s.spawn(move || {
                for (file, release) in cases.iter().skip(worker).step_by(2) {
                    let text = std::fs::read_to_string(file).unwrap();
                    let user = parse_values_yaml(&text, &file.display().to_string()).unwrap();
                    let values = resolve_values(
                        spec,
                        None,
                        &[ValuesSource::File {
                            name: "random".into(),
                            values: user,
                        }],
                    );
                    let schema_check = check_values_schema(&values, schema, "random");
                    if let Err(e) = &schema_check {
                        if std::env::var_os("SHIPSHAPE_SHOW_REFUSALS").is_some() {
                            eprintln!("{e}");
                        }
                    }
                    let schema_ok = schema_check.is_ok();
                    let native = if schema_ok {
                        Some(
                            render_manifests(
                                spec,
                                docs,
                                &values,
                                &Release {
                                    name: release.clone(),
                                    ..Release::default()
                                },
                            )
                            .expect("native render"),
                        )
                    } else {
                        None
                    };
                    for helm_bin in helms {
                        let (code, out, err) = helm(
                            helm_bin,
                            &[
                                "template",
                                release,
                                chart.to_str().unwrap(),
                                "-f",
                                file.to_str().unwrap(),
                            ],
                            scratch.path(),
                        );
                        match &native {
                            Some(native) => {
                                assert_eq!(
                                    code,
                                    0,
                                    "{}: {} failed where shipshape rendered:\n{err}",
                                    file.display(),
                                    helm_bin.display()
                                );
                                assert_eq!(
                                    parse_objects(&out),
                                    parse_objects(native),
                                    "{}: {} and shipshape render differ",
                                    file.display(),
                                    helm_bin.display()
                                );
                            }
                            None => assert_ne!(
                                code,
                                0,
                                "{}: shipshape refused the values but {} rendered them",
                                file.display(),
                                helm_bin.display()
                            ),
                        }
                    }
                    if schema_ok {
                        checked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    } else {
                        refused.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let checked = checked.into_inner();
    eprintln!(
        "randomized {name}: {checked} value sets rendered equal, {} refused by both",
        refused.into_inner()
    );
    assert!(checked >= REQUIRED, "only {checked} of {SETS} random value sets were inside the schema; at least {REQUIRED} must render");
}

#[test]
fn values_files_with_yaml_1_1_scalars_read_like_helm() {
    let (name, spec_path) = examples().into_iter().next().unwrap();
    let spec = load(&spec_path);
    let scratch = Scratch::new(&format!("eq-yaml11-{name}"));
    write_generated(&spec, scratch.path());
    let chart = scratch.path().join("chart");
    let file = repo_root().join("tests/fixtures/values/yaml-1.1-scalars.yaml");
    let user = parse_values_yaml(
        &std::fs::read_to_string(&file).unwrap(),
        "yaml-1.1-scalars.yaml",
    )
    .unwrap();
    let values = resolve_values(
        &spec,
        None,
        &[ValuesSource::File {
            name: "f".into(),
            values: user,
        }],
    );
    check_values_schema(&values, &values_schema(&spec), "f").unwrap();
    let native =
        render_manifests(&spec, &build_objects(&spec), &values, &Release::default()).unwrap();
    assert!(
        native.contains("quoted-no\": \"no\""),
        "quoted `no` stays a string"
    );
    for helm_bin in [helm3(), helm4()] {
        let (code, out, err) = helm(
            &helm_bin,
            &[
                "template",
                chart.to_str().unwrap(),
                "-f",
                file.to_str().unwrap(),
            ],
            scratch.path(),
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            parse_objects(&out),
            parse_objects(&native),
            "{}",
            helm_bin.display()
        );
        assert_eq!(out, native, "{}: the text differs too", helm_bin.display());
    }
}
