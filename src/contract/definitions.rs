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

/// The parts of the root rules that every workload of a class shares, each written
/// once under `definitions` and referenced from each workload's rule: what routes to
/// a workload needs a Service with a port; a PodDisruptionBudget's `minAvailable`
/// stays below the fewest pods, enumerated up to `pods.pod_count`; an autoscaler's
/// `minReplicas` is at most its `maxReplicas`, enumerated up to `pods.max_replicas`.
/// Only the definitions the spec's workloads use.
pub fn shared_definitions(spec: &Spec, pods: PodBounds) -> Map<String, Value> {
    let mut definitions = Map::new();
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
        let none = shared_definitions(&spec, PodBounds::default());
        assert!(!none.contains_key(MIN_REPLICAS_AT_MOST_MAX));
        assert!(none.contains_key(SERVICE_EXPOSED_PORT));
    }
}
