//! The five workload classes, each its own struct with the fields every pod-running
//! workload has followed by its own.

use super::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

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
            /// Startup probe (Kubernetes `Probe`): liveness and readiness wait until it
            /// passes, so a slow bootstrap is not killed (empty: none).
            pub startup_probe: Map<String, Value>,
            /// The pods' PriorityClass (empty: the cluster's default).
            pub priority_class_name: String,
            /// More volumes of the pods (`config` and `tmp` are the chart's own).
            #[schemars(extend("items" = {"properties": {"name": {"not": {"enum": ["config", "tmp"]}}}}))]
            pub extra_volumes: Vec<Map<String, Value>>,
            /// More volume mounts of the container.
            pub extra_volume_mounts: Vec<Map<String, Value>>,
            /// Init containers of the pods, run before the application starts.
            pub init_containers: Vec<Map<String, Value>>,
            /// More containers of the pods, beside the application's.
            pub sidecars: Vec<Map<String, Value>>,
            /// This workload's changes to `config`, merged over it key by key (maps
            /// merge, anything else replaces): the workload then reads its own
            /// ConfigMap `<full name>-config-<workload>`, with its own checksum. Keys
            /// the chart manages cannot be set here either.
            pub config_overlay: Map<String, Value>,
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
                    startup_probe: Map::new(),
                    priority_class_name: String::new(),
                    extra_volumes: Vec::new(),
                    extra_volume_mounts: Vec::new(),
                    init_containers: Vec::new(),
                    sidecars: Vec::new(),
                    config_overlay: Map::new(),
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
        /// Seconds a new pod must be ready before it counts as available.
        #[schemars(range(min = 0))]
        pub min_ready_seconds: u32 = 0,
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
        /// An Ingress in front of the api's Service.
        pub ingress: IngressValues = IngressValues::default(),
        /// A ServiceMonitor scraping the api's Service.
        pub service_monitor: ServiceMonitorValues = ServiceMonitorValues::default(),
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
        /// Seconds a new pod must be ready before it counts as available.
        #[schemars(range(min = 0))]
        pub min_ready_seconds: u32 = 0,
        /// Seconds Kubernetes waits for a pod to stop.
        #[schemars(range(min = 0))]
        pub termination_grace_period_seconds: u32 = 60,
        /// Readiness probe (Kubernetes `Probe`; empty: none).
        pub readiness_probe: Map<String, Value> = Map::new(),
        /// Liveness probe (Kubernetes `Probe`; empty: none).
        pub liveness_probe: Map<String, Value> = Map::new(),
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
        /// Seconds a new pod must be ready before it counts as available.
        #[schemars(range(min = 0))]
        pub min_ready_seconds: u32 = 0,
        /// Seconds Kubernetes waits for a pod to stop.
        #[schemars(range(min = 0))]
        pub termination_grace_period_seconds: u32 = 60,
        /// Readiness probe (Kubernetes `Probe`; empty: none).
        pub readiness_probe: Map<String, Value> = Map::new(),
        /// Liveness probe (Kubernetes `Probe`; empty: none).
        pub liveness_probe: Map<String, Value> = Map::new(),
        /// The container's HTTP port (named `http`; 0: the pods listen on none). A
        /// Service, a ServiceMonitor and an `http` probe need it.
        #[schemars(range(min = 0, max = 65535))]
        pub port: u32 = 0,
        /// A Service in front of the pods (off by default; needs `port`).
        pub service: ServiceValues = ServiceValues::off(),
        /// A HorizontalPodAutoscaler on CPU (and a Pods metric when `podsMetric` names
        /// one); the capacity budgets count its `maxReplicas`.
        pub autoscaling: Autoscaling = Autoscaling::cpu_only(),
        /// A ServiceMonitor scraping the Service's `http` port (needs `service`).
        pub service_monitor: ServiceMonitorValues = ServiceMonitorValues::default(),
        /// PodDisruptionBudget of the pods (off by default).
        pub pod_disruption_budget: DisruptionBudget = DisruptionBudget::off(),
        /// NetworkPolicy of the pods (admits the `http` port when `port` is set, else
        /// denies all ingress).
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
        /// Seconds a new pod must be ready before it counts as available.
        #[schemars(range(min = 0))]
        pub min_ready_seconds: u32 = 0,
        /// Seconds Kubernetes waits for a pod to stop.
        #[schemars(range(min = 0))]
        pub termination_grace_period_seconds: u32 = 60,
        /// Readiness probe (Kubernetes `Probe`; empty: none).
        pub readiness_probe: Map<String, Value> = Map::new(),
        /// Liveness probe (Kubernetes `Probe`; empty: none).
        pub liveness_probe: Map<String, Value> = Map::new(),
        /// The container's HTTP port (named `http`; 0: the pods listen on none). A
        /// Service, a ServiceMonitor and an `http` probe need it.
        #[schemars(range(min = 0, max = 65535))]
        pub port: u32 = 0,
        /// A Service in front of the pods (off by default; needs `port`).
        pub service: ServiceValues = ServiceValues::off(),
        /// A HorizontalPodAutoscaler on CPU (and a Pods metric when `podsMetric` names
        /// one); the capacity budgets count its `maxReplicas`.
        pub autoscaling: Autoscaling = Autoscaling::cpu_only(),
        /// A ServiceMonitor scraping the Service's `http` port (needs `service`).
        pub service_monitor: ServiceMonitorValues = ServiceMonitorValues::default(),
        /// PodDisruptionBudget of the pods (off by default).
        pub pod_disruption_budget: DisruptionBudget = DisruptionBudget::off(),
        /// NetworkPolicy of the pods (admits the `http` port when `port` is set, else
        /// denies all ingress).
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
        /// When the hook runs: `pre` (before the release's objects, the default) or
        /// `post` (after them, e.g. when migrations need the release's Secrets).
        pub hook_phase: HookPhase = HookPhase::Pre,
        /// The Job pod's restart policy.
        pub restart_policy: JobRestartPolicy = JobRestartPolicy::Never,
        /// Seconds after the Job finishes before Kubernetes deletes it (0: kept until
        /// the next hook run deletes it).
        #[schemars(range(min = 0))]
        pub ttl_seconds_after_finished: u32 = 0,
        /// The ServiceAccount the Job runs as (empty: the namespace's default; a `pre`
        /// hook runs before the release's own ServiceAccount exists).
        pub service_account_name: String = String::new(),
        /// NetworkPolicy of the Job's pod (denies all ingress), created as a hook just
        /// before the Job.
        pub network_policy: NetworkPolicyValues = NetworkPolicyValues::default(),
    }
}

/// When the migrate hook runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum HookPhase {
    /// `pre-install,pre-upgrade`.
    Pre,
    /// `post-install,post-upgrade`.
    Post,
}

/// A Job pod's restart policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum JobRestartPolicy {
    Never,
    OnFailure,
}
