//! The capacity inputs of every workload as expressions over values: max pods, surge
//! pods, processes per pod and the effective allocation sizes. They are defined once
//! here; the guard and `shipshape capacity` evaluate them natively and hand the
//! numbers to [`crate::capacity`], and the `<release>-dependency-capacity` ConfigMap
//! prints them (with the formula's sums and products) as Go template text, so the
//! ConfigMap follows the values at install time.

use crate::capacity::allocations::{effective_size, postgres_allocation_on};
use crate::capacity::{Budgets, RedisAllocation, RedisServerBudget, Surge, WorkloadLoad};
use crate::expr::{lit, val, CmpOp, EvalContext, EvalError, Expr, ValuePath};
use crate::model::{DependencyCapacity, IntOrPercent};
use crate::spec::{Spec, WorkloadClass};
use serde_json::Value;

/// One workload's capacity inputs.
pub struct WorkloadExprs {
    pub name: String,
    pub class: WorkloadClass,
    /// Whether an autoscaler owns the replica count.
    pub autoscaled: Expr,
    /// Pods at most: the autoscaler maximum, else replicas; 0 when disabled.
    pub max_pods: Expr,
    /// Pods a rollout adds on top (0 when there are no pods).
    pub surge_pods: Expr,
    /// Processes per pod.
    pub processes: Expr,
    /// PostgreSQL connections per process, by allocation (0 while its feature is off;
    /// allocations that are part of another are left out).
    pub postgres: Vec<(String, Expr)>,
    /// Redis clients per process, by allocation: `(name, server, size)`.
    pub redis: Vec<(String, String, Expr)>,
}

impl WorkloadExprs {
    /// `(max pods + surge pods + max pods x retiring generations) x processes per pod`;
    /// for the migrate hook Job `max pods x processes per pod`.
    pub fn peak_processes(&self) -> Expr {
        if self.class == WorkloadClass::Migrate {
            // The hook Job: its pods, no surge, no retiring generation.
            return Expr::Mul(vec![self.max_pods.clone(), self.processes.clone()]);
        }
        Expr::Mul(vec![
            Expr::Add(vec![
                self.max_pods.clone(),
                self.surge_pods.clone(),
                Expr::Mul(vec![self.max_pods.clone(), retiring()]),
            ]),
            self.processes.clone(),
        ])
    }

    /// PostgreSQL connections at the peak.
    pub fn postgres_connections(&self) -> Expr {
        let per_process: Vec<Expr> = self.postgres.iter().map(|(_, e)| e.clone()).collect();
        Expr::Mul(vec![
            self.peak_processes(),
            Expr::Add(with_zero(per_process)),
        ])
    }

    /// Redis clients at the peak, on one server or (`None`) on all.
    pub fn redis_connections(&self, server: Option<&str>) -> Expr {
        let per_process: Vec<Expr> = self
            .redis
            .iter()
            .filter(|(_, s, _)| server.is_none_or(|want| want == s))
            .map(|(_, _, e)| e.clone())
            .collect();
        Expr::Mul(vec![
            self.peak_processes(),
            Expr::Add(with_zero(per_process)),
        ])
    }
}

fn with_zero(mut terms: Vec<Expr>) -> Vec<Expr> {
    terms.push(lit(0));
    terms
}

fn capacity_path() -> ValuePath {
    ValuePath::new(["dependencyCapacity"])
}

fn retiring() -> Expr {
    val(&capacity_path().child("retiringGenerations"))
}

/// The capacity inputs of every workload of the spec, sorted by name.
pub fn workload_exprs(spec: &Spec) -> Vec<WorkloadExprs> {
    spec.workloads
        .all()
        .into_iter()
        .map(|(name, workload)| {
            let class = workload.class();
            let declared = workload.to_values();
            let path = ValuePath::new(["workloads", name]);
            let enabled = val(&path.child("enabled"));
            let (autoscaled, pods) = match class {
                WorkloadClass::Api => {
                    let hpa = path.child("autoscaling");
                    let keda = path.child("keda");
                    (
                        Expr::Or(vec![
                            val(&hpa.child("enabled")),
                            val(&keda.child("enabled")),
                        ]),
                        Expr::If(
                            Box::new(val(&hpa.child("enabled"))),
                            Box::new(val(&hpa.child("maxReplicas"))),
                            Box::new(Expr::If(
                                Box::new(val(&keda.child("enabled"))),
                                Box::new(val(&keda.child("maxReplicas"))),
                                Box::new(val(&path.child("replicaCount"))),
                            )),
                        ),
                    )
                }
                // The hook Job runs one pod while the old release still runs.
                WorkloadClass::Migrate => (lit(false), lit(1)),
                _ => (lit(false), val(&path.child("replicaCount"))),
            };
            let max_pods = Expr::If(Box::new(enabled), Box::new(pods), Box::new(lit(0)));
            let surge_pods = if class == WorkloadClass::Migrate {
                lit(0)
            } else {
                Expr::If(
                    Box::new(max_pods.clone().cmp(CmpOp::Gt, lit(0))),
                    Box::new(Expr::SurgePods(
                        Box::new(max_pods.clone()),
                        Box::new(val(&path.child("rollingUpdate").child("maxSurge"))),
                    )),
                    Box::new(lit(0)),
                )
            };
            let postgres = declared
                .get("postgres")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .filter(|(_, d)| {
                            d.get("partOf")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .is_empty()
                        })
                        .map(|(alloc, d)| {
                            let size = effective_size(spec, name, "postgres", alloc, d);
                            let on = postgres_allocation_on(d);
                            (
                                alloc.clone(),
                                Expr::If(Box::new(on), Box::new(size), Box::new(lit(0))),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            let redis = declared
                .get("redis")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(alloc, d)| {
                            let server = d
                                .get("server")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string();
                            (
                                alloc.clone(),
                                server,
                                effective_size(spec, name, "redis", alloc, d),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            WorkloadExprs {
                name: name.to_string(),
                class,
                autoscaled,
                max_pods,
                surge_pods,
                processes: val(&path.child("processesPerPod")),
                postgres,
                redis,
            }
        })
        .collect()
}

/// `maxSurge` as the Deployment renders it: a percentage or a count (the formula's
/// rounding is in [`Surge::pods`], the same as [`Expr::SurgePods`]). A value Kubernetes
/// would refuse is an error, never counted as 0.
fn rendered_surge(values: &Value, w: &WorkloadExprs) -> Result<Surge, EvalError> {
    if w.class == WorkloadClass::Migrate {
        return Ok(Surge::Pods(0));
    }
    let path = ValuePath::new(["workloads", &w.name, "rollingUpdate", "maxSurge"]);
    let raw = path.lookup(values).cloned().unwrap_or(Value::Null);
    match crate::model::int_or_percent(&raw, 999) {
        Some(IntOrPercent::Count(n)) => Ok(Surge::Pods(n)),
        Some(IntOrPercent::Percent(p)) => Ok(Surge::Percent(p)),
        None => Err(EvalError {
            expression: format!(".Values.{path}"),
            reason: format!(
                "`{path}` is {}, not a whole number or a percentage `N%`",
                crate::expr::gojson::to_go_json(&raw)
            ),
        }),
    }
}

fn as_u64(v: &Value) -> u64 {
    u64::try_from(crate::expr::sprig_int(v)).unwrap_or(0)
}

/// Evaluates the capacity inputs against one preset's resolved values.
pub fn capacity_inputs(
    spec: &Spec,
    values: &Value,
) -> Result<(Vec<WorkloadLoad>, Budgets), EvalError> {
    let ctx = EvalContext {
        values,
        item: None,
        release_name: "",
        release_namespace: "",
        chart_name: &spec.chart.name,
        chart_version: &spec.chart.version,
        chart_app_version: &spec.chart.app_version,
    };
    let mut loads = Vec::new();
    for w in workload_exprs(spec) {
        let max_pods = as_u64(&w.max_pods.evaluate(&ctx)?);
        let autoscaled = crate::expr::truthy(&w.autoscaled.evaluate(&ctx)?);
        let mut postgres = Vec::new();
        for (name, e) in &w.postgres {
            postgres.push((name.clone(), as_u64(&e.evaluate(&ctx)?)));
        }
        let mut redis = Vec::new();
        for (name, server, e) in &w.redis {
            redis.push(RedisAllocation {
                name: name.clone(),
                server: server.clone(),
                clients: as_u64(&e.evaluate(&ctx)?),
            });
        }
        loads.push(WorkloadLoad {
            name: w.name.clone(),
            class: w.class.name().to_string(),
            enabled: max_pods > 0,
            replicas: max_pods,
            autoscaler_max: autoscaled.then_some(max_pods),
            surge: rendered_surge(values, &w)?,
            processes_per_pod: as_u64(&w.processes.evaluate(&ctx)?),
            postgres,
            redis,
        });
    }
    let typed: DependencyCapacity = values
        .get("dependencyCapacity")
        .map(crate::values::integral_numbers)
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| EvalError {
            expression: ".Values.dependencyCapacity".into(),
            reason: format!("`dependencyCapacity` does not fit its type: {e}"),
        })?
        .unwrap_or_default();
    let budgets = Budgets {
        retiring_generations: u64::from(typed.retiring_generations),
        postgres_max_connections: u64::from(typed.postgres.max_connections),
        postgres_reserve: u64::from(typed.postgres.reserve),
        postgres_reservations: typed
            .postgres
            .reservations
            .iter()
            .map(|(k, v)| (k.clone(), u64::from(*v)))
            .collect(),
        redis_max_connections: u64::from(typed.redis.max_connections),
        redis_reserved_clients: u64::from(typed.redis.reserved_clients),
        redis_servers: typed
            .redis
            .servers
            .iter()
            .map(|(name, s)| RedisServerBudget {
                name: name.clone(),
                max_clients: (s.max_clients > 0).then_some(u64::from(s.max_clients)),
                reserved_clients: u64::from(s.reserved_clients),
            })
            .collect(),
    };
    Ok((loads, budgets))
}

/// The capacity report of one preset's resolved values.
pub fn capacity_report(
    spec: &Spec,
    values: &Value,
) -> Result<crate::capacity::CapacityReport, EvalError> {
    let (loads, budgets) = capacity_inputs(spec, values)?;
    Ok(crate::capacity::compute_capacity(&loads, &budgets))
}
