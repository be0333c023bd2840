//! The bundled evaluation servers: their rendered limits are the budgets the capacity
//! report checks, for every preset; the application's URLs point at them; Helm refuses
//! what `dependencies.bundled` refuses. And feature flags reach the application.

use crate::support::*;
use serde_json::{json, Value};
use shipshape::backends::native::{render_manifests, Release};
use shipshape::capacity::capacity_report;
use shipshape::capacity::fit::{preset_values, presets};
use shipshape::contract::schema::values_schema;
use shipshape::generate::generate_outputs;
use shipshape::guards::check_guards;
use shipshape::objects::build_objects;
use shipshape::spec::{load_spec, Spec};
use shipshape::values::{check_values_schema, parse_set_args, resolve_values, ValuesSource};

fn example(name: &str) -> Spec {
    let path = repo_root()
        .join("examples")
        .join(name)
        .join("shipshape.yaml");
    load_spec(&std::fs::read_to_string(path).unwrap(), name).unwrap()
}

fn stateful_set<'o>(objects: &'o [Value], name: &str) -> Option<&'o Value> {
    objects
        .iter()
        .find(|o| o["kind"] == "StatefulSet" && o["metadata"]["name"] == name)
}

fn args(object: &Value) -> Vec<String> {
    object["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

/// The value after `flag` in an argument list.
fn after(args: &[String], flag: &str) -> String {
    let i = args.iter().position(|a| a == flag).unwrap();
    args[i + 1].clone()
}

/// The `-c name=value` settings of a PostgreSQL argument list.
fn pg_setting(args: &[String], name: &str) -> u64 {
    args.windows(2)
        .filter(|w| w[0] == "-c")
        .find_map(|w| w[1].strip_prefix(&format!("{name}=")))
        .unwrap()
        .parse()
        .unwrap()
}

fn env_of(object: &Value) -> Vec<Value> {
    object["spec"]["template"]["spec"]["containers"][0]["env"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn env_value(env: &[Value], name: &str) -> Option<Value> {
    env.iter().find(|e| e["name"] == name).cloned()
}

#[test]
fn every_bundled_server_enforces_the_budget_the_report_checks_in_every_preset() {
    let mut seen_postgres = 0;
    let mut seen_valkey = 0;
    for name in ["agent-platform", "llm-gateway"] {
        let spec = example(name);
        let files = generate_outputs(&spec).unwrap().files;
        let mut names: Vec<Option<String>> = vec![None];
        names.extend(presets(&spec).into_keys().map(Some));
        for preset in names {
            let label = preset.clone().unwrap_or_else(|| "default".into());
            let values = preset_values(&spec, preset.as_deref()).unwrap();
            let report = capacity_report(&spec, &values).unwrap();
            let objects = parse_objects(&files[&format!("rendered/{label}.yaml")]);
            let pg = stateful_set(
                &objects,
                &format!("release-name-{}-bundled-postgres", spec.chart.name),
            );
            assert_eq!(
                pg.is_some(),
                values["bundled"]["postgres"]["enabled"] == json!(true),
                "{name}/{label}"
            );
            if let Some(pg) = pg {
                let a = args(pg);
                assert_eq!(a[0], "-c", "{name}/{label}: {a:?}");
                assert_eq!(
                    Some(pg_setting(&a, "max_connections")),
                    report.postgres.limit
                );
                assert_eq!(
                    pg_setting(&a, "max_connections")
                        - pg_setting(&a, "superuser_reserved_connections"),
                    report.postgres.budget.unwrap(),
                    "{name}/{label}"
                );
                seen_postgres += 1;
            }
            for (server, total) in &report.redis_servers {
                let object = stateful_set(
                    &objects,
                    &format!("release-name-{}-bundled-valkey-{server}", spec.chart.name),
                );
                let on = values["bundled"]["redis"][server]["enabled"] == json!(true);
                assert_eq!(object.is_some(), on, "{name}/{label}/{server}");
                if let Some(object) = object {
                    let a = args(object);
                    assert_eq!(a[0], "valkey-server");
                    let clients: u64 = after(&a, "--maxclients").parse().unwrap();
                    assert_eq!(Some(clients), total.limit, "{name}/{label}/{server}");
                    assert!(total.peak <= clients, "{name}/{label}/{server}");
                    let declared = &values["dependencyCapacity"]["redis"]["servers"][server];
                    assert_eq!(
                        json!(after(&a, "--maxmemory-policy")),
                        declared["maxmemoryPolicy"]
                    );
                    if declared["role"] == "critical" {
                        assert_eq!(after(&a, "--maxmemory-policy"), "noeviction");
                    }
                    seen_valkey += 1;
                }
            }
        }
    }
    // Both evaluation presets: PostgreSQL twice; the gateway's two servers and the
    // agent platform's one.
    assert_eq!((seen_postgres, seen_valkey), (2, 3));
}

/// A preset's values (`None`: the defaults) with `--set` pairs over them.
fn values_with(spec: &Spec, preset: Option<&str>, sets: &[&str]) -> Value {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let all = presets(spec);
    let overlay = preset.map(|p| &all[p].values);
    resolve_values(
        spec,
        overlay,
        &[ValuesSource::Set(parse_set_args(&sets).unwrap())],
    )
}

fn render(spec: &Spec, preset: Option<&str>, sets: &[&str]) -> Vec<Value> {
    let values = values_with(spec, preset, sets);
    check_values_schema(&values, &values_schema(spec), "test").unwrap();
    parse_objects(
        &render_manifests(spec, &build_objects(spec), &values, &Release::default()).unwrap(),
    )
}

fn deployment<'o>(objects: &'o [Value], name: &str) -> &'o Value {
    objects
        .iter()
        .find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == name)
        .unwrap()
}

#[test]
fn the_applications_urls_point_at_the_bundled_servers_and_only_while_they_run() {
    let spec = example("agent-platform");
    let objects = render(&spec, Some("evaluation"), &[]);
    let env = env_of(deployment(
        &objects,
        &format!("release-name-{}-api", spec.chart.name),
    ));
    let names: Vec<&str> = env.iter().filter_map(|e| e["name"].as_str()).collect();
    let position = |n: &str| names.iter().position(|x| *x == n).unwrap();
    assert_eq!(
        env_value(&env, "APP_VALKEY_URL").unwrap()["value"],
        "redis://:$(SHIPSHAPE_VALKEY_PASSWORD)@release-name-agent-platform-bundled-valkey-valkey:6379"
    );
    assert!(position("SHIPSHAPE_VALKEY_PASSWORD") < position("APP_VALKEY_URL"));
    assert_eq!(
        env_value(&env, "SPRING_DATASOURCE_URL").unwrap()["value"],
        "jdbc:postgresql://release-name-agent-platform-bundled-postgres:5432/app"
    );
    assert_eq!(
        env_value(&env, "SPRING_DATASOURCE_PASSWORD").unwrap()["valueFrom"]["secretKeyRef"],
        json!({"name": format!("release-name-{}-bundled", spec.chart.name), "key": "password"})
    );
    // The Service the URL names exists and selects the server's pod.
    let service = objects
        .iter()
        .find(|o| {
            o["kind"] == "Service"
                && o["metadata"]["name"]
                    == format!("release-name-{}-bundled-valkey-valkey", spec.chart.name).as_str()
        })
        .unwrap();
    assert_eq!(
        service["spec"]["selector"]["app.kubernetes.io/component"],
        "bundled-valkey-valkey"
    );
    // Off: the external URL from values, no database variables, no Secret.
    let off = render(&spec, Some("ingest-failover"), &[]);
    let env = env_of(deployment(
        &off,
        &format!("release-name-{}-api", spec.chart.name),
    ));
    assert_eq!(
        env_value(&env, "APP_VALKEY_URL").unwrap()["value"],
        "redis://valkey:6379"
    );
    assert_eq!(env_value(&env, "SPRING_DATASOURCE_URL"), None);
    assert!(!off
        .iter()
        .any(|o| o["kind"] == "Secret" || o["kind"] == "StatefulSet"));
    // An existing Secret: the chart creates none and every reference names it.
    let existing = render(
        &spec,
        Some("evaluation"),
        &["bundled.existingSecret=trial-creds"],
    );
    assert!(!existing.iter().any(|o| o["kind"] == "Secret"));
    let env = env_of(deployment(
        &existing,
        &format!("release-name-{}-api", spec.chart.name),
    ));
    assert_eq!(
        env_value(&env, "SHIPSHAPE_VALKEY_PASSWORD").unwrap()["valueFrom"]["secretKeyRef"]["name"],
        "trial-creds"
    );
}

#[test]
fn the_gateway_reads_its_bundled_urls_and_the_secret_holds_every_password() {
    let spec = example("llm-gateway");
    let objects = render(&spec, Some("evaluation"), &[]);
    let env = env_of(deployment(
        &objects,
        &format!("release-name-{}-api", spec.chart.name),
    ));
    assert_eq!(
        env_value(&env, "DATABASE_URL").unwrap()["value"],
        "postgresql://app:$(SHIPSHAPE_POSTGRES_PASSWORD)@release-name-llm-gateway-bundled-postgres:5432/app"
    );
    assert_eq!(
        env_value(&env, "DELTALLM_REDIS_BULK_URL").unwrap()["value"],
        "redis://:$(SHIPSHAPE_VALKEY_PASSWORD)@release-name-llm-gateway-bundled-valkey-cache:6379"
    );
    let secret = objects.iter().find(|o| o["kind"] == "Secret").unwrap();
    let data = secret["stringData"].as_object().unwrap();
    let keys: Vec<&String> = data.keys().collect();
    assert_eq!(keys, ["password", "postgres-password", "valkey-password"]);
    for v in data.values() {
        let v = v.as_str().unwrap();
        assert!(
            v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()),
            "{v}"
        );
    }
    // Another release gets other passwords; the same release the same ones.
    let values = values_with(&spec, Some("evaluation"), &[]);
    let docs = build_objects(&spec);
    let other = Release {
        name: "other".into(),
        ..Release::default()
    };
    let again =
        parse_objects(&render_manifests(&spec, &docs, &values, &Release::default()).unwrap());
    let elsewhere = parse_objects(&render_manifests(&spec, &docs, &values, &other).unwrap());
    let secret_of = |objects: &[Value]| {
        objects.iter().find(|o| o["kind"] == "Secret").unwrap()["stringData"].clone()
    };
    assert_eq!(secret_of(&again), secret["stringData"]);
    assert_ne!(
        secret_of(&elsewhere)["password"],
        secret["stringData"]["password"]
    );
}

#[test]
fn helm_refuses_what_the_bundled_guard_refuses() {
    let spec = example("llm-gateway");
    let schema = values_schema(&spec);
    let cases: &[(&[&str], bool)] = &[
        (&[], true),
        (&["dependencyCapacity.postgres.reserve=16"], true),
        (
            &["dependencyCapacity.redis.servers.critical.maxClients=0"],
            false,
        ),
        (
            &["dependencyCapacity.redis.servers.critical.maxClients=65504"],
            true,
        ),
        (
            &["dependencyCapacity.redis.servers.critical.maxClients=65505"],
            false,
        ),
        (&["dependencyCapacity.postgres.maxConnections=262000"], true),
        (
            &["dependencyCapacity.postgres.maxConnections=262001"],
            false,
        ),
        (
            &[
                "bundled.redis.critical.enabled=false",
                "dependencyCapacity.redis.servers.critical.maxClients=0",
            ],
            true,
        ),
    ];
    for (sets, accepted) in cases {
        let values = values_with(&spec, Some("evaluation"), sets);
        let schema_ok = check_values_schema(&values, &schema, "test").is_ok();
        let guard_ok = !check_guards(&spec, &values)
            .iter()
            .any(|f| f.rule == "dependencies.bundled");
        assert_eq!(schema_ok, *accepted, "schema: {sets:?}");
        assert_eq!(guard_ok, *accepted, "guard: {sets:?}");
    }
    // A pre migrate hook with the bundled PostgreSQL: refused by both.
    let spec = example("agent-platform");
    let values = values_with(
        &spec,
        Some("evaluation"),
        &["workloads.migrate.hookPhase=pre"],
    );
    assert!(check_values_schema(&values, &values_schema(&spec), "test").is_err());
    assert!(check_guards(&spec, &values)
        .iter()
        .any(|f| f.rule == "dependencies.bundled"));
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

#[test]
fn durable_telemetry_reaches_the_gateway_and_an_off_flag_states_no_open_pool() {
    let spec = example("llm-gateway");
    let on = render(&spec, None, &[]);
    let settings = general_settings(&on);
    assert_eq!(settings["durable_telemetry_enabled"], true);
    assert_eq!(settings["telemetry_db_pool_size"], 5);
    let env = env_of(deployment(
        &on,
        &format!("release-name-{}-api", spec.chart.name),
    ));
    assert_eq!(
        env_value(&env, "DELTALLM_DURABLE_TELEMETRY_ENABLED").unwrap()["value"],
        "true"
    );
    let off = render(&spec, Some("evaluation"), &[]);
    let settings = general_settings(&off);
    assert_eq!(settings["durable_telemetry_enabled"], false);
    for key in [
        "telemetry_db_pool_size",
        "telemetry_worker_db_pool_size",
        "spend_settlement_db_pool_size",
    ] {
        assert_eq!(settings[key], 0, "{key}");
    }
    assert_eq!(settings["db_pool_size"], 20);
    let env = env_of(deployment(
        &off,
        &format!("release-name-{}-api", spec.chart.name),
    ));
    assert_eq!(
        env_value(&env, "DELTALLM_DURABLE_TELEMETRY_ENABLED").unwrap()["value"],
        "false"
    );
    assert_eq!(env_value(&env, "DELTALLM_TELEMETRY_DB_POOL_SIZE"), None);
}

#[test]
fn the_operators_own_settings_stay_and_the_managed_ones_are_refused() {
    let spec = example("llm-gateway");
    let objects = render(
        &spec,
        None,
        &[
            "config.general_settings.store_model_in_db=true",
            "config.general_settings.ui_title=gw",
        ],
    );
    let settings = general_settings(&objects);
    assert_eq!(settings["store_model_in_db"], true);
    assert_eq!(settings["ui_title"], "gw");
    assert_eq!(settings["db_pool_size"], 20);
    let schema = values_schema(&spec);
    for set in [
        "config.general_settings.db_pool_size=5",
        "config.general_settings.durable_telemetry_enabled=false",
        "config.general_settings.own_url=redis://cache:6379",
    ] {
        let values = resolve_values(
            &spec,
            None,
            &[ValuesSource::Set(
                parse_set_args(&[set.to_string()]).unwrap(),
            )],
        );
        assert!(
            check_values_schema(&values, &schema, "test").is_err(),
            "{set}"
        );
        assert!(
            check_guards(&spec, &values)
                .iter()
                .any(|f| f.rule == "env.managed"),
            "{set}"
        );
    }
}

#[test]
fn without_its_secret_the_cache_url_is_null_not_a_dangling_reference() {
    let spec = example("llm-gateway");
    let values = {
        let mut user = serde_json::Map::new();
        user.insert(
            "dependencyCapacity".into(),
            json!({"redis": {"servers": {"cache": {"urlSecret": null}}}}),
        );
        resolve_values(
            &spec,
            None,
            &[ValuesSource::File {
                name: "no-cache.yaml".into(),
                values: user,
            }],
        )
    };
    check_values_schema(&values, &values_schema(&spec), "test").unwrap();
    assert_eq!(
        check_guards(&spec, &values)
            .iter()
            .filter(|f| f.severity == shipshape::guards::Severity::Error)
            .count(),
        0
    );
    let objects = parse_objects(
        &render_manifests(&spec, &build_objects(&spec), &values, &Release::default()).unwrap(),
    );
    assert_eq!(general_settings(&objects)["redis_bulk_url"], Value::Null);
    let env = env_of(deployment(
        &objects,
        &format!("release-name-{}-api", spec.chart.name),
    ));
    assert_eq!(env_value(&env, "DELTALLM_REDIS_BULK_URL"), None);
    let text =
        render_manifests(&spec, &build_objects(&spec), &values, &Release::default()).unwrap();
    assert!(!text.contains("os.environ/DELTALLM_REDIS_BULK_URL"));
}
