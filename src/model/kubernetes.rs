//! Kubernetes fields the workload classes share: resources, env, rollout, Service,
//! PodDisruptionBudget, NetworkPolicy, autoscalers, image and ServiceAccount, and
//! the restricted security defaults.

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
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
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

pub(crate) fn int_or_percent_schema(pattern: &str) -> schemars::Schema {
    schemars::json_schema!({
        "anyOf": [
            {"type": "integer", "minimum": 0, "maximum": INT_MAX},
            {"type": "string", "pattern": pattern}
        ]
    })
}

pub(crate) fn surge_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mut s = int_or_percent_schema(SURGE_PERCENT_PATTERN);
    s.insert(
        "description".into(),
        "Pods created above the desired count during a rollout: a whole number or a percentage `N%` (rounded up, as Kubernetes does).".into(),
    );
    s
}

pub(crate) fn unavailable_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
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
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
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

/// The Service in front of a workload's `http` port.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct ServiceValues {
    /// Render the Service (an Ingress and a ServiceMonitor need it).
    pub enabled: bool,
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
    /// Labels added to the Service (the chart's own labels cannot be overridden).
    #[serde(default)]
    #[schemars(extend("propertyNames" = {"not": {"enum": crate::model::RESERVED_LABELS}}))]
    pub labels: BTreeMap<String, String>,
}

impl Default for ServiceValues {
    fn default() -> Self {
        ServiceValues {
            enabled: true,
            service_type: "ClusterIP".into(),
            port: 80,
            annotations: BTreeMap::new(),
            labels: BTreeMap::new(),
        }
    }
}

impl ServiceValues {
    /// A Service that is off until the values turn it on.
    pub fn off() -> Self {
        ServiceValues {
            enabled: false,
            ..ServiceValues::default()
        }
    }
}

/// A PodDisruptionBudget for the workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct DisruptionBudget {
    /// Render the PodDisruptionBudget.
    pub enabled: bool,
    /// Pods of this workload that a voluntary disruption (a node drain) may take down
    /// at once. A maximum rather than a minimum available, so a drain is never blocked.
    #[schemars(schema_with = "unavailable_schema")]
    pub max_unavailable: IntOrString,
    /// Pods that must stay available instead (0: use `maxUnavailable`). It must stay
    /// below the workload's fewest pods (`replicaCount`, or `autoscaling.minReplicas`),
    /// or it blocks every node drain.
    #[schemars(range(min = 0))]
    pub min_available: u32,
}

impl Default for DisruptionBudget {
    fn default() -> Self {
        DisruptionBudget {
            enabled: true,
            max_unavailable: IntOrString::Int(1),
            min_available: 0,
        }
    }
}

impl DisruptionBudget {
    /// A PodDisruptionBudget that is off until the values turn it on.
    pub fn off() -> Self {
        DisruptionBudget {
            enabled: false,
            ..DisruptionBudget::default()
        }
    }
}

/// A NetworkPolicy selecting this workload's pods by component.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct NetworkPolicyValues {
    /// Render the NetworkPolicy. Pods that serve nothing get a deny-all-ingress policy;
    /// the api admits traffic to its `http` port.
    pub enabled: bool,
    /// Peers admitted to the api's port (Kubernetes `NetworkPolicyPeer` objects); empty
    /// admits every source.
    #[serde(default)]
    pub from: Vec<Map<String, Value>>,
    /// Allow DNS lookups (UDP and TCP port 53 to the cluster's `kube-dns` pods); with it
    /// or with `egress`, the policy restricts egress too.
    #[serde(default)]
    pub allow_dns: bool,
    /// Egress rules (Kubernetes `NetworkPolicyEgressRule` objects); empty and no
    /// `allowDns`: egress is not restricted.
    #[serde(default)]
    pub egress: Vec<Map<String, Value>>,
}

impl Default for NetworkPolicyValues {
    fn default() -> Self {
        NetworkPolicyValues {
            enabled: true,
            from: Vec::new(),
            allow_dns: false,
            egress: Vec::new(),
        }
    }
}

/// The Prometheus series of HTTP requests a pod is serving (Spring Boot's, dominated by
/// open SSE chat streams): the in-flight signal both autoscalers scale on. Pinned by a
/// test, as the seed pins it against a Micrometer or Boot upgrade.
pub const IN_FLIGHT_METRIC: &str = "http_server_requests_active_seconds_count";

/// How fast the autoscaler may remove pods.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
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

/// A HorizontalPodAutoscaler of the workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
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
    /// The Pods metric of requests in flight per pod (served by a custom metrics
    /// adapter such as prometheus-adapter); empty: the HPA scales on CPU alone, which
    /// needs no adapter.
    #[schemars(regex(pattern = r"^([a-zA-Z_:][a-zA-Z0-9_:]*)?$"))]
    pub pods_metric: String,
    /// Requests in flight per pod the HPA aims at (the `podsMetric` target).
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
            pods_metric: IN_FLIGHT_METRIC.to_string(),
            in_flight_requests_per_pod: Quantity::Text("20".into()),
            extra_metrics: Vec::new(),
            scale_down: ScaleDown::default(),
        }
    }
}

impl Autoscaling {
    /// An HPA on CPU alone (no custom metrics adapter needed), off until the values
    /// turn it on.
    pub fn cpu_only() -> Self {
        Autoscaling {
            pods_metric: String::new(),
            ..Autoscaling::default()
        }
    }
}

/// The KEDA ScaledObject of the api (needs KEDA in the cluster).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
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
    /// The series of requests in flight, summed over this workload's pods.
    #[schemars(regex(pattern = r"^[a-zA-Z_:][a-zA-Z0-9_:]*$"))]
    pub metric: String,
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
            metric: IN_FLIGHT_METRIC.to_string(),
            threshold: "20".into(),
            polling_interval: 30,
        }
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
    /// Image digest (`sha256:...`); when set the image is pulled by digest and the tag
    /// is not used.
    #[serde(default)]
    #[schemars(regex(pattern = r"^(sha256:[a-f0-9]{64})?$"))]
    pub digest: String,
}

pub(crate) fn default_pull_policy() -> String {
    "IfNotPresent".into()
}

/// The ServiceAccount the pods run as.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
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
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
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

pub(crate) fn http_probe(path: &str) -> Map<String, Value> {
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

pub(crate) fn restricted_pod_security_context() -> Map<String, Value> {
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

pub(crate) fn restricted_container_security_context() -> Map<String, Value> {
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

/// An Ingress routing host names to the api's `http` port.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct IngressValues {
    /// Render the Ingress.
    pub enabled: bool,
    /// The IngressClass (empty: the cluster's default class).
    pub class_name: String,
    /// Annotations of the Ingress (a cert-manager issuer, controller settings).
    pub annotations: BTreeMap<String, String>,
    /// Host names routed to the api; each gets every path of `paths` (none: every
    /// host name).
    #[schemars(extend("items" = {"type": "string", "pattern": "^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"}))]
    pub hosts: Vec<String>,
    /// Paths routed to the api.
    pub paths: Vec<IngressPath>,
    /// TLS: the Secrets holding certificates and the hosts each covers.
    pub tls: Vec<IngressTls>,
}

impl Default for IngressValues {
    fn default() -> Self {
        IngressValues {
            enabled: false,
            class_name: String::new(),
            annotations: BTreeMap::new(),
            hosts: Vec::new(),
            paths: vec![IngressPath {
                path: "/".into(),
                path_type: PathType::Prefix,
            }],
            tls: Vec::new(),
        }
    }
}

/// One path of the Ingress.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct IngressPath {
    /// The path, starting with `/`.
    #[schemars(regex(pattern = r"^/"))]
    pub path: String,
    /// How the path matches.
    pub path_type: PathType,
}

/// Kubernetes' `pathType` of an Ingress path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum PathType {
    Prefix,
    Exact,
    ImplementationSpecific,
}

/// One TLS entry of the Ingress.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct IngressTls {
    /// The Secret (`kubernetes.io/tls`) holding the certificate.
    #[schemars(length(min = 1))]
    pub secret_name: String,
    /// The hosts the certificate covers.
    pub hosts: Vec<String>,
}

/// A Prometheus Operator ServiceMonitor scraping the api's Service.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct ServiceMonitorValues {
    /// Render the ServiceMonitor (`monitoring.coreos.com/v1`: the cluster needs the
    /// Prometheus Operator's CRDs).
    pub enabled: bool,
    /// The path the metrics are served at, on the `http` port.
    #[schemars(regex(pattern = r"^/"))]
    pub path: String,
    /// Seconds-style Prometheus duration between scrapes (empty: Prometheus' global
    /// interval).
    #[schemars(regex(pattern = r"^(0|([0-9]+(ms|s|m|h|d|w|y))+)?$"))]
    pub interval: String,
    /// How long a scrape may take (empty: Prometheus' default; at most `interval`).
    #[schemars(regex(pattern = r"^(0|([0-9]+(ms|s|m|h|d|w|y))+)?$"))]
    pub scrape_timeout: String,
    /// Labels of the ServiceMonitor, for the Prometheus's `serviceMonitorSelector`
    /// (e.g. `release: prometheus`).
    #[schemars(extend("propertyNames" = {"not": {"enum": crate::model::RESERVED_LABELS}}))]
    pub labels: BTreeMap<String, String>,
}

impl Default for ServiceMonitorValues {
    fn default() -> Self {
        ServiceMonitorValues {
            enabled: false,
            path: "/metrics".into(),
            interval: "30s".into(),
            scrape_timeout: String::new(),
            labels: BTreeMap::new(),
        }
    }
}

/// The application's secrets, as the spec declares them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct SecretsSpec {
    /// The keys the application requires, with what each holds: every container gets
    /// each as the env var of the same name, from the Secret.
    #[schemars(extend("propertyNames" = {"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}))]
    pub keys: BTreeMap<String, String>,
    /// The Secret the cluster holds with every key (the default of
    /// `secrets.existingSecret`; required when `keys` is not empty).
    pub existing_secret: String,
}

/// Where the application's secret keys come from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct SecretsValues {
    /// An existing Secret holding every key the spec declares. Empty: the chart
    /// creates `<release>-secrets` from `data` (for evaluation; it must hold every key).
    pub existing_secret: String,
    /// The keys' values when the chart creates the Secret.
    pub data: BTreeMap<String, String>,
}
