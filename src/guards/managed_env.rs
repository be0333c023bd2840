//! `env.managed`: refuses user `env` setting a variable the chart manages,
//! `--workers`/`-w` or `NAME=` for a managed variable anywhere in `args`/`command`
//! (shell strings too), and the managed keys of `config.<section>` set directly. The chart derives the
//! worker counts, pool sizes, store and Redis URLs from the values the capacity and
//! replica guards check; a user override (explicit `env` wins over `envFrom`) would
//! run processes the budgets do not count. At install time `values.schema.json` says
//! `not`: the managed names in `env`, the worker flags and assignments by pattern, the
//! settings section in `config`.
//!
//! [`managed_env_names`], [`sets_workers`] and [`sets_managed_variable`] are public:
//! the install-time patterns are built from the same names and word rules.

use super::{Finding, Severity};
use crate::spec::Spec;
use serde_json::Value;

/// The environment variables the chart sets on a workload, from values.
pub fn managed_env_names(values: &Value, workload: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let w = values.get("workloads").and_then(|w| w.get(workload));
    names.extend(strings(w.and_then(|w| w.get("processEnv"))));
    for dependency in ["postgres", "redis"] {
        if let Some(allocations) = w.and_then(|w| w.get(dependency)).and_then(Value::as_object) {
            names.extend(
                allocations
                    .values()
                    .filter_map(|a| a.get("env").and_then(Value::as_str))
                    .map(str::to_string),
            );
        }
    }
    if let Some(m) = values.get("managedEnv").and_then(Value::as_object) {
        names.extend(m.values().filter_map(Value::as_str).map(str::to_string));
    }
    if let Some(m) = values.get("stores").and_then(Value::as_object) {
        names.extend(
            m.values()
                .filter_map(|s| s.get("env").and_then(Value::as_str))
                .map(str::to_string),
        );
    }
    if let Some(m) = values
        .get("dependencyCapacity")
        .and_then(|d| d.get("redis"))
        .and_then(|r| r.get("servers"))
        .and_then(Value::as_object)
    {
        names.extend(
            m.values()
                .filter_map(|s| s.get("urlEnv").and_then(Value::as_str))
                .map(str::to_string),
        );
    }
    if let Some(m) = values.get("featureSwitches").and_then(Value::as_object) {
        names.extend(
            m.values()
                .filter_map(|s| s.get("env").and_then(Value::as_str))
                .map(str::to_string),
        );
    }
    names.extend(
        [
            crate::model::POSTGRES_PASSWORD_ENV,
            crate::model::VALKEY_PASSWORD_ENV,
        ]
        .map(str::to_string),
    );
    if bundled_postgres_on(values) {
        names.extend(database_env_names(values));
    }
    names.retain(|n| !n.is_empty());
    names.sort();
    names.dedup();
    names
}

/// The keys of the startup settings section the chart writes (deadlines, stated
/// allocation sizes, feature switches, the cache URL): values may set every other key
/// of `config.<section>`.
pub fn managed_settings_keys(values: &Value) -> Vec<String> {
    let mut keys = Vec::new();
    let Some(settings) = values.get("startupSettings") else {
        return keys;
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    for budget in ["foreground", "background"] {
        for step in ["lock", "statement", "transaction"] {
            keys.extend(text(
                settings
                    .get(budget)
                    .and_then(|b| b.get(step))
                    .and_then(|s| s.get("key")),
            ));
        }
    }
    if let Some(deadlines) = settings.get("deadlines").and_then(Value::as_object) {
        keys.extend(deadlines.values().filter_map(|d| text(d.get("key"))));
    }
    keys.extend(text(settings.get("cacheUrlKey")));
    if let Some(from) = settings.get("sizesFrom").and_then(Value::as_str) {
        let w = values.get("workloads").and_then(|w| w.get(from));
        for dependency in ["postgres", "redis"] {
            if let Some(a) = w.and_then(|w| w.get(dependency)).and_then(Value::as_object) {
                keys.extend(a.values().filter_map(|a| text(a.get("setting"))));
            }
        }
    }
    if let Some(m) = values.get("featureSwitches").and_then(Value::as_object) {
        keys.extend(m.values().filter_map(|s| text(s.get("setting"))));
    }
    keys.retain(|k| !k.is_empty());
    keys.sort();
    keys.dedup();
    keys
}

/// Whether the bundled PostgreSQL runs (its URL variables are then the chart's).
pub fn bundled_postgres_on(values: &Value) -> bool {
    values
        .get("bundled")
        .and_then(|b| b.get("postgres"))
        .and_then(|p| p.get("enabled"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The variables the chart sets to the bundled PostgreSQL's URL, user and password
/// (the operator's own while it does not run).
pub fn database_env_names(values: &Value) -> Vec<String> {
    let pg = values
        .get("dependencyCapacity")
        .and_then(|d| d.get("postgres"));
    ["urlEnv", "userEnv", "passwordEnv"]
        .iter()
        .filter_map(|k| pg.and_then(|p| p.get(*k)).and_then(Value::as_str))
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether a character ends a word of a command line, in a shell string too: ASCII
/// white space (Go's `\s`) and shell punctuation. The same class as
/// [`crate::contract::schema::managed_args_pattern`].
fn is_arg_separator(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\x0c' | '\r' | ' ' | '\'' | '"' | '`' | ';' | '&' | '|' | '(' | ')'
    )
}

fn words(arg: &str) -> impl Iterator<Item = &str> {
    arg.split(is_arg_separator).filter(|w| !w.is_empty())
}

/// Whether a command-line argument sets the worker count anywhere in it, also inside
/// a shell string (`sh -c "exec app --workers 4"`): a word `--workers`, `--workers=4`
/// (or an abbreviation argparse accepts, down to `--wo`), `-w` or `-w4`.
pub fn sets_workers(arg: &str) -> bool {
    words(arg).any(|word| {
        let head = word.split('=').next().unwrap_or(word);
        let long = [
            "--wo",
            "--wor",
            "--work",
            "--worke",
            "--worker",
            "--workers",
        ]
        .contains(&head);
        let short = word
            .strip_prefix("-w")
            .is_some_and(|rest| rest.bytes().all(|b| b.is_ascii_digit()));
        long || short
    })
}

/// Whether a command-line argument assigns one of the managed variables (`NAME=...`)
/// anywhere in it, as a shell string or `env NAME=4 app` would.
pub fn sets_managed_variable(arg: &str, managed: &[String]) -> bool {
    words(arg).any(|word| {
        managed.iter().any(|m| {
            word.strip_prefix(m.as_str())
                .is_some_and(|r| r.starts_with('='))
        })
    })
}

/// The variables `args` and `command` may not set (`NAME=`): a workload's managed ones
/// and the database variables, which are refused in `args` even while the operator sets
/// them in `env` (the bundled server off); sorted, each once.
pub fn managed_arg_names(managed: &[String], database: &[String]) -> Vec<String> {
    let mut names: Vec<String> = managed.iter().chain(database).cloned().collect();
    names.sort();
    names.dedup();
    names
}

/// `env.managed`: the variables the chart derives cannot be overridden by user `env`
/// (explicit env wins over `envFrom`, so those cannot either), user `args`/`command`
/// cannot set a worker count, and the managed keys of the startup settings section of
/// `config` are the chart's (its other keys are the operator's).
pub fn check(spec: &Spec, values: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    // The database's variables, the same for every workload.
    let database_names = database_env_names(values);
    for (name, _) in spec.workloads.all() {
        let w = values.get("workloads").and_then(|w| w.get(name));
        let list = |key: &str| -> &[Value] {
            w.and_then(|w| w.get(key))
                .and_then(Value::as_array)
                .map_or(&[], Vec::as_slice)
        };
        let (user_env, args, command) = (list("env"), list("args"), list("command"));
        // Most workloads set none of them: then there is nothing to compare.
        if user_env.is_empty() && args.is_empty() && command.is_empty() {
            continue;
        }
        let managed = managed_env_names(values, name);
        let arg_names = managed_arg_names(&managed, &database_names);
        for (i, entry) in user_env.iter().enumerate() {
            let Some(var) = entry.get("name").and_then(Value::as_str) else {
                continue;
            };
            if managed.iter().any(|m| m == var) {
                out.push(Finding {
                    rule: "env.managed",
                    severity: Severity::Error,
                    path: format!("workloads.{name}.env[{i}]"),
                    message: format!("`{var}` is set by the chart from the values the capacity and replica guards check; a user `env` entry would override it"),
                    arithmetic: None,
                    hint: format!("remove `{var}` from `workloads.{name}.env` and change the value it is derived from instead"),
                });
            }
        }
        for (key, list) in [("args", args), ("command", command)] {
            for (i, arg) in list.iter().enumerate() {
                let text = arg.as_str().unwrap_or_default();
                if sets_workers(text) {
                    out.push(Finding {
                        rule: "env.managed",
                        severity: Severity::Error,
                        path: format!("workloads.{name}.{key}[{i}]"),
                        message: format!("`{}` starts processes the capacity budgets do not count", text.escape_debug()),
                        arithmetic: None,
                        hint: format!("remove it and set `workloads.{name}.processesPerPod`; the chart passes it as the workers variables"),
                    });
                } else if sets_managed_variable(text, &arg_names) {
                    out.push(Finding {
                        rule: "env.managed",
                        severity: Severity::Error,
                        path: format!("workloads.{name}.{key}[{i}]"),
                        message: format!("`{}` assigns a variable the chart manages", text.escape_debug()),
                        arithmetic: None,
                        hint: format!("remove the assignment and change the value it is derived from (`workloads.{name}.processesPerPod`, an allocation's size)"),
                    });
                }
            }
        }
    }
    if let Some(section) = values
        .get("startupSettings")
        .and_then(|s| s.get("section"))
        .and_then(Value::as_str)
    {
        let hint = "set the deadlines under `startupSettings`, the sizes under the workloads' allocations, the feature flags under `features`, and a separate Redis server's URL as `dependencyCapacity.redis.servers.<name>.urlSecret` (a Secret reference)";
        let managed = managed_settings_keys(values);
        // `config`, and each workload's overlay, which is merged over it before the
        // chart writes its managed keys.
        let mut sources = vec![("config".to_string(), values.get("config"))];
        for (name, _) in spec.workloads.all() {
            let overlay = values
                .get("workloads")
                .and_then(|w| w.get(name))
                .and_then(|w| w.get("configOverlay"));
            sources.push((format!("workloads.{name}.configOverlay"), overlay));
        }
        for (base, source) in sources {
            match source.and_then(|c| c.get(section)) {
                None | Some(Value::Null) => {}
                Some(Value::Object(set)) => {
                    for (key, v) in set {
                        let plain_url = v.as_str().is_some_and(|s| {
                            s.starts_with("redis://") || s.starts_with("rediss://")
                        });
                        let is_managed = managed.iter().any(|m| m == key);
                        if !is_managed && !plain_url {
                            continue;
                        }
                        out.push(Finding {
                            rule: "env.managed",
                            severity: Severity::Error,
                            path: format!("{base}.{section}.{key}"),
                            message: if plain_url {
                                format!("`{base}.{section}.{key}` gives a Redis URL in plain text")
                            } else {
                                format!("`{base}.{section}.{key}` is written by the chart from `startupSettings`, the allocations and the feature flags")
                            },
                            arithmetic: None,
                            hint: hint.into(),
                        });
                    }
                }
                Some(_) => out.push(Finding {
                    rule: "env.managed",
                    severity: Severity::Error,
                    path: format!("{base}.{section}"),
                    message: format!("`{base}.{section}` is not a mapping: the chart writes its managed keys into it"),
                    arithmetic: None,
                    hint: format!("write `{base}.{section}` as a mapping of the application's own settings"),
                }),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, places, values, with};
    use serde_json::json;

    /// The names `args` may not set are the managed and the database variables, each
    /// once, sorted.
    #[test]
    fn managed_arg_names_join_both_lists_sorted_once() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            managed_arg_names(&s(&["B", "D"]), &s(&["A", "B", "C"])),
            s(&["A", "B", "C", "D"])
        );
        assert_eq!(managed_arg_names(&[], &[]), Vec::<String>::new());
    }

    fn strings(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn managed_names_come_from_every_source_sorted_once_without_empty_names() {
        let values = json!({
            "workloads": {
                "web": {
                    "processEnv": ["WEB_CONCURRENCY", "UVICORN_WORKERS"],
                    "postgres": {"main": {"env": "DB_POOL"}, "other": {"size": 2}},
                    "redis": {"cache": {"env": "REDIS_POOL"}},
                },
                "other": {"processEnv": ["OTHER_ONLY"]},
            },
            "managedEnv": {"replicaMode": "REPLICA_MODE", "claiming": ""},
            "stores": {"sessions": {"backend": "memory", "env": "SESSION_STORE"}},
            "dependencyCapacity": {"redis": {"servers": {
                "cache": {"urlEnv": "CACHE_URL"},
                "critical": {"urlEnv": ""},
                "again": {"urlEnv": "DB_POOL"},
            }}, "postgres": {"urlEnv": "DATABASE_URL", "userEnv": "", "passwordEnv": "DB_PASSWORD"}},
            "featureSwitches": {"outbox": {"env": "OUTBOX_ON", "setting": "outbox"}},
            "bundled": {"postgres": {"enabled": true}},
        });
        assert_eq!(
            managed_env_names(&values, "web"),
            strings(&[
                "CACHE_URL",
                "DATABASE_URL",
                "DB_PASSWORD",
                "DB_POOL",
                "OUTBOX_ON",
                "REDIS_POOL",
                "REPLICA_MODE",
                "SESSION_STORE",
                "SHIPSHAPE_POSTGRES_PASSWORD",
                "SHIPSHAPE_VALKEY_PASSWORD",
                "UVICORN_WORKERS",
                "WEB_CONCURRENCY",
            ])
        );
        assert_eq!(
            managed_env_names(&json!({}), "web"),
            strings(&["SHIPSHAPE_POSTGRES_PASSWORD", "SHIPSHAPE_VALKEY_PASSWORD"])
        );
    }

    #[test]
    fn worker_flags_are_found_in_any_word_of_an_argument() {
        for arg in [
            "--workers",
            "--workers=4",
            "--wo",
            "--worker=2",
            "-w",
            "-w4",
            "exec app --workers 4",
            "sh -c 'exec app -w8'",
            "app;--workers=2",
            "a&&--wor\t2",
            "(--work)",
            "x|-w1",
            "\"--worke\"",
            "`-w`",
            "a\n--workers\r\x0c",
        ] {
            assert!(sets_workers(arg), "{arg:?}");
        }
    }

    #[test]
    fn other_flags_are_not_worker_flags() {
        for arg in [
            "",
            "--w",
            "--word",
            "--workersx",
            "--networkers=2",
            "-W4",
            "-wx",
            "-w4x",
            "--role=batch-worker",
            "app-w4",
            "x--workers",
        ] {
            assert!(!sets_workers(arg), "{arg:?}");
        }
    }

    #[test]
    fn assignments_of_managed_variables_are_found_in_any_word() {
        let managed = strings(&["WEB_CONCURRENCY", "DB_POOL"]);
        for arg in [
            "WEB_CONCURRENCY=4",
            "DB_POOL=",
            "env WEB_CONCURRENCY=4 app",
            "sh -c \"DB_POOL=2 exec app\"",
            "a;DB_POOL=1",
        ] {
            assert!(sets_managed_variable(arg, &managed), "{arg:?}");
        }
        for arg in [
            "",
            "WEB_CONCURRENCY",
            "WEB_CONCURRENCY_MAX=1",
            "MY_DB_POOL=1",
            "--name=DB_POOL=1",
            "OTHER=1",
        ] {
            assert!(!sets_managed_variable(arg, &managed), "{arg:?}");
        }
        assert!(!sets_managed_variable("WEB_CONCURRENCY=4", &[]));
    }

    fn agent_platform(changes: &[(&str, Value)]) -> Vec<Finding> {
        let spec = example("agent-platform");
        check(&spec, &with(values(&spec, None), changes))
    }

    #[test]
    fn the_examples_pass() {
        for name in ["agent-platform", "llm-gateway"] {
            let spec = example(name);
            assert_eq!(check(&spec, &values(&spec, None)), [], "{name}");
        }
    }

    #[test]
    fn user_env_setting_a_managed_variable_is_refused() {
        let findings = agent_platform(&[(
            "workloads.jobs.env",
            json!([
                {"name": "SPRING_PROFILES_ACTIVE", "value": "x"},
                {"name": "SPRING_DATASOURCE_HIKARI_MAXIMUMPOOLSIZE", "value": "50"},
                {"valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
                {"name": "APP_REPLICA_MODE", "value": "single"},
            ]),
        )]);
        assert_eq!(
            places(&findings),
            [
                ("env.managed", "workloads.jobs.env[1]".to_string()),
                ("env.managed", "workloads.jobs.env[3]".to_string()),
            ]
        );
        assert_eq!(findings[0].severity, Severity::Error);
        assert!(findings[1]
            .message
            .starts_with("`APP_REPLICA_MODE` is set by the chart"));
    }

    #[test]
    fn worker_flags_and_assignments_in_args_and_command_are_refused() {
        let findings = agent_platform(&[
            (
                "workloads.temporal.args",
                json!(["--port=8080", "--workers=4", 7]),
            ),
            (
                "workloads.temporal.command",
                json!(["sh", "-c", "APP_REPLICA_MODE=multi exec app"]),
            ),
        ]);
        assert_eq!(
            places(&findings),
            [
                ("env.managed", "workloads.temporal.args[1]".to_string()),
                ("env.managed", "workloads.temporal.command[2]".to_string()),
            ]
        );
        assert_eq!(
            findings[0].message,
            "`--workers=4` starts processes the capacity budgets do not count"
        );
        assert_eq!(
            findings[1].message,
            "`APP_REPLICA_MODE=multi exec app` assigns a variable the chart manages"
        );
    }

    fn gateway_config(section: Value) -> Vec<Finding> {
        let spec = example("llm-gateway");
        check(
            &spec,
            &with(values(&spec, None), &[("config.general_settings", section)]),
        )
    }

    #[test]
    fn a_managed_key_in_an_overlay_is_refused_and_other_keys_pass() {
        let spec = example("llm-gateway");
        let name = spec.workloads.all()[0].0;
        let overlay = |value: Value| {
            let path = format!("workloads.{name}.configOverlay");
            check(&spec, &with(values(&spec, None), &[(&path, value)]))
        };
        assert_eq!(overlay(json!({"router_settings": {"loops": false}})), []);
        assert_eq!(
            overlay(json!({"general_settings": {"background_loops": false}})),
            []
        );
        assert_eq!(
            places(&overlay(json!({"general_settings": {"db_pool_size": 3}}))),
            [(
                "env.managed",
                format!("workloads.{name}.configOverlay.general_settings.db_pool_size")
            )]
        );
    }

    #[test]
    fn a_managed_key_of_the_settings_section_is_refused_with_its_path() {
        for key in [
            "db_pool_size",
            "telemetry_db_pool_size",
            "db_lock_timeout_seconds",
            "durable_telemetry_enabled",
        ] {
            let findings = gateway_config(json!({ key: 5 }));
            assert_eq!(
                places(&findings),
                [("env.managed", format!("config.general_settings.{key}"))]
            );
            assert_eq!(
                findings[0].message,
                format!("`config.general_settings.{key}` is written by the chart from `startupSettings`, the allocations and the feature flags")
            );
        }
    }

    #[test]
    fn the_operators_own_keys_of_the_settings_section_are_free() {
        let own = json!({"store_model_in_db": true, "master_key": "os.environ/KEY", "ui_name": "gw", "nested": {"a": 1}});
        assert_eq!(gateway_config(own), []);
        assert_eq!(gateway_config(Value::Null), []);
    }

    #[test]
    fn a_settings_section_that_is_not_a_mapping_is_refused() {
        let findings = gateway_config(json!("db_pool_size: 5"));
        assert_eq!(
            places(&findings),
            [("env.managed", "config.general_settings".to_string())]
        );
    }

    #[test]
    fn the_managed_settings_keys_are_those_the_chart_writes() {
        let spec = example("llm-gateway");
        let keys = managed_settings_keys(&values(&spec, None));
        for key in [
            "db_pool_size",
            "spend_settlement_db_pool_size",
            "redis_bulk_url",
            "redis_critical_max_connections",
            "db_background_transaction_timeout_seconds",
            "redis_connect_timeout_seconds",
            "durable_telemetry_enabled",
        ] {
            assert!(keys.iter().any(|k| k == key), "{key} in {keys:?}");
        }
        assert_eq!(keys.len(), 20, "{keys:?}");
        assert_eq!(managed_settings_keys(&json!({})), Vec::<String>::new());
    }

    #[test]
    fn a_plain_redis_url_in_the_settings_section_is_named() {
        for url in ["redis://cache:6379", "rediss://cache:6380"] {
            for key in ["redis_bulk_url", "my_own_url"] {
                let findings = gateway_config(json!({ key: url }));
                assert_eq!(
                    findings[0].message,
                    format!("`config.general_settings.{key}` gives a Redis URL in plain text"),
                    "{url}"
                );
            }
        }
    }

    #[test]
    fn the_database_variables_are_managed_only_while_the_bundled_postgres_runs() {
        let spec = example("llm-gateway");
        let env = json!([{"name": "DATABASE_URL", "value": "postgresql://external/db"}]);
        let external = with(values(&spec, None), &[("workloads.api.env", env.clone())]);
        assert_eq!(check(&spec, &external), []);
        let bundled = with(
            values(&spec, Some("evaluation")),
            &[("workloads.api.env", env)],
        );
        assert_eq!(
            places(&check(&spec, &bundled)),
            [("env.managed", "workloads.api.env[0]".to_string())]
        );
        let args = json!(["DATABASE_URL=postgresql://x/db"]);
        let in_args = with(values(&spec, None), &[("workloads.api.args", args)]);
        assert_eq!(
            places(&check(&spec, &in_args)),
            [("env.managed", "workloads.api.args[0]".to_string())]
        );
    }

    #[test]
    fn config_is_free_without_startup_settings() {
        assert_eq!(
            agent_platform(&[("config.general_settings", json!({"db_pool_size": 5}))]),
            []
        );
    }
}
