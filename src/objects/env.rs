//! The env the chart manages in every container: processes per pod, allocation
//! sizes, the Redis URL Secrets, the replica mode, the shared stores' backends and
//! the scheduling configuration of `jobs` and `pool` workloads; then the user's.
//! Explicit `env` wins over `envFrom`, so a ConfigMap or Secret cannot raise them.

use crate::capacity::allocations::{effective_size, postgres_allocation_on};
use crate::expr::{lit, val, Expr, ValuePath};
use crate::manifest;
use crate::objects::common::can_run_several_pods;
use crate::objects::tree::{items_of, ListPart, Node};
use crate::objects::Workload;
use crate::spec::{Spec, WorkloadClass};
use serde_json::Value;

/// A declared allocation of the workload: `(name, declaration)` for `postgres`/`redis`.
fn declared_allocations<'v>(w: &'v Workload<'_>, dependency: &str) -> Vec<(&'v String, &'v Value)> {
    w.declared
        .get(dependency)
        .and_then(Value::as_object)
        .map(|m| m.iter().collect())
        .unwrap_or_default()
}

/// An env entry setting the allocation's `env` to an integer, present when `env` is
/// set and `when` holds; with the condition, for the `env` key's own presence.
fn managed_env_item(alloc_path: &ValuePath, value: Expr, when: Expr) -> (ListPart, Expr) {
    let env = val(&alloc_path.child("env"));
    let condition = Expr::And(vec![env.clone(), when]);
    (
        ListPart::Item {
            value: manifest!({ "name": (env), "value": (Expr::IntString(Box::new(value))) }),
            when: Some(condition.clone()),
        },
        condition,
    )
}

/// The env the chart manages (processes per pod, allocation sizes), then the user's.
/// Explicit `env` wins over `envFrom`, so a ConfigMap or Secret cannot raise them.
fn managed_env(w: &Workload<'_>) -> Vec<(ListPart, Expr)> {
    let mut out = vec![(
        ListPart::Each {
            list: w.value("processEnv"),
            item: manifest!({
                "name": (Expr::Item),
                "value": (Expr::IntString(Box::new(val(&w.value("processesPerPod"))))),
            }),
        },
        val(&w.value("processEnv")),
    )];
    out.extend(replica_and_scheduling_env(w));
    for (alloc, declared) in declared_allocations(w, "postgres") {
        let path = w.value("postgres").child(alloc);
        let size = effective_size(w.spec, w.name, "postgres", alloc, declared);
        out.push(managed_env_item(
            &path,
            size,
            postgres_allocation_on(declared),
        ));
    }
    for (alloc, declared) in declared_allocations(w, "redis") {
        let path = w.value("redis").child(alloc);
        let size = effective_size(w.spec, w.name, "redis", alloc, declared);
        out.push(managed_env_item(&path, size, lit(true)));
    }
    for server in &w.secret_url_servers {
        let path = ValuePath::new(["dependencyCapacity", "redis", "servers", server]);
        let secret = path.child("urlSecret");
        let env = val(&path.child("urlEnv"));
        let condition = Expr::And(vec![env.clone(), val(&secret)]);
        out.push((
            ListPart::Item {
                value: manifest!({
                    "name": (env),
                    "valueFrom": {
                        "secretKeyRef": {
                            "name": (secret.child("name")),
                            "key": (secret.child("key")),
                        },
                    },
                }),
                when: Some(condition.clone()),
            },
            condition,
        ));
    }
    out
}

/// The Redis servers with a URL from a Secret that a workload has allocations on.
pub fn secret_url_servers(spec: &Spec, declared: &Value) -> Vec<String> {
    let used: Vec<&str> = declared
        .get("redis")
        .and_then(Value::as_object)
        .map(|m| {
            m.values()
                .filter_map(|a| a.get("server").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    spec.dependency_capacity
        .redis
        .servers
        .iter()
        .filter(|(name, s)| s.url_secret.is_some() && used.contains(&name.as_str()))
        .map(|(name, _)| name.clone())
        .collect()
}

/// The container's `env`: the managed entries, then the user's.
pub fn managed_and_user_env(w: &Workload<'_>) -> Node {
    let managed: Vec<ListPart> = managed_env(w).into_iter().map(|(p, _)| p).collect();
    manifest!([
        ..(managed),
        ..(crate::objects::secret::secret_env(w.spec)),
        ..(items_of(&w.value("env"))),
    ])
}

/// When the container has any `env` at all.
pub fn env_conditions(w: &Workload<'_>) -> Vec<Expr> {
    let mut conditions: Vec<Expr> = managed_env(w).into_iter().map(|(_, c)| c).collect();
    if !w.spec.secrets.keys.is_empty() {
        conditions.push(lit(true));
    }
    conditions.push(val(&w.value("env")));
    conditions
}

/// An env entry whose name comes from `managedEnv.<key>`, present when that name is set.
fn named_env(key: &str, value: Expr, when: Expr) -> (ListPart, Expr) {
    let name = val(&ValuePath::new(["managedEnv", key]));
    let condition = Expr::And(vec![name.clone(), when]);
    (
        ListPart::Item {
            value: manifest!({ "name": (name), "value": (value) }),
            when: Some(condition.clone()),
        },
        condition,
    )
}

fn flag(e: Expr) -> Expr {
    Expr::If(Box::new(e), Box::new(lit("true")), Box::new(lit("false")))
}

/// Replica mode, replica strictness, shared store backends and their Redis URL, and the
/// scheduling configuration of `jobs` and `pool` workloads.
fn replica_and_scheduling_env(w: &Workload<'_>) -> Vec<(ListPart, Expr)> {
    let mut out = vec![
        named_env(
            "replicaMode",
            Expr::If(
                Box::new(can_run_several_pods(w.name, w.class)),
                Box::new(lit("multi")),
                Box::new(lit("single")),
            ),
            lit(true),
        ),
        named_env(
            "replicaStrict",
            flag(val(&ValuePath::new(["replicaStrict"]))),
            lit(true),
        ),
    ];
    let stores = ValuePath::new(["stores"]);
    let mut any_redis = Vec::new();
    for store in &w.shared_stores {
        let path = stores.child(store);
        any_redis.push(Expr::StrEq(
            Box::new(val(&path.child("backend"))),
            Box::new(lit("redis")),
        ));
        let env = val(&path.child("env"));
        out.push((
            ListPart::Item {
                value: manifest!({ "name": (env.clone()), "value": (path.child("backend")) }),
                when: Some(env.clone()),
            },
            env,
        ));
    }
    if !any_redis.is_empty() {
        out.push(named_env(
            "redisUrl",
            val(&ValuePath::new(["storeRedis", "url"])),
            Expr::Or(any_redis),
        ));
    }
    let pools = ValuePath::new(["scheduling", "pools"]);
    match w.class {
        WorkloadClass::Jobs => {
            let offloaded: Vec<Expr> = w
                .pool_workloads
                .iter()
                .map(|p| {
                    Expr::If(
                        Box::new(val(&ValuePath::new(["workloads", p, "enabled"]))),
                        Box::new(lit(format!("{p},"))),
                        Box::new(lit("")),
                    )
                })
                .collect();
            out.push(named_env(
                "offloadedPools",
                Expr::TrimSuffix(",", Box::new(Expr::Concat(offloaded))),
                lit(true),
            ));
            let skipped: Vec<Expr> = w
                .pool_workloads
                .iter()
                .map(|p| {
                    Expr::ListIf(
                        Box::new(val(&ValuePath::new(["workloads", p, "enabled"]))),
                        Box::new(val(&pools.child(p).child("jobs"))),
                    )
                })
                .collect();
            out.push(named_env(
                "skipJobs",
                Expr::JoinLists(",", skipped),
                lit(true),
            ));
        }
        WorkloadClass::Pool => {
            out.push(named_env("schedulingPool", lit(w.name), lit(true)));
            out.push(named_env(
                "keepJobs",
                Expr::JoinLists(",", vec![val(&pools.child(w.name).child("jobs"))]),
                lit(true),
            ));
            out.push(named_env(
                "leaderElection",
                flag(val(&w.value("leaderElection"))),
                lit(true),
            ));
            out.push(named_env(
                "claiming",
                flag(val(&w.value("claiming"))),
                lit(true),
            ));
        }
        _ => {}
    }
    out
}
