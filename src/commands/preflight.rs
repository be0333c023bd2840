//! `shipshape preflight`: reads the real PostgreSQL and Redis servers and compares them
//! with a preset's peak (`capacity::preflight` decides, `external::servers` reads).
//!
//! Server URLs: `env:VAR` (the URL is the variable's value), `file:PATH` (the file's
//! content, trailing whitespace removed, as a mounted Secret holds it), or the URL
//! itself, which is refused when it carries a password: a command line is visible to
//! every user of the machine (`ps`) and stays in shell history. No message prints a
//! URL; servers are named by `host:port`.

use super::{read_spec, resolve_for, CommandError, Exit, RenderOptions};
use crate::capacity::breakdown::{budget_uses, BudgetUse};
use crate::capacity::preflight::{
    check_server, declared_redis_servers, format_preflight_markdown, format_preflight_table,
    ServerCheck,
};
use crate::external::servers::{
    parse_postgres_url, parse_redis_url, read_postgres_limits, read_redis_limits, ServerError,
};
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// How `preflight` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreflightFormat {
    Table,
    Markdown,
    Json,
}

/// Options of `shipshape preflight`.
pub struct PreflightOptions {
    /// The preset, `-f` files and `--set` pairs whose peak is checked.
    pub values: RenderOptions,
    /// `--postgres`: `env:VAR`, `file:PATH` or a URL without a password.
    pub postgres: Option<String>,
    /// `--redis NAME=URL`, the URL written as for `--postgres`.
    pub redis: Vec<String>,
    pub format: PreflightFormat,
    /// How long each server may take to connect and answer.
    pub timeout: Duration,
}

/// A URL and where it came from (`env:VAR`, `file:PATH`, `` `--postgres` ``).
struct UrlSource {
    url: String,
    origin: String,
    literal: bool,
}

fn bad(message: String) -> CommandError {
    CommandError::BadArgument { message }
}

/// The URL `arg` names: an environment variable's value, a file's content, or itself.
fn read_url(arg: &str, flag: &str) -> Result<UrlSource, CommandError> {
    if let Some(var) = arg.strip_prefix("env:") {
        let url = std::env::var(var).map_err(|_| {
            bad(format!(
                "`{flag} env:{var}`: the environment variable `{var}` is not set (or not UTF-8)\n  hint: export it with the server's URL, e.g. from the Secret that holds it"
            ))
        })?;
        if url.trim().is_empty() {
            return Err(bad(format!(
                "`{flag} env:{var}`: the environment variable `{var}` is empty"
            )));
        }
        return Ok(UrlSource {
            url: url.trim().to_string(),
            origin: format!("`env:{var}`"),
            literal: false,
        });
    }
    if let Some(path) = arg.strip_prefix("file:") {
        let url = super::read_text(Path::new(path))?;
        if url.trim().is_empty() {
            return Err(bad(format!("`{flag} file:{path}`: the file is empty")));
        }
        return Ok(UrlSource {
            url: url.trim().to_string(),
            origin: format!("`file:{path}`"),
            literal: false,
        });
    }
    Ok(UrlSource {
        url: arg.to_string(),
        origin: format!("`{flag}`"),
        literal: true,
    })
}

/// `flag` as the hint writes it: `--postgres`, `--redis critical=`.
fn password_on_command_line(what: &str, flag: &str) -> CommandError {
    let sep = if flag.ends_with('=') { "" } else { " " };
    bad(format!(
        "the {what} URL given to `{}` carries a password, and a command line is visible to every user of the machine (`ps`) and kept in shell history; the password is not printed\n  hint: put the URL in an environment variable and pass `{flag}{sep}env:VAR`, or in a file and pass `{flag}{sep}file:PATH`",
        flag.trim_end_matches('=')
    ))
}

/// A URL that does not parse is bad input (reading a server comes later).
fn server_error(e: ServerError) -> CommandError {
    bad(e.to_string())
}

/// `shipshape capacity ...`: the command that shows the breakdown of the peak.
fn peak_from(values: &RenderOptions) -> String {
    let mut command = "shipshape capacity".to_string();
    if let Some(p) = &values.preset {
        command.push_str(&format!(" --preset {p}"));
    }
    for f in &values.values_files {
        command.push_str(&format!(" -f {}", f.display()));
    }
    if !values.set.is_empty() {
        command.push_str(" --set ...");
    }
    format!("`{command}`")
}

/// A server preflight could not read.
#[derive(Serialize)]
struct Unreached {
    key: String,
    error: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report<'a> {
    peak_from: String,
    servers: &'a [ServerCheck],
    unreachable: Vec<Unreached>,
    not_checked: Vec<String>,
}

/// `shipshape preflight`: one table per server; exit 1 when a server cannot hold the
/// peak or a critical Redis evicts, 3 when a server cannot be reached (the other
/// servers are still checked and printed), 2 for bad arguments (before connecting).
pub fn preflight(spec_path: &Path, options: &PreflightOptions) -> Result<Exit, CommandError> {
    if options.postgres.is_none() && options.redis.is_empty() {
        return Err(bad(
            "name at least one server to check\n  hint: pass `--postgres env:VAR` and/or `--redis NAME=env:VAR` (or `file:PATH`)".into(),
        ));
    }
    let spec = read_spec(spec_path)?;
    let values = resolve_for(&spec, &options.values)?;
    let capacity = crate::capacity::Capacity::of(&spec, &values);
    let report = capacity.report()?;
    let budgets = budget_uses(&capacity, &report)?;
    let declared = declared_redis_servers(&values);
    let redis_names: Vec<&str> = report
        .redis_servers
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();

    // Every argument is checked before any server is contacted.
    let postgres = match &options.postgres {
        None => None,
        Some(arg) => {
            let source = read_url(arg, "--postgres")?;
            let target = parse_postgres_url(&source.url, &source.origin).map_err(server_error)?;
            if source.literal && target.has_password() {
                return Err(password_on_command_line("PostgreSQL", "--postgres"));
            }
            Some(target)
        }
    };
    let mut redis = Vec::new();
    for arg in &options.redis {
        let Some((name, url_arg)) = arg.split_once('=') else {
            return Err(bad(format!(
                "`--redis` takes `NAME=URL`, got an argument without `=`\n  hint: e.g. `--redis critical=env:REDIS_URL`; the spec declares {}",
                names_list(&redis_names)
            )));
        };
        if !redis_names.contains(&name) {
            let hint = crate::spec::closest(name, &redis_names)
                .map(|c| format!("did you mean `{c}`? "))
                .unwrap_or_default();
            return Err(bad(format!(
                "`--redis {name}=...`: the spec declares no Redis server `{name}`\n  hint: {hint}the spec declares {}",
                names_list(&redis_names)
            )));
        }
        if redis.iter().any(|(n, _): &(&str, _)| *n == name) {
            return Err(bad(format!("`--redis {name}=...` is given twice")));
        }
        let source = read_url(url_arg, "--redis")?;
        let target = parse_redis_url(&source.url, &source.origin).map_err(server_error)?;
        if source.literal && target.has_password() {
            return Err(password_on_command_line(
                "Redis",
                &format!("--redis {name}="),
            ));
        }
        redis.push((name, target));
    }

    let budget = |key: &str| -> &BudgetUse {
        budgets
            .iter()
            .find(|b| b.key == key)
            .expect("every server of the report has a budget")
    };
    let mut checks = Vec::new();
    let mut unreachable = Vec::new();
    if let Some(target) = &postgres {
        let b = budget("postgres");
        match read_postgres_limits(target, &b.label, options.timeout) {
            Ok(state) => checks.push(check_server(b, None, target.address(), state)),
            Err(e) => unreachable.push(Unreached {
                key: b.key.clone(),
                error: e.to_string(),
            }),
        }
    }
    // In the report's order, whatever the order of the arguments.
    for name in &redis_names {
        let Some((_, target)) = redis.iter().find(|(n, _)| n == name) else {
            continue;
        };
        let b = budget(&format!("redis.{name}"));
        match read_redis_limits(target, &b.label, options.timeout) {
            Ok(state) => checks.push(check_server(
                b,
                declared.get(*name),
                target.address(),
                state,
            )),
            Err(e) => unreachable.push(Unreached {
                key: b.key.clone(),
                error: e.to_string(),
            }),
        }
    }
    let mut not_checked = Vec::new();
    if postgres.is_none() && budget("postgres").is_used() {
        not_checked.push("PostgreSQL (no `--postgres`)".to_string());
    }
    for name in &redis_names {
        if !redis.iter().any(|(n, _)| n == name) {
            not_checked.push(format!("Redis `{name}` (no `--redis {name}=...`)"));
        }
    }

    let from = peak_from(&options.values);
    let text = match options.format {
        PreflightFormat::Table => {
            let mut t = format_preflight_table(&checks, &from);
            if !not_checked.is_empty() {
                t.push_str(&format!("\nnot checked: {}\n", not_checked.join(", ")));
            }
            t
        }
        PreflightFormat::Markdown => {
            let mut t = format_preflight_markdown(&checks, &from);
            if !not_checked.is_empty() {
                t.push_str(&format!("\nNot checked: {}.\n", not_checked.join(", ")));
            }
            t
        }
        PreflightFormat::Json => {
            let json = Report {
                peak_from: from,
                servers: &checks,
                unreachable,
                not_checked,
            };
            let mut t = serde_json::to_string_pretty(&json).unwrap_or_default();
            t.push('\n');
            print!("{t}");
            return finish(&checks, &json.unreachable);
        }
    };
    print!("{text}");
    finish(&checks, &unreachable)
}

/// Prints the unreachable servers' errors; the exit code: 3 when a server could not be
/// read, else 1 when one fails, else 0.
fn finish(checks: &[ServerCheck], unreachable: &[Unreached]) -> Result<Exit, CommandError> {
    for u in unreachable {
        eprintln!("error: {}", u.error);
    }
    for c in checks.iter().filter(|c| !c.ok) {
        eprintln!("error: {} at {}: {}", c.label, c.address, c.verdict);
    }
    Ok(if !unreachable.is_empty() {
        Exit::ExternalTool
    } else if checks.iter().any(|c| !c.ok) {
        Exit::Findings
    } else {
        Exit::Ok
    })
}

fn names_list(names: &[&str]) -> String {
    if names.is_empty() {
        "no Redis server".to_string()
    } else {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
