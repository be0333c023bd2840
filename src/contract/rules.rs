//! The rules `values.schema.json` holds beyond the types: one `if`/`then` per guard
//! that draft-07 can say, over the whole values tree (workload flags, shared stores,
//! the job partition, the structure the spec fixes).

use crate::contract::definitions::{
    args_not_managed_name, definition_ref, env_not_managed_name, managed_env_of_workloads,
    pdb_below_fewest_pods_name, ManagedEnv, MIN_REPLICAS_AT_MOST_MAX, SERVICE_EXPOSED_PORT,
};
use crate::contract::object;
use crate::contract::plans::{PlanContract, PodBounds};
use crate::contract::schema::plan_contracts;
use crate::spec::{Spec, WorkloadClass};
use serde_json::{json, Map, Value};

/// The definition of `values.schema.json` a workload's values that relax nothing of
/// Pod Security "restricted" match (`security.restricted`).
pub const RESTRICTED_POD: &str = "PodSecurityRestricted";

/// The definition of `values.schema.json` that every shared store whose loss is fatal
/// is on Redis (`replicas.shared-stores`).
pub const SHARED_STORES_ON_REDIS: &str = "SharedStoresOnRedis";

/// The definitions the root rules refer to, shared by every workload's rule instead
/// of repeated in each (they go into `values.schema.json`'s `definitions`).
pub fn rule_definitions(spec: &Spec) -> Map<String, Value> {
    let mut definitions = Map::new();
    definitions.insert(
        RESTRICTED_POD.into(),
        crate::guards::security_restricted::workload_schema(&[]),
    );
    let stores: Map<String, Value> = fatal_shared_stores(spec)
        .iter()
        .map(|s| {
            (
                s.to_string(),
                json!({"properties": {"backend": {"const": "redis"}}}),
            )
        })
        .collect();
    if !stores.is_empty() {
        definitions.insert(
            SHARED_STORES_ON_REDIS.into(),
            json!({"properties": {"stores": {"properties": stores}}}),
        );
    }
    definitions
}

/// The shared stores whose loss is fatal: each must be on Redis before a workload
/// runs a second pod.
fn fatal_shared_stores(spec: &Spec) -> Vec<&String> {
    spec.stores
        .iter()
        .filter(|(_, s)| s.class == crate::model::StoreClass::Shared && s.fatal)
        .map(|(n, _)| n)
        .collect()
}

/// The id of the rule that bounds the values by the plan they name.
pub const CAPACITY_PLAN: &str = "capacity.plan";

/// A rule on the whole values tree, generated for the spec's workloads and stores.
pub struct RootRule {
    /// The guard's rule id.
    pub rule: &'static str,
    /// The values path it concerns.
    pub path: String,
    /// What it refuses, for the README.
    pub description: String,
    /// The draft-07 schema, with the description in it.
    pub schema: Value,
}

/// The pattern of an argument that sets a worker count or a managed variable anywhere
/// in it: a word `--workers`, `--workers=N` (or an abbreviation down to `--wo`), `-w`,
/// `-wN`, or `NAME=` for a managed variable. [`crate::guards::sets_workers`] and
/// [`crate::guards::sets_managed_variable`] are the same rule in Rust.
pub fn managed_args_pattern(managed: &[String]) -> String {
    let sep = "[\\t\\n\\f\\r '\"`;&|()]";
    let mut words = vec![
        format!(
            "--wo(r(k(e(rs?)?)?)?)?([={sep_inner}]|$)",
            sep_inner = &sep[1..sep.len() - 1]
        ),
        format!("-w[0-9]*({sep}|$)"),
    ];
    for name in managed {
        words.push(format!("{}=", regex_escape(name)));
    }
    format!("(^|{sep})({})", words.join("|"))
}

fn regex_escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `replicas.shared-stores`, `pool.single-leader`, `env.managed` and
/// `postgres.pooler-mode` where
/// draft-07 can say them.
pub fn root_rules(spec: &Spec) -> Vec<RootRule> {
    let mut plans = plan_contracts(spec);
    let pods = PodBounds::of(&plans);
    root_rules_over(spec, &mut plans, pods, &crate::values::default_values(spec))
}

/// [`root_rules`] with one `capacity.plan` rule per plan of `plans`, whose `then`
/// schemas are moved into them (each plan's `schema` is left null), the rules that
/// compare two fields enumerated over `pods`, over the chart's defaults already built
/// ([`crate::values::default_values`]).
pub fn root_rules_over(
    spec: &Spec,
    plans: &mut [PlanContract],
    pods: PodBounds,
    defaults: &Value,
) -> Vec<RootRule> {
    let mut rules = Vec::new();
    each_root_rule(spec, plans, pods, defaults, &mut |rule| rules.push(rule));
    rules
}

/// Builds the rules of [`root_rules_over`] one at a time, in the same order, and hands
/// each to `emit`: `render` checks values against each rule as it is built and drops
/// it, so the rules of a large spec are never all in memory. The rules on each
/// workload's own values come first ([`each_workload_rule`]), then those that read
/// the plans ([`each_contract_rule`]).
pub fn each_root_rule(
    spec: &Spec,
    plans: &mut [PlanContract],
    pods: PodBounds,
    defaults: &Value,
    emit: &mut dyn FnMut(RootRule),
) {
    each_workload_rule(spec, defaults, emit);
    each_contract_rule(spec, plans, pods, defaults, emit);
}

/// The first rules of [`each_root_rule`], which read neither the plans nor their pod
/// counts (`render` checks them while the plans' pod counts are read): shared stores
/// on Redis, one leader per pool, the managed variables, Pod Security "restricted",
/// the startup settings' managed keys and the pooler's mode.
pub fn each_workload_rule(spec: &Spec, defaults: &Value, emit: &mut dyn FnMut(RootRule)) {
    let fatal = fatal_shared_stores(spec);
    for (name, workload) in spec.workloads.all() {
        let class = workload.class();
        if class == WorkloadClass::Migrate {
            continue;
        }
        let mut multi = vec![
            json!({"required": ["replicaCount"], "properties": {"replicaCount": {"minimum": 2}}}),
        ];
        for &key in class.autoscalers() {
            multi.push(json!({"required": [key], "properties": {key: {"required": ["enabled"], "properties": {"enabled": {"const": true}}}}}));
        }
        if !fatal.is_empty() {
            let description = format!(
                "replicas.shared-stores: `workloads.{name}` can run more than one pod (replicaCount >= 2{}), so every shared store must be `redis`",
                if class.autoscalers().is_empty() { "" } else { " or an autoscaler on" }
            );
            emit(RootRule {
                rule: "replicas.shared-stores",
                path: format!("workloads.{name}"),
                description: description.clone(),
                schema: json!({
                    "description": description,
                    "if": {"required": ["workloads"], "properties": {"workloads": {"required": [name], "properties": {name: {
                        "required": ["enabled"], "properties": {"enabled": {"const": true}}, "anyOf": multi
                    }}}}},
                    "then": {"$ref": format!("#/definitions/{SHARED_STORES_ON_REDIS}")}
                }),
            });
        }
        if class == WorkloadClass::Pool {
            let description = format!("pool.single-leader: `workloads.{name}` with replicaCount >= 2, or an HPA on with maxReplicas >= 2, needs `leaderElection` or `claiming`");
            emit(RootRule {
                rule: "pool.single-leader",
                path: format!("workloads.{name}"),
                description: description.clone(),
                schema: json!({
                    "description": description,
                    "if": {"required": ["workloads"], "properties": {"workloads": {"required": [name], "properties": {name: {"anyOf": [
                        {"required": ["replicaCount"], "properties": {"replicaCount": {"minimum": 2}}},
                        {"required": ["autoscaling"], "properties": {"autoscaling": {
                            "required": ["enabled", "maxReplicas"],
                            "properties": {"enabled": {"const": true}, "maxReplicas": {"minimum": 2}}
                        }}}
                    ]}}}}},
                    "then": {"properties": {"workloads": {"properties": {name: {"anyOf": [
                        {"properties": {"leaderElection": {"const": true}}},
                        {"properties": {"claiming": {"const": true}}}
                    ]}}}}}
                }),
            });
        }
    }
    let database = crate::guards::database_env_names(defaults);
    for ManagedEnv {
        name,
        managed,
        owner,
    } in managed_env_of_workloads(spec, defaults)
    {
        if !managed.is_empty() {
            emit(rule(
                "env.managed",
                &format!("workloads.{name}.env"),
                format!(
                    "env.managed: `workloads.{name}.env` may not set a variable the chart manages ({})",
                    managed.join(", ")
                ),
                on_workload(
                    name,
                    object([(
                        "properties",
                        object([("env", definition_ref(&env_not_managed_name(owner)))]),
                    )]),
                ),
            ));
        }
        if !database.is_empty() {
            let description = format!(
                "env.managed: while `bundled.postgres.enabled`, `workloads.{name}.env` may not set the database variables the chart points at the bundled server ({})",
                database.join(", ")
            );
            emit(RootRule {
                rule: "env.managed",
                path: format!("workloads.{name}.env"),
                description: description.clone(),
                schema: json!({
                    "description": description,
                    "if": {"required": ["bundled"], "properties": {"bundled": {"required": ["postgres"], "properties": {"postgres": {"required": ["enabled"], "properties": {"enabled": {"const": true}}}}}}},
                    "then": {"properties": {"workloads": {"properties": {name: {"properties": {"env": {"items": {"properties": {"name": {"not": {"enum": database}}}}}}}}}}}
                }),
            });
        }
        emit(rule(
            "env.managed",
            &format!("workloads.{name}.args"),
            format!("env.managed: `workloads.{name}.args` and `command` may not set a worker count (`--workers`, `-w`, also inside a shell string) or a variable the chart manages (`NAME=`); use `processesPerPod`"),
            on_workload(name, definition_ref(&args_not_managed_name(owner))),
        ));
    }
    for (name, _) in spec.workloads.all() {
        use crate::guards::security_restricted::{description, relaxed, workload_schema};
        let relaxed = relaxed(spec, name);
        let reason = spec.security.relax.get(name).map(|r| r.reason.as_str());
        let description = description(name, &relaxed, reason);
        // Most workloads relax nothing: they share one definition.
        let mut schema = if relaxed.is_empty() {
            json!({"allOf": [{"$ref": format!("#/definitions/{RESTRICTED_POD}")}]})
        } else {
            workload_schema(&relaxed)
        };
        schema["description"] = Value::String(description.clone());
        emit(RootRule {
            rule: "security.restricted",
            path: format!("workloads.{name}"),
            description,
            schema: on_workload(name, schema),
        });
    }
    if let Some(settings) = &spec.startup_settings {
        let section = &settings.section;
        let managed = crate::guards::managed_settings_keys(defaults);
        let description = format!(
            "env.managed: `config.{section}` is a mapping whose managed keys ({}) are written by the chart from `startupSettings`, the allocations and the feature flags; its other keys are free",
            managed.join(", ")
        );
        let mut section_schema = json!({"description": description, "type": ["object", "null"]});
        if !managed.is_empty() {
            section_schema["propertyNames"] = json!({"not": {"enum": managed}});
        }
        emit(RootRule {
            rule: "env.managed",
            path: format!("config.{section}"),
            description: description.clone(),
            schema: json!({"properties": {"config": {"properties": {section.as_str(): section_schema}}}}),
        });
        let description = format!(
            "env.managed: no key of `config.{section}` holds a Redis URL in plain text (a separate server's URL comes from `urlSecret`)"
        );
        emit(RootRule {
            rule: "env.managed",
            path: format!("config.{section}"),
            description: description.clone(),
            schema: json!({"properties": {"config": {"properties": {section.as_str(): {"additionalProperties": {
                "description": description,
                "not": {"type": "string", "pattern": "^rediss?://"}
            }}}}}}),
        });
        // Each workload's overlay obeys the same two rules.
        for (name, _) in spec.workloads.all() {
            let description = format!(
                "env.managed: `workloads.{name}.configOverlay.{section}` may set the application's own keys, not the managed ones ({}), and no Redis URL in plain text",
                managed.join(", ")
            );
            let mut overlay_section = json!({
                "description": description,
                "type": ["object", "null"],
                "additionalProperties": {"not": {"type": "string", "pattern": "^rediss?://"}}
            });
            if !managed.is_empty() {
                overlay_section["propertyNames"] = json!({"not": {"enum": managed}});
            }
            emit(RootRule {
                rule: "env.managed",
                path: format!("workloads.{name}.configOverlay.{section}"),
                description: description.clone(),
                schema: on_workload(
                    name,
                    json!({"properties": {"configOverlay": {"properties": {section.as_str(): overlay_section}}}}),
                ),
            });
        }
    }
    let description = "postgres.pooler-mode: with `postgresPooler.enabled`, `poolMode` must be `session` (transaction pooling runs queries in the wrong tenant's schema)".to_string();
    emit(RootRule {
        rule: "postgres.pooler-mode",
        path: "postgresPooler".into(),
        description: description.clone(),
        schema: json!({
            "description": description,
            "if": {"required": ["postgresPooler"], "properties": {"postgresPooler": {"required": ["enabled"], "properties": {"enabled": {"const": true}}}}},
            "then": {"properties": {"postgresPooler": {"properties": {"poolMode": {"const": "session"}}}}}
        }),
    });
}

fn rule(rule: &'static str, path: &str, description: String, mut schema: Value) -> RootRule {
    if let Value::Object(m) = &mut schema {
        m.insert("description".into(), Value::String(description.clone()));
    }
    RootRule {
        rule,
        path: path.to_string(),
        description,
        schema,
    }
}

/// The rules on a workload that can serve: its PodDisruptionBudget never blocks a
/// drain (`rollout.drain`), and what routes to it has a Service with a port
/// (`service.exposed-port`). The two larger ones are shared by every workload of a
/// class, as definitions
/// ([`crate::contract::definitions::shared_definitions`]).
fn serving_rules(name: &str, class: WorkloadClass) -> Vec<RootRule> {
    let zero = json!({"anyOf": [{"const": 0}, {"const": "0%"}]});
    vec![
        rule(
            "rollout.drain",
            &format!("workloads.{name}.podDisruptionBudget"),
            format!("rollout.drain: an enabled `workloads.{name}.podDisruptionBudget` allows at least one unavailable pod, or it blocks every node drain"),
            on_workload(name, json!({"properties": {"podDisruptionBudget": {
                "if": {"properties": {"enabled": {"const": true}, "minAvailable": {"const": 0}}},
                "then": {"properties": {"maxUnavailable": {"not": zero}}}
            }}})),
        ),
        rule(
            "rollout.drain",
            &format!("workloads.{name}.podDisruptionBudget.minAvailable"),
            format!("rollout.drain: an enabled `workloads.{name}.podDisruptionBudget.minAvailable` stays below the workload's fewest pods (`replicaCount`, or the autoscaler's `minReplicas`), or it blocks every node drain"),
            on_workload(name, definition_ref(&pdb_below_fewest_pods_name(class))),
        ),
        rule(
            "service.exposed-port",
            &format!("workloads.{name}"),
            format!("service.exposed-port: `workloads.{name}.ingress` and `serviceMonitor` need `service.enabled`, and the Service needs `port` >= 1"),
            on_workload(name, definition_ref(SERVICE_EXPOSED_PORT)),
        ),
    ]
}

/// `{"workloads": {"properties": {name: schema}}}` as a root schema.
fn on_workload(name: &str, schema: Value) -> Value {
    object([(
        "properties",
        object([(
            "workloads",
            object([("properties", object([(name, schema)]))]),
        )]),
    )])
}

/// The install-time rules added for invariant 7: the capacity plans, the structure
/// values that must not change, and the cross-field rules draft-07 can say (the last
/// rules of [`each_root_rule`]).
pub fn each_contract_rule(
    spec: &Spec,
    plans: &mut [PlanContract],
    pods: PodBounds,
    defaults: &Value,
    emit: &mut dyn FnMut(RootRule),
) {
    // One `if`/`then` per checked plan.
    for plan in plans.iter_mut() {
        let name = &plan.name;
        emit(rule(
            CAPACITY_PLAN,
            crate::values::presets::PLAN_KEY,
            format!("capacity.plan: with `capacityPlan: {name}` the values stay within the bounds plan `{name}` was checked with (chart README); to go beyond them add a preset to `shipshape.yaml` and regenerate"),
            object([
                ("if", json!({"properties": {crate::values::presets::PLAN_KEY: {"const": name}}})),
                ("then", std::mem::take(&mut plan.schema)),
            ]),
        ));
    }

    // A bundled server enforces the budget: PostgreSQL's reserve below its
    // `max_connections` (the plan bounds the reserve, so one more than that bound) and
    // within its backend limit; Valkey's client limit set and kept, a policy it knows.
    let bundled_pg = json!({"required": ["bundled"], "properties": {"bundled": {"required": ["postgres"], "properties": {"postgres": {"required": ["enabled"], "properties": {"enabled": {"const": true}}}}}}});
    for plan in plans.iter() {
        let reserve = plan
            .bounds
            .iter()
            .find(|b| b.path == "dependencyCapacity.postgres.reserve")
            .and_then(|b| b.at_most)
            .unwrap_or(0.0) as u64;
        let name = &plan.name;
        emit(rule(
            "dependencies.bundled",
            "dependencyCapacity.postgres.maxConnections",
            format!("dependencies.bundled: with `capacityPlan: {name}` and the bundled PostgreSQL on, `maxConnections` is above the plan's largest reserve ({reserve}) and at most {}", crate::model::POSTGRES_MAX_CONNECTIONS),
            json!({
                "if": {"allOf": [{"properties": {crate::values::presets::PLAN_KEY: {"const": name}}}, bundled_pg]},
                "then": {"properties": {"dependencyCapacity": {"properties": {"postgres": {"properties": {"maxConnections": {"minimum": reserve + 1, "maximum": crate::model::POSTGRES_MAX_CONNECTIONS}}}}}}}
            }),
        ));
    }
    for name in spec.workloads.migrate.keys() {
        emit(rule(
            "dependencies.bundled",
            &format!("workloads.{name}.hookPhase"),
            format!("dependencies.bundled: while the bundled PostgreSQL runs, an enabled `workloads.{name}` hook runs `post` (a `pre` hook runs before the server exists)"),
            json!({
                "if": bundled_pg,
                "then": {"properties": {"workloads": {"properties": {name.as_str(): {"anyOf": [
                    {"properties": {"enabled": {"const": false}}},
                    {"properties": {"hookPhase": {"const": "post"}}}
                ]}}}}}
            }),
        ));
    }
    for server in crate::values::bundled_redis_servers(spec) {
        let s = server;
        emit(rule(
            "dependencies.bundled",
            &format!("dependencyCapacity.redis.servers.{s}"),
            format!("dependencies.bundled: while `bundled.redis.{s}.enabled`, the server's `maxClients` is in [1, {}] and its `maxmemoryPolicy` one of Valkey's", crate::model::VALKEY_MAX_CLIENTS),
            json!({
                "if": {"required": ["bundled"], "properties": {"bundled": {"required": ["redis"], "properties": {"redis": {"required": [s], "properties": {s: {"required": ["enabled"], "properties": {"enabled": {"const": true}}}}}}}}},
                "then": {"properties": {"dependencyCapacity": {"properties": {"redis": {"properties": {"servers": {"required": [s], "properties": {s: {
                    "required": ["maxClients", "maxmemoryPolicy"],
                    "properties": {
                        "maxClients": {"minimum": 1, "maximum": crate::model::VALKEY_MAX_CLIENTS},
                        "maxmemoryPolicy": {"enum": crate::model::VALKEY_POLICIES}
                    }
                }}}}}}}}}
            }),
        ));
    }

    // minReplicas <= maxReplicas, enumerated over the largest maxReplicas a plan allows
    // (one definition every autoscaler shares).
    if pods.max_replicas >= 1 {
        for (name, workload) in spec.workloads.all() {
            for &key in workload.class().autoscalers() {
                emit(rule(
                    "autoscaling.one-autoscaler",
                    &format!("workloads.{name}.{key}"),
                    format!("autoscaling.one-autoscaler: `workloads.{name}.{key}.minReplicas` must not exceed `maxReplicas`"),
                    on_workload(
                        name,
                        object([(
                            "properties",
                            object([(key, definition_ref(MIN_REPLICAS_AT_MOST_MAX))]),
                        )]),
                    ),
                ));
            }
        }
    }

    // Rolling updates: maxSurge and maxUnavailable never both 0; a PodDisruptionBudget
    // that allows 0 unavailable blocks every node drain.
    let zero = json!({"anyOf": [{"const": 0}, {"const": "0%"}]});
    for (name, workload) in spec.workloads.all() {
        let class = workload.class();
        if class == WorkloadClass::Migrate {
            continue;
        }
        emit(rule(
            "rollout.strategy",
            &format!("workloads.{name}.rollingUpdate"),
            format!("rollout.strategy: `workloads.{name}.rollingUpdate.maxSurge` and `maxUnavailable` are not both 0 (Kubernetes refuses it)"),
            on_workload(name, json!({"properties": {"rollingUpdate": {"not": {
                "required": ["maxSurge", "maxUnavailable"],
                "properties": {"maxSurge": zero, "maxUnavailable": zero}
            }}}})),
        ));
        if class.can_serve() {
            serving_rules(name, class).into_iter().for_each(&mut *emit);
        }
    }

    // Shared stores on Redis need its URL.
    if !spec.shared_stores().is_empty() {
        emit(rule(
            "replicas.shared-stores",
            "storeRedis.url",
            "replicas.shared-stores: when a shared store is on `redis`, `storeRedis.url` is set"
                .into(),
            json!({
                "if": {"properties": {"stores": {"not": {"additionalProperties": {"properties": {"backend": {"const": "memory"}}}}}}},
                "then": {"properties": {"storeRedis": {"properties": {"url": {"minLength": 1}}}}}
            }),
        ));
    }

    // Every scheduled job in exactly one workload: the job registry is fixed, so only
    // which of the api and jobs workloads run can break the partition.
    partition_rules(spec).into_iter().for_each(&mut *emit);

    // Another workload's stated allocations take the `sizesFrom` workload's size.
    if let Some(settings) = &spec.startup_settings {
        let from = settings.sizes_from.as_str();
        for (dependency, alloc, _) in crate::capacity::allocations::stated_allocations(spec) {
            for (name, _) in spec.workloads.all() {
                let Some(entry) = defaults
                    .get("workloads")
                    .and_then(|w| w.get(name))
                    .and_then(|w| w.get(dependency))
                    .and_then(|d| d.get(&alloc))
                else {
                    continue;
                };
                if name == from {
                    continue;
                }
                emit(rule(
                    "settings.one-value",
                    &format!("workloads.{name}.{dependency}.{alloc}"),
                    format!("settings.one-value: `workloads.{name}.{dependency}.{alloc}` is taken from `workloads.{from}.{dependency}.{alloc}` (the configuration file states one value for every process); change that one"),
                    on_workload(name, json!({"properties": {dependency: {"properties": {alloc.as_str(): {"const": entry}}}}})),
                ));
            }
        }
    }

    // A critical Redis server never evicts.
    for (server, s) in &spec.dependency_capacity.redis.servers {
        if s.role == Some(crate::model::RedisRole::Critical) {
            emit(rule(
                "redis.eviction",
                &format!("dependencyCapacity.redis.servers.{server}.maxmemoryPolicy"),
                format!("redis.eviction: the critical Redis server `{server}` is declared `noeviction` (it holds sessions, admission and coordination state)"),
                json!({"properties": {"dependencyCapacity": {"properties": {"redis": {"properties": {"servers": {"properties": {server.as_str(): {"properties": {"maxmemoryPolicy": {"const": "noeviction"}}}}}}}}}}}),
            ));
        }
    }

    // Structure values: fixed by the spec.
    emit(rule(
        "spec.structure",
        "",
        "spec.structure: the job registry, pools, variable names, feature switches, allocation structure, Redis server roles and eviction policies and the settings keys are fixed by `shipshape.yaml`; change them there and regenerate".into(),
        structure_schema(spec, defaults),
    ));
}

fn partition_rules(spec: &Spec) -> Vec<RootRule> {
    let scheduling = &spec.scheduling;
    if scheduling.jobs.is_empty() {
        return Vec::new();
    }
    let pools: Vec<crate::guards::partition::Pool> = scheduling
        .pools
        .iter()
        .map(|(name, p)| crate::guards::partition::Pool {
            name: name.clone(),
            jobs: p.jobs.clone(),
            allowed: p.allowed.clone(),
        })
        .collect();
    let api: Vec<&String> = spec.workloads.api.keys().collect();
    let jobs: Vec<&String> = spec.workloads.jobs.keys().collect();
    let class_is = |names: &[&String], on: bool| -> Option<Value> {
        let each: Vec<Value> = names
            .iter()
            .map(|n| json!({"properties": {"workloads": {"properties": {n.as_str(): {"properties": {"enabled": {"const": true}}}}}}}))
            .collect();
        match (on, each.is_empty()) {
            (true, true) => None,
            (false, true) => Some(json!({})),
            (true, false) => Some(json!({"anyOf": each})),
            (false, false) => Some(json!({"not": {"anyOf": each}})),
        }
    };
    let mut rules = Vec::new();
    for api_on in [true, false] {
        for jobs_on in [true, false] {
            let findings = crate::guards::partition::prove_partition(
                &scheduling.jobs,
                &pools,
                api_on,
                jobs_on,
            );
            if findings.is_empty() {
                continue;
            }
            let (Some(a), Some(j)) = (class_is(&api, api_on), class_is(&jobs, jobs_on)) else {
                continue;
            };
            let state = |on: bool| if on { "enabled" } else { "disabled" };
            rules.push(rule(
                "jobs.partition",
                "workloads",
                format!(
                    "jobs.partition: with the api {} and the jobs workload {}, a scheduled job would run in no workload or in two ({})",
                    state(api_on),
                    state(jobs_on),
                    findings[0].message
                ),
                json!({"not": {"allOf": [a, j]}}),
            ));
        }
    }
    rules
}

/// `const` for every structure value of the defaults.
fn structure_schema(spec: &Spec, defaults: &Value) -> Value {
    let mut tree = crate::contract::plans::SchemaTree::default();
    // The value at `path` of `from` is fixed.
    fn fixed_in(
        tree: &mut crate::contract::plans::SchemaTree,
        from: Option<&Value>,
        path: &[&str],
    ) {
        match from.and_then(|from| path.iter().try_fold(from, |v, k| v.get(*k))) {
            Some(v) => tree.add(path, object([("const", v.clone())])),
            None => tree.add(path, json!({"not": {}})),
        }
    }
    let fixed = |tree: &mut crate::contract::plans::SchemaTree, path: &[&str]| {
        fixed_in(tree, Some(defaults), path)
    };
    fixed(&mut tree, &["scheduling"]);
    fixed(&mut tree, &["managedEnv"]);
    fixed(&mut tree, &["featureSwitches"]);
    fixed(&mut tree, &["storeRedis", "server"]);
    for key in ["urlEnv", "urlScheme", "userEnv", "passwordEnv"] {
        fixed(&mut tree, &["dependencyCapacity", "postgres", key]);
    }
    for store in spec.shared_stores() {
        fixed(&mut tree, &["stores", store, "env"]);
    }
    let stated: Vec<(&str, String)> = crate::capacity::allocations::stated_allocations(spec)
        .into_iter()
        .map(|(d, a, _)| (d, a))
        .collect();
    let sizes_from = spec
        .startup_settings
        .as_ref()
        .map(|s| s.sizes_from.as_str());
    for (name, workload) in spec.workloads.all() {
        // A workload's entries are added below its node, with its defaults, each found
        // once: a search among hundreds of workloads per entry was most of the rule.
        let of_workload = defaults.get("workloads").and_then(|w| w.get(name));
        let tree = tree.node(&["workloads", name]);
        let fixed = |tree: &mut crate::contract::plans::SchemaTree, path: &[&str]| {
            fixed_in(tree, of_workload, &path[2..])
        };
        fixed(tree, &["workloads", name, "processEnv"]);
        let (postgres, redis) = workload.allocations();
        // Each allocation, and whether it has a `sizeWithout` (only PostgreSQL's can).
        let declared = [
            (
                "postgres",
                postgres
                    .iter()
                    .map(|(a, d)| (a, d.size_without.is_some()))
                    .collect::<Vec<_>>(),
            ),
            ("redis", redis.keys().map(|a| (a, false)).collect()),
        ];
        for (dependency, allocations) in declared {
            for (alloc, size_without) in allocations {
                let path = ["workloads", name, dependency, alloc.as_str()];
                if Some(name) != sizes_from
                    && stated
                        .iter()
                        .any(|(sd, sa)| *sd == dependency && sa == alloc)
                {
                    // Its size is the `sizesFrom` workload's: the whole entry is fixed
                    // (a rule of its own, `settings.one-value`).
                    continue;
                }
                let keys: &[&str] = if dependency == "postgres" {
                    &["env", "feature", "partOf", "setting"]
                } else {
                    &["server", "env", "setting"]
                };
                for key in keys {
                    let mut p = path.to_vec();
                    p.push(key);
                    fixed(tree, &p);
                }
                if size_without {
                    let mut p = path.to_vec();
                    p.extend(["sizeWithout", "workload"]);
                    fixed(tree, &p);
                } else {
                    let mut p = path.to_vec();
                    p.push("sizeWithout");
                    fixed(tree, &p);
                }
            }
        }
    }
    for (server, s) in &spec.dependency_capacity.redis.servers {
        let path = ["dependencyCapacity", "redis", "servers", server.as_str()];
        for key in ["role", "urlEnv"] {
            let mut p = path.to_vec();
            p.push(key);
            fixed(&mut tree, &p);
        }
        let mut p = path.to_vec();
        p.push("maxmemoryPolicy");
        // A critical server's policy is its own rule, `redis.eviction`.
        if s.role != Some(crate::model::RedisRole::Critical) {
            fixed(&mut tree, &p);
        }
    }
    if let Some(settings) = &spec.startup_settings {
        for key in ["section", "sizesFrom", "cacheUrlKey"] {
            fixed(&mut tree, &["startupSettings", key]);
        }
        for budget in ["foreground", "background"] {
            for step in ["lock", "statement", "transaction"] {
                fixed(&mut tree, &["startupSettings", budget, step, "key"]);
            }
        }
        for name in settings.deadlines.keys() {
            fixed(&mut tree, &["startupSettings", "deadlines", name, "key"]);
        }
    }
    tree.build()
}
