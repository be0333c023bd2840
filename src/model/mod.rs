//! The typed values model: the one source of truth.
//!
//! Every workload class is its own struct holding only the fields that make sense
//! for it. The spec (`shipshape.yaml`) is written in these types, so its workload
//! entries are the chart's default values; `values.yaml`, `values.schema.json`, the
//! spec's JSON schema and the README's values table are all generated from them.
//! Doc comments here become the comments of `values.yaml` and the schema's
//! descriptions.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Labels the chart sets itself; selectors depend on them.
pub const RESERVED_LABELS: [&str; 6] = [
    "app.kubernetes.io/name",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/component",
    "app.kubernetes.io/version",
    "app.kubernetes.io/managed-by",
    "helm.sh/chart",
];

/// A Kubernetes quantity or count: an integer or a string such as `500m` or `25%`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum IntOrString {
    /// A whole number.
    Int(i64),
    /// A string such as `25%`, `500m` or `1Gi`.
    Str(String),
}

/// A count or a percentage as Kubernetes reads an `IntOrString` field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntOrPercent {
    /// A whole number of pods.
    Count(u64),
    /// A percentage of the desired pods.
    Percent(u64),
}

impl IntOrPercent {
    /// Whether it is 0 or `0%`.
    pub fn is_zero(self) -> bool {
        matches!(self, IntOrPercent::Count(0) | IntOrPercent::Percent(0))
    }
}

/// Reads a values entry as Kubernetes reads an `IntOrString` count or percentage: a
/// whole number from 0 to [`INT_MAX`] (Helm's float `2.0` included), or `N%` with no
/// sign, fraction or leading zero and N at most `max_percent`. `None` when Kubernetes
/// (and the values schema) would refuse it: `"12.5%"`, `"-5%"`, `"abc%"`, `"2"`, `1.5`.
pub fn int_or_percent(v: &Value, max_percent: u64) -> Option<IntOrPercent> {
    match v {
        Value::Number(n) => {
            let f = n.as_f64()?;
            (f.fract() == 0.0 && f >= 0.0 && f <= INT_MAX as f64)
                .then_some(IntOrPercent::Count(f as u64))
        }
        Value::String(s) => {
            let digits = s.strip_suffix('%')?;
            let canonical = digits == "0" || (!digits.starts_with('0') && digits.len() <= 3);
            if !canonical || digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let p: u64 = digits.parse().ok()?;
            (p <= max_percent).then_some(IntOrPercent::Percent(p))
        }
        _ => None,
    }
}

/// A Kubernetes resource quantity: a number (`0.5`, `2`) or a string (`500m`, `1Gi`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Quantity {
    /// A plain number of units.
    Number(serde_json::Number),
    /// A quantity with a suffix, such as `500m` or `1Gi`.
    Text(String),
}

/// CPU and memory requests and limits of one container.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Resources {
    /// What the scheduler reserves for the container (`cpu`, `memory`).
    #[serde(default)]
    pub requests: BTreeMap<String, Quantity>,
    /// The most the container may use (`cpu`, `memory`).
    #[serde(default)]
    pub limits: BTreeMap<String, Quantity>,
}

impl Default for Resources {
    fn default() -> Self {
        Resources {
            requests: BTreeMap::from([
                ("cpu".to_string(), Quantity::Text("100m".into())),
                ("memory".to_string(), Quantity::Text("256Mi".into())),
            ]),
            limits: BTreeMap::from([("memory".to_string(), Quantity::Text("512Mi".into()))]),
        }
    }
}

/// One environment variable of the container, as in a Kubernetes `EnvVar`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EnvVar {
    /// The variable's name.
    #[schemars(regex(pattern = r"^[-._a-zA-Z][-._a-zA-Z0-9]*$"))]
    pub name: String,
    /// A literal value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// A source for the value (`secretKeyRef`, `configMapKeyRef`, `fieldRef`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_from: Option<Map<String, Value>>,
}

/// The largest integer the values schema accepts anywhere (Kubernetes' `int32`
/// maximum), so every accepted number fits the typed model and every product of the
/// capacity formula stays within 64 bits.
pub const INT_MAX: u64 = 2_147_483_647;

/// A `maxSurge` percentage as Kubernetes accepts it: `N%` with N a whole number, no
/// sign, no fraction, no leading zero.
pub const SURGE_PERCENT_PATTERN: &str = "^(0|[1-9][0-9]{0,2})%$";

/// A `maxUnavailable` percentage: `N%` with N from 0 to 100.
pub const UNAVAILABLE_PERCENT_PATTERN: &str = "^(100|[1-9]?[0-9])%$";

fn int_or_percent_schema(pattern: &str) -> schemars::Schema {
    schemars::json_schema!({
        "anyOf": [
            {"type": "integer", "minimum": 0, "maximum": INT_MAX},
            {"type": "string", "pattern": pattern}
        ]
    })
}

fn surge_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mut s = int_or_percent_schema(SURGE_PERCENT_PATTERN);
    s.insert(
        "description".into(),
        "Pods created above the desired count during a rollout: a whole number or a percentage `N%` (rounded up, as Kubernetes does).".into(),
    );
    s
}

fn unavailable_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mut s = int_or_percent_schema(UNAVAILABLE_PERCENT_PATTERN);
    s.insert(
        "description".into(),
        "Pods that may be unavailable: a whole number or a percentage from `0%` to `100%` (rounded down).".into(),
    );
    s
}

/// The rolling-update strategy of a Deployment. `maxSurge` and `maxUnavailable` are
/// never both 0 (Kubernetes refuses it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RollingUpdate {
    /// Pods created above the desired count during a rollout: a number or a percentage
    /// (rounded up, as Kubernetes does).
    #[schemars(schema_with = "surge_schema")]
    pub max_surge: IntOrString,
    /// Pods that may be unavailable during a rollout: a number or a percentage
    /// (rounded down).
    #[schemars(schema_with = "unavailable_schema")]
    pub max_unavailable: IntOrString,
}

impl Default for RollingUpdate {
    fn default() -> Self {
        RollingUpdate {
            max_surge: IntOrString::Int(1),
            max_unavailable: IntOrString::Int(0),
        }
    }
}

/// The api's Service.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ServiceValues {
    /// Service type.
    #[schemars(extend("enum" = ["ClusterIP", "NodePort", "LoadBalancer"]))]
    #[serde(rename = "type")]
    pub service_type: String,
    /// The port the Service listens on (it forwards to the container's `http` port).
    #[schemars(range(min = 1, max = 65535))]
    pub port: u32,
    /// Annotations of the Service.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

impl Default for ServiceValues {
    fn default() -> Self {
        ServiceValues {
            service_type: "ClusterIP".into(),
            port: 80,
            annotations: BTreeMap::new(),
        }
    }
}

/// A PodDisruptionBudget for the workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DisruptionBudget {
    /// Render the PodDisruptionBudget.
    pub enabled: bool,
    /// Pods of this workload that a voluntary disruption (a node drain) may take down
    /// at once. A maximum rather than a minimum available, so a drain is never blocked.
    #[schemars(schema_with = "unavailable_schema")]
    pub max_unavailable: IntOrString,
}

impl Default for DisruptionBudget {
    fn default() -> Self {
        DisruptionBudget {
            enabled: true,
            max_unavailable: IntOrString::Int(1),
        }
    }
}

/// A NetworkPolicy selecting this workload's pods by component.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NetworkPolicyValues {
    /// Render the NetworkPolicy. Pods that serve nothing get a deny-all-ingress policy;
    /// the api admits traffic to its `http` port.
    pub enabled: bool,
    /// Peers admitted to the api's port (Kubernetes `NetworkPolicyPeer` objects); empty
    /// admits every source.
    #[serde(default)]
    pub from: Vec<Map<String, Value>>,
}

impl Default for NetworkPolicyValues {
    fn default() -> Self {
        NetworkPolicyValues {
            enabled: true,
            from: Vec::new(),
        }
    }
}

/// The Prometheus series of HTTP requests a pod is serving (Spring Boot's, dominated by
/// open SSE chat streams): the in-flight signal both autoscalers scale on. Pinned by a
/// test, as the seed pins it against a Micrometer or Boot upgrade.
pub const IN_FLIGHT_METRIC: &str = "http_server_requests_active_seconds_count";

/// How fast the autoscaler may remove pods.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScaleDown {
    /// Seconds of lower load before scale-in starts.
    #[schemars(range(min = 0, max = 3600))]
    pub stabilization_window_seconds: u32,
    /// Pods removed per period at most.
    #[schemars(range(min = 1))]
    pub pods: u32,
    /// The period, in seconds. A removed pod cuts its open streams after the drain window,
    /// so a period shorter than `drainSeconds` is warned about.
    #[schemars(range(min = 1, max = 1800))]
    pub period_seconds: u32,
}

impl Default for ScaleDown {
    fn default() -> Self {
        ScaleDown {
            stabilization_window_seconds: 600,
            pods: 1,
            period_seconds: 300,
        }
    }
}

/// The HorizontalPodAutoscaler of the api.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Autoscaling {
    /// Render the HPA (the Deployment then has no `replicas`).
    pub enabled: bool,
    /// Fewest pods.
    #[schemars(range(min = 1))]
    pub min_replicas: u32,
    /// Most pods; the capacity budgets count this many.
    #[schemars(range(min = 1))]
    pub max_replicas: u32,
    /// Average CPU utilization the HPA aims at, in percent of requests.
    #[schemars(range(min = 1, max = 100))]
    #[serde(rename = "targetCPUUtilizationPercentage")]
    pub target_cpu_utilization_percentage: u32,
    /// Requests in flight per pod the HPA aims at (the `http_server_requests_active_seconds_count`
    /// Pods metric, served by a custom metrics adapter).
    pub in_flight_requests_per_pod: Quantity,
    /// More HPA metrics (`autoscaling/v2` `MetricSpec` objects), appended.
    #[serde(default)]
    pub extra_metrics: Vec<Map<String, Value>>,
    /// Scale-in policy, shared by the HPA and the KEDA ScaledObject.
    #[serde(default)]
    pub scale_down: ScaleDown,
}

impl Default for Autoscaling {
    fn default() -> Self {
        Autoscaling {
            enabled: false,
            min_replicas: 2,
            max_replicas: 6,
            target_cpu_utilization_percentage: 70,
            in_flight_requests_per_pod: Quantity::Text("20".into()),
            extra_metrics: Vec::new(),
            scale_down: ScaleDown::default(),
        }
    }
}

/// The KEDA ScaledObject of the api (needs KEDA in the cluster).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct KedaValues {
    /// Render the ScaledObject instead of an HPA.
    pub enabled: bool,
    /// Fewest pods.
    #[schemars(range(min = 1))]
    pub min_replicas: u32,
    /// Most pods; the capacity budgets count this many.
    #[schemars(range(min = 1))]
    pub max_replicas: u32,
    /// Prometheus server KEDA queries.
    #[schemars(length(min = 1))]
    pub server_address: String,
    /// Requests in flight per pod to aim at.
    #[schemars(regex(pattern = r"^[0-9]+(\.[0-9]+)?$"))]
    pub threshold: String,
    /// Seconds between KEDA's checks.
    #[schemars(range(min = 1))]
    pub polling_interval: u32,
}

impl Default for KedaValues {
    fn default() -> Self {
        KedaValues {
            enabled: false,
            min_replicas: 2,
            max_replicas: 6,
            server_address: "http://prometheus.monitoring.svc:9090".into(),
            threshold: "20".into(),
            polling_interval: 30,
        }
    }
}

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

fn yes() -> bool {
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

/// The PgBouncer in front of PostgreSQL, if any.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
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
#[serde(deny_unknown_fields, rename_all = "camelCase")]
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

fn one() -> u32 {
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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
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
    /// The variable that carries the URL from `urlSecret`.
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

/// One timeout setting of the application's startup configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TimeoutSetting {
    /// Its key in the startup settings section (e.g. `db_lock_timeout_seconds`).
    #[schemars(regex(pattern = r"^[A-Za-z_][A-Za-z0-9_]*$"))]
    pub key: String,
    /// Seconds; positive and finite.
    #[schemars(range(max = 86400.0), extend("exclusiveMinimum" = 0))]
    pub seconds: f64,
}

/// Lock, statement and transaction deadlines of one budget: lock <= statement <=
/// transaction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TimeoutBudget {
    /// How long a statement waits for a lock.
    pub lock: TimeoutSetting,
    /// How long one statement may run.
    pub statement: TimeoutSetting,
    /// How long one transaction may stay open.
    pub transaction: TimeoutSetting,
}

/// The application's startup settings, written into one section of its configuration
/// file from typed values (the gateway's `general_settings`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StartupSettings {
    /// The section of the configuration file the chart writes (`config.<section>` is
    /// then managed: values may not set it directly).
    #[schemars(regex(pattern = r"^[A-Za-z_][A-Za-z0-9_]*$"))]
    pub section: String,
    /// Foreground and telemetry acceptance deadlines.
    pub foreground: TimeoutBudget,
    /// Control and telemetry-worker deadlines.
    pub background: TimeoutBudget,
    /// Other positive, finite deadlines (acquisition, Redis socket and connect).
    #[serde(default)]
    pub deadlines: BTreeMap<String, TimeoutSetting>,
    /// The workload whose allocation sizes the file states (every workload with the same
    /// setting must agree; a guard checks it).
    pub sizes_from: String,
    /// The key of the separate cache server's URL in the section, written as
    /// `os.environ/<urlEnv>` (the value itself comes from the Secret).
    #[serde(default)]
    pub cache_url_key: String,
}

/// Declares a struct for one workload class: the fields every pod-running workload
/// has, followed by the class's own fields. (`serde(flatten)` cannot be combined with
/// `deny_unknown_fields`, which the spec needs for its "did you mean" errors.)
macro_rules! workload_values {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$fmeta:meta])*
                pub $field:ident : $ty:ty = $default:expr,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields, rename_all = "camelCase", default)]
        pub struct $name {
            /// Run this workload.
            pub enabled: bool,
            $(
                $(#[$fmeta])*
                pub $field: $ty,
            )*
            /// Processes each pod runs (web workers). The capacity budgets multiply by it,
            /// and the variables named in `processEnv` are set to it.
            #[schemars(range(min = 1))]
            pub processes_per_pod: u32,
            /// Environment variables the chart sets to `processesPerPod` (e.g.
            /// `WEB_CONCURRENCY`, `UVICORN_WORKERS`), so nothing else can raise it.
            pub process_env: Vec<String>,
            /// PostgreSQL connection allocations of each process, by name.
            pub postgres: BTreeMap<String, PostgresAllocation>,
            /// Redis client allocations of each process, by name.
            pub redis: BTreeMap<String, RedisAllocation>,
            /// Arguments passed to the image's entrypoint.
            pub args: Vec<String>,
            /// Overrides the image's entrypoint.
            pub command: Vec<String>,
            /// Extra environment variables of the container.
            pub env: Vec<EnvVar>,
            /// Sources of environment variables (`configMapRef`, `secretRef`). Variables in
            /// `env` and those the chart sets win over these.
            pub env_from: Vec<Map<String, Value>>,
            /// CPU and memory requests and limits.
            pub resources: Resources,
            /// Annotations added to the pods.
            pub pod_annotations: BTreeMap<String, String>,
            /// Labels added to the pods (the chart's own `app.kubernetes.io/*` and
            /// `helm.sh/chart` labels cannot be overridden).
            #[schemars(extend("propertyNames" = {"not": {"enum": crate::model::RESERVED_LABELS}}))]
            pub pod_labels: BTreeMap<String, String>,
            /// Node labels the pods must match.
            pub node_selector: BTreeMap<String, String>,
            /// Tolerations of the pods.
            pub tolerations: Vec<Map<String, Value>>,
            /// Affinity rules of the pods.
            pub affinity: Map<String, Value>,
            /// Topology spread constraints of the pods.
            pub topology_spread_constraints: Vec<Map<String, Value>>,
            /// The pod's security context (defaults satisfy Pod Security "restricted").
            pub pod_security_context: Map<String, Value>,
            /// The container's security context (defaults satisfy Pod Security "restricted").
            pub security_context: Map<String, Value>,
        }

        impl Default for $name {
            fn default() -> Self {
                $name {
                    enabled: true,
                    $( $field: $default, )*
                    processes_per_pod: 1,
                    process_env: Vec::new(),
                    postgres: BTreeMap::new(),
                    redis: BTreeMap::new(),
                    args: Vec::new(),
                    command: Vec::new(),
                    env: Vec::new(),
                    env_from: Vec::new(),
                    resources: Resources::default(),
                    pod_annotations: BTreeMap::new(),
                    pod_labels: BTreeMap::new(),
                    node_selector: BTreeMap::new(),
                    tolerations: Vec::new(),
                    affinity: Map::new(),
                    topology_spread_constraints: Vec::new(),
                    pod_security_context: restricted_pod_security_context(),
                    security_context: restricted_container_security_context(),
                }
            }
        }
    };
}

workload_values! {
    /// The `api` class: serves HTTP and long-lived streams behind a Service.
    pub struct ApiValues {
        /// Pods of the Deployment.
        #[schemars(range(min = 0))]
        pub replica_count: u32 = 1,
        /// The container's HTTP port (named `http`).
        #[schemars(range(min = 1, max = 65535))]
        pub port: u32 = 8080,
        /// The Service in front of the pods.
        pub service: ServiceValues = ServiceValues::default(),
        /// Rolling-update strategy.
        pub rolling_update: RollingUpdate = RollingUpdate::default(),
        /// Seconds a terminating pod keeps serving open streams (a `preStop` sleep) before
        /// the process is told to stop.
        #[schemars(range(min = 0))]
        pub drain_seconds: u32 = 30,
        /// Seconds the process needs to shut down once the drain window is over.
        #[schemars(range(min = 0))]
        pub shutdown_seconds: u32 = 30,
        /// Seconds Kubernetes waits for a pod to stop: at least `drainSeconds` +
        /// `shutdownSeconds`, or open streams are cut.
        #[schemars(range(min = 0))]
        pub termination_grace_period_seconds: u32 = 60,
        /// A HorizontalPodAutoscaler on CPU and on requests in flight per pod.
        pub autoscaling: Autoscaling = Autoscaling::default(),
        /// A KEDA `ScaledObject` on requests in flight (the opt-in alternative to the HPA;
        /// never both).
        pub keda: KedaValues = KedaValues::default(),
        /// Readiness probe (Kubernetes `Probe`).
        pub readiness_probe: Map<String, Value> = http_probe("/health/readiness"),
        /// Liveness probe (Kubernetes `Probe`).
        pub liveness_probe: Map<String, Value> = http_probe("/health/liveness"),
        /// PodDisruptionBudget of the api pods.
        pub pod_disruption_budget: DisruptionBudget = DisruptionBudget::default(),
        /// NetworkPolicy of the api pods.
        pub network_policy: NetworkPolicyValues = NetworkPolicyValues::default(),
    }
}

workload_values! {
    /// The `jobs` class: runs every scheduled job except those of offloaded pools.
    pub struct JobsValues {
        /// Pods of the Deployment.
        #[schemars(range(min = 0))]
        pub replica_count: u32 = 1,
        /// Rolling-update strategy.
        pub rolling_update: RollingUpdate = RollingUpdate::default(),
        /// Seconds Kubernetes waits for a pod to stop.
        #[schemars(range(min = 0))]
        pub termination_grace_period_seconds: u32 = 60,
        /// NetworkPolicy of the pods (deny all ingress).
        pub network_policy: NetworkPolicyValues = NetworkPolicyValues::default(),
    }
}

workload_values! {
    /// The `pool` class: the same image running only the jobs of one named pool.
    pub struct PoolValues {
        /// Leader election among the pool's pods: required for more than one replica
        /// unless `claiming` is on.
        pub leader_election: bool = false,
        /// Per-job claiming (`FOR UPDATE SKIP LOCKED` with a lease): replicas share the
        /// work instead of failing over.
        pub claiming: bool = false,
        /// Pods of the Deployment.
        #[schemars(range(min = 0))]
        pub replica_count: u32 = 1,
        /// Rolling-update strategy.
        pub rolling_update: RollingUpdate = RollingUpdate::default(),
        /// Seconds Kubernetes waits for a pod to stop.
        #[schemars(range(min = 0))]
        pub termination_grace_period_seconds: u32 = 60,
        /// NetworkPolicy of the pods (deny all ingress).
        pub network_policy: NetworkPolicyValues = NetworkPolicyValues::default(),
    }
}

workload_values! {
    /// The `worker` class: queue, workflow (Temporal) or batch workers.
    pub struct WorkerValues {
        /// Pods of the Deployment.
        #[schemars(range(min = 0))]
        pub replica_count: u32 = 1,
        /// Rolling-update strategy.
        pub rolling_update: RollingUpdate = RollingUpdate::default(),
        /// Seconds Kubernetes waits for a pod to stop.
        #[schemars(range(min = 0))]
        pub termination_grace_period_seconds: u32 = 60,
        /// NetworkPolicy of the pods (deny all ingress).
        pub network_policy: NetworkPolicyValues = NetworkPolicyValues::default(),
    }
}

workload_values! {
    /// The `migrate` class: a Job run as a Helm hook before install and upgrade.
    pub struct MigrateValues {
        /// Retries of the Job before it is marked failed.
        #[schemars(range(min = 0))]
        pub backoff_limit: u32 = 1,
        /// Seconds the Job may run before it is stopped.
        #[schemars(range(min = 1))]
        pub active_deadline_seconds: u32 = 600,
    }
}

/// The container image every workload runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ImageValues {
    /// Image repository.
    #[schemars(length(min = 1))]
    pub repository: String,
    /// Image tag; empty means the chart's `appVersion`.
    #[serde(default)]
    pub tag: String,
    /// Image pull policy.
    #[serde(default = "default_pull_policy")]
    #[schemars(extend("enum" = ["Always", "IfNotPresent", "Never"]))]
    pub pull_policy: String,
}

fn default_pull_policy() -> String {
    "IfNotPresent".into()
}

/// The ServiceAccount the pods run as.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ServiceAccountValues {
    /// Create the ServiceAccount.
    pub create: bool,
    /// Its name; empty means the release name.
    #[serde(default)]
    pub name: String,
    /// Annotations of the ServiceAccount (workload identity bindings, say).
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

impl Default for ServiceAccountValues {
    fn default() -> Self {
        ServiceAccountValues {
            create: true,
            name: String::new(),
            annotations: BTreeMap::new(),
        }
    }
}

/// Where the application's configuration file is mounted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConfigFileValues {
    /// File name inside the mount (the content is JSON, which YAML readers accept too).
    #[schemars(regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"))]
    pub name: String,
    /// Directory the file is mounted in.
    #[schemars(regex(pattern = r"^/"))]
    pub mount_path: String,
}

impl Default for ConfigFileValues {
    fn default() -> Self {
        ConfigFileValues {
            name: "config.yaml".into(),
            mount_path: "/etc/app".into(),
        }
    }
}

/// An image pull secret.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LocalObjectReference {
    /// The Secret's name.
    pub name: String,
}

fn http_probe(path: &str) -> Map<String, Value> {
    let probe = serde_json::json!({
        "httpGet": {"path": path, "port": "http"},
        "periodSeconds": 10,
        "timeoutSeconds": 2,
        "failureThreshold": 3
    });
    match probe {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn restricted_pod_security_context() -> Map<String, Value> {
    match serde_json::json!({
        "runAsNonRoot": true,
        "runAsUser": 10001,
        "runAsGroup": 10001,
        "fsGroup": 10001,
        "seccompProfile": {"type": "RuntimeDefault"}
    }) {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn restricted_container_security_context() -> Map<String, Value> {
    match serde_json::json!({
        "allowPrivilegeEscalation": false,
        "readOnlyRootFilesystem": true,
        "runAsNonRoot": true,
        "capabilities": {"drop": ["ALL"]}
    }) {
        Value::Object(m) => m,
        _ => Map::new(),
    }
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
