//! The definitions rules share: each part of `values.schema.json` that every
//! workload of a class (or every shared store) would otherwise repeat is written once
//! under `definitions`, and each rule refers to it with `$ref`.

use crate::contract::object;
use crate::contract::plans::PodBounds;
use crate::spec::{Spec, WorkloadClass};
use serde_json::{json, Map, Value};

/// The definition of `service.exposed-port` on one workload.
pub(crate) const SERVICE_EXPOSED_PORT: &str = "ServiceExposedPort";

/// The definition of `minReplicas <= maxReplicas` on one autoscaler.
pub(crate) const MIN_REPLICAS_AT_MOST_MAX: &str = "AutoscalerMinReplicasAtMostMax";

/// The definition of the PodDisruptionBudget's `minAvailable` rule on a workload of
/// `class` (its autoscalers decide how the fewest pods are counted).
pub(crate) fn pdb_below_fewest_pods_name(class: WorkloadClass) -> String {
    format!("PdbMinAvailableBelowFewestPods{class:?}")
}

/// `{"$ref": "#/definitions/<name>"}`.
pub(crate) fn definition_ref(name: &str) -> Value {
    object([("$ref", Value::String(format!("#/definitions/{name}")))])
}

/// The definition of `env.managed` on a workload's `env`: no item names a variable the
/// chart manages. Shared by every workload whose managed variables are `owner`'s.
pub(crate) fn env_not_managed_name(owner: &str) -> String {
    format!("EnvNotManaged.{owner}")
}

/// The definition of `env.managed` on a workload's `args` and `command`: no worker
/// count and no managed variable set. Shared by every workload whose managed variables
/// are `owner`'s.
pub(crate) fn args_not_managed_name(owner: &str) -> String {
    format!("ArgsNotManaged.{owner}")
}

/// One workload's variables the chart manages.
pub(crate) struct ManagedEnv<'s> {
    /// The workload.
    pub name: &'s str,
    /// The variables the chart manages in its pods, sorted
    /// ([`crate::guards::managed_env_names`]).
    pub managed: Vec<String>,
    /// The first workload, in the spec's order, with the same managed variables: the
    /// `env.managed` definitions this workload's rules refer to are named after it.
    pub owner: &'s str,
}

/// Each workload's managed variables and the owner of the definitions it shares.
pub(crate) fn managed_env_of_workloads<'s>(
    spec: &'s Spec,
    defaults: &Value,
) -> Vec<ManagedEnv<'s>> {
    let mut owners: std::collections::HashMap<Vec<String>, &'s str> = Default::default();
    spec.workloads
        .all()
        .into_iter()
        .map(|(name, _)| {
            let managed = crate::guards::managed_env_names(defaults, name);
            let owner = *owners.entry(managed.clone()).or_insert(name);
            ManagedEnv {
                name,
                managed,
                owner,
            }
        })
        .collect()
}

/// The `env.managed` definitions of every group of workloads with the same managed
/// variables.
fn managed_env_definitions(spec: &Spec, defaults: &Value, definitions: &mut Map<String, Value>) {
    let database = crate::guards::database_env_names(defaults);
    for workload in managed_env_of_workloads(spec, defaults) {
        if workload.name != workload.owner {
            continue;
        }
        if !workload.managed.is_empty() {
            definitions.insert(
                env_not_managed_name(workload.owner),
                json!({"items": {"properties": {"name": {"not": {"enum": workload.managed}}}}}),
            );
        }
        let pattern = crate::contract::rules::managed_args_pattern(
            &crate::guards::managed_arg_names(&workload.managed, &database),
        );
        let no_workers = json!({"not": {"type": "string", "pattern": pattern}});
        definitions.insert(
            args_not_managed_name(workload.owner),
            json!({"properties": {"args": {"items": no_workers}, "command": {"items": no_workers}}}),
        );
    }
}

/// The parts of the root rules that every workload of a class shares, each written
/// once under `definitions` and referenced from each workload's rule: what routes to
/// a workload needs a Service with a port; a PodDisruptionBudget's `minAvailable`
/// stays below the fewest pods, enumerated up to `pods.pod_count`; an autoscaler's
/// `minReplicas` is at most its `maxReplicas`, enumerated up to `pods.max_replicas`;
/// `env` and `args` do not set what the chart manages, one definition per group of
/// workloads with the same managed variables (read from `defaults`). Only the
/// definitions the spec's workloads use.
pub fn shared_definitions(spec: &Spec, pods: PodBounds, defaults: &Value) -> Map<String, Value> {
    let mut definitions = Map::new();
    managed_env_definitions(spec, defaults, &mut definitions);
    for (_, workload) in spec.workloads.all() {
        let class = workload.class();
        if class.can_serve() {
            let name = pdb_below_fewest_pods_name(class);
            if !definitions.contains_key(&name) {
                definitions.insert(name, pdb_below_fewest_pods(class, pods.pod_count));
                definitions.insert(SERVICE_EXPOSED_PORT.into(), service_exposed_port());
            }
        }
        if !class.autoscalers().is_empty() && pods.max_replicas >= 1 {
            definitions.insert(
                MIN_REPLICAS_AT_MOST_MAX.into(),
                min_replicas_at_most_max(pods.max_replicas),
            );
        }
    }
    definitions
}

/// `service.exposed-port` on one workload.
fn service_exposed_port() -> Value {
    let on = |key: &str| json!({"required": [key], "properties": {key: {"required": ["enabled"], "properties": {"enabled": {"const": true}}}}});
    let mut exposed = vec![json!({
        "if": on("service"),
        "then": {"properties": {"port": {"minimum": 1}}}
    })];
    for key in ["ingress", "serviceMonitor"] {
        exposed.push(json!({"if": on(key), "then": on("service")}));
    }
    object([("allOf", Value::Array(exposed))])
}

/// `rollout.drain` on the `minAvailable` of a workload of `class`: one member per way
/// the fewest pods are counted (the first autoscaler on owns the count, else
/// `replicaCount`), with the PDB on; inside it, one `if count <= k then minAvailable
/// <= k - 1` per k up to `largest`, the largest pod count a plan allows.
fn pdb_below_fewest_pods(class: WorkloadClass, largest: u64) -> Value {
    let off: Map<String, Value> = class
        .autoscalers()
        .iter()
        .map(|key| {
            (
                key.to_string(),
                json!({"properties": {"enabled": {"const": false}}}),
            )
        })
        .collect();
    let mut fewest = vec![(json!({"properties": off}), "replicaCount".to_string())];
    for (i, key) in class.autoscalers().iter().enumerate() {
        let mut props: Map<String, Value> = class.autoscalers()[..i]
            .iter()
            .map(|k| {
                (
                    k.to_string(),
                    json!({"properties": {"enabled": {"const": false}}}),
                )
            })
            .collect();
        props.insert(
            key.to_string(),
            json!({"properties": {"enabled": {"const": true}}}),
        );
        fewest.push((json!({"properties": props}), format!("{key}.minReplicas")));
    }
    let mut members = Vec::new();
    for (mode, count) in fewest {
        let (parent, leaf) = match count.split_once('.') {
            Some((p, l)) => (Some(p), l),
            None => (None, count.as_str()),
        };
        let steps: Vec<Value> = (0..=largest)
            .map(|k| {
                let at_most = json!({"properties": {leaf: {"maximum": k}}});
                let count_at_most = match parent {
                    Some(p) => object([("properties", object([(p, at_most)]))]),
                    None => at_most,
                };
                object([
                    ("if", count_at_most),
                    ("then", json!({"properties": {"podDisruptionBudget": {"properties": {"minAvailable": {"maximum": k.saturating_sub(1)}}}}})),
                ])
            })
            .collect();
        members.push(object([
            (
                "if",
                object([(
                    "allOf",
                    Value::Array(vec![
                        mode,
                        json!({"properties": {"podDisruptionBudget": {"properties": {"enabled": {"const": true}}}}}),
                    ]),
                )]),
            ),
            ("then", object([("allOf", Value::Array(steps))])),
        ]));
    }
    object([("allOf", Value::Array(members))])
}

/// `autoscaling.one-autoscaler`'s `minReplicas <= maxReplicas` on one autoscaler,
/// enumerated over `largest`, the largest `maxReplicas` a plan allows.
fn min_replicas_at_most_max(largest: u64) -> Value {
    let members: Vec<Value> = (1..=largest)
        .map(|k| {
            json!({
                "if": {"properties": {"maxReplicas": {"maximum": k}}},
                "then": {"properties": {"minReplicas": {"maximum": k}}}
            })
        })
        .collect();
    object([
        ("if", json!({"properties": {"enabled": {"const": true}}})),
        ("then", object([("allOf", Value::Array(members))])),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::example;

    /// Whether a workload's values match the named shared definition.
    fn matches(definitions: &Map<String, Value>, name: &str, workload: Value) -> bool {
        let schema = json!({
            "definitions": definitions,
            "$ref": format!("#/definitions/{name}")
        });
        jsonschema::draft7::new(&schema)
            .unwrap()
            .is_valid(&workload)
    }

    /// Workloads whose chart-managed variables are the same share one pair of
    /// `env.managed` definitions, named after the first of them in the spec's order;
    /// workloads whose variables differ do not; only owners have definitions.
    #[test]
    fn workloads_with_the_same_managed_variables_share_their_definitions() {
        for example_name in ["agent-platform", "llm-gateway", "web-shop"] {
            let spec = example(example_name);
            let defaults = crate::values::default_values(&spec);
            let all = managed_env_of_workloads(&spec, &defaults);
            let names: Vec<&str> = spec.workloads.all().iter().map(|(n, _)| *n).collect();
            assert_eq!(all.iter().map(|w| w.name).collect::<Vec<_>>(), names);
            let definitions = shared_definitions(&spec, PodBounds::default(), &defaults);
            let mut shared = 0;
            for (i, w) in all.iter().enumerate() {
                assert_eq!(
                    w.managed,
                    crate::guards::managed_env_names(&defaults, w.name)
                );
                let first = all.iter().find(|o| o.managed == w.managed).unwrap();
                assert_eq!(w.owner, first.name, "{example_name}: {}", w.name);
                for other in &all[..i] {
                    assert_eq!(other.managed == w.managed, other.owner == w.owner);
                }
                let owns = w.owner == w.name;
                shared += usize::from(!owns);
                assert_eq!(
                    definitions.contains_key(&args_not_managed_name(w.name)),
                    owns,
                    "{example_name}: {}",
                    w.name
                );
                assert_eq!(
                    definitions.contains_key(&env_not_managed_name(w.name)),
                    owns && !w.managed.is_empty(),
                    "{example_name}: {}",
                    w.name
                );
            }
            if example_name == "agent-platform" {
                assert!(shared > 0, "no two workloads of {example_name} share");
            }
        }
        // One workload with a variable of its own owns a group of one; the others
        // keep theirs.
        let spec = example("agent-platform");
        let mut defaults = crate::values::default_values(&spec);
        let names: Vec<&str> = spec.workloads.all().iter().map(|(n, _)| *n).collect();
        let alone = names[names.len() - 1];
        let first = names[0];
        defaults["workloads"][alone]["processEnv"]
            .as_array_mut()
            .unwrap()
            .push(json!("APP_ONLY_HERE"));
        let all = managed_env_of_workloads(&spec, &defaults);
        assert_eq!(all.last().unwrap().owner, alone);
        assert!(all[..all.len() - 1].iter().all(|w| w.owner == first));
        let definitions = shared_definitions(&spec, PodBounds::default(), &defaults);
        for owner in [first, alone] {
            assert!(
                definitions.contains_key(&env_not_managed_name(owner)),
                "{owner}"
            );
            assert!(
                definitions.contains_key(&args_not_managed_name(owner)),
                "{owner}"
            );
        }
        let own = json!([{"name": "APP_ONLY_HERE"}]);
        assert!(!matches(
            &definitions,
            &env_not_managed_name(alone),
            own.clone()
        ));
        assert!(matches(&definitions, &env_not_managed_name(first), own));
        let set = json!({"args": ["APP_ONLY_HERE=1"]});
        assert!(!matches(
            &definitions,
            &args_not_managed_name(alone),
            set.clone()
        ));
        assert!(matches(&definitions, &args_not_managed_name(first), set));
    }

    /// An owner's definitions refuse each managed variable in `env`, a worker count or
    /// a managed or database variable set in `args` or `command`, and accept the
    /// application's own.
    #[test]
    fn managed_env_definitions_refuse_what_the_chart_manages() {
        let mut owners = 0;
        for example_name in ["agent-platform", "llm-gateway", "web-shop"] {
            let spec = example(example_name);
            let defaults = crate::values::default_values(&spec);
            let database = crate::guards::database_env_names(&defaults);
            let definitions = shared_definitions(&spec, PodBounds::default(), &defaults);
            for w in managed_env_of_workloads(&spec, &defaults) {
                if w.owner != w.name {
                    continue;
                }
                owners += 1;
                let env = env_not_managed_name(w.owner);
                for managed in &w.managed {
                    let item = json!([{"name": "APP_OWN"}, {"name": managed, "value": "1"}]);
                    assert!(!matches(&definitions, &env, item), "{}: {managed}", w.name);
                }
                if !w.managed.is_empty() {
                    assert!(matches(&definitions, &env, json!([{"name": "APP_OWN"}])));
                }
                let args = args_not_managed_name(w.owner);
                for set in crate::guards::managed_arg_names(&w.managed, &database) {
                    for key in ["args", "command"] {
                        let line = json!({key: ["sh", "-c", format!("{set}=1 exec app")]});
                        assert!(!matches(&definitions, &args, line), "{}: {set}", w.name);
                    }
                }
                for refused in [
                    json!(["--workers", "2"]),
                    json!(["-w4"]),
                    json!(["run --wo=2"]),
                ] {
                    assert!(!matches(&definitions, &args, json!({"args": refused})));
                }
                let own = json!({"args": ["serve", "--port", "8000"], "command": ["APP_OWN=1"]});
                assert!(matches(&definitions, &args, own), "{}", w.name);
            }
        }
        assert!(owners >= 3, "{owners}");
    }

    /// Each serving class has its own `minAvailable` definition, counting the fewest
    /// pods by its own autoscalers: `minAvailable` one below the fewest is accepted, at
    /// the fewest refused, for `replicaCount` and each autoscaler's `minReplicas`, up to
    /// the largest pod count and at it.
    #[test]
    fn each_class_keeps_min_available_below_its_own_fewest_pods() {
        let spec = example("agent-platform");
        let largest = 6;
        let definitions = shared_definitions(
            &spec,
            PodBounds {
                max_replicas: 3,
                pod_count: largest,
            },
            &crate::values::default_values(&spec),
        );
        let pdb = |min: u64| json!({"enabled": true, "minAvailable": min});
        for class in [
            WorkloadClass::Api,
            WorkloadClass::Pool,
            WorkloadClass::Worker,
        ] {
            let name = pdb_below_fewest_pods_name(class);
            for fewest in [1, 3, largest] {
                // Values always hold every autoscaler of the class (the defaults do).
                let by_count = |min| {
                    let mut v = json!({"replicaCount": fewest, "podDisruptionBudget": pdb(min)});
                    for key in class.autoscalers() {
                        v[*key] = json!({"enabled": false, "minReplicas": 1});
                    }
                    v
                };
                assert!(
                    matches(&definitions, &name, by_count(fewest - 1)),
                    "{name} {fewest}"
                );
                assert!(
                    !matches(&definitions, &name, by_count(fewest)),
                    "{name} {fewest}"
                );
                for key in class.autoscalers() {
                    let on = |min| {
                        let mut v = json!({"replicaCount": 1, "podDisruptionBudget": pdb(min)});
                        for other in class.autoscalers() {
                            v[*other] = json!({"enabled": other == key, "minReplicas": 1});
                        }
                        v[*key]["minReplicas"] = json!(fewest);
                        v
                    };
                    assert!(
                        matches(&definitions, &name, on(fewest - 1)),
                        "{name} {key} {fewest}"
                    );
                    assert!(
                        !matches(&definitions, &name, on(fewest)),
                        "{name} {key} {fewest}"
                    );
                }
            }
            // Off: no bound.
            let off = json!({"replicaCount": 1, "podDisruptionBudget": {"enabled": false, "minAvailable": 5}});
            assert!(matches(&definitions, &name, off), "{name}");
        }
        assert_ne!(
            pdb_below_fewest_pods_name(WorkloadClass::Pool),
            pdb_below_fewest_pods_name(WorkloadClass::Worker)
        );
    }

    /// `minReplicas <= maxReplicas` up to the largest `maxReplicas`, only while the
    /// autoscaler is on; the exposed-port rule needs a Service with a port.
    #[test]
    fn the_autoscaler_and_exposed_port_definitions_say_their_rules() {
        let spec = example("agent-platform");
        let definitions = shared_definitions(
            &spec,
            PodBounds {
                max_replicas: 4,
                pod_count: 4,
            },
            &crate::values::default_values(&spec),
        );
        let hpa = |on: bool, min: u64, max: u64| json!({"enabled": on, "minReplicas": min, "maxReplicas": max});
        for (on, min, max, ok) in [
            (true, 1, 1, true),
            (true, 2, 1, false),
            (true, 4, 4, true),
            (true, 5, 4, false),
            (true, 3, 4, true),
            (false, 4, 1, true),
        ] {
            assert_eq!(
                matches(&definitions, MIN_REPLICAS_AT_MOST_MAX, hpa(on, min, max)),
                ok,
                "{on} {min} {max}"
            );
        }
        let service = |on: bool, port: u64| json!({"service": {"enabled": on}, "port": port});
        assert!(matches(
            &definitions,
            SERVICE_EXPOSED_PORT,
            service(true, 1)
        ));
        assert!(!matches(
            &definitions,
            SERVICE_EXPOSED_PORT,
            service(true, 0)
        ));
        let mut ingress = service(false, 8080);
        ingress["ingress"] = json!({"enabled": true});
        assert!(!matches(
            &definitions,
            SERVICE_EXPOSED_PORT,
            ingress.clone()
        ));
        ingress["service"]["enabled"] = json!(true);
        assert!(matches(&definitions, SERVICE_EXPOSED_PORT, ingress));
        // Without autoscalers enumerated over, no such definition.
        let none = shared_definitions(
            &spec,
            PodBounds::default(),
            &crate::values::default_values(&spec),
        );
        assert!(!none.contains_key(MIN_REPLICAS_AT_MOST_MAX));
        assert!(none.contains_key(SERVICE_EXPOSED_PORT));
    }
}
