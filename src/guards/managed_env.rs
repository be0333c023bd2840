//! `env.managed`: refuses user `env` setting a variable the chart manages,
//! `--workers`/`-w` or `NAME=` for a managed variable anywhere in `args`/`command`
//! (shell strings too), and `config.<section>` set directly. The chart derives the
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
    names.retain(|n| !n.is_empty());
    names.sort();
    names.dedup();
    names
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

/// `env.managed`: the variables the chart derives cannot be overridden by user `env`
/// (explicit env wins over `envFrom`, so those cannot either), user `args`/`command`
/// cannot set a worker count, and the startup settings section of `config` is the
/// chart's.
pub fn check(spec: &Spec, values: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    for (name, _) in spec.workloads.all() {
        let managed = managed_env_names(values, name);
        let w = values.get("workloads").and_then(|w| w.get(name));
        let user_env = w
            .and_then(|w| w.get("env"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
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
        for key in ["args", "command"] {
            let list = w
                .and_then(|w| w.get(key))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
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
                } else if sets_managed_variable(text, &managed) {
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
        if let Some(set) = values.get("config").and_then(|c| c.get(section)) {
            let plain_url = set.as_object().is_some_and(|m| {
                m.values().any(|v| {
                    v.as_str()
                        .is_some_and(|s| s.starts_with("redis://") || s.starts_with("rediss://"))
                })
            });
            out.push(Finding {
                rule: "env.managed",
                severity: Severity::Error,
                path: format!("config.{section}"),
                message: if plain_url {
                    format!("`config.{section}` is written by the chart, and a Redis URL must not be given in plain text")
                } else {
                    format!("`config.{section}` is written by the chart from `startupSettings` and the allocations")
                },
                arithmetic: None,
                hint: "set the deadlines under `startupSettings`, the sizes under the workloads' allocations, and a separate Redis server's URL as `dependencyCapacity.redis.servers.<name>.urlSecret` (a Secret reference)".into(),
            });
        }
    }
    out
}
