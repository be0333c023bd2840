//! JSON schemas generated from the Rust types: the spec's own schema
//! (`shipshape schema`, committed as `schemas/shipshape.schema.json`) and the chart's
//! `values.schema.json` (draft-07, self-contained: local `$ref`s only).

use crate::model::{
    ApiValues, ConfigFileValues, DependencyCapacity, ImageValues, JobsValues, LocalObjectReference,
    ManagedEnv, MigrateValues, PoolValues, PostgresPooler, Scheduling, ServiceAccountValues,
    StoreRedis, WorkerValues,
};
use crate::spec::{Spec, WorkloadClass};
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{json, Map, Value};

fn generator() -> SchemaGenerator {
    SchemaSettings::draft07().into_generator()
}

/// The JSON schema of `shipshape.yaml`.
pub fn spec_schema() -> Value {
    let schema = generator().into_root_schema_for::<Spec>();
    let mut v = schema.to_value();
    tidy(&mut v);
    v
}

/// The chart's `values.schema.json`: the values model's types, with one property per
/// workload of the spec holding that workload's class schema.
pub fn values_schema(spec: &Spec) -> Value {
    let mut gen = generator();
    let mut workloads = Map::new();
    for (name, workload) in spec.workloads.all() {
        let schema = match workload.class() {
            WorkloadClass::Api => {
                with_install_time_rules(gen.subschema_for::<ApiValues>().to_value(), API_RULES)
            }
            WorkloadClass::Jobs => gen.subschema_for::<JobsValues>().to_value(),
            WorkloadClass::Pool => gen.subschema_for::<PoolValues>().to_value(),
            WorkloadClass::Worker => gen.subschema_for::<WorkerValues>().to_value(),
            WorkloadClass::Migrate => gen.subschema_for::<MigrateValues>().to_value(),
        };
        workloads.insert(
            name.to_string(),
            close_workload_maps(schema, &workload.to_values()),
        );
    }
    let names: Vec<&str> = spec.workloads.all().iter().map(|(n, _)| *n).collect();
    let mut properties = json!({
        "image": gen.subschema_for::<ImageValues>().to_value(),
        "imagePullSecrets": {
            "description": "Image pull secrets of every pod.",
            "type": "array",
            "items": gen.subschema_for::<LocalObjectReference>().to_value()
        },
        "serviceAccount": gen.subschema_for::<ServiceAccountValues>().to_value(),
        "configFile": gen.subschema_for::<ConfigFileValues>().to_value(),
        "config": {
            "description": "The application's configuration, rendered into a ConfigMap whose checksum rolls the pods that read it.",
            "type": "object"
        },
        "features": close_map(
            json!({"description": "Feature flags that turn connection allocations on.", "type": "object", "additionalProperties": {"type": "boolean"}}),
            spec.features.keys(),
        ),
        "capacityPlan": {
            "description": "The checked plan these values stay within: `default` or a preset's name (each `values-<preset>.yaml` sets its own). Its bounds are listed in the chart README; to go beyond them, add a preset to `shipshape.yaml` and regenerate.",
            "enum": plan_names(spec)
        },
        "replicaStrict": {"description": "Make unsafe replica findings fatal at boot.", "type": "boolean"},
        "stores": close_map(
            json!({"description": "The shared stores: each one's backend, `memory` (one pod only) or `redis`.", "type": "object", "additionalProperties": gen.subschema_for::<crate::model::SharedStoreValues>().to_value()}),
            spec.shared_stores().iter().map(|s| s.to_string()).collect::<Vec<_>>().iter(),
        ),
        "storeRedis": gen.subschema_for::<StoreRedis>().to_value(),
        "scheduling": {"allOf": [
            gen.subschema_for::<Scheduling>().to_value(),
            {"properties": {"pools": close_map(
                json!({"type": "object", "additionalProperties": {"$ref": "#/definitions/PoolJobs"}}),
                spec.scheduling.pools.keys(),
            )}}
        ], "description": "Scheduled jobs and the pools that own them."},
        "managedEnv": gen.subschema_for::<ManagedEnv>().to_value(),
        "postgresPooler": gen.subschema_for::<PostgresPooler>().to_value(),
        "startupSettings": gen.subschema_for::<crate::model::StartupSettings>().to_value(),
        "dependencyCapacity": {"allOf": [
            gen.subschema_for::<DependencyCapacity>().to_value(),
            {"properties": {
                "postgres": {"properties": {"reservations": close_map(
                    json!({"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}),
                    spec.dependency_capacity.postgres.reservations.keys(),
                )}},
                "redis": {"properties": {"servers": close_map(
                    json!({"type": "object", "additionalProperties": {"$ref": "#/definitions/RedisServer"}}),
                    spec.dependency_capacity.redis.servers.keys(),
                )}}
            }}
        ], "description": "The declared connection budgets every preset must fit."},
        "workloads": {
            "description": "The workloads, by name.",
            "type": "object",
            "properties": workloads,
            "required": names,
            "additionalProperties": false
        }
    });
    if spec.startup_settings.is_none() {
        if let Value::Object(p) = &mut properties {
            p.remove("startupSettings");
        }
    }
    let definitions = gen.take_definitions(true);
    let mut root = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": format!("Values of the {} chart", spec.chart.name),
        "type": "object",
        "properties": properties,
        "required": ["capacityPlan", "image", "imagePullSecrets", "serviceAccount", "configFile", "config", "features", "replicaStrict", "stores", "storeRedis", "scheduling", "managedEnv", "postgresPooler", "dependencyCapacity", "workloads"],
        "additionalProperties": false,
        "definitions": Value::Object(definitions.into_iter().collect()),
    });
    tidy(&mut root);
    require_non_nullable(&mut root);
    let rules: Vec<Value> = root_rules(spec).into_iter().map(|r| r.schema).collect();
    if let Value::Object(m) = &mut root {
        if !rules.is_empty() {
            m.insert("allOf".into(), Value::Array(rules));
        }
    }
    root
}

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

/// The names of the checked plans: `default` and every preset.
pub fn plan_names(spec: &Spec) -> Vec<String> {
    let mut names = vec![crate::values::presets::DEFAULT_PRESET.to_string()];
    names.extend(crate::values::presets::presets(spec).into_keys());
    names
}

/// The contract of every plan: the defaults and each preset, resolved.
pub fn plan_contracts(spec: &Spec) -> Vec<crate::contract::plans::PlanContract> {
    plan_names(spec)
        .iter()
        .map(|name| {
            let preset = (name != crate::values::presets::DEFAULT_PRESET).then_some(name.as_str());
            let values = crate::values::presets::preset_values(spec, preset).unwrap_or(Value::Null);
            crate::contract::plans::plan_contract(spec, name, &values)
        })
        .collect()
}

/// `replicas.shared-stores`, `pool.single-leader`, `env.managed` and
/// `postgres.pooler-mode` where
/// draft-07 can say them.
pub fn root_rules(spec: &Spec) -> Vec<RootRule> {
    let mut rules = Vec::new();
    let fatal: Vec<&String> = spec
        .stores
        .iter()
        .filter(|(_, s)| s.class == crate::model::StoreClass::Shared && s.fatal)
        .map(|(n, _)| n)
        .collect();
    for (name, workload) in spec.workloads.all() {
        let class = workload.class();
        if class == WorkloadClass::Migrate {
            continue;
        }
        let mut multi = vec![
            json!({"required": ["replicaCount"], "properties": {"replicaCount": {"minimum": 2}}}),
        ];
        if class == WorkloadClass::Api {
            for key in ["autoscaling", "keda"] {
                multi.push(json!({"required": [key], "properties": {key: {"required": ["enabled"], "properties": {"enabled": {"const": true}}}}}));
            }
        }
        if !fatal.is_empty() {
            let stores: Map<String, Value> = fatal
                .iter()
                .map(|s| {
                    (
                        s.to_string(),
                        json!({"properties": {"backend": {"const": "redis"}}}),
                    )
                })
                .collect();
            let description = format!(
                "replicas.shared-stores: `workloads.{name}` can run more than one pod (replicaCount >= 2{}), so every shared store must be `redis`",
                if class == WorkloadClass::Api { " or an autoscaler on" } else { "" }
            );
            rules.push(RootRule {
                rule: "replicas.shared-stores",
                path: format!("workloads.{name}"),
                description: description.clone(),
                schema: json!({
                    "description": description,
                    "if": {"required": ["workloads"], "properties": {"workloads": {"required": [name], "properties": {name: {
                        "required": ["enabled"], "properties": {"enabled": {"const": true}}, "anyOf": multi
                    }}}}},
                    "then": {"properties": {"stores": {"properties": stores}}}
                }),
            });
        }
        if class == WorkloadClass::Pool {
            let description = format!("pool.single-leader: `workloads.{name}` with replicaCount >= 2 needs `leaderElection` or `claiming`");
            rules.push(RootRule {
                rule: "pool.single-leader",
                path: format!("workloads.{name}"),
                description: description.clone(),
                schema: json!({
                    "description": description,
                    "if": {"required": ["workloads"], "properties": {"workloads": {"required": [name], "properties": {name: {
                        "required": ["replicaCount"], "properties": {"replicaCount": {"minimum": 2}}
                    }}}}},
                    "then": {"properties": {"workloads": {"properties": {name: {"anyOf": [
                        {"properties": {"leaderElection": {"const": true}}},
                        {"properties": {"claiming": {"const": true}}}
                    ]}}}}}
                }),
            });
        }
    }
    let defaults = crate::values::default_values(spec);
    for (name, _) in spec.workloads.all() {
        let managed = crate::guards::managed_env_names(&defaults, name);
        if !managed.is_empty() {
            let description = format!(
                "env.managed: `workloads.{name}.env` may not set a variable the chart manages ({})",
                managed.join(", ")
            );
            rules.push(RootRule {
                rule: "env.managed",
                path: format!("workloads.{name}.env"),
                description: description.clone(),
                schema: json!({"properties": {"workloads": {"properties": {name: {"properties": {"env": {"items": {"properties": {"name": {
                    "description": description, "not": {"enum": managed}
                }}}}}}}}}}),
            });
        }
        let description = format!(
            "env.managed: `workloads.{name}.args` and `command` may not set a worker count (`--workers`, `-w`, also inside a shell string) or a variable the chart manages (`NAME=`); use `processesPerPod`"
        );
        let pattern = managed_args_pattern(&managed);
        let no_workers =
            json!({"description": description, "not": {"type": "string", "pattern": pattern}});
        rules.push(RootRule {
            rule: "env.managed",
            path: format!("workloads.{name}.args"),
            description: description.clone(),
            schema: json!({"properties": {"workloads": {"properties": {name: {"properties": {
                "args": {"items": no_workers.clone()},
                "command": {"items": no_workers}
            }}}}}}),
        });
    }
    if let Some(settings) = &spec.startup_settings {
        let section = &settings.section;
        let description = format!(
            "env.managed: `config.{section}` is written by the chart from `startupSettings` and the allocations"
        );
        rules.push(RootRule {
            rule: "env.managed",
            path: "config".into(),
            description: description.clone(),
            schema: json!({"properties": {"config": {"description": description, "not": {"required": [section]}}}}),
        });
    }
    let description = "postgres.pooler-mode: with `postgresPooler.enabled`, `poolMode` must be `session` (transaction pooling runs queries in the wrong tenant's schema)".to_string();
    rules.push(RootRule {
        rule: "postgres.pooler-mode",
        path: "postgresPooler".into(),
        description: description.clone(),
        schema: json!({
            "description": description,
            "if": {"required": ["postgresPooler"], "properties": {"postgresPooler": {"required": ["enabled"], "properties": {"enabled": {"const": true}}}}},
            "then": {"properties": {"postgresPooler": {"properties": {"poolMode": {"const": "session"}}}}}
        }),
    });
    rules.extend(contract_rules(spec));
    rules
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

/// `{"workloads": {"properties": {name: schema}}}` as a root schema.
fn on_workload(name: &str, schema: Value) -> Value {
    json!({"properties": {"workloads": {"properties": {name: schema}}}})
}

/// The install-time rules added for invariant 7: the capacity plans, the structure
/// values that must not change, and the cross-field rules draft-07 can say.
fn contract_rules(spec: &Spec) -> Vec<RootRule> {
    let mut rules = Vec::new();
    let plans = plan_contracts(spec);

    // One `if`/`then` per checked plan.
    for plan in &plans {
        let name = &plan.name;
        rules.push(rule(
            "capacity.plan",
            crate::values::presets::PLAN_KEY,
            format!("capacity.plan: with `capacityPlan: {name}` the values stay within the bounds plan `{name}` was checked with (chart README); to go beyond them add a preset to `shipshape.yaml` and regenerate"),
            json!({
                "if": {"properties": {crate::values::presets::PLAN_KEY: {"const": name}}},
                "then": plan.schema
            }),
        ));
    }

    // minReplicas <= maxReplicas, enumerated over the largest maxReplicas a plan allows.
    let largest = crate::contract::plans::largest_max_replicas(&plans);
    for name in spec.workloads.api.keys() {
        for key in ["autoscaling", "keda"] {
            let description = format!("autoscaling.one-autoscaler: `workloads.{name}.{key}.minReplicas` must not exceed `maxReplicas`");
            let members: Vec<Value> = (1..=largest)
                .map(|k| {
                    json!({
                        "description": description,
                        "if": {"properties": {key: {"properties": {"enabled": {"const": true}, "maxReplicas": {"maximum": k}}}}},
                        "then": {"properties": {key: {"properties": {"minReplicas": {"maximum": k}}}}}
                    })
                })
                .collect();
            if !members.is_empty() {
                rules.push(rule(
                    "autoscaling.one-autoscaler",
                    &format!("workloads.{name}.{key}"),
                    description.clone(),
                    on_workload(name, json!({"allOf": members})),
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
        rules.push(rule(
            "rollout.strategy",
            &format!("workloads.{name}.rollingUpdate"),
            format!("rollout.strategy: `workloads.{name}.rollingUpdate.maxSurge` and `maxUnavailable` are not both 0 (Kubernetes refuses it)"),
            on_workload(name, json!({"properties": {"rollingUpdate": {"not": {
                "required": ["maxSurge", "maxUnavailable"],
                "properties": {"maxSurge": zero, "maxUnavailable": zero}
            }}}})),
        ));
        if class == WorkloadClass::Api {
            rules.push(rule(
                "rollout.drain",
                &format!("workloads.{name}.podDisruptionBudget"),
                format!("rollout.drain: an enabled `workloads.{name}.podDisruptionBudget` allows at least one unavailable pod, or it blocks every node drain"),
                on_workload(name, json!({"properties": {"podDisruptionBudget": {
                    "if": {"properties": {"enabled": {"const": true}}},
                    "then": {"properties": {"maxUnavailable": {"not": zero}}}
                }}})),
            ));
        }
    }

    // Shared stores on Redis need its URL.
    if !spec.shared_stores().is_empty() {
        rules.push(rule(
            "replicas.shared-stores",
            "storeRedis.url",
            "replicas.shared-stores: when a shared store is on `redis`, `storeRedis.url` is set".into(),
            json!({
                "if": {"properties": {"stores": {"not": {"additionalProperties": {"properties": {"backend": {"const": "memory"}}}}}}},
                "then": {"properties": {"storeRedis": {"properties": {"url": {"minLength": 1}}}}}
            }),
        ));
    }

    // Every scheduled job in exactly one workload: the job registry is fixed, so only
    // which of the api and jobs workloads run can break the partition.
    rules.extend(partition_rules(spec));

    // Another workload's stated allocations take the `sizesFrom` workload's size.
    if let Some(settings) = &spec.startup_settings {
        let defaults = crate::values::default_values(spec);
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
                rules.push(rule(
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
            rules.push(rule(
                "redis.eviction",
                &format!("dependencyCapacity.redis.servers.{server}.maxmemoryPolicy"),
                format!("redis.eviction: the critical Redis server `{server}` is declared `noeviction` (it holds sessions, admission and coordination state)"),
                json!({"properties": {"dependencyCapacity": {"properties": {"redis": {"properties": {"servers": {"properties": {server.as_str(): {"properties": {"maxmemoryPolicy": {"const": "noeviction"}}}}}}}}}}}),
            ));
        }
    }

    // Structure values: fixed by the spec.
    rules.push(rule(
        "spec.structure",
        "",
        "spec.structure: the job registry, pools, variable names, allocation structure, Redis server roles and eviction policies and the settings keys are fixed by `shipshape.yaml`; change them there and regenerate".into(),
        structure_schema(spec),
    ));
    rules
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
fn structure_schema(spec: &Spec) -> Value {
    let defaults = crate::values::default_values(spec);
    let mut tree = crate::contract::plans::SchemaTree::default();
    let fixed = |tree: &mut crate::contract::plans::SchemaTree, path: &[&str]| {
        let value = path.iter().try_fold(&defaults, |v, k| v.get(*k)).cloned();
        match value {
            Some(v) => tree.add(path, json!({"const": v})),
            None => tree.add(path, json!({"not": {}})),
        }
    };
    fixed(&mut tree, &["scheduling"]);
    fixed(&mut tree, &["managedEnv"]);
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
        fixed(&mut tree, &["workloads", name, "processEnv"]);
        let declared = workload.to_values();
        for dependency in ["postgres", "redis"] {
            let Some(allocations) = declared.get(dependency).and_then(Value::as_object) else {
                continue;
            };
            for (alloc, d) in allocations {
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
                    fixed(&mut tree, &p);
                }
                if d.get("sizeWithout").is_some() {
                    let mut p = path.to_vec();
                    p.extend(["sizeWithout", "workload"]);
                    fixed(&mut tree, &p);
                } else {
                    let mut p = path.to_vec();
                    p.push("sizeWithout");
                    fixed(&mut tree, &p);
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

/// A guard that draft-07 can say too, so Helm itself refuses `--set` values that
/// break it. Helm's messages do not print the `description`; the chart README lists
/// each rule.
pub struct InstallTimeRule {
    /// The guard's rule id.
    pub rule: &'static str,
    /// What the schema refuses, for the README.
    pub description: &'static str,
    /// The draft-07 schema (JSON text) the workload's values must also match.
    pub schema: &'static str,
}

/// Rules on every `api` workload's values.
pub const API_RULES: &[InstallTimeRule] = &[InstallTimeRule {
    rule: "autoscaling.one-autoscaler",
    description: "`autoscaling.enabled` and `keda.enabled` are never both true",
    schema: r#"{"not": {"required": ["autoscaling", "keda"], "properties": {"autoscaling": {"required": ["enabled"], "properties": {"enabled": {"const": true}}}, "keda": {"required": ["enabled"], "properties": {"enabled": {"const": true}}}}}}"#,
}];

/// Every install-time rule of the chart: `(values path, rule id, what it refuses)`.
pub fn install_time_rules(spec: &Spec) -> Vec<(String, &'static str, String)> {
    let mut out = Vec::new();
    for (name, workload) in spec.workloads.all() {
        if workload.class() == WorkloadClass::Api {
            out.extend(API_RULES.iter().map(|r| {
                (
                    format!("workloads.{name}"),
                    r.rule,
                    r.description.to_string(),
                )
            }));
        }
    }
    out.extend(root_rules(spec).into_iter().map(|r| {
        let text = r
            .description
            .strip_prefix(&format!("{}: ", r.rule))
            .unwrap_or(&r.description)
            .to_string();
        (r.path, r.rule, text)
    }));
    out
}

/// A workload's schema with the install-time rules added as `allOf` members.
fn with_install_time_rules(base: Value, rules: &[InstallTimeRule]) -> Value {
    let mut all_of = vec![base];
    for rule in rules {
        if let Ok(mut schema) = serde_json::from_str::<Value>(rule.schema) {
            if let Value::Object(m) = &mut schema {
                m.insert(
                    "description".into(),
                    Value::String(format!("{}: {}", rule.rule, rule.description)),
                );
            }
            all_of.push(schema);
        }
    }
    json!({ "allOf": all_of })
}

/// A map schema closed to the names the spec declares: values may change what a
/// declared entry holds, not add entries the chart's templates do not know.
fn close_map<'a>(mut schema: Value, names: impl Iterator<Item = &'a String>) -> Value {
    let item = schema
        .get("additionalProperties")
        .cloned()
        .unwrap_or(json!({}));
    let names: Vec<String> = names.cloned().collect();
    let properties: Map<String, Value> = names.iter().map(|n| (n.clone(), item.clone())).collect();
    if let Value::Object(m) = &mut schema {
        m.insert("properties".into(), Value::Object(properties));
        m.insert("additionalProperties".into(), Value::Bool(false));
        m.insert("required".into(), json!(names));
    }
    schema
}

/// The spec-declared maps of a workload (connection allocations) closed the same way.
fn close_workload_maps(schema: Value, workload: &Value) -> Value {
    let mut overrides = Map::new();
    for key in ["postgres", "redis"] {
        let declared: Vec<String> = workload
            .get(key)
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let def = if key == "postgres" {
            "PostgresAllocation"
        } else {
            "RedisAllocation"
        };
        overrides.insert(
            key.to_string(),
            close_map(
                json!({"type": "object", "additionalProperties": {"$ref": format!("#/definitions/{def}")}}),
                declared.iter(),
            ),
        );
    }
    let mut all_of = match schema {
        Value::Object(mut m) if m.contains_key("allOf") && m.len() == 1 => {
            match m.remove("allOf") {
                Some(Value::Array(a)) => a,
                _ => Vec::new(),
            }
        }
        other => vec![other],
    };
    all_of.push(json!({"properties": overrides}));
    json!({ "allOf": all_of })
}

/// Removes `format` annotations schemars adds for Rust integer widths (`uint32`):
/// they are not draft-07 formats and validators treat them differently.
fn tidy(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if matches!(map.get("format"), Some(Value::String(f)) if f.starts_with("int") || f.starts_with("uint") || f == "double")
            {
                map.remove("format");
            }
            // Every accepted integer fits the typed model (and Kubernetes' int32).
            if map.get("type") == Some(&Value::String("integer".into()))
                && !map.contains_key("maximum")
            {
                map.insert("maximum".into(), json!(crate::model::INT_MAX));
            }
            for child in map.values_mut() {
                tidy(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// Marks every non-nullable property of a closed object as required, so a `null`
/// in user values (which deletes the key under Helm's merge) is refused by the
/// schema instead of leaving a hole in the templates.
fn require_non_nullable(v: &mut Value) {
    match v {
        Value::Object(map) => {
            let closed = map.get("additionalProperties") == Some(&Value::Bool(false));
            if closed {
                if let Some(Value::Object(props)) = map.get("properties") {
                    let required: Vec<Value> = props
                        .iter()
                        .filter(|(_, s)| !nullable(s))
                        .map(|(k, _)| Value::String(k.clone()))
                        .collect();
                    map.insert("required".into(), Value::Array(required));
                }
            }
            for child in map.values_mut() {
                require_non_nullable(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(require_non_nullable),
        _ => {}
    }
}

fn nullable(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
        _ => schema
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|alts| alts.iter().any(nullable)),
    }
}

/// Resolves a local `$ref` (`#/definitions/X`) against the root schema, and looks
/// through an `allOf` wrapper (schemars' way of describing a referenced type, and the
/// install-time rules) to the schema that declares the properties.
pub fn resolve_ref<'s>(root: &'s Value, schema: &'s Value) -> &'s Value {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        return r
            .strip_prefix("#/definitions/")
            .and_then(|name| root.get("definitions")?.get(name))
            .map(|s| resolve_ref(root, s))
            .unwrap_or(schema);
    }
    if schema.get("properties").is_none() {
        if let Some(first) = schema.get("allOf").and_then(|a| a.get(0)) {
            return resolve_ref(root, first);
        }
    }
    schema
}
