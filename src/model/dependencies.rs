//! The dependencies' connection budgets: PgBouncer, PostgreSQL and Redis allocations
//! per process, the servers and their limits.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The PgBouncer in front of PostgreSQL, if any.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct PostgresPooler {
    /// Whether connections go through PgBouncer.
    pub enabled: bool,
    /// Its pool mode. Only `session` is safe: transaction pooling runs queries in the
    /// wrong tenant's schema.
    #[schemars(extend("enum" = ["session", "transaction", "statement"]))]
    pub pool_mode: String,
}

impl Default for PostgresPooler {
    fn default() -> Self {
        PostgresPooler {
            enabled: false,
            pool_mode: "session".into(),
        }
    }
}

/// One named PostgreSQL allocation of a process: its own client and pool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PostgresAllocation {
    /// Connections per process.
    pub size: u32,
    /// The environment variable the chart sets to the effective size (empty: none).
    #[serde(default)]
    pub env: String,
    /// The allocation exists only while this flag of `features` is true (empty: always).
    #[serde(default)]
    pub feature: String,
    /// A different size when another workload is disabled (the api's pool grows when no
    /// `jobs` workload runs the sweeps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_without: Option<SizeWithout>,
    /// Part of another allocation's connections (counted there, not again).
    #[serde(default)]
    pub part_of: String,
    /// Its key in the startup settings section (e.g. `db_pool_size`), so the
    /// application reads the size the capacity report counts (empty: none).
    #[serde(default)]
    pub setting: String,
}

/// The size of an allocation while another workload is disabled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SizeWithout {
    /// The other workload's name.
    pub workload: String,
    /// Connections per process while it is disabled.
    pub size: u32,
}

/// One named Redis allocation of a process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RedisAllocation {
    /// Clients per process.
    pub size: u32,
    /// The Redis server (a key of `dependencyCapacity.redis.servers`).
    pub server: String,
    /// The environment variable the chart sets to the size (empty: none).
    #[serde(default)]
    pub env: String,
    /// Its key in the startup settings section (e.g. `redis_critical_max_connections`).
    #[serde(default)]
    pub setting: String,
}

/// The declared connection budgets every preset must fit (see the capacity formula).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct DependencyCapacity {
    /// Old ReplicaSets whose pods may still hold connections during a rollout.
    #[serde(default = "one")]
    pub retiring_generations: u32,
    /// The PostgreSQL server's budget.
    #[serde(default)]
    pub postgres: PostgresBudget,
    /// The Redis servers' budgets.
    #[serde(default)]
    pub redis: RedisBudget,
}

pub(crate) fn one() -> u32 {
    1
}

impl Default for DependencyCapacity {
    fn default() -> Self {
        DependencyCapacity {
            retiring_generations: 1,
            postgres: PostgresBudget::default(),
            redis: RedisBudget::default(),
        }
    }
}

/// PostgreSQL's declared limit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PostgresBudget {
    /// The server's `max_connections` (the bundled server's, or the external one's).
    pub max_connections: u32,
    /// Connections kept free (superuser slots, operating headroom): the budget is
    /// `maxConnections - reserve`.
    #[serde(default)]
    pub reserve: u32,
    /// Connections of other clients counted in the peak (operators, migrations, other
    /// applications), by name.
    #[serde(default)]
    pub reservations: BTreeMap<String, u32>,
    /// The variable the application reads the database URL from, set on every workload
    /// with PostgreSQL allocations while the bundled server runs (empty: none).
    #[serde(default)]
    #[schemars(regex(pattern = r"^([A-Za-z_][A-Za-z0-9_]*)?$"))]
    pub url_env: String,
    /// How that URL is written: `postgresql` gives
    /// `postgresql://<user>:<password>@<host>:5432/<database>`, `jdbc` gives
    /// `jdbc:postgresql://<host>:5432/<database>` (user and password in `userEnv` and
    /// `passwordEnv`).
    #[serde(default = "postgresql_scheme")]
    #[schemars(extend("enum" = ["postgresql", "jdbc"]))]
    pub url_scheme: String,
    /// The variable for the bundled server's user name (empty: none).
    #[serde(default)]
    #[schemars(regex(pattern = r"^([A-Za-z_][A-Za-z0-9_]*)?$"))]
    pub user_env: String,
    /// The variable for the bundled server's password (empty: none).
    #[serde(default)]
    #[schemars(regex(pattern = r"^([A-Za-z_][A-Za-z0-9_]*)?$"))]
    pub password_env: String,
}

fn postgresql_scheme() -> String {
    "postgresql".into()
}

impl Default for PostgresBudget {
    fn default() -> Self {
        PostgresBudget {
            max_connections: 0,
            reserve: 0,
            reservations: BTreeMap::new(),
            url_env: String::new(),
            url_scheme: postgresql_scheme(),
            user_env: String::new(),
            password_env: String::new(),
        }
    }
}

/// Redis's declared limits.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RedisBudget {
    /// The declared total over all servers (the conservative sum of every allocation).
    #[serde(default)]
    pub max_connections: u32,
    /// Clients of others counted in the total.
    #[serde(default)]
    pub reserved_clients: u32,
    /// Each server's own limit, by name.
    #[serde(default)]
    pub servers: BTreeMap<String, RedisServer>,
}

/// One Redis server.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RedisServer {
    /// The server's `maxclients` (0: not checked on its own).
    #[serde(default)]
    pub max_clients: u32,
    /// Clients of others on this server, counted in its peak.
    #[serde(default)]
    pub reserved_clients: u32,
    /// What the server holds: `critical` (sessions, admission, coordination: must never
    /// evict) or `cache` (may evict).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<RedisRole>,
    /// The server's `maxmemory-policy` as provisioned (`noeviction`, `allkeys-lru`, ...).
    #[serde(default)]
    pub maxmemory_policy: String,
    /// A separate server's URL, from a Secret (never a plain value); rendered as the
    /// variable `urlEnv` on every workload with an allocation on this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url_secret: Option<SecretKeyRef>,
    /// The variable that carries the server's URL: from `urlSecret`, or the bundled
    /// server's while it runs.
    #[serde(default)]
    pub url_env: String,
}

/// The role of a Redis server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RedisRole {
    /// Authentication, admission, coordination: `noeviction` only.
    Critical,
    /// Optional caches: may evict (`allkeys-lru`).
    Cache,
}

/// A key of a Secret.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SecretKeyRef {
    /// The Secret's name.
    #[schemars(length(min = 1))]
    pub name: String,
    /// The key in it.
    #[schemars(length(min = 1))]
    pub key: String,
}
