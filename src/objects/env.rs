//! The env the chart manages in every container: processes per pod, allocation
//! sizes, the Redis URL Secrets, the replica mode, the shared stores' backends and
//! the scheduling configuration of `jobs` and `pool` workloads; then the user's.
//! Explicit `env` wins over `envFrom`, so a ConfigMap or Secret cannot raise them.

use crate::capacity::allocations::{effective_size, postgres_allocation_on};
use crate::expr::{lit, val, Expr, ValuePath};
use crate::manifest;
use crate::model::{POSTGRES_PASSWORD_ENV, VALKEY_PASSWORD_ENV};
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
    out.extend(feature_env(w));
    out.extend(bundled_env(w));
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
        let mut when = vec![env.clone(), val(&secret)];
        if crate::model::bundleable_server_name(server) {
            // The bundled server's URL instead, while it runs.
            when.push(Expr::Not(Box::new(bundled_on(server))));
        }
        let condition = Expr::And(when);
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

/// Each feature flag with a switch variable, as `true`/`false`: the application opens
/// the allocations the capacity report counts for it.
fn feature_env(w: &Workload<'_>) -> Vec<(ListPart, Expr)> {
    w.spec
        .feature_switches
        .iter()
        .filter(|(_, switch)| !switch.env.is_empty())
        .map(|(feature, _)| {
            let name = val(&ValuePath::new(["featureSwitches", feature, "env"]));
            let on = val(&ValuePath::new(["features", feature]));
            (
                ListPart::Item {
                    value: manifest!({ "name": (name.clone()), "value": (flag(on)) }),
                    when: Some(name.clone()),
                },
                name,
            )
        })
        .collect()
}

/// Whether the bundled server for the Redis server `server` runs.
fn bundled_on(server: &str) -> Expr {
    val(&crate::objects::stateful_set::redis_value(
        server, "enabled",
    ))
}

/// The bundled Valkey server's URL: `redis://:$(password)@<release>-bundled-valkey-<server>:6379`
/// (Kubernetes expands `$(...)` from the variable set before it).
pub fn bundled_redis_url(spec: &Spec, server: &str) -> Expr {
    let component = crate::objects::stateful_set::valkey_component(server);
    Expr::Concat(vec![
        lit(format!("redis://:$({VALKEY_PASSWORD_ENV})@")),
        crate::objects::common::release_name_with(spec, &component),
        lit(":6379"),
    ])
}

/// The bundled PostgreSQL's URL in the declared scheme.
fn bundled_postgres_url(spec: &Spec) -> Expr {
    let pg = |k: &str| val(&crate::objects::stateful_set::postgres_value(k));
    let host =
        crate::objects::common::release_name_with(spec, crate::objects::stateful_set::POSTGRES);
    let scheme = val(&ValuePath::new([
        "dependencyCapacity",
        "postgres",
        "urlScheme",
    ]));
    Expr::If(
        Box::new(Expr::StrEq(Box::new(scheme), Box::new(lit("jdbc")))),
        Box::new(Expr::Concat(vec![
            lit("jdbc:postgresql://"),
            host.clone(),
            lit(":5432/"),
            pg("database"),
        ])),
        Box::new(Expr::Concat(vec![
            lit("postgresql://"),
            pg("username"),
            lit(format!(":$({POSTGRES_PASSWORD_ENV})@")),
            host,
            lit(":5432/"),
            pg("database"),
        ])),
    )
}

/// A variable read from a key of the bundled servers' Secret, present when `when` holds.
fn bundled_secret_item(w: &Workload<'_>, name: Expr, key: &str, when: Expr) -> (ListPart, Expr) {
    (
        ListPart::Item {
            value: manifest!({
                "name": (name),
                "valueFrom": {
                    "secretKeyRef": {
                        "name": (crate::objects::secret::bundled_secret_name(w.spec)),
                        "key": (key),
                    },
                },
            }),
            when: Some(when.clone()),
        },
        when,
    )
}

/// The Redis servers whose bundled URL a workload reads: the servers of its allocations
/// with a declared `urlEnv`, and the stores' server when the spec has shared stores.
pub fn bundled_url_servers(w: &Workload<'_>) -> (Vec<String>, Option<String>) {
    let bundleable = crate::values::bundled_redis_servers(w.spec);
    let used = used_servers(&w.declared);
    let servers = w
        .spec
        .dependency_capacity
        .redis
        .servers
        .iter()
        .filter(|(name, s)| {
            !s.url_env.is_empty()
                && used.contains(&name.as_str())
                && bundleable.contains(name.as_str())
        })
        .map(|(name, _)| name.clone())
        .collect();
    let store = &w.spec.store_redis.server;
    let store =
        (!w.shared_stores.is_empty() && bundleable.contains(store.as_str())).then(|| store.clone());
    (servers, store)
}

/// The bundled servers' credentials and URLs: passwords first, so that the URLs can
/// expand them.
fn bundled_env(w: &Workload<'_>) -> Vec<(ListPart, Expr)> {
    let mut out = Vec::new();
    let has_postgres = !declared_allocations(w, "postgres").is_empty();
    if has_postgres {
        let on = val(&crate::objects::stateful_set::postgres_value("enabled"));
        out.push(bundled_secret_item(
            w,
            lit(POSTGRES_PASSWORD_ENV),
            "password",
            on.clone(),
        ));
        let pg = ValuePath::new(["dependencyCapacity", "postgres"]);
        let url = val(&pg.child("urlEnv"));
        let when = Expr::And(vec![on.clone(), url.clone()]);
        out.push((
            ListPart::Item {
                value: manifest!({ "name": (url), "value": (bundled_postgres_url(w.spec)) }),
                when: Some(when.clone()),
            },
            when,
        ));
        let user = val(&pg.child("userEnv"));
        let when = Expr::And(vec![on.clone(), user.clone()]);
        out.push((
            ListPart::Item {
                value: manifest!({
                    "name": (user),
                    "value": (crate::objects::stateful_set::postgres_value("username")),
                }),
                when: Some(when.clone()),
            },
            when,
        ));
        let password = val(&pg.child("passwordEnv"));
        let when = Expr::And(vec![on, password.clone()]);
        out.push(bundled_secret_item(w, password, "password", when));
    }
    let (servers, store) = bundled_url_servers(w);
    let mut any: Vec<Expr> = servers.iter().map(|s| bundled_on(s)).collect();
    any.extend(store.iter().map(|s| bundled_on(s)));
    if !any.is_empty() {
        out.push(bundled_secret_item(
            w,
            lit(VALKEY_PASSWORD_ENV),
            "valkey-password",
            Expr::Or(any),
        ));
    }
    for server in &servers {
        let path = ValuePath::new(["dependencyCapacity", "redis", "servers", server]);
        let env = val(&path.child("urlEnv"));
        let when = Expr::And(vec![env.clone(), bundled_on(server)]);
        out.push((
            ListPart::Item {
                value: manifest!({ "name": (env), "value": (bundled_redis_url(w.spec, server)) }),
                when: Some(when.clone()),
            },
            when,
        ));
    }
    out
}

fn used_servers(declared: &Value) -> Vec<&str> {
    declared
        .get("redis")
        .and_then(Value::as_object)
        .map(|m| {
            m.values()
                .filter_map(|a| a.get("server").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default()
}

/// The Redis servers with a URL from a Secret that a workload has allocations on.
pub fn secret_url_servers(spec: &Spec, declared: &Value) -> Vec<String> {
    let used = used_servers(declared);
    spec.dependency_capacity
        .redis
        .servers
        .iter()
        .filter(|(name, s)| s.url_secret.is_some() && used.contains(&name.as_str()))
        .map(|(name, _)| name.clone())
        .collect()
}

/// The container's `env` (the managed entries, then the Secret's and the user's), and
/// when it has any entry at all. The managed entries are built once for both.
pub fn container_env(w: &Workload<'_>) -> (Expr, Node) {
    let (managed, mut conditions): (Vec<ListPart>, Vec<Expr>) = managed_env(w).into_iter().unzip();
    if !w.spec.secrets.keys.is_empty() {
        conditions.push(lit(true));
    }
    conditions.push(val(&w.value("env")));
    let env = manifest!([
        ..(managed),
        ..(crate::objects::secret::secret_env(w.spec)),
        ..(items_of(&w.value("env"))),
    ]);
    (Expr::Or(conditions), env)
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
    for store in w.shared_stores {
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
        let url = val(&ValuePath::new(["storeRedis", "url"]));
        // While the stores' server is bundled, the bundled server's URL.
        let url = match bundled_url_servers(w).1 {
            Some(server) => Expr::If(
                Box::new(bundled_on(&server)),
                Box::new(bundled_redis_url(w.spec, &server)),
                Box::new(url),
            ),
            None => url,
        };
        out.push(named_env("redisUrl", url, Expr::Or(any_redis)));
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
