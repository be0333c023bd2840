//! Servers the chart can run itself, for evaluation only: a PostgreSQL StatefulSet
//! and one Valkey StatefulSet per declared Redis server. Their limits are not values of
//! their own: `max_connections` and `superuser_reserved_connections` are
//! `dependencyCapacity.postgres.maxConnections` and `reserve`, a Valkey server's
//! `maxclients` and `maxmemory-policy` are its `dependencyCapacity.redis.servers.<name>`
//! `maxClients` and `maxmemoryPolicy`: the budgets the capacity guards check.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The servers the chart runs for evaluation (never for production: one pod each, no
/// backups, no failover).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct BundledValues {
    /// An existing Secret holding `postgres-password` (the superuser's), `password`
    /// (the application's role) and `valkey-password`. Empty: the chart creates
    /// `<release>-bundled` with passwords derived from the release's namespace and
    /// name (stable across upgrades, but not secret from someone who knows them).
    pub existing_secret: String,
    /// The bundled PostgreSQL server.
    pub postgres: BundledPostgres,
    /// One bundled Valkey server per declared Redis server, by its name.
    pub redis: BTreeMap<String, BundledRedis>,
}

/// The bundled PostgreSQL server: a StatefulSet with a volume, its Service, and an
/// application role that is not a superuser, so `superuser_reserved_connections`
/// (the declared `reserve`) holds for it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct BundledPostgres {
    /// Run it, and point the application's database variables
    /// (`dependencyCapacity.postgres.urlEnv`, ...) at it.
    pub enabled: bool,
    /// The official `postgres` image.
    pub image: BundledImage,
    /// The database the application uses.
    #[schemars(regex(pattern = r"^[a-z_][a-z0-9_]{0,62}$"))]
    pub database: String,
    /// The application's role (not a superuser).
    #[schemars(regex(pattern = r"^[a-z_][a-z0-9_]{0,62}$"))]
    pub username: String,
    /// The volume's size.
    #[schemars(regex(pattern = r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti)?$"))]
    pub storage: String,
    /// The container's resources.
    pub resources: crate::model::Resources,
}

impl Default for BundledPostgres {
    fn default() -> Self {
        BundledPostgres {
            enabled: false,
            image: BundledImage {
                repository: "postgres".into(),
                tag: "17.2".into(),
            },
            database: "app".into(),
            username: "app".into(),
            storage: "8Gi".into(),
            resources: crate::model::Resources::default(),
        }
    }
}

/// One bundled Valkey server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct BundledRedis {
    /// Run it, and point the application's URL for this server at it.
    pub enabled: bool,
    /// The official `valkey/valkey` image.
    pub image: BundledImage,
    /// The volume's size.
    #[schemars(regex(pattern = r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti)?$"))]
    pub storage: String,
    /// The container's resources.
    pub resources: crate::model::Resources,
}

impl Default for BundledRedis {
    fn default() -> Self {
        BundledRedis {
            enabled: false,
            image: BundledImage {
                repository: "valkey/valkey".into(),
                tag: "8.0".into(),
            },
            storage: "1Gi".into(),
            resources: crate::model::Resources::default(),
        }
    }
}

/// A bundled server's image.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BundledImage {
    /// Image repository.
    #[schemars(length(min = 1))]
    pub repository: String,
    /// Image tag.
    #[schemars(length(min = 1))]
    pub tag: String,
}

/// How one feature flag reaches the application: an environment variable set to
/// `true`/`false` on every container, and/or a key of the startup settings section.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FeatureSwitch {
    /// The environment variable (empty: none).
    #[serde(default)]
    #[schemars(regex(pattern = r"^([A-Za-z_][A-Za-z0-9_]*)?$"))]
    pub env: String,
    /// Its key in the startup settings section (empty: none).
    #[serde(default)]
    #[schemars(regex(pattern = r"^([A-Za-z_][A-Za-z0-9_]*)?$"))]
    pub setting: String,
}

/// The variable holding the bundled PostgreSQL's application password in every
/// workload, for the URL to expand.
pub const POSTGRES_PASSWORD_ENV: &str = "SHIPSHAPE_POSTGRES_PASSWORD";
/// The variable holding the bundled Valkey servers' password, for their URLs.
pub const VALKEY_PASSWORD_ENV: &str = "SHIPSHAPE_VALKEY_PASSWORD";

/// The Valkey eviction policies (`maxmemory-policy`) a bundled server accepts.
pub const VALKEY_POLICIES: &[&str] = &[
    "noeviction",
    "allkeys-lru",
    "allkeys-lfu",
    "allkeys-random",
    "volatile-lru",
    "volatile-lfu",
    "volatile-random",
    "volatile-ttl",
];

/// The largest `maxclients` a bundled Valkey keeps as written: Valkey lowers
/// `maxclients` to the open-file limit less 32 descriptors it keeps for itself, and
/// 65536 is the smallest limit container runtimes commonly give.
pub const VALKEY_MAX_CLIENTS: u64 = 65_536 - 32;

/// The largest `max_connections` a bundled PostgreSQL starts with: its backend limit
/// (2^18 - 1) less the default background processes (autovacuum workers and launcher,
/// worker processes, WAL senders, with room to spare).
pub const POSTGRES_MAX_CONNECTIONS: u64 = 262_000;

/// Whether a Redis server's name can name a bundled server's objects (a DNS label).
pub fn bundleable_server_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 40
        && b[0].is_ascii_lowercase()
        && b[b.len() - 1] != b'-'
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}
