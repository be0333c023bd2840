//! `env.unique`: one variable name at most once in a container's `env` (the
//! application's container, each sidecar and init container). Kubernetes keeps the
//! last entry of a repeated name, so the first one reads as set and is not; a
//! variable the chart manages is `env.managed`'s. A spec's workload entry is the
//! defaults' values, so the guard covers the spec too.
//!
//! At install time draft-07 cannot compare the names of two list items: Helm accepts
//! such values, and Kubernetes keeps the last entry (the chart README lists this).

use super::{Finding, Severity};
use crate::spec::Spec;
use serde_json::Value;

/// Repeated names of one `env` list: `(index of the repeat, name, index of the first)`.
fn repeats(env: &[Value]) -> Vec<(usize, String, usize)> {
    let mut first: std::collections::BTreeMap<&str, usize> = Default::default();
    let mut out = Vec::new();
    for (i, entry) in env.iter().enumerate() {
        let Some(name) = entry.get("name").and_then(Value::as_str) else {
            continue;
        };
        match first.get(name) {
            Some(&j) => out.push((i, name.to_string(), j)),
            None => {
                first.insert(name, i);
            }
        }
    }
    out
}

/// `env.unique`: every repeated variable name in one container's `env`.
pub fn check(spec: &Spec, values: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    for (name, _) in spec.workloads.all() {
        let Some(w) = values.get("workloads").and_then(|w| w.get(name)) else {
            continue;
        };
        let mut lists = vec![(format!("workloads.{name}.env"), w.get("env"))];
        for kind in ["initContainers", "sidecars"] {
            for (i, c) in w
                .get(kind)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                lists.push((format!("workloads.{name}.{kind}[{i}].env"), c.get("env")));
            }
        }
        for (path, env) in lists {
            let Some(env) = env.and_then(Value::as_array) else {
                continue;
            };
            for (i, var, j) in repeats(env) {
                out.push(Finding {
                    rule: "env.unique",
                    severity: Severity::Error,
                    path: format!("{path}[{i}]"),
                    message: format!(
                        "`{}` is already set by `{path}[{j}]`; Kubernetes would keep this one and drop the first",
                        var.escape_debug()
                    ),
                    arithmetic: None,
                    hint: "set each variable once: remove one of the two entries".into(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{places, values, with};
    use serde_json::json;

    fn spec(env: &str) -> Spec {
        let text = format!("chart: {{name: tiny, version: 1.0.0, appVersion: \"1\", description: d}}\nimage: {{repository: example/tiny}}\nworkloads:\n  api:\n    web: {{env: {env}}}\n");
        crate::spec::load_spec(&text, "s.yaml").unwrap()
    }

    #[test]
    fn distinct_names_pass() {
        let spec = spec("[{name: A, value: '1'}, {name: B, value: '2'}]");
        assert!(check(&spec, &values(&spec, None)).is_empty());
    }

    #[test]
    fn a_name_repeated_in_the_spec_is_refused_at_its_second_entry() {
        let spec = spec("[{name: A, value: '1'}, {name: B}, {name: A, value: '2'}]");
        let found = check(&spec, &values(&spec, None));
        assert_eq!(
            places(&found),
            [("env.unique", "workloads.web.env[2]".to_string())]
        );
        assert_eq!(
            found[0].message,
            "`A` is already set by `workloads.web.env[0]`; Kubernetes would keep this one and drop the first"
        );
    }

    #[test]
    fn sidecars_and_init_containers_are_containers_too() {
        let spec = spec("[]");
        let env = json!([{"name": "X"}, {"name": "X"}]);
        let v = with(
            values(&spec, None),
            &[
                ("workloads.web.sidecars", json!([{"name": "s", "env": env}])),
                (
                    "workloads.web.initContainers",
                    json!([{"name": "i", "env": [{"name": "X"}]}, {"name": "j", "env": env}]),
                ),
            ],
        );
        assert_eq!(
            places(&check(&spec, &v)),
            [
                (
                    "env.unique",
                    "workloads.web.initContainers[1].env[1]".to_string()
                ),
                ("env.unique", "workloads.web.sidecars[0].env[1]".to_string()),
            ]
        );
    }

    #[test]
    fn the_same_name_in_two_containers_passes() {
        let spec = spec("[{name: X}]");
        let v = with(
            values(&spec, None),
            &[(
                "workloads.web.sidecars",
                json!([{"name": "s", "env": [{"name": "X"}]}]),
            )],
        );
        assert!(check(&spec, &v).is_empty());
    }
}
