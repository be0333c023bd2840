//! The install-time contract's capacity plans: every checked preset (and the chart's
//! defaults) becomes a named plan whose bounds `values.schema.json` carries, so values
//! that plain Helm accepts are values the guards have already proven safe.
//!
//! Why a box of bounds is enough: the capacity peak never decreases when a count, a
//! size, a flag that opens allocations, the surge, the retiring generations, a
//! reservation or the reserve grows, and the budget never decreases when
//! `maxConnections`/`maxClients` grow. So values bounded above on the first group and
//! below on the budgets by a plan whose corner passed the guards fit too. Two inputs are
//! not monotone and are handled exactly:
//! - a workload's replica count is one of the fields its autoscaler flags choose (the
//!   api's `replicaCount`, HPA or KEDA maximum; a pool's or worker's `replicaCount` or
//!   HPA maximum); each branch is bounded by the plan's max pods under its own
//!   condition;
//! - disabling a workload named by another allocation's `sizeWithout` can raise that
//!   allocation's size; both values of such a flag are checked as corners, and a corner
//!   that does not fit is excluded.
//!
//! Other cross-field rules get intervals that keep their order for any choice inside
//! them: lock <= statement <= transaction timeouts, and the api's grace period against
//! its drain window and shutdown.

use crate::capacity::{capacity_exprs, Capacity, CapacityExprs, CapacityReport};
use crate::contract::object;
use crate::model::INT_MAX;
use crate::spec::{Spec, WorkloadClass};
use crate::values::frozen_schema::FrozenSchema;
use serde::Serialize;
use serde_json::{json, Map, Value};

/// More flags than this that are not monotone: each such flag is pinned to the plan's
/// value instead of checking 2^n corners.
const MAX_CORNER_FLAGS: usize = 6;

/// One bound of a plan, as the chart README lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanBound {
    /// The values path (with `when ...` for a conditional bound).
    pub path: String,
    /// `<= 12`, `>= 1508`, `= false`, `0 or >= 200`, `in [0.2, 2]`, ...
    pub bound: String,
    /// The upper bound, when there is one.
    pub at_most: Option<f64>,
    /// The lower bound, when there is one.
    pub at_least: Option<f64>,
}

/// The `maximum` and `minimum` a schema fragment sets, looking into `anyOf`.
fn limits(fragment: &Value) -> (Option<f64>, Option<f64>) {
    let mut max = fragment.get("maximum").and_then(Value::as_f64);
    let mut min = fragment.get("minimum").and_then(Value::as_f64);
    for alt in fragment
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let (a, b) = limits(alt);
        max = max.or(a);
        min = min.or(b);
    }
    (max, min)
}

/// A plan: its name, its bounds, and the schema its `if`/`then` applies.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanContract {
    pub name: String,
    pub bounds: Vec<PlanBound>,
    /// The `then` schema: the bounds, nested as the values are (null when it is
    /// built frozen).
    pub schema: Value,
    /// The same schema frozen, instead, for [`crate::contract::Contract::over_frozen`]
    /// ([`plan_contract_frozen_over`]); `None` otherwise.
    pub frozen_schema: Option<FrozenSchema>,
    /// The capacity report the bounds come from, of the plan's values (`None` when
    /// they do not evaluate): the one of its whole values, since the values it is
    /// computed over hold every path the formula reads ([`read_paths`]). `generate`'s
    /// review of the plan takes it instead of computing it again.
    pub report: Option<CapacityReport>,
}

/// Nested schema fragments keyed by values path.
#[derive(Default)]
pub(crate) struct SchemaTree {
    here: Vec<Value>,
    /// Each child by key, in ascending order of key (as a `BTreeMap`'s, which took
    /// about 800 bytes for a node of one child: most nodes have one).
    children: Vec<(String, SchemaTree)>,
}

impl SchemaTree {
    /// Adds a fragment the value at `path` must also match.
    pub(crate) fn add(&mut self, path: &[&str], fragment: Value) {
        self.node(path).here.push(fragment);
    }

    /// The node at `path`, made if missing: fragments added to it are at `path`
    /// followed by theirs (a workload's rules are added to its node, found once).
    pub(crate) fn node(&mut self, path: &[&str]) -> &mut SchemaTree {
        let mut node = self;
        for segment in path {
            // A key is copied only the first time: most fragments share their parents.
            let at = match node
                .children
                .binary_search_by(|(key, _)| key.as_str().cmp(segment))
            {
                Ok(at) => at,
                Err(at) => {
                    node.children
                        .insert(at, ((*segment).to_string(), SchemaTree::default()));
                    at
                }
            };
            node = &mut node.children[at].1;
        }
        node
    }

    /// The fragments as one schema: `properties` for the children, `allOf` when a node
    /// holds several fragments.
    pub(crate) fn build(self) -> Value {
        let mut parts = self.here;
        if !self.children.is_empty() {
            let properties: Map<String, Value> = self
                .children
                .into_iter()
                .map(|(k, v)| (k, v.build()))
                .collect();
            parts.push(object([("properties", Value::Object(properties))]));
        }
        match parts.len() {
            0 => json!({}),
            1 => parts.pop().unwrap_or_default(),
            _ => object([("allOf", Value::Array(parts))]),
        }
    }

    /// The schema built as JSON (`frozen` false, and no frozen form) or frozen (and
    /// null as JSON).
    fn build_as(self, frozen: bool) -> (Value, Option<FrozenSchema>) {
        if frozen {
            (Value::Null, Some(self.build_frozen()))
        } else {
            (self.build(), None)
        }
    }

    /// [`SchemaTree::build`] frozen ([`FrozenSchema::of_schema`]), without building
    /// the JSON of the `properties` nesting the fragments.
    pub(crate) fn build_frozen(self) -> FrozenSchema {
        let mut parts: Vec<FrozenSchema> =
            self.here.into_iter().map(FrozenSchema::of_schema).collect();
        if !self.children.is_empty() {
            let properties: Box<[(Box<str>, FrozenSchema)]> = self
                .children
                .into_iter()
                .map(|(k, v)| (k.into_boxed_str(), v.build_frozen()))
                .collect();
            parts.push(FrozenSchema::Object(Box::new([(
                "properties".into(),
                FrozenSchema::Object(properties),
            )])));
        }
        match parts.len() {
            0 => FrozenSchema::Object(Box::new([])),
            1 => parts.pop().unwrap_or(FrozenSchema::Object(Box::new([]))),
            _ => FrozenSchema::Object(Box::new([(
                "allOf".into(),
                FrozenSchema::Array(parts.into_boxed_slice()),
            )])),
        }
    }
}

/// The bounds of a plan being collected, with their README text.
#[derive(Default)]
struct Collect {
    tree: SchemaTree,
    bounds: Vec<PlanBound>,
}

impl Collect {
    /// Bounds the value at `path` by the plan's own value, and returns that value.
    fn at_most_plan(&mut self, values: &Value, path: &[&str]) -> u64 {
        let n = number(values, path);
        self.bound(path, at_most(n), format!("<= {n}"));
        n
    }

    fn bound(&mut self, path: &[&str], fragment: Value, text: String) {
        let (at_most, at_least) = limits(&fragment);
        self.bounds.push(PlanBound {
            path: path.join("."),
            bound: text,
            at_most,
            at_least,
        });
        self.tree.add(path, fragment);
    }
}

fn get<'v>(values: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter()
        .try_fold(values, |v, k| v.as_object().and_then(|m| m.get(*k)))
}

fn number(values: &Value, path: &[&str]) -> u64 {
    get(values, path)
        .and_then(Value::as_f64)
        .filter(|f| *f >= 0.0)
        .map_or(0, |f| f as u64)
}

fn flag(values: &Value, path: &[&str]) -> bool {
    get(values, path).and_then(Value::as_bool).unwrap_or(false)
}

fn report(exprs: &CapacityExprs, spec: &Spec, values: &Value) -> Option<(CapacityReport, bool)> {
    let capacity = Capacity::over(exprs, spec, values);
    let report = capacity.report().ok()?;
    let fits = capacity.findings(&report).ok()?.is_empty();
    Some((report, fits))
}

/// The workloads whose `enabled` flag is not monotone in the peak: disabling them
/// can raise another allocation's size (`sizeWithout`).
fn non_monotone_flags(spec: &Spec, values: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, workload) in spec.workloads.all() {
        for alloc in workload.allocations().0.values() {
            if let Some(other) = alloc.size_without.as_ref().map(|s| s.workload.as_str()) {
                if flag(values, &["workloads", other, "enabled"]) && !out.iter().any(|o| o == other)
                {
                    out.push(other.to_string());
                }
            }
        }
    }
    out.sort();
    out
}

fn set_enabled(values: &mut Value, workload: &str, on: bool) {
    if let Some(w) = values
        .get_mut("workloads")
        .and_then(|w| w.get_mut(workload))
        .and_then(Value::as_object_mut)
    {
        w.insert("enabled".into(), Value::Bool(on));
    }
}

/// The regex of the percentages `0%` to `max%` (at most 999), no leading zeros.
pub fn percent_pattern(max: u64) -> String {
    let max = max.min(999);
    let mut alternatives: Vec<String> = Vec::new();
    // One digit.
    alternatives.push(if max >= 9 {
        "[0-9]".to_string()
    } else {
        format!("[0-{max}]")
    });
    // Two and three digits: a full range below the leading digit, then the rest.
    for digits in [2u32, 3] {
        let low = 10u64.pow(digits - 1);
        if max < low {
            break;
        }
        let high = 10u64.pow(digits) - 1;
        if max >= high {
            alternatives.push(format!("[1-9]{}", "[0-9]".repeat(digits as usize - 1)));
            continue;
        }
        let text = max.to_string();
        let bytes: Vec<u8> = text.bytes().map(|b| b - b'0').collect();
        // Numbers with the same length as `max`, digit by digit.
        let mut prefix = String::new();
        for (i, d) in bytes.iter().enumerate() {
            let rest = bytes.len() - i - 1;
            let lowest = if i == 0 { 1 } else { 0 };
            if *d > lowest {
                let upper = d - 1;
                let class = if upper == lowest {
                    format!("{lowest}")
                } else {
                    format!("[{lowest}-{upper}]")
                };
                alternatives.push(format!("{prefix}{class}{}", "[0-9]".repeat(rest)));
            }
            prefix.push(char::from(b'0' + d));
        }
        alternatives.push(prefix);
    }
    format!("^({})%$", alternatives.join("|"))
}

fn at_most(n: u64) -> Value {
    json!({ "maximum": n })
}

/// A `maxSurge` that adds at most `surge` pods to at most `pods` pods: a count up to
/// `surge`, or a percentage whose rounded-up share of `pods` stays within it.
fn surge_bound(pods: u64, surge: u64) -> (Value, String) {
    if pods == 0 {
        return (json!({}), String::new());
    }
    let percent = surge.saturating_mul(100) / pods;
    (
        json!({"anyOf": [
            {"type": "integer", "maximum": surge},
            {"type": "string", "pattern": percent_pattern(percent)}
        ]}),
        format!("<= {surge} or <= {}%", percent.min(999)),
    )
}

/// Every values path [`plan_contract_over`] and [`pod_bounds_over`] read: the capacity
/// formula's ([`CapacityExprs::value_paths`]), the feature flags, the startup settings,
/// and each workload's flag, drain, shutdown, processes and allocations. Over
/// [`crate::values::project_values`] of these paths, a plan's contract is the one over
/// its whole values.
pub fn read_paths(spec: &Spec, exprs: &CapacityExprs) -> Vec<crate::expr::ValuePath> {
    use crate::expr::ValuePath;
    let mut paths = exprs.value_paths();
    paths.push(ValuePath::new(["features"]));
    paths.push(ValuePath::new(["startupSettings"]));
    for (name, _) in spec.workloads.all() {
        for key in [
            "enabled",
            "drainSeconds",
            "shutdownSeconds",
            "processesPerPod",
            "postgres",
            "redis",
        ] {
            paths.push(ValuePath::new(["workloads", name, key]));
        }
    }
    paths
}

/// The contract of one checked plan (`values` are its resolved values).
pub fn plan_contract(spec: &Spec, name: &str, values: &Value) -> PlanContract {
    plan_contract_over(&capacity_exprs(spec), spec, name, values)
}

/// [`plan_contract`] with the spec's capacity formula already built
/// ([`capacity_exprs`]): the same for every plan and corner of one spec.
pub fn plan_contract_over(
    exprs: &CapacityExprs,
    spec: &Spec,
    name: &str,
    values: &Value,
) -> PlanContract {
    plan_contract_in(exprs, spec, name, values, false)
}

/// [`plan_contract_over`] with the schema built frozen ([`PlanContract::frozen_schema`]).
pub fn plan_contract_frozen_over(
    exprs: &CapacityExprs,
    spec: &Spec,
    name: &str,
    values: &Value,
) -> PlanContract {
    plan_contract_in(exprs, spec, name, values, true)
}

/// [`plan_contract_over`], its schema `frozen` or not.
fn plan_contract_in(
    exprs: &CapacityExprs,
    spec: &Spec,
    name: &str,
    values: &Value,
    frozen: bool,
) -> PlanContract {
    let mut c = Collect::default();
    let Some((plan_report, _)) = report(exprs, spec, values) else {
        let (schema, frozen_schema) = SchemaTree::default().build_as(frozen);
        return PlanContract {
            name: name.to_string(),
            bounds: Vec::new(),
            schema,
            frozen_schema,
            report: None,
        };
    };

    // Corners of the flags that are not monotone; the needed budgets are the largest
    // peaks of the corners that fit.
    let flags = non_monotone_flags(spec, values);
    let mut reports = vec![plan_report.clone()];
    if flags.len() <= MAX_CORNER_FLAGS {
        for mask in 1u32..(1 << flags.len()) {
            let mut corner = values.clone();
            for (i, f) in flags.iter().enumerate() {
                if mask & (1 << i) != 0 {
                    set_enabled(&mut corner, f, false);
                }
            }
            match report(exprs, spec, &corner) {
                Some((r, true)) => reports.push(r),
                _ => {
                    let off: Map<String, Value> = flags
                        .iter()
                        .enumerate()
                        .map(|(i, f)| {
                            (
                                f.clone(),
                                json!({"properties": {"enabled": {"const": mask & (1 << i) == 0}}}),
                            )
                        })
                        .collect();
                    let text = flags
                        .iter()
                        .enumerate()
                        .map(|(i, f)| format!("{f}={}", mask & (1 << i) == 0))
                        .collect::<Vec<_>>()
                        .join(", ");
                    c.bound(
                        &["workloads"],
                        json!({"not": {"properties": off}}),
                        format!("not {text} (that corner exceeds a budget)"),
                    );
                }
            }
        }
    } else {
        for f in &flags {
            c.bound(
                &["workloads", f, "enabled"],
                json!({"const": true}),
                "= true".into(),
            );
        }
    }

    let rows = rows_by_workload(&plan_report);
    for (wname, workload) in spec.workloads.all() {
        let class = workload.class();
        let w = ["workloads", wname];
        if !flag(values, &["workloads", wname, "enabled"]) {
            c.bound(
                &["workloads", wname, "enabled"],
                json!({"const": false}),
                "= false".into(),
            );
            continue;
        }
        let Some(row) = rows.get(wname) else {
            continue;
        };
        let pods = row.max_pods;
        let scalers = class.autoscalers();
        if !scalers.is_empty() {
            for &key in scalers {
                c.bound(
                    &w,
                    json!({
                        "if": {"properties": {key: {"properties": {"enabled": {"const": true}}}}},
                        "then": {"properties": {key: {"properties": {"maxReplicas": at_most(pods)}}}}
                    }),
                    String::new(),
                );
                c.bounds.pop();
                c.bounds.push(PlanBound {
                    path: format!("workloads.{wname}.{key}.enabled"),
                    bound: format!("may be on; `{key}.maxReplicas` is then bounded"),
                    at_most: None,
                    at_least: None,
                });
                c.bounds.push(PlanBound {
                    path: format!("workloads.{wname}.{key}.maxReplicas"),
                    bound: format!("<= {pods} (when `{key}.enabled`)"),
                    at_most: Some(pods as f64),
                    at_least: None,
                });
            }
            let all_off: Map<String, Value> = scalers
                .iter()
                .map(|key| {
                    (
                        key.to_string(),
                        json!({"properties": {"enabled": {"const": false}}}),
                    )
                })
                .collect();
            c.tree.add(
                &w,
                json!({
                    "if": {"properties": all_off},
                    "then": {"properties": {"replicaCount": at_most(pods)}}
                }),
            );
            c.bounds.push(PlanBound {
                path: format!("workloads.{wname}.replicaCount"),
                bound: format!("<= {pods} (without an autoscaler)"),
                at_most: Some(pods as f64),
                at_least: None,
            });
        }
        match class {
            WorkloadClass::Api => {
                // The grace period against the drain window and shutdown.
                let drain = c.at_most_plan(values, &["workloads", wname, "drainSeconds"]);
                let shutdown = c.at_most_plan(values, &["workloads", wname, "shutdownSeconds"]);
                let grace = drain + shutdown;
                c.bound(
                    &["workloads", wname, "terminationGracePeriodSeconds"],
                    json!({"minimum": grace}),
                    format!(">= {grace}"),
                );
            }
            WorkloadClass::Migrate | WorkloadClass::Pool | WorkloadClass::Worker => {}
            WorkloadClass::Jobs => c.bound(
                &["workloads", wname, "replicaCount"],
                at_most(pods),
                format!("<= {pods}"),
            ),
        }
        if class != WorkloadClass::Migrate {
            let (surge, text) = surge_bound(pods, row.surge_pods);
            if !text.is_empty() {
                c.bound(
                    &["workloads", wname, "rollingUpdate", "maxSurge"],
                    surge,
                    text,
                );
            }
        }
        c.at_most_plan(values, &["workloads", wname, "processesPerPod"]);
        let (postgres, redis) = workload.allocations();
        for (alloc, d) in postgres {
            c.at_most_plan(values, &["workloads", wname, "postgres", alloc, "size"]);
            if d.size_without.is_some() {
                let path = ["workloads", wname, "postgres", alloc, "sizeWithout", "size"];
                c.at_most_plan(values, &path);
            }
        }
        for alloc in redis.keys() {
            c.at_most_plan(values, &["workloads", wname, "redis", alloc, "size"]);
        }
    }

    for feature in spec.features.keys() {
        if !flag(values, &["features", feature]) {
            c.bound(
                &["features", feature],
                json!({"const": false}),
                "= false".into(),
            );
        }
    }

    c.at_most_plan(values, &["dependencyCapacity", "retiringGenerations"]);
    let reserve = c.at_most_plan(values, &["dependencyCapacity", "postgres", "reserve"]);
    for r in spec.dependency_capacity.postgres.reservations.keys() {
        let path = ["dependencyCapacity", "postgres", "reservations", r.as_str()];
        c.at_most_plan(values, &path);
    }
    let peak = |f: &dyn Fn(&CapacityReport) -> u64| reports.iter().map(f).max().unwrap_or(0);
    let need = peak(&|r| r.postgres.peak).saturating_add(reserve);
    c.bound(
        &["dependencyCapacity", "postgres", "maxConnections"],
        json!({"minimum": need}),
        format!(">= {need}"),
    );
    c.at_most_plan(values, &["dependencyCapacity", "redis", "reservedClients"]);
    let need = peak(&|r| r.redis_total.peak);
    c.bound(
        &["dependencyCapacity", "redis", "maxConnections"],
        json!({"minimum": need}),
        format!(">= {need}"),
    );
    for server in spec.dependency_capacity.redis.servers.keys() {
        let s = server.as_str();
        let path = [
            "dependencyCapacity",
            "redis",
            "servers",
            s,
            "reservedClients",
        ];
        c.at_most_plan(values, &path);
        let need = peak(&|r| {
            r.redis_servers
                .iter()
                .find(|(n, _)| n == s)
                .map_or(0, |(_, t)| t.peak)
        });
        c.bound(
            &["dependencyCapacity", "redis", "servers", s, "maxClients"],
            json!({"anyOf": [{"const": 0}, {"minimum": need.max(1)}]}),
            format!("0 (unchecked) or >= {}", need.max(1)),
        );
    }

    // Timeouts: intervals that keep lock <= statement <= transaction.
    if spec.startup_settings.is_some() {
        for budget in ["foreground", "background"] {
            let seconds = |step: &str| {
                get(values, &["startupSettings", budget, step, "seconds"])
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0)
            };
            let (lock, transaction) = (seconds("lock"), seconds("transaction"));
            let path = |step: &'static str| ["startupSettings", budget, step, "seconds"];
            c.bound(
                &path("lock"),
                json!({"maximum": lock}),
                format!("<= {lock}"),
            );
            c.bound(
                &path("statement"),
                json!({"minimum": lock, "maximum": transaction}),
                format!("in [{lock}, {transaction}]"),
            );
            c.bound(
                &path("transaction"),
                json!({"minimum": transaction}),
                format!(">= {transaction}"),
            );
        }
    }

    drop(rows);
    let (schema, frozen_schema) = c.tree.build_as(frozen);
    PlanContract {
        name: name.to_string(),
        bounds: c.bounds,
        schema,
        frozen_schema,
        report: Some(plan_report),
    }
}

/// The ranges the rules that compare two fields are enumerated over: the largest
/// pod counts any plan allows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PodBounds {
    /// The largest `maxReplicas` any plan lets an autoscaler have (the
    /// `minReplicas <= maxReplicas` rule).
    pub max_replicas: u64,
    /// The largest pod count any plan lets a workload have, by `replicaCount` or an
    /// autoscaler's `maxReplicas` (the PodDisruptionBudget's `minAvailable` rule).
    pub pod_count: u64,
}

impl PodBounds {
    /// The largest of the plans' bounds.
    pub fn of(plans: &[PlanContract]) -> Self {
        PodBounds {
            max_replicas: largest_bound(plans, &[".maxReplicas"]),
            pod_count: largest_bound(plans, &[".maxReplicas", ".replicaCount"]),
        }
    }

    /// The larger of each bound.
    #[must_use]
    pub fn max(self, other: PodBounds) -> Self {
        PodBounds {
            max_replicas: self.max_replicas.max(other.max_replicas),
            pod_count: self.pod_count.max(other.pod_count),
        }
    }
}

/// `PodBounds::of(&[plan_contract(spec, name, values)])` without building the
/// contract: only the capacity report the bounds come from. `render` uses it for the
/// plans its values do not name.
pub fn pod_bounds(spec: &Spec, values: &Value) -> PodBounds {
    pod_bounds_over(&capacity_exprs(spec), spec, values)
}

/// [`pod_bounds`] with the spec's capacity formula already built.
pub fn pod_bounds_over(exprs: &CapacityExprs, spec: &Spec, values: &Value) -> PodBounds {
    let mut bounds = PodBounds::default();
    let Some((plan_report, _)) = report(exprs, spec, values) else {
        return bounds;
    };
    let rows = rows_by_workload(&plan_report);
    for (wname, workload) in spec.workloads.all() {
        let class = workload.class();
        let bounded = !class.autoscalers().is_empty() || class == WorkloadClass::Jobs;
        if !bounded || !flag(values, &["workloads", wname, "enabled"]) {
            continue;
        }
        let Some(row) = rows.get(wname) else {
            continue;
        };
        // As `largest_bound` reads it back from the bound's `at_most`.
        let pods = (row.max_pods as f64 as u64).min(INT_MAX);
        bounds.pod_count = bounds.pod_count.max(pods);
        if !class.autoscalers().is_empty() {
            bounds.max_replicas = bounds.max_replicas.max(pods);
        }
    }
    bounds
}

/// A capacity report's rows by workload name (the first row of a name): a plan reads
/// every workload's row, and a search per workload was quadratic in workloads.
fn rows_by_workload(
    report: &crate::capacity::report::CapacityReport,
) -> std::collections::HashMap<&str, &crate::capacity::report::WorkloadRow> {
    let mut rows = std::collections::HashMap::with_capacity(report.workloads.len());
    for row in &report.workloads {
        rows.entry(row.name.as_str()).or_insert(row);
    }
    rows
}

fn largest_bound(plans: &[PlanContract], suffixes: &[&str]) -> u64 {
    plans
        .iter()
        .flat_map(|p| &p.bounds)
        .filter(|b| suffixes.iter().any(|s| b.path.ends_with(s)))
        .filter_map(|b| b.at_most)
        .map(|m| m as u64)
        .max()
        .unwrap_or(0)
        .min(INT_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        let schema = json!({"type": "string", "pattern": pattern});
        jsonschema::draft7::new(&schema)
            .map(|v| v.is_valid(&json!(text)))
            .unwrap_or(false)
    }

    #[test]
    fn percent_patterns_accept_exactly_zero_to_max() {
        for max in [
            0u64, 1, 5, 9, 10, 12, 19, 20, 25, 50, 99, 100, 101, 110, 250, 999, 5000,
        ] {
            let pattern = percent_pattern(max);
            for p in 0..=1000u64 {
                assert_eq!(
                    matches(&pattern, &format!("{p}%")),
                    p <= max.min(999),
                    "max {max}, {p}%: {pattern}"
                );
            }
            for bad in ["05%", "00%", "-5%", "12.5%", "abc%", "5", "%", " 5%"] {
                assert!(!matches(&pattern, bad), "{pattern} accepted {bad}");
            }
        }
    }

    use crate::spec::testing::example;

    /// Each plan's report is the report of its whole values, which `generate`'s review
    /// of the plan takes instead of computing it: for every example and every spec
    /// under `tests/fixtures/spec/ok`, and every plan of each that has one.
    #[test]
    fn each_plan_reports_what_its_whole_values_report() {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut paths: Vec<String> = ["agent-platform", "llm-gateway", "web-shop"]
            .iter()
            .map(|name| format!("{root}/examples/{name}/shipshape.yaml"))
            .collect();
        for entry in std::fs::read_dir(format!("{root}/tests/fixtures/spec/ok")).unwrap() {
            paths.push(entry.unwrap().path().display().to_string());
        }
        let mut compared = 0;
        for path in &paths {
            let Ok(spec) = crate::spec::load_spec(&std::fs::read_to_string(path).unwrap(), path)
            else {
                continue;
            };
            let contract = crate::contract::Contract::of(&spec);
            let defaults = crate::values::default_values(&spec);
            for plan in &contract.plans {
                let values = crate::contract::schema::plan_values_of(
                    &defaults,
                    &contract.presets,
                    &plan.name,
                );
                // A plan without a report leaves its review to compute one.
                if let Some(report) = &plan.report {
                    let whole = Capacity::of(&spec, &values).report().ok();
                    assert_eq!(Some(report), whole.as_ref(), "{path}, plan {}", plan.name);
                    compared += 1;
                }
            }
        }
        assert!(compared >= 20, "{compared} reports compared");
    }

    /// Every value the capacity formula reads has a bound in every plan that enables
    /// its workload: a field added to the formula without a bound fails here.
    #[test]
    fn every_input_of_the_formula_is_bounded_in_every_plan() {
        for name in ["agent-platform", "llm-gateway"] {
            let spec = example(name);
            let mut inputs: Vec<String> = Vec::new();
            for w in crate::capacity::workload_exprs(&spec) {
                let mut exprs = vec![
                    w.max_pods.clone(),
                    w.surge_pods.clone(),
                    w.processes.clone(),
                ];
                exprs.extend(w.postgres.iter().map(|(_, e)| e.clone()));
                exprs.extend(w.redis.iter().map(|(_, _, e)| e.clone()));
                for e in exprs {
                    inputs.extend(e.value_paths().iter().map(ToString::to_string));
                }
            }
            for budget in [
                "retiringGenerations",
                "postgres.maxConnections",
                "postgres.reserve",
                "redis.maxConnections",
                "redis.reservedClients",
            ] {
                inputs.push(format!("dependencyCapacity.{budget}"));
            }
            for r in spec.dependency_capacity.postgres.reservations.keys() {
                inputs.push(format!("dependencyCapacity.postgres.reservations.{r}"));
            }
            for s in spec.dependency_capacity.redis.servers.keys() {
                inputs.push(format!("dependencyCapacity.redis.servers.{s}.maxClients"));
                inputs.push(format!(
                    "dependencyCapacity.redis.servers.{s}.reservedClients"
                ));
            }
            inputs.sort();
            inputs.dedup();
            for plan in crate::contract::schema::plan_contracts(&spec) {
                let values = crate::capacity::fit::preset_values(
                    &spec,
                    (plan.name != "default").then_some(plan.name.as_str()),
                )
                .unwrap();
                for input in &inputs {
                    let segments: Vec<&str> = input.split('.').collect();
                    let workload_off = segments[0] == "workloads"
                        && !flag(&values, &["workloads", segments[1], "enabled"]);
                    let is_flag = input.ends_with(".enabled") || segments[0] == "features";
                    let bounded = plan.bounds.iter().any(|b| &b.path == input);
                    let flag_on = get(&values, &segments).and_then(Value::as_bool) == Some(true);
                    let ok = if workload_off {
                        plan.bounds
                            .iter()
                            .any(|b| b.path == format!("workloads.{}.enabled", segments[1]))
                    } else if is_flag {
                        bounded || flag_on
                    } else {
                        bounded
                    };
                    assert!(ok, "{name} plan `{}`: `{input}` is read by the capacity formula but has no bound", plan.name);
                }
            }
        }
    }

    #[test]
    fn surge_bound_keeps_the_rounded_up_percentage_within_the_plan() {
        // 12 pods with 1 surge pod: 8% of 12 rounds up to 1, 9% to 2.
        let (schema, text) = surge_bound(12, 1);
        assert_eq!(text, "<= 1 or <= 8%");
        let v = jsonschema::draft7::new(&schema).unwrap();
        assert!(v.is_valid(&json!(1)));
        assert!(!v.is_valid(&json!(2)));
        assert!(v.is_valid(&json!("8%")));
        assert!(!v.is_valid(&json!("9%")));
        let surge_of_12 = |max_surge: &str| {
            let values = json!({});
            let ctx = crate::expr::EvalContext {
                values: &values,
                item: None,
                release_name: "",
                release_namespace: "",
                chart_name: "",
                chart_version: "",
                chart_app_version: "",
                named: None,
                base: None,
            };
            let pods = crate::expr::lit(12);
            crate::capacity::formula::surge_pods(&pods, &crate::expr::lit(max_surge))
                .evaluate(&ctx)
                .unwrap()
        };
        assert_eq!(surge_of_12("8%"), json!(1));
        assert_eq!(surge_of_12("9%"), json!(2));
        assert_eq!(surge_bound(0, 0).1, "");
    }

    /// Fragments added at paths in any order come out nested under `properties`, keys
    /// in ascending order, several at one node under `allOf` in the order added; the
    /// frozen form is the JSON's, frozen.
    #[test]
    fn a_schema_tree_nests_its_fragments_by_path_in_key_order() {
        let tree = || {
            let mut tree = SchemaTree::default();
            tree.add(&["b", "y"], json!({"const": 1}));
            tree.add(&["a"], json!({"minimum": 0}));
            tree.add(&["b", "x"], json!({"const": 2}));
            tree.add(&["b", "y"], json!({"maximum": 3}));
            tree.node(&["b"]).add(&["z"], json!({"const": 4}));
            tree.add(&[], json!({"required": ["a"]}));
            tree
        };
        let expected = json!({"allOf": [
            {"required": ["a"]},
            {"properties": {
                "a": {"minimum": 0},
                "b": {"properties": {
                    "x": {"const": 2},
                    "y": {"allOf": [{"const": 1}, {"maximum": 3}]},
                    "z": {"const": 4}
                }}
            }}
        ]});
        assert_eq!(tree().build(), expected);
        assert_eq!(tree().build_frozen(), FrozenSchema::of_schema(expected));
        assert_eq!(SchemaTree::default().build(), json!({}));
    }
}
