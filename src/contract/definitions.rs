//! The definitions rules share: each part of `values.schema.json` that every
//! workload of a class (or every shared store) would otherwise repeat is written once
//! under `definitions`, and each rule refers to it with `$ref`.

use crate::contract::object;
use crate::contract::plans::PodBounds;
use crate::spec::{Spec, WorkloadClass};
use crate::values::schema_verdict::at_most;
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
    let mut definitions = shared_definitions_not_enumerated(spec, defaults);
    for e in enumerated_definitions(spec, pods) {
        definitions.insert(e.name(), e.schema());
    }
    definitions
}

/// The definitions of [`shared_definitions`] not enumerated over the pod bounds, which
/// read none: the managed variables' and, when a workload can serve, the exposed port's.
pub(crate) fn shared_definitions_not_enumerated(
    spec: &Spec,
    defaults: &Value,
) -> Map<String, Value> {
    let mut definitions = Map::new();
    managed_env_definitions(spec, defaults, &mut definitions);
    if spec
        .workloads
        .all()
        .iter()
        .any(|(_, w)| w.class().can_serve())
    {
        definitions.insert(SERVICE_EXPOSED_PORT.into(), service_exposed_port());
    }
    definitions
}

/// The definitions of [`shared_definitions`] enumerated over the pod bounds, as
/// [`Enumerated`]s, in the order the spec's workloads first need them: `render`
/// checks values against them without building them.
pub(crate) fn enumerated_definitions(spec: &Spec, pods: PodBounds) -> Vec<Enumerated> {
    let mut enumerated = Vec::new();
    for (_, workload) in spec.workloads.all() {
        let class = workload.class();
        let pdb = Enumerated::PdbBelowFewestPods {
            class,
            largest: pods.pod_count,
        };
        if class.can_serve() && !enumerated.contains(&pdb) {
            enumerated.push(pdb);
        }
        let min_at_most_max = Enumerated::MinReplicasAtMostMax {
            largest: pods.max_replicas,
        };
        if !class.autoscalers().is_empty()
            && pods.max_replicas >= 1
            && !enumerated.contains(&min_at_most_max)
        {
            enumerated.push(min_at_most_max);
        }
    }
    enumerated
}

/// A definition enumerated over the pod bounds of the plans, as data: its schema
/// ([`Enumerated::schema`], what `values.schema.json` holds) and its verdict on a
/// value computed without building that schema ([`Enumerated::holds`]), each step
/// of the enumeration checked in turn with the same keywords' meaning.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Enumerated {
    /// A workload's PodDisruptionBudget `minAvailable` below its fewest pods
    /// ([`pdb_below_fewest_pods`]).
    PdbBelowFewestPods { class: WorkloadClass, largest: u64 },
    /// An autoscaler's `minReplicas` at most its `maxReplicas`
    /// ([`min_replicas_at_most_max`]).
    MinReplicasAtMostMax { largest: u64 },
}

impl Enumerated {
    /// Its name under `definitions`.
    pub(crate) fn name(&self) -> String {
        match self {
            Enumerated::PdbBelowFewestPods { class, .. } => pdb_below_fewest_pods_name(*class),
            Enumerated::MinReplicasAtMostMax { .. } => MIN_REPLICAS_AT_MOST_MAX.into(),
        }
    }

    /// Its schema.
    pub(crate) fn schema(&self) -> Value {
        match *self {
            Enumerated::PdbBelowFewestPods { class, largest } => {
                pdb_below_fewest_pods(class, largest)
            }
            Enumerated::MinReplicasAtMostMax { largest } => min_replicas_at_most_max(largest),
        }
    }

    /// Whether `value` passes [`Enumerated::schema`].
    pub(crate) fn holds(&self, value: &Value) -> bool {
        let is = |b: bool| move |v: &Value| *v == Value::Bool(b);
        match *self {
            Enumerated::PdbBelowFewestPods { class, largest } => {
                if !holds_at(value, &["podDisruptionBudget", "enabled"], is(true)) {
                    return true;
                }
                let autoscalers = class.autoscalers();
                // One way of counting the fewest pods per member: `replicaCount` with
                // every autoscaler off, else the first autoscaler on.
                (0..=autoscalers.len()).all(|on| {
                    let off = |key: &&str| holds_at(value, &[*key, "enabled"], is(false));
                    let counted_here = match on {
                        0 => autoscalers.iter().all(off),
                        _ => {
                            autoscalers[..on - 1].iter().all(off)
                                && holds_at(value, &[autoscalers[on - 1], "enabled"], is(true))
                        }
                    };
                    let count: &[&str] = match on {
                        0 => &["replicaCount"],
                        _ => &[autoscalers[on - 1], "minReplicas"],
                    };
                    !counted_here
                        || (0..=largest).all(|k| {
                            !holds_at(value, count, |v| at_most(v, k))
                                || holds_at(value, &["podDisruptionBudget", "minAvailable"], |v| {
                                    at_most(v, k.saturating_sub(1))
                                })
                        })
                })
            }
            Enumerated::MinReplicasAtMostMax { largest } => {
                !holds_at(value, &["enabled"], is(true))
                    || (1..=largest).all(|k| {
                        !holds_at(value, &["maxReplicas"], |v| at_most(v, k))
                            || holds_at(value, &["minReplicas"], |v| at_most(v, k))
                    })
            }
        }
    }
}

/// Whether `value` passes `{"properties": {p0: {"properties": {p1: ... leaf}}}}` for
/// `path` = p0, p1, ...: what is not an object, or lacks the key, passes.
fn holds_at(value: &Value, path: &[&str], leaf: impl Fn(&Value) -> bool) -> bool {
    match path.split_first() {
        None => leaf(value),
        Some((key, rest)) => match value {
            Value::Object(map) => map.get(*key).is_none_or(|v| holds_at(v, rest, leaf)),
            _ => true,
        },
    }
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

    /// Values of a leaf the enumerated definitions read: absent, of every JSON type,
    /// and numbers around each step (`k - 1`, `k`, `k + 1`, between), negative, huge.
    fn leaves(largest: u64) -> Vec<Option<Value>> {
        let l = largest as i64;
        let mut out = vec![
            None,
            Some(Value::Null),
            Some(json!(true)),
            Some(json!(false)),
            Some(json!("2")),
            Some(json!([1])),
            Some(json!({"a": 1})),
            Some(json!(-1)),
            Some(json!(-0.5)),
            Some(json!(0.5)),
            Some(json!(1.5)),
            Some(json!(u64::MAX)),
            Some(json!(i64::MIN)),
            Some(json!(1e300)),
            Some(json!(l as f64 + 0.5)),
        ];
        out.extend((0..=l + 2).map(|n| Some(json!(n))));
        out
    }

    /// A value from `choices`, picked by the next number of a small generator.
    fn pick<'c, T>(state: &mut u64, choices: &'c [T]) -> &'c T {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        &choices[((*state >> 33) % choices.len() as u64) as usize]
    }

    /// `object` with `path` set to `leaf` (nothing set when `leaf` is absent; a
    /// parent that is not an object is kept).
    fn with_leaf(mut object: Value, path: &[&str], leaf: &Option<Value>) -> Value {
        let Some(leaf) = leaf else { return object };
        let mut at = &mut object;
        for key in &path[..path.len() - 1] {
            let Value::Object(map) = at else {
                return object;
            };
            at = map.entry(key.to_string()).or_insert_with(|| json!({}));
        }
        if let Value::Object(map) = at {
            map.insert(path[path.len() - 1].to_string(), leaf.clone());
        }
        object
    }

    /// [`Enumerated::holds`] decides as the walk of [`Enumerated::schema`], tidied as
    /// `values.schema.json` holds it, on random workloads and autoscalers whose every
    /// leaf the definitions read is absent, of another type, or a number at, beside or
    /// between the steps; also on values that are not objects.
    #[test]
    fn enumerated_definitions_hold_exactly_where_their_schemas_do() {
        use crate::values::schema_verdict::schema_verdict;
        let mut state = 7;
        let mut refused = 0;
        let classes = [
            WorkloadClass::Api,
            WorkloadClass::Pool,
            WorkloadClass::Worker,
            WorkloadClass::Jobs,
        ];
        for largest in [0u64, 1, 2, 5] {
            let mut cases: Vec<Enumerated> = classes
                .iter()
                .map(|&class| Enumerated::PdbBelowFewestPods { class, largest })
                .collect();
            cases.push(Enumerated::MinReplicasAtMostMax { largest });
            for case in cases {
                let schema = crate::contract::schema::tidied(
                    [(case.name(), case.schema())].into_iter().collect(),
                );
                let schema = json!({
                    "definitions": schema,
                    "$ref": format!("#/definitions/{}", case.name())
                });
                let leaves = leaves(largest);
                let flags = [None, Some(json!(true)), Some(json!(false)), Some(json!(1))];
                let paths: Vec<(Vec<&str>, bool)> = match case {
                    Enumerated::PdbBelowFewestPods { class, .. } => {
                        let mut paths = vec![
                            (vec!["replicaCount"], false),
                            (vec!["podDisruptionBudget", "enabled"], true),
                            (vec!["podDisruptionBudget", "minAvailable"], false),
                        ];
                        for key in class.autoscalers() {
                            paths.push((vec![key, "enabled"], true));
                            paths.push((vec![key, "minReplicas"], false));
                        }
                        paths
                    }
                    Enumerated::MinReplicasAtMostMax { .. } => vec![
                        (vec!["enabled"], true),
                        (vec!["maxReplicas"], false),
                        (vec!["minReplicas"], false),
                    ],
                };
                for value in [json!(null), json!(3), json!("x"), json!([]), json!({})] {
                    assert_eq!(Some(case.holds(&value)), schema_verdict(&schema, &value));
                }
                for _ in 0..3000 {
                    let mut value = json!({});
                    for (path, flag) in &paths {
                        let leaf = match flag {
                            // Mostly the flags that turn the steps on.
                            true => pick(&mut state, &flags),
                            false => pick(&mut state, &leaves),
                        };
                        value = with_leaf(value, path, leaf);
                    }
                    let holds = case.holds(&value);
                    assert_eq!(
                        Some(holds),
                        schema_verdict(&schema, &value),
                        "{case:?}: {value}"
                    );
                    refused += usize::from(!holds);
                }
            }
        }
        assert!(refused > 1000, "the cases reach the refusals: {refused}");
    }
}
