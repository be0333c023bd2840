//! `dependencies.bundled`: refuses a bundled evaluation server that would not enforce
//! the budget the capacity guards checked. A bundled server has no limit of its own:
//! the chart renders PostgreSQL's `max_connections` and
//! `superuser_reserved_connections` from `dependencyCapacity.postgres.maxConnections`
//! and `reserve`, and a Valkey server's `--maxclients` and `--maxmemory-policy` from
//! its `dependencyCapacity.redis.servers.<name>.maxClients` and `maxmemoryPolicy`, the
//! values paths `capacity.postgres` and `capacity.redis` read. What is left are the
//! values a server would refuse or silently change, so that its real limit would
//! differ from the budget: PostgreSQL refuses to start unless the reserve is below
//! `max_connections`, and accepts at most its backend limit; Valkey takes no
//! `maxclients` of 0 (0 means "unchecked" in the budget), lowers one above its
//! open-file limit, and knows only its own eviction policies. A `pre` migrate hook
//! is refused too: it runs before the bundled PostgreSQL exists.
//!
//! At install time `values.schema.json` has, per capacity plan, `if` the bundled
//! PostgreSQL runs `then` `maxConnections` at least the plan's reserve bound + 1 and
//! at most the backend limit, and per bundled Valkey `maxClients` in
//! `[1, 65504]` and `maxmemoryPolicy` one of Valkey's policies; an enabled migrate
//! hook's `hookPhase` is `post` while the bundled PostgreSQL runs.

use super::{Finding, Severity};
use crate::model::{POSTGRES_MAX_CONNECTIONS, VALKEY_MAX_CLIENTS, VALKEY_POLICIES};
use crate::spec::Spec;
use serde_json::Value;

/// A `pre` migrate hook runs before the release's objects exist, the bundled
/// PostgreSQL among them: on a first install it would find no database.
fn pre_hooks_without_database(spec: &Spec, values: &Value) -> Vec<Finding> {
    spec.workloads
        .migrate
        .keys()
        .filter(|name| {
            let w = values.get("workloads").and_then(|w| w.get(name.as_str()));
            let enabled = w
                .and_then(|w| w.get("enabled"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let phase = w.and_then(|w| w.get("hookPhase")).and_then(Value::as_str);
            enabled && phase != Some("post")
        })
        .map(|name| Finding {
            rule: "dependencies.bundled",
            severity: Severity::Error,
            path: format!("workloads.{name}.hookPhase"),
            message: format!("the `{name}` hook runs before the release's objects exist, so on a first install the bundled PostgreSQL is not there yet"),
            arithmetic: None,
            hint: format!("set `workloads.{name}.hookPhase: post` while `bundled.postgres.enabled`"),
        })
        .collect()
}

fn number(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64)
}

fn on(values: &Value, path: &[&str]) -> bool {
    path.iter()
        .try_fold(values, |v, k| v.get(*k))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// `dependencies.bundled`: every bundled server enforces the declared budget.
pub fn check(spec: &Spec, values: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    let capacity = values.get("dependencyCapacity");
    if on(values, &["bundled", "postgres", "enabled"]) {
        out.extend(pre_hooks_without_database(spec, values));
        let pg = capacity.and_then(|c| c.get("postgres"));
        let max = number(pg.and_then(|p| p.get("maxConnections"))).unwrap_or(0.0);
        let reserve = number(pg.and_then(|p| p.get("reserve"))).unwrap_or(0.0);
        if reserve >= max {
            out.push(Finding {
                rule: "dependencies.bundled",
                severity: Severity::Error,
                path: "dependencyCapacity.postgres.reserve".into(),
                message: "the bundled PostgreSQL would refuse to start: its `superuser_reserved_connections` (the reserve) must be less than `max_connections`".into(),
                arithmetic: Some(format!("reserve {reserve} >= maxConnections {max}")),
                hint: format!("raise `dependencyCapacity.postgres.maxConnections` to at least {} or lower the reserve", reserve + 1.0),
            });
        }
        if max > POSTGRES_MAX_CONNECTIONS as f64 {
            out.push(Finding {
                rule: "dependencies.bundled",
                severity: Severity::Error,
                path: "dependencyCapacity.postgres.maxConnections".into(),
                message: format!("the bundled PostgreSQL cannot run with {max} connections: it accepts at most {POSTGRES_MAX_CONNECTIONS} with its background processes"),
                arithmetic: Some(format!("maxConnections {max} > {POSTGRES_MAX_CONNECTIONS}")),
                hint: "an evaluation server needs far fewer; lower the budget, or use an external server (`bundled.postgres.enabled: false`)".into(),
            });
        }
    }
    let servers = capacity
        .and_then(|c| c.get("redis"))
        .and_then(|r| r.get("servers"));
    let bundled = values
        .get("bundled")
        .and_then(|b| b.get("redis"))
        .and_then(Value::as_object);
    for (server, b) in bundled.into_iter().flatten() {
        if !b.get("enabled").and_then(Value::as_bool).unwrap_or(false) {
            continue;
        }
        let declared = servers.and_then(|s| s.get(server));
        let path = format!("dependencyCapacity.redis.servers.{server}");
        let Some(declared) = declared else {
            out.push(Finding {
                rule: "dependencies.bundled",
                severity: Severity::Error,
                path: format!("bundled.redis.{server}"),
                message: format!("`{server}` is not a declared Redis server: a bundled server takes its limit from the declaration"),
                arithmetic: None,
                hint: "bundle one of the servers under `dependencyCapacity.redis.servers`".into(),
            });
            continue;
        };
        let clients = number(declared.get("maxClients")).unwrap_or(0.0);
        if clients < 1.0 {
            out.push(Finding {
                rule: "dependencies.bundled",
                severity: Severity::Error,
                path: format!("{path}.maxClients"),
                message: format!("the bundled Valkey `{server}` needs a client limit: `maxClients: 0` means unchecked, and Valkey refuses `--maxclients 0`"),
                arithmetic: None,
                hint: format!("declare `{path}.maxClients` (at least the peak `capacity.redis` reports)"),
            });
        } else if clients > VALKEY_MAX_CLIENTS as f64 {
            out.push(Finding {
                rule: "dependencies.bundled",
                severity: Severity::Error,
                path: format!("{path}.maxClients"),
                message: format!("the bundled Valkey `{server}` would lower `--maxclients {clients}` to what its open-file limit allows, so its real limit would differ from the budget"),
                arithmetic: Some(format!("maxClients {clients} > {VALKEY_MAX_CLIENTS} (65536 open files - 32 Valkey keeps)")),
                hint: format!("declare at most {VALKEY_MAX_CLIENTS} clients for an evaluation server"),
            });
        }
        let policy = declared
            .get("maxmemoryPolicy")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !VALKEY_POLICIES.contains(&policy) {
            out.push(Finding {
                rule: "dependencies.bundled",
                severity: Severity::Error,
                path: format!("{path}.maxmemoryPolicy"),
                message: format!(
                    "the bundled Valkey `{server}` would refuse the eviction policy `{policy}`"
                ),
                arithmetic: None,
                hint: format!(
                    "declare one of {} in `shipshape.yaml`",
                    VALKEY_POLICIES.join(", ")
                ),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, places, values, with};
    use serde_json::json;

    fn gateway(changes: &[(&str, Value)]) -> Vec<Finding> {
        let spec = example("llm-gateway");
        check(&spec, &with(values(&spec, Some("evaluation")), changes))
    }

    #[test]
    fn the_evaluation_presets_bundle_servers_that_hold_their_budgets() {
        for (name, preset) in [
            ("llm-gateway", "evaluation"),
            ("agent-platform", "evaluation"),
        ] {
            let spec = example(name);
            let v = values(&spec, Some(preset));
            assert_eq!(v["bundled"]["postgres"]["enabled"], json!(true), "{name}");
            assert_eq!(check(&spec, &v), [], "{name}");
        }
    }

    #[test]
    fn a_reserve_equal_to_max_connections_is_refused_one_below_passes() {
        let at = gateway(&[
            ("dependencyCapacity.postgres.maxConnections", json!(16.0)),
            ("dependencyCapacity.postgres.reserve", json!(16.0)),
        ]);
        assert_eq!(
            places(&at),
            [(
                "dependencies.bundled",
                "dependencyCapacity.postgres.reserve".to_string()
            )]
        );
        assert_eq!(
            at[0].arithmetic.as_deref(),
            Some("reserve 16 >= maxConnections 16")
        );
        assert!(at[0].hint.contains("at least 17"), "{}", at[0].hint);
        let below = gateway(&[
            ("dependencyCapacity.postgres.maxConnections", json!(17.0)),
            ("dependencyCapacity.postgres.reserve", json!(16.0)),
        ]);
        assert_eq!(below, []);
    }

    #[test]
    fn the_postgres_backend_limit_is_the_last_accepted_value() {
        let at = json!(POSTGRES_MAX_CONNECTIONS as f64);
        assert_eq!(
            gateway(&[("dependencyCapacity.postgres.maxConnections", at)]),
            []
        );
        let over = json!(POSTGRES_MAX_CONNECTIONS as f64 + 1.0);
        let findings = gateway(&[("dependencyCapacity.postgres.maxConnections", over)]);
        assert_eq!(
            places(&findings),
            [(
                "dependencies.bundled",
                "dependencyCapacity.postgres.maxConnections".to_string()
            )]
        );
    }

    #[test]
    fn an_external_postgres_is_not_checked() {
        let findings = gateway(&[
            ("bundled.postgres.enabled", json!(false)),
            ("dependencyCapacity.postgres.maxConnections", json!(5.0)),
            ("dependencyCapacity.postgres.reserve", json!(5.0)),
        ]);
        assert_eq!(findings, []);
    }

    #[test]
    fn valkey_client_limits_between_1_and_65504_pass() {
        let path = "dependencyCapacity.redis.servers.critical.maxClients";
        for ok in [1.0, VALKEY_MAX_CLIENTS as f64] {
            assert_eq!(gateway(&[(path, json!(ok))]), [], "{ok}");
        }
        for bad in [0.0, VALKEY_MAX_CLIENTS as f64 + 1.0] {
            let findings = gateway(&[(path, json!(bad))]);
            assert_eq!(
                places(&findings),
                [("dependencies.bundled", path.to_string())],
                "{bad}"
            );
        }
    }

    #[test]
    fn a_server_that_is_not_bundled_is_not_checked() {
        let findings = gateway(&[
            ("bundled.redis.cache.enabled", json!(false)),
            (
                "dependencyCapacity.redis.servers.cache.maxClients",
                json!(0.0),
            ),
            (
                "dependencyCapacity.redis.servers.cache.maxmemoryPolicy",
                json!(""),
            ),
        ]);
        assert_eq!(findings, []);
    }

    #[test]
    fn a_pre_migrate_hook_is_refused_with_the_bundled_postgres() {
        let spec = example("agent-platform");
        let eval = values(&spec, Some("evaluation"));
        let pre = with(
            eval.clone(),
            &[("workloads.migrate.hookPhase", json!("pre"))],
        );
        assert_eq!(
            places(&check(&spec, &pre)),
            [(
                "dependencies.bundled",
                "workloads.migrate.hookPhase".to_string()
            )]
        );
        let off = with(pre.clone(), &[("workloads.migrate.enabled", json!(false))]);
        assert_eq!(check(&spec, &off), []);
        let external = with(pre, &[("bundled.postgres.enabled", json!(false))]);
        assert_eq!(check(&spec, &external), []);
    }

    #[test]
    fn an_unknown_policy_or_an_undeclared_server_is_refused() {
        let findings = gateway(&[(
            "dependencyCapacity.redis.servers.cache.maxmemoryPolicy",
            json!("allkeys-fifo"),
        )]);
        assert_eq!(
            places(&findings),
            [(
                "dependencies.bundled",
                "dependencyCapacity.redis.servers.cache.maxmemoryPolicy".to_string()
            )]
        );
        assert!(findings[0].message.contains("`allkeys-fifo`"));
        let findings = gateway(&[("bundled.redis.other", json!({"enabled": true}))]);
        assert_eq!(
            places(&findings),
            [("dependencies.bundled", "bundled.redis.other".to_string())]
        );
    }
}
