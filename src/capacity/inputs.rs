//! The formula's inputs for a spec: which values each workload's max pods, surge,
//! processes and allocation sizes are read from, and the checks a preset's values must
//! pass before the formula is evaluated over them.

use crate::capacity::allocations::{allocation_on_feature, effective_size_with};
use crate::capacity::formula::{CapacityExprs, WorkloadExprs};
use crate::expr::{lit, val, EvalContext, EvalError, Expr, ValuePath};
use crate::model::DependencyCapacity;
use crate::spec::{Spec, WorkloadClass};
use serde_json::Value;

/// The whole formula of the spec: its workloads (sorted by name), its declared
/// PostgreSQL reservations and Redis servers.
pub fn capacity_exprs(spec: &Spec) -> CapacityExprs {
    let declared = &spec.dependency_capacity;
    CapacityExprs::new(
        workload_exprs(spec),
        declared.postgres.reservations.keys().map(String::as_str),
        declared.redis.servers.keys().map(String::as_str),
    )
}

/// The capacity inputs of every workload of the spec, sorted by name.
pub fn workload_exprs(spec: &Spec) -> Vec<WorkloadExprs> {
    spec.workloads
        .all()
        .into_iter()
        .map(|(name, workload)| {
            let class = workload.class();
            let (postgres, redis) = workload.allocations();
            let path = ValuePath::new(["workloads", name]);
            let (autoscaled, pods) = pods(&path, class);
            let max_pods = Expr::If(
                Box::new(val(&path.child("enabled"))),
                Box::new(pods),
                Box::new(lit(0)),
            );
            let max_surge = (class != WorkloadClass::Migrate)
                .then(|| val(&path.child("rollingUpdate").child("maxSurge")));
            let postgres = postgres
                .iter()
                .filter(|(_, d)| d.part_of.is_empty())
                .map(|(alloc, d)| {
                    let without = d.size_without.as_ref().map(|s| s.workload.as_str());
                    let size = effective_size_with(spec, name, "postgres", alloc, without);
                    let on = allocation_on_feature(&d.feature);
                    (
                        alloc.clone(),
                        Expr::If(Box::new(on), Box::new(size), Box::new(lit(0))),
                    )
                })
                .collect();
            let redis = redis
                .iter()
                .map(|(alloc, d)| {
                    let size = effective_size_with(spec, name, "redis", alloc, None);
                    (alloc.clone(), d.server.clone(), size)
                })
                .collect();
            WorkloadExprs::new(
                name,
                class,
                autoscaled,
                max_pods,
                max_surge,
                val(&path.child("processesPerPod")),
                postgres,
                redis,
            )
        })
        .collect()
}

/// Whether an autoscaler owns the pods, and the pods of an enabled workload: the
/// first autoscaler's maximum that is on (an HPA, or the api's KEDA ScaledObject), the
/// hook Job's one pod (migrate), else the replicas.
fn pods(path: &ValuePath, class: WorkloadClass) -> (Expr, Expr) {
    if class == WorkloadClass::Migrate {
        // The hook Job runs one pod while the old release still runs.
        return (lit(false), lit(1));
    }
    let scalers = class.autoscalers();
    let mut pods = val(&path.child("replicaCount"));
    for key in scalers.iter().rev() {
        let scaler = path.child(key);
        pods = Expr::If(
            Box::new(val(&scaler.child("enabled"))),
            Box::new(val(&scaler.child("maxReplicas"))),
            Box::new(pods),
        );
    }
    (autoscaler_on(path, class), pods)
}

/// Whether one of the class's autoscalers is on (false for a class without one): the
/// formula's branch, and the Deployment's choice to leave `replicas` to it.
pub fn autoscaler_on(path: &ValuePath, class: WorkloadClass) -> Expr {
    match class.autoscalers() {
        [] => lit(false),
        [one] => val(&path.child(one).child("enabled")),
        several => Expr::Or(
            several
                .iter()
                .map(|key| val(&path.child(key).child("enabled")))
                .collect(),
        ),
    }
}

/// The context the formula is evaluated in: the values (no release is needed).
pub fn eval_context<'a>(spec: &'a Spec, values: &'a Value) -> EvalContext<'a> {
    EvalContext {
        values,
        item: None,
        release_name: "",
        release_namespace: "",
        chart_name: &spec.chart.name,
        chart_version: &spec.chart.version,
        chart_app_version: &spec.chart.app_version,
        named: None,
        base: None,
    }
}

/// Refuses values the formula would silently read as 0: a `maxSurge` Kubernetes would
/// refuse, budgets that do not fit their types.
pub fn check_inputs(exprs: &CapacityExprs, ctx: &EvalContext<'_>) -> Result<(), EvalError> {
    for w in &exprs.workloads {
        let Some(surge) = &w.max_surge else {
            continue;
        };
        let raw = surge.evaluate(ctx)?;
        if crate::model::int_or_percent(&raw, 999).is_none() {
            let (expression, name) = match surge {
                Expr::Ref(path) => (format!(".Values.{path}"), path.to_string()),
                other => (other.to_go(), other.to_go()),
            };
            return Err(EvalError {
                expression,
                reason: format!(
                    "`{name}` is {}, not a whole number or a percentage `N%`",
                    crate::expr::gojson::to_go_json(&raw)
                ),
            });
        }
    }
    if let Some(budgets) = ctx.values.get("dependencyCapacity") {
        <DependencyCapacity as serde::Deserialize>::deserialize(crate::values::WholeNumbers(
            budgets,
        ))
        .map_err(|e| EvalError {
            expression: ".Values.dependencyCapacity".into(),
            reason: format!("`dependencyCapacity` does not fit its type: {e}"),
        })?;
    }
    Ok(())
}
