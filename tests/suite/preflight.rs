//! `shipshape preflight` against real servers (`servers.rs`): started with exactly the
//! limits the chart renders for the gateway's `evaluation` preset, then lowered, filled
//! by other clients, set to evict, and stopped.

use crate::servers::{Postgres, Redis};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

const PRESET: &str = "evaluation";
const PG_PASSWORD: &str = "pg-Secret-7f3a";
const KV_PASSWORD: &str = "kv-Secret-91cd";

fn gateway() -> PathBuf {
    crate::support::repo_root().join("examples/llm-gateway/shipshape.yaml")
}

fn preset_values() -> Value {
    let spec =
        shipshape::spec::load_spec(&std::fs::read_to_string(gateway()).unwrap(), "llm-gateway")
            .unwrap();
    shipshape::values::integral_numbers(
        &shipshape::capacity::fit::preset_values(&spec, Some(PRESET)).unwrap(),
    )
}

/// The container args of the bundled servers: PostgreSQL's, and each Redis server's
/// by name.
struct BundledArgs {
    postgres: Vec<String>,
    redis: BTreeMap<String, Vec<String>>,
}

/// The bundled servers' container args as the chart renders them for `PRESET`: the
/// preset is rendered natively (the suite proves the native render equals Helm 3's and
/// 4's), and the bundled StatefulSets are found by their component label. Valkey's
/// args lose the program name and `--requirepass $(VAR)`: the test server takes its
/// own password, and every other argument is passed as rendered.
fn bundled_server_args() -> BundledArgs {
    use shipshape::backends::native::{render_manifests, Release};
    let spec =
        shipshape::spec::load_spec(&std::fs::read_to_string(gateway()).unwrap(), "llm-gateway")
            .unwrap();
    let values = shipshape::capacity::fit::preset_values(&spec, Some(PRESET)).unwrap();
    let docs = shipshape::objects::build_objects(&spec);
    let text = render_manifests(&spec, &docs, &values, &Release::default()).unwrap();
    let objects = crate::support::parse_objects(&text);
    let args_of = |component: &str| -> Vec<String> {
        let set = objects
            .iter()
            .find(|o| {
                o["kind"] == "StatefulSet"
                    && o["metadata"]["labels"]["app.kubernetes.io/component"] == component
            })
            .unwrap_or_else(|| panic!("preset `{PRESET}` renders no StatefulSet `{component}`"));
        set["spec"]["template"]["spec"]["containers"][0]["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect()
    };
    let postgres = args_of("bundled-postgres");
    let redis = values["dependencyCapacity"]["redis"]["servers"]
        .as_object()
        .unwrap()
        .keys()
        .map(|name| {
            let rendered = args_of(&format!("bundled-valkey-{name}"));
            assert_eq!(rendered[0], "valkey-server", "{rendered:?}");
            let mut args = Vec::new();
            let mut it = rendered[1..].iter();
            while let Some(arg) = it.next() {
                if arg == "--requirepass" {
                    it.next();
                } else {
                    args.push(arg.clone());
                }
            }
            (name.clone(), args)
        })
        .collect();
    BundledArgs { postgres, redis }
}

/// The `-c name=value` settings of a PostgreSQL container's args (other args skipped).
fn postgres_settings(args: &[String]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let pair = if arg == "-c" {
            it.next().map(String::as_str)
        } else {
            arg.strip_prefix("-c")
                .or_else(|| arg.strip_prefix("--"))
                .filter(|p| p.contains('='))
        };
        if let Some((name, value)) = pair.and_then(|p| p.split_once('=')) {
            out.insert(name.replace('-', "_"), value.to_string());
        }
    }
    out
}

/// The `--name value` settings of a Redis (Valkey) container's args.
fn redis_settings(args: &[String]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut it = args.iter().peekable();
    while let Some(arg) = it.next() {
        if let Some(name) = arg.strip_prefix("--") {
            if let Some(value) = it.next_if(|v| !v.starts_with("--")) {
                out.insert(name.to_string(), value.clone());
            }
        }
    }
    out
}

/// `args` with the setting `name` given `value` (the form it is written in kept).
fn with_setting(args: &[String], name: &str, value: &str) -> Vec<String> {
    let mut out = args.to_vec();
    for i in 0..out.len() {
        if out[i].starts_with(&format!("{name}=")) {
            out[i] = format!("{name}={value}");
        } else if out[i] == format!("--{name}") && i + 1 < out.len() {
            out[i + 1] = value.to_string();
        }
    }
    assert_ne!(out, args, "`{name}` is not in {args:?}");
    out
}

#[test]
fn container_args_are_read_as_server_settings() {
    let args: Vec<String> = [
        "postgres",
        "-c",
        "max_connections=100",
        "-c",
        "superuser_reserved_connections=16",
        "-cshared_buffers=128MB",
    ]
    .map(String::from)
    .to_vec();
    let settings = postgres_settings(&args);
    assert_eq!(settings["max_connections"], "100");
    assert_eq!(settings["superuser_reserved_connections"], "16");
    assert_eq!(settings["shared_buffers"], "128MB");
    assert_eq!(settings.len(), 3, "{settings:?}");
    let lowered = with_setting(&args, "max_connections", "90");
    assert_eq!(postgres_settings(&lowered)["max_connections"], "90");

    let args: Vec<String> = [
        "--maxclients",
        "1024",
        "--maxmemory-policy",
        "noeviction",
        "--protected-mode",
        "no",
    ]
    .map(String::from)
    .to_vec();
    let settings = redis_settings(&args);
    assert_eq!(settings["maxclients"], "1024");
    assert_eq!(settings["maxmemory-policy"], "noeviction");
    assert_eq!(settings.len(), 3);
    let evicting = with_setting(&args, "maxmemory-policy", "allkeys-lru");
    assert_eq!(redis_settings(&evicting)["maxmemory-policy"], "allkeys-lru");
}

/// Runs `shipshape preflight --preset evaluation ARGS` with `envs`; (status, stdout,
/// stderr). No output may carry a password of the test servers.
fn preflight(args: &[&str], envs: &[(&str, String)]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_shipshape"));
    cmd.arg("--spec")
        .arg(gateway())
        .args(["preflight", "--preset", PRESET, "--timeout-seconds", "5"])
        .args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    for secret in [PG_PASSWORD, KV_PASSWORD, "wrong-Secret"] {
        assert!(
            !stdout.contains(secret) && !stderr.contains(secret),
            "a password reached the output:\n{stdout}\n{stderr}"
        );
    }
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

/// Whether the table `text` has the row `row` (`figure value from`), whatever the
/// column widths: runs of spaces count as one.
fn has_row(text: &str, row: &str) -> bool {
    let squeeze = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    text.lines().any(|l| squeeze(l) == row)
}

fn json(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}\n{stdout}"))
}

/// The check of `key` (`postgres`, `redis.critical`) in a JSON report.
fn server<'a>(report: &'a Value, key: &str) -> &'a Value {
    report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == key)
        .unwrap_or_else(|| panic!("no `{key}` in {report:#}"))
}

/// The three evaluation servers, started with the chart's args.
struct Evaluation {
    postgres: Postgres,
    critical: Redis,
    cache: Redis,
}

impl Evaluation {
    fn start(postgres_args: &[String], critical_args: &[String]) -> Evaluation {
        let args = bundled_server_args();
        Evaluation {
            postgres: Postgres::start(postgres_args, PG_PASSWORD),
            critical: Redis::start(critical_args, KV_PASSWORD),
            cache: Redis::start(&args.redis["cache"], KV_PASSWORD),
        }
    }

    fn envs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("TEST_PG_URL", self.postgres.url()),
            ("TEST_KV_CRITICAL", self.critical.url()),
            ("TEST_KV_CACHE", self.cache.url()),
        ]
    }

    fn run(&self, format: &str) -> (i32, String, String) {
        preflight(
            &[
                "--postgres",
                "env:TEST_PG_URL",
                "--redis",
                "critical=env:TEST_KV_CRITICAL",
                "--redis",
                "cache=env:TEST_KV_CACHE",
                "--format",
                format,
            ],
            &self.envs(),
        )
    }
}

/// Waits until the server counts `n` client backends of others (a closed
/// connection's backend ends a moment after the client is gone).
fn wait_for_others(servers: &Evaluation, n: u64) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (_, stdout, _) = servers.run("json");
        let report = json(&stdout);
        if server(&report, "postgres")["usedByOthers"] == n {
            return report;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "used by others never reached {n}: {report:#}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn the_evaluation_servers_hold_the_peak_until_other_clients_take_the_headroom() {
    let args = bundled_server_args();
    let mut servers = Evaluation::start(&args.postgres, &args.redis["critical"]);

    // The servers run with the limits the chart renders, which are the declared budgets.
    let declared = preset_values()["dependencyCapacity"].clone();
    let pg = postgres_settings(&args.postgres);
    assert_eq!(
        servers.postgres.show("max_connections"),
        pg["max_connections"]
    );
    assert_eq!(
        servers.postgres.show("max_connections"),
        declared["postgres"]["maxConnections"].to_string()
    );
    assert_eq!(
        servers.postgres.show("superuser_reserved_connections"),
        declared["postgres"]["reserve"].to_string()
    );
    for (name, redis) in [("critical", &servers.critical), ("cache", &servers.cache)] {
        let rendered = redis_settings(&args.redis[name]);
        let budget = &declared["redis"]["servers"][name];
        assert_eq!(redis.config_get("maxclients"), rendered["maxclients"]);
        assert_eq!(
            redis.config_get("maxclients"),
            budget["maxClients"].to_string()
        );
        assert_eq!(
            redis.config_get("maxmemory-policy"),
            rendered["maxmemory-policy"]
        );
        assert_eq!(
            redis.config_get("maxmemory-policy"),
            budget["maxmemoryPolicy"].as_str().unwrap()
        );
    }

    // The evaluation peak (84 of 100 - 16) fits exactly.
    let (code, stdout, stderr) = servers.run("table");
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let pg_at = format!(
        "PostgreSQL at 127.0.0.1:{} (PostgreSQL ",
        servers.postgres.port
    );
    assert!(stdout.starts_with(&pg_at), "{stdout}");
    for line in [
        "limit 100 `max_connections` (declared 100)",
        "used by others 0 `pg_stat_activity` client backends but preflight's own: none",
        "available 84 100 - 16 - 0",
        "peak 84 `shipshape capacity --preset evaluation`",
        "headroom 0 84 - 84",
        "verdict ok fits, 0 connections spare",
        "maxmemory-policy noeviction role critical, declared `noeviction`",
        "maxmemory-policy allkeys-lru role cache, declared `allkeys-lru`",
    ] {
        assert!(has_row(&stdout, line), "no {line:?} in:\n{stdout}");
    }
    let report = json(&servers.run("json").1);
    let critical = server(&report, "redis.critical");
    assert_eq!(critical["state"]["limit"], 1024);
    assert_eq!(critical["peak"], 192);
    assert_eq!(critical["usedByOthers"], 0);
    assert_eq!(report["unreachable"], serde_json::json!([]));
    assert_eq!(report["notChecked"], serde_json::json!([]));
    let markdown = servers.run("markdown").1;
    assert!(
        markdown.contains("| headroom | 0 | 84 - 84 |\n"),
        "{markdown}"
    );

    // Three connections of another client take three of the 0 spare: now it does not
    // fit, and the table says by how much.
    let held: Vec<postgres::Client> = (0..3)
        .map(|_| servers.postgres.connect("held-by-test").unwrap())
        .collect();
    let mut kv_held: Vec<redis::Connection> = (0..5)
        .map(|_| servers.critical.connect().unwrap())
        .collect();
    for con in &mut kv_held {
        let _: String = redis::cmd("PING").query(con).unwrap();
    }
    let (code, stdout, stderr) = servers.run("table");
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    for line in [
        "used by others 3 `pg_stat_activity` client backends but preflight's own: shipshape/held-by-test 3",
        "available 81 100 - 16 - 3",
        "headroom -3 81 - 84",
        "verdict FAIL does not fit: 3 connections short",
        // Five clients on the critical Redis take five of its 832 spare.
        "used by others 5 `connected_clients` but preflight's own",
        "headroom 827 1019 - 192",
    ] {
        assert!(has_row(&stdout, line), "no {line:?} in:\n{stdout}");
    }
    assert!(
        stderr.contains(&format!(
            "error: PostgreSQL at 127.0.0.1:{}: does not fit: 3 connections short",
            servers.postgres.port
        )),
        "{stderr}"
    );

    // Closed again, the server fits again.
    drop(held);
    drop(kv_held);
    let report = wait_for_others(&servers, 0);
    assert_eq!(server(&report, "postgres")["headroom"], 0);
    assert_eq!(servers.run("table").0, 0);

    // A wrong password is refused by the server, and not printed either.
    let (code, _, stderr) = preflight(
        &["--redis", "critical=env:TEST_KV_CRITICAL"],
        &[(
            "TEST_KV_CRITICAL",
            format!("redis://:wrong-Secret@127.0.0.1:{}", servers.critical.port),
        )],
    );
    assert_eq!(code, 3, "{stderr}");

    // A stopped server exits 3 and is named; the others are still checked.
    servers.cache.stop();
    let (code, stdout, stderr) = servers.run("table");
    assert_eq!(code, 3, "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: cannot reach Redis `cache` at 127.0.0.1:{}: ",
            servers.cache.port
        )),
        "{stderr}"
    );
    assert!(stdout.contains("Redis `critical` at"), "{stdout}");
    servers.postgres.stop();
    let (code, _, stderr) = servers.run("json");
    assert_eq!(code, 3);
    assert!(
        stderr.contains(&format!(
            "error: cannot reach PostgreSQL at 127.0.0.1:{}: error connecting to server",
            servers.postgres.port
        )),
        "{stderr}"
    );
}

#[test]
fn servers_started_below_the_peak_fail_with_the_numbers() {
    let args = bundled_server_args();
    let servers = Evaluation::start(
        &with_setting(&args.postgres, "max_connections", "90"),
        &with_setting(&args.redis["critical"], "maxclients", "150"),
    );
    assert_eq!(servers.postgres.show("max_connections"), "90");
    let (code, stdout, stderr) = servers.run("table");
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    for line in [
        "limit 90 `max_connections` (declared 100)",
        "available 74 90 - 16 - 0",
        "headroom -10 74 - 84",
        "verdict FAIL does not fit: 10 connections short",
        "limit 150 `maxclients` (declared 1024)",
        "headroom -42 150 - 192",
        "verdict FAIL does not fit: 42 clients short",
    ] {
        assert!(has_row(&stdout, line), "no {line:?} in:\n{stdout}");
    }
}

#[test]
fn a_critical_redis_that_evicts_fails_even_with_room() {
    let args = bundled_server_args();
    let critical = Redis::start(
        &with_setting(&args.redis["critical"], "maxmemory-policy", "allkeys-lru"),
        KV_PASSWORD,
    );
    let (code, stdout, stderr) = preflight(
        &["--redis", "critical=env:TEST_KV", "--format", "json"],
        &[("TEST_KV", critical.url())],
    );
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let report = json(&stdout);
    let check = server(&report, "redis.critical");
    assert_eq!(
        (check["fits"].clone(), check["evicts"].clone()),
        (true.into(), true.into())
    );
    assert_eq!(
        check["verdict"],
        "fits, 832 clients spare; evicts: `maxmemory-policy allkeys-lru` on a critical server, which must be `noeviction`"
    );
    assert_eq!(
        report["notChecked"],
        serde_json::json!([
            "PostgreSQL (no `--postgres`)",
            "Redis `cache` (no `--redis cache=...`)"
        ])
    );
}

#[test]
fn preflight_refuses_bad_arguments_before_connecting() {
    let dir = crate::support::Scratch::new("preflight-args");
    let secret_file = dir.path().join("url");
    std::fs::write(&secret_file, "\n").unwrap();
    let file_arg = format!("cache=file:{}", secret_file.display());
    let cases: [(&[&str], &str); 6] = [
        (&[], "name at least one server to check"),
        (
            &["--redis", "critcal=redis://127.0.0.1:1"],
            "the spec declares no Redis server `critcal`\n  hint: did you mean `critical`? the spec declares `cache`, `critical`",
        ),
        (
            &["--redis", "critical=redis://:kv-Secret-91cd@127.0.0.1:1"],
            "the Redis URL given to `--redis critical` carries a password",
        ),
        (
            &["--postgres", "postgresql://app:pg-Secret-7f3a@127.0.0.1:1/app"],
            "the PostgreSQL URL given to `--postgres` carries a password",
        ),
        (
            &["--postgres", "env:TEST_PREFLIGHT_UNSET"],
            "the environment variable `TEST_PREFLIGHT_UNSET` is not set",
        ),
        (&["--redis", &file_arg], "the file is empty"),
    ];
    for (args, message) in cases {
        let (code, stdout, stderr) = preflight(args, &[]);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert_eq!(stdout, "", "{args:?}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}
