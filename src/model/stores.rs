//! State the application keeps (stores, classified), where shared stores live, the
//! scheduled jobs and their pools, and the env names the chart manages.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How a store's state is kept (seed 000, rule R3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StoreClass {
    /// In PostgreSQL: every pod sees it.
    Durable,
    /// Per-pod memory by default, Redis when more than one pod runs.
    Shared,
    /// Describes this process only; every replica keeps its own (needs a reason).
    PerProcess,
}

/// One piece of state of the application, classified.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StoreSpec {
    /// Its class; a store without one is a spec error.
    pub class: StoreClass,
    /// For a shared store: the environment variable that selects its backend
    /// (`memory` or `redis`).
    #[serde(default)]
    pub env: String,
    /// For a per-process store: why every replica may keep its own.
    #[serde(default)]
    pub reason: String,
    /// For a shared store: whether a memory backend with several pods is an error (the
    /// application refuses to boot under `replicaStrict`), or only reported.
    #[serde(default = "yes")]
    pub fatal: bool,
}

pub(crate) fn yes() -> bool {
    true
}

/// The backend of a shared store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StoreBackend {
    /// Per-pod memory: only safe with one pod.
    Memory,
    /// The shared Redis (Valkey) server.
    Redis,
}

/// A shared store's values: its backend, and the variable that tells the application.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SharedStoreValues {
    /// `memory` (safe with one pod only) or `redis`.
    pub backend: StoreBackend,
    /// The environment variable that selects the backend.
    pub env: String,
}

/// The Redis server shared stores use.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StoreRedis {
    /// Its URL, rendered into `managedEnv.redisUrl` when a store uses Redis.
    #[serde(default)]
    pub url: String,
    /// The declared Redis server (`dependencyCapacity.redis.servers`) the stores use:
    /// while that server is bundled, `managedEnv.redisUrl` is the bundled server's URL
    /// instead of `url` (empty: none).
    #[serde(default)]
    pub server: String,
}

/// The jobs one pool owns.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PoolJobs {
    /// The scheduled jobs the pool's workload runs (and the jobs workload skips while
    /// the pool's workload is enabled).
    pub jobs: Vec<String>,
    /// A fixed allow-list: the pool may hold only these jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<String>>,
}

/// Which scheduled jobs exist and which pool owns which.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Scheduling {
    /// Every scheduled job of the image.
    #[serde(default)]
    pub jobs: Vec<crate::model::ScheduledJob>,
    /// Pools by name; a `pool` workload runs the pool of its own name.
    #[serde(default)]
    pub pools: BTreeMap<String, PoolJobs>,
}

/// Names of the environment variables the chart manages; empty: not rendered. No user
/// `env` entry may set them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct ManagedEnv {
    /// `multi` when the workload can run more than one pod, else `single`.
    pub replica_mode: String,
    /// `true` when `replicaStrict` is on: unsafe findings refuse to boot.
    pub replica_strict: String,
    /// The shared stores' Redis URL (when a store uses Redis).
    pub redis_url: String,
    /// A pool workload's pool name.
    pub scheduling_pool: String,
    /// The jobs workload's offloaded pools (those whose pool workload is enabled).
    pub offloaded_pools: String,
    /// The jobs the jobs workload skips (the offloaded pools' jobs), comma-separated.
    pub skip_jobs: String,
    /// The jobs a pool workload keeps (its pool's jobs), comma-separated.
    pub keep_jobs: String,
    /// A pool workload's leader election flag.
    pub leader_election: String,
    /// A pool workload's per-job claiming flag.
    pub claiming: String,
}

/// One scheduled job of the image (a `@Scheduled` bean, a poller, a sweep).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScheduledJob {
    /// The job's name, unique in the registry (usually the bean class).
    pub name: String,
    /// Whether the job takes an advisory lock, so that one pod of a workload wins.
    pub locked: bool,
    /// Why an unlocked job may run in every replica (required when `locked` is false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unlocked_reason: Option<String>,
    /// The job never runs in the api workload (for example heavy re-embedding).
    #[serde(default)]
    pub api_excluded: bool,
}
