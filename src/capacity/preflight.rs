//! `shipshape preflight`'s verdict: what a real server offers (its limit, the slots it
//! keeps reserved, the connections others already hold) against a preset's peak on
//! it. Pure: `external/servers.rs` reads a [`ServerState`] from the server,
//! [`check_server`] compares it with the preset's [`BudgetUse`], and
//! [`format_preflight_table`] / [`format_preflight_markdown`] print the result.
//!
//! The arithmetic: `available = limit - reserved - used by others`, `headroom =
//! available - peak`; the server fits when the headroom is not negative. For
//! PostgreSQL, `reserved` is the larger of the server's reserved slots
//! (`superuser_reserved_connections` + `reserved_connections`) and the spec's declared
//! `reserve`, which the spec keeps free for the same slots and operating headroom.
//! Connections others already hold count in addition to the spec's reservations, which
//! plan for clients that may connect later. A critical Redis server also fails when
//! its `maxmemory-policy` is not `noeviction`.

use crate::capacity::breakdown::BudgetUse;
use crate::model::{RedisRole, RedisServer};
use serde::Serialize;
use std::collections::BTreeMap;

/// One group of connections other clients hold: a PostgreSQL role and application,
/// or all of a Redis server's other clients.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OtherClients {
    /// Who: `role/application` (PostgreSQL), `clients` (Redis).
    pub name: String,
    /// Connections held.
    pub connections: u64,
}

/// A setting that reserves connection slots, and its value (`None`: the server's
/// version has no such setting).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReservedSlots {
    pub setting: String,
    pub value: Option<u64>,
}

/// What preflight read from a real server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerState {
    /// The server's software and version, e.g. `PostgreSQL 15.18`, `Redis 7.0.15`.
    pub version: String,
    /// The setting that limits connections and its value (`max_connections`,
    /// `maxclients`).
    pub limit_setting: String,
    /// Its value.
    pub limit: u64,
    /// The settings that reserve slots; empty for Redis.
    pub reserved_slots: Vec<ReservedSlots>,
    /// The connections other clients hold now, preflight's own left out.
    pub others: Vec<OtherClients>,
    /// Redis's `maxmemory-policy` (`None` for PostgreSQL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maxmemory_policy: Option<String>,
}

impl ServerState {
    /// Connections others hold, in all.
    #[must_use]
    pub fn used_by_others(&self) -> u64 {
        self.others.iter().map(|o| o.connections).sum()
    }

    /// The server's reserved slots, in all.
    #[must_use]
    pub fn server_reserved(&self) -> u64 {
        self.reserved_slots.iter().filter_map(|r| r.value).sum()
    }
}

/// The verdict on one server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCheck {
    /// The budget's key: `postgres` or `redis.<server>`.
    pub key: String,
    /// For people: `PostgreSQL`, `Redis` and the server's name in backticks.
    pub label: String,
    /// Where it was reached: `host:port` (never credentials).
    pub address: String,
    /// `connections` or `clients`.
    pub unit: String,
    /// What the server reported.
    pub state: ServerState,
    /// The preset's declared limit for this server (`None`: not declared).
    pub declared_limit: Option<u64>,
    /// The preset's declared reserve (PostgreSQL; 0 for Redis).
    pub declared_reserve: u64,
    /// Slots kept free: the larger of the server's reserved slots and the declared
    /// reserve.
    pub reserved: u64,
    /// Connections others hold now.
    pub used_by_others: u64,
    /// `limit - reserved - used by others` (negative when others hold more).
    pub available: i128,
    /// The preset's peak on this server (workloads and reservations).
    pub peak: u64,
    /// `available - peak`: negative when the server cannot hold the peak.
    pub headroom: i128,
    /// The declared role of a Redis server (`critical`, `cache`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The declared `maxmemoryPolicy` of a Redis server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub declared_policy: Option<String>,
    /// Whether the server holds the peak.
    pub fits: bool,
    /// Whether a server declared critical evicts keys (its policy is not `noeviction`).
    pub evicts: bool,
    /// Whether the server passes: it holds the peak and does not evict critical state.
    pub ok: bool,
    /// The verdict in words.
    pub verdict: String,
}

/// The Redis servers the resolved values declare, by name.
#[must_use]
pub fn declared_redis_servers(values: &serde_json::Value) -> BTreeMap<String, RedisServer> {
    values
        .pointer("/dependencyCapacity/redis/servers")
        .and_then(|s| serde::Deserialize::deserialize(crate::values::WholeNumbers(s)).ok())
        .unwrap_or_default()
}

/// Compares one server with the preset's budget on it. `declared` is the Redis
/// server's declaration (`None` for PostgreSQL).
#[must_use]
pub fn check_server(
    budget: &BudgetUse,
    declared: Option<&RedisServer>,
    address: &str,
    state: ServerState,
) -> ServerCheck {
    let used_by_others = state.used_by_others();
    let reserved = state.server_reserved().max(budget.reserve);
    let available = i128::from(state.limit) - i128::from(reserved) - i128::from(used_by_others);
    let headroom = available - i128::from(budget.peak);
    let fits = headroom >= 0;
    let role = declared.and_then(|d| d.role);
    let policy = state.maxmemory_policy.clone().unwrap_or_default();
    let evicts = role == Some(RedisRole::Critical) && policy != "noeviction";
    let mut verdict = Vec::new();
    if fits {
        verdict.push(format!("fits, {headroom} {} spare", budget.unit));
    } else {
        verdict.push(format!("does not fit: {} {} short", -headroom, budget.unit));
    }
    if evicts {
        verdict.push(format!(
            "evicts: `maxmemory-policy {policy}` on a critical server, which must be `noeviction`"
        ));
    }
    ServerCheck {
        key: budget.key.clone(),
        label: budget.label.clone(),
        address: address.to_string(),
        unit: budget.unit.clone(),
        state,
        declared_limit: budget.limit,
        declared_reserve: budget.reserve,
        reserved,
        used_by_others,
        available,
        peak: budget.peak,
        headroom,
        role: role.map(|r| match r {
            RedisRole::Critical => "critical".to_string(),
            RedisRole::Cache => "cache".to_string(),
        }),
        declared_policy: declared
            .map(|d| d.maxmemory_policy.clone())
            .filter(|p| !p.is_empty()),
        fits,
        evicts,
        ok: fits && !evicts,
        verdict: verdict.join("; "),
    }
}

/// One row of a server's table: the figure, its value, where it comes from.
fn rows(check: &ServerCheck, peak_from: &str) -> Vec<[String; 3]> {
    let s = &check.state;
    let declared_limit = check
        .declared_limit
        .map_or_else(|| "none declared".to_string(), |l| format!("declared {l}"));
    let mut out = vec![[
        "limit".to_string(),
        s.limit.to_string(),
        format!("`{}` ({declared_limit})", s.limit_setting),
    ]];
    let server_parts = s
        .reserved_slots
        .iter()
        .map(|r| match r.value {
            Some(v) => format!("`{}` {v}", r.setting),
            None => format!("`{}` (not in this version)", r.setting),
        })
        .collect::<Vec<_>>()
        .join(" + ");
    let reserved_from = match (check.key == "postgres", server_parts.is_empty()) {
        (true, false) => format!(
            "the larger of {server_parts} and the spec's reserve {}",
            check.declared_reserve
        ),
        (true, true) => format!("the spec's reserve {}", check.declared_reserve),
        (false, false) => server_parts,
        (false, true) => "the server reserves no slots".to_string(),
    };
    out.push([
        "reserved".to_string(),
        check.reserved.to_string(),
        reserved_from,
    ]);
    let others = if check.key.starts_with("redis") {
        "`connected_clients` but preflight's own".to_string()
    } else if s.others.is_empty() {
        "`pg_stat_activity` client backends but preflight's own: none".to_string()
    } else {
        let who: Vec<String> = s
            .others
            .iter()
            .map(|o| format!("{} {}", o.name, o.connections))
            .collect();
        format!(
            "`pg_stat_activity` client backends but preflight's own: {}",
            who.join(", ")
        )
    };
    out.push([
        "used by others".to_string(),
        check.used_by_others.to_string(),
        others,
    ]);
    out.push([
        "available".to_string(),
        check.available.to_string(),
        format!(
            "{} - {} - {}",
            s.limit, check.reserved, check.used_by_others
        ),
    ]);
    out.push([
        "peak".to_string(),
        check.peak.to_string(),
        peak_from.to_string(),
    ]);
    out.push([
        "headroom".to_string(),
        check.headroom.to_string(),
        format!("{} - {}", check.available, check.peak),
    ]);
    if let Some(policy) = &s.maxmemory_policy {
        let declared = match (&check.role, &check.declared_policy) {
            (Some(role), Some(p)) => format!("role {role}, declared `{p}`"),
            (Some(role), None) => format!("role {role}"),
            (None, Some(p)) => format!("declared `{p}`"),
            (None, None) => "no role declared".to_string(),
        };
        out.push(["maxmemory-policy".to_string(), policy.clone(), declared]);
    }
    out.push([
        "verdict".to_string(),
        if check.ok { "ok" } else { "FAIL" }.to_string(),
        check.verdict.clone(),
    ]);
    out
}

fn title(check: &ServerCheck) -> String {
    format!(
        "{} at {} ({})",
        check.label, check.address, check.state.version
    )
}

/// The checks as plain text: one table per server (figure, value, where it comes
/// from), values right-aligned. `peak_from` says where the peak comes from (the
/// `shipshape capacity` command that shows its breakdown).
#[must_use]
pub fn format_preflight_table(checks: &[ServerCheck], peak_from: &str) -> String {
    let mut out = String::new();
    for (i, check) in checks.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&title(check));
        out.push('\n');
        let rows = rows(check, peak_from);
        let name_width = rows.iter().map(|r| r[0].chars().count()).max().unwrap_or(0);
        let value_width = rows.iter().map(|r| r[1].chars().count()).max().unwrap_or(0);
        for [name, value, from] in rows {
            let line = format!("  {name:<name_width$}  {value:>value_width$}  {from}");
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out
}

/// The checks as Markdown: a heading and a table per server.
#[must_use]
pub fn format_preflight_markdown(checks: &[ServerCheck], peak_from: &str) -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = String::new();
    for (i, check) in checks.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("### {}\n\n", cell(&title(check))));
        out.push_str("| | value | from |\n| --- | ---: | --- |\n");
        for [name, value, from] in rows(check, peak_from) {
            out.push_str(&format!(
                "| {} | {} | {} |\n",
                cell(&name),
                cell(&value),
                cell(&from)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::breakdown::preset_budget_uses;
    use crate::capacity::fit::preset_values;
    use crate::spec::load_spec;

    fn gateway_budgets() -> (Vec<BudgetUse>, BTreeMap<String, RedisServer>) {
        let text = include_str!("../../examples/llm-gateway/shipshape.yaml");
        let spec = load_spec(text, "llm-gateway").unwrap();
        let values = preset_values(&spec, Some("evaluation")).unwrap();
        (
            preset_budget_uses(&spec, &values).unwrap(),
            declared_redis_servers(&values),
        )
    }

    fn postgres(limit: u64, superuser: u64, reserved: Option<u64>, others: u64) -> ServerState {
        ServerState {
            version: "PostgreSQL 16.4".into(),
            limit_setting: "max_connections".into(),
            limit,
            reserved_slots: vec![
                ReservedSlots {
                    setting: "superuser_reserved_connections".into(),
                    value: Some(superuser),
                },
                ReservedSlots {
                    setting: "reserved_connections".into(),
                    value: reserved,
                },
            ],
            others: if others == 0 {
                vec![]
            } else {
                vec![OtherClients {
                    name: "ops/psql".into(),
                    connections: others,
                }]
            },
            maxmemory_policy: None,
        }
    }

    fn redis(limit: u64, policy: &str, others: u64) -> ServerState {
        ServerState {
            version: "Redis 7.0.15".into(),
            limit_setting: "maxclients".into(),
            limit,
            reserved_slots: vec![],
            others: vec![OtherClients {
                name: "clients".into(),
                connections: others,
            }],
            maxmemory_policy: Some(policy.into()),
        }
    }

    #[test]
    fn the_evaluation_peak_fits_exactly_the_evaluation_server() {
        let (budgets, _) = gateway_budgets();
        let check = check_server(&budgets[0], None, "db:5432", postgres(100, 16, None, 0));
        assert_eq!((check.reserved, check.available, check.peak), (16, 84, 84));
        assert_eq!(check.headroom, 0);
        assert!(check.ok, "{}", check.verdict);
        assert_eq!(check.verdict, "fits, 0 connections spare");
    }

    #[test]
    fn connections_others_hold_take_the_headroom() {
        let (budgets, _) = gateway_budgets();
        let check = check_server(&budgets[0], None, "db:5432", postgres(110, 3, None, 4));
        // The declared reserve (16) is larger than the server's 3 reserved slots.
        assert_eq!((check.reserved, check.used_by_others), (16, 4));
        assert_eq!((check.available, check.headroom), (90, 6));
        assert!(check.ok);
        let check = check_server(&budgets[0], None, "db:5432", postgres(110, 3, None, 11));
        assert_eq!((check.available, check.headroom), (83, -1));
        assert!(!check.ok);
        assert_eq!(check.verdict, "does not fit: 1 connections short");
    }

    #[test]
    fn the_servers_reserved_slots_count_when_larger_than_the_declared_reserve() {
        let (budgets, _) = gateway_budgets();
        let check = check_server(&budgets[0], None, "db:5432", postgres(120, 10, Some(10), 0));
        assert_eq!(check.reserved, 20);
        assert_eq!(check.headroom, 120 - 20 - 84);
        let text = format_preflight_table(&[check], "evaluation");
        assert!(
            text.contains("the larger of `superuser_reserved_connections` 10 + `reserved_connections` 10 and the spec's reserve 16"),
            "{text}"
        );
    }

    #[test]
    fn a_critical_redis_that_evicts_fails_even_with_room() {
        let (budgets, servers) = gateway_budgets();
        let critical = budgets.iter().find(|b| b.key == "redis.critical").unwrap();
        let check = check_server(
            critical,
            servers.get("critical"),
            "cache:6379",
            redis(1024, "allkeys-lru", 1),
        );
        assert!(check.fits && check.evicts && !check.ok);
        assert!(check
            .verdict
            .contains("evicts: `maxmemory-policy allkeys-lru`"));
        let cache = budgets.iter().find(|b| b.key == "redis.cache").unwrap();
        let check = check_server(
            cache,
            servers.get("cache"),
            "cache:6379",
            redis(1024, "allkeys-lru", 1),
        );
        assert!(check.ok, "a cache may evict");
    }

    #[test]
    fn the_table_shows_every_figure_with_its_arithmetic() {
        let (budgets, servers) = gateway_budgets();
        let critical = budgets.iter().find(|b| b.key == "redis.critical").unwrap();
        let checks = [
            check_server(&budgets[0], None, "db:5432", postgres(90, 16, None, 2)),
            check_server(
                critical,
                servers.get("critical"),
                "kv:6379",
                redis(1024, "noeviction", 3),
            ),
        ];
        let text = format_preflight_table(&checks, "`shipshape capacity --preset evaluation`");
        let expected = "\
PostgreSQL at db:5432 (PostgreSQL 16.4)
  limit             90  `max_connections` (declared 100)
  reserved          16  the larger of `superuser_reserved_connections` 16 + `reserved_connections` (not in this version) and the spec's reserve 16
  used by others     2  `pg_stat_activity` client backends but preflight's own: ops/psql 2
  available         72  90 - 16 - 2
  peak              84  `shipshape capacity --preset evaluation`
  headroom         -12  72 - 84
  verdict         FAIL  does not fit: 12 connections short

Redis `critical` at kv:6379 (Redis 7.0.15)
  limit                   1024  `maxclients` (declared 1024)
  reserved                   0  the server reserves no slots
  used by others             3  `connected_clients` but preflight's own
  available               1021  1024 - 0 - 3
  peak                     192  `shipshape capacity --preset evaluation`
  headroom                 829  1021 - 192
  maxmemory-policy  noeviction  role critical, declared `noeviction`
  verdict                   ok  fits, 829 clients spare
";
        assert_eq!(text, expected);
        let markdown = format_preflight_markdown(&checks, "evaluation");
        assert!(markdown.contains("### PostgreSQL at db:5432 (PostgreSQL 16.4)\n\n| | value | from |\n| --- | ---: | --- |\n| limit | 90 | `max_connections` (declared 100) |\n"), "{markdown}");
    }
}
