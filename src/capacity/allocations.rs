//! Which connection allocations exist and how large each is, as expressions over
//! values: shared by the capacity formula, the guards and the ConfigMap.

use crate::expr::{lit, val, Expr, ValuePath};
use crate::spec::{Spec, WorkloadRef};
use serde_json::Value;

/// The allocations of the `sizesFrom` workload whose size the startup settings state:
/// `(dependency, allocation, declaration)`.
pub fn stated_allocations(spec: &Spec) -> Vec<(&'static str, String, Value)> {
    let Some(settings) = &spec.startup_settings else {
        return Vec::new();
    };
    let Some(workload) = spec.workloads.get(&settings.sizes_from) else {
        return Vec::new();
    };
    let (postgres, redis) = workload.allocations();
    let with_setting = |dependency: &'static str, setting: &str, alloc: &String| {
        (!setting.is_empty()).then(|| (dependency, alloc.clone()))
    };
    let stated = (postgres.iter())
        .filter_map(|(a, d)| with_setting("postgres", &d.setting, a))
        .chain(
            redis
                .iter()
                .filter_map(|(a, d)| with_setting("redis", &d.setting, a)),
        );
    stated
        .filter_map(|(dependency, alloc)| {
            let declared = allocation_value(&workload, dependency, &alloc)?;
            Some((dependency, alloc, declared))
        })
        .collect()
}

/// The declaration of allocation `alloc` of `dependency` (`postgres` or `redis`) of
/// `workload`, as JSON: what `allocation_values()[dependency][alloc]` holds.
pub fn allocation_value(workload: &WorkloadRef, dependency: &str, alloc: &str) -> Option<Value> {
    let (postgres, redis) = workload.allocations();
    let value = match dependency {
        "postgres" => serde_json::to_value(postgres.get(alloc)?),
        "redis" => serde_json::to_value(redis.get(alloc)?),
        _ => return None,
    };
    Some(value.unwrap_or(Value::Null))
}

/// `Some` when allocation `alloc` of `dependency` is one [`stated_allocations`] lists,
/// holding the `sizesFrom` workload's `sizeWithout.workload` of it: what
/// [`effective_size_with`] needs of the stated declaration, without serializing it.
fn stated_size_without<'s>(
    spec: &'s Spec,
    dependency: &str,
    alloc: &str,
) -> Option<Option<&'s str>> {
    let settings = spec.startup_settings.as_ref()?;
    let (postgres, redis) = spec.workloads.get(&settings.sizes_from)?.allocations();
    match dependency {
        "postgres" => postgres
            .get(alloc)
            .filter(|d| !d.setting.is_empty())
            .map(|d| d.size_without.as_ref().map(|s| s.workload.as_str())),
        "redis" => redis
            .get(alloc)
            .filter(|d| !d.setting.is_empty())
            .map(|_| None),
        _ => None,
    }
}

/// The connections per process of an allocation (`dependency` is `postgres` or
/// `redis`) as the application opens them. A stated allocation (one whose size the
/// startup settings write into the shared configuration file) takes the `sizesFrom`
/// workload's size in every workload, because every process reads that one file: its
/// own `size` is then fixed by the spec and never read (`settings.one-value`). Any other
/// allocation has its own size (for PostgreSQL, `sizeWithout.size` while the named
/// workload is disabled).
pub fn effective_size(
    spec: &Spec,
    workload: &str,
    dependency: &str,
    alloc: &str,
    declared: &Value,
) -> Expr {
    effective_size_with(spec, workload, dependency, alloc, size_without_of(declared))
}

/// [`effective_size`] of an allocation whose `sizeWithout.workload` is `size_without`.
pub fn effective_size_with(
    spec: &Spec,
    workload: &str,
    dependency: &str,
    alloc: &str,
    size_without: Option<&str>,
) -> Expr {
    if let Some(settings) = &spec.startup_settings {
        if settings.sizes_from != workload {
            if let Some(from_without) = stated_size_without(spec, dependency, alloc) {
                return effective_size_with(
                    spec,
                    &settings.sizes_from,
                    dependency,
                    alloc,
                    from_without,
                );
            }
        }
    }
    if dependency == "postgres" {
        postgres_size_with(workload, alloc, size_without)
    } else {
        val(&ValuePath::new([
            "workloads",
            workload,
            dependency,
            alloc,
            "size",
        ]))
    }
}

/// The connections per process of a PostgreSQL allocation as the application is told
/// them: its size, or `sizeWithout.size` while the named workload is disabled.
pub fn effective_postgres_size(workload: &str, alloc: &str, declared: &Value) -> Expr {
    postgres_size_with(workload, alloc, size_without_of(declared))
}

/// The `sizeWithout.workload` of an allocation's declaration.
fn size_without_of(declared: &Value) -> Option<&str> {
    declared
        .get("sizeWithout")
        .and_then(|s| s.get("workload"))
        .and_then(Value::as_str)
}

/// [`effective_postgres_size`] of an allocation whose `sizeWithout.workload` is
/// `size_without`.
fn postgres_size_with(workload: &str, alloc: &str, size_without: Option<&str>) -> Expr {
    let path = ValuePath::new(["workloads", workload, "postgres", alloc]);
    let size = val(&path.child("size"));
    match size_without {
        Some(other) => Expr::If(
            Box::new(val(&ValuePath::new(["workloads", other, "enabled"]))),
            Box::new(size),
            Box::new(val(&path.child("sizeWithout").child("size"))),
        ),
        None => size,
    }
}

/// Whether a PostgreSQL allocation exists: its feature flag is on (or it has none).
pub fn postgres_allocation_on(declared: &Value) -> Expr {
    allocation_on_feature(
        declared
            .get("feature")
            .and_then(Value::as_str)
            .unwrap_or(""),
    )
}

/// [`postgres_allocation_on`] of an allocation whose `feature` is `feature` (empty:
/// none).
pub fn allocation_on_feature(feature: &str) -> Expr {
    match feature {
        "" => lit(true),
        f => val(&ValuePath::new(["features", f])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::spec::testing::example;

    const EXAMPLES: [&str; 3] = ["agent-platform", "llm-gateway", "web-shop"];

    /// Every allocation of every example workload, as `(workload, dependency, name)`.
    fn every_allocation(spec: &Spec) -> Vec<(&str, &'static str, &str)> {
        let mut out = Vec::new();
        for (name, w) in spec.workloads.all() {
            let (postgres, redis) = w.allocations();
            out.extend(postgres.keys().map(|a| (name, "postgres", a.as_str())));
            out.extend(redis.keys().map(|a| (name, "redis", a.as_str())));
        }
        out
    }

    #[test]
    fn an_allocation_value_is_its_part_of_the_allocation_values() {
        let mut seen = 0;
        for example_name in EXAMPLES {
            let spec = example(example_name);
            for (name, dependency, alloc) in every_allocation(&spec) {
                let w = spec.workloads.get(name).unwrap();
                let whole = w.allocation_values();
                let one = allocation_value(&w, dependency, alloc);
                assert_eq!(
                    one.as_ref(),
                    Some(&whole[dependency][alloc]),
                    "{name}.{alloc}"
                );
                seen += 1;
            }
            let (name, w) = spec.workloads.all()[0];
            for (dependency, alloc) in [
                ("postgres", "nothing"),
                ("redis", "nothing"),
                ("mysql", "main"),
            ] {
                assert_eq!(
                    allocation_value(&w, dependency, alloc),
                    None,
                    "{name}: {dependency}.{alloc}"
                );
            }
        }
        assert!(seen > 10, "{seen}");
    }

    /// The stated allocations are the `sizesFrom` workload's allocations that name a
    /// settings key, and only a spec with startup settings has any.
    #[test]
    fn the_stated_allocations_are_the_sizes_from_workloads_with_a_setting() {
        for example_name in EXAMPLES {
            let spec = example(example_name);
            let stated = stated_allocations(&spec);
            let Some(settings) = &spec.startup_settings else {
                assert!(stated.is_empty(), "{example_name}");
                continue;
            };
            let from = spec.workloads.get(&settings.sizes_from).unwrap();
            let (postgres, redis) = from.allocations();
            let expected: Vec<(&str, String)> = (postgres
                .iter()
                .filter(|(_, d)| !d.setting.is_empty())
                .map(|(a, _)| ("postgres", a.clone())))
            .chain(
                redis
                    .iter()
                    .filter(|(_, d)| !d.setting.is_empty())
                    .map(|(a, _)| ("redis", a.clone())),
            )
            .collect();
            assert!(!expected.is_empty(), "{example_name}");
            let got: Vec<(&str, String)> = stated.iter().map(|(d, a, _)| (*d, a.clone())).collect();
            assert_eq!(got, expected, "{example_name}");
            for (dependency, alloc, declared) in &stated {
                assert_eq!(
                    Some(declared),
                    allocation_value(&from, dependency, alloc).as_ref()
                );
            }
        }
    }

    /// A stated allocation is sized as the `sizesFrom` workload's, in every workload;
    /// any other as its own, PostgreSQL's with `sizeWithout` while the named workload is
    /// disabled. The typed path gives what the declaration's JSON gives.
    #[test]
    fn a_stated_allocation_takes_the_sizes_from_workloads_size() {
        let mut stated_elsewhere = 0;
        let mut size_without = 0;
        for example_name in EXAMPLES {
            let spec = example(example_name);
            let stated = stated_allocations(&spec);
            for (name, dependency, alloc) in every_allocation(&spec) {
                let w = spec.workloads.get(name).unwrap();
                let declared = allocation_value(&w, dependency, alloc).unwrap();
                let size = effective_size(&spec, name, dependency, alloc, &declared);
                let is_stated = stated
                    .iter()
                    .any(|(d, a, _)| *d == dependency && a == alloc);
                let from = spec
                    .startup_settings
                    .as_ref()
                    .map(|s| s.sizes_from.as_str());
                let own = |workload: &str, declared: &Value| match dependency {
                    "postgres" => effective_postgres_size(workload, alloc, declared),
                    _ => val(&ValuePath::new([
                        "workloads",
                        workload,
                        dependency,
                        alloc,
                        "size",
                    ])),
                };
                match from {
                    Some(from) if is_stated && from != name => {
                        let (_, _, from_declared) = stated
                            .iter()
                            .find(|(d, a, _)| *d == dependency && a == alloc)
                            .unwrap();
                        assert_eq!(size, own(from, from_declared), "{name}.{alloc}");
                        assert_ne!(size, own(name, &declared), "{name}.{alloc}");
                        stated_elsewhere += 1;
                    }
                    _ => assert_eq!(size, own(name, &declared), "{name}.{alloc}"),
                }
                if let Some(other) = declared["sizeWithout"]["workload"].as_str() {
                    let path = ValuePath::new(["workloads", name, "postgres", alloc]);
                    let expected = Expr::If(
                        Box::new(val(&ValuePath::new(["workloads", other, "enabled"]))),
                        Box::new(val(&path.child("size"))),
                        Box::new(val(&path.child("sizeWithout").child("size"))),
                    );
                    assert_eq!(effective_postgres_size(name, alloc, &declared), expected);
                    size_without += 1;
                }
            }
        }
        assert!(
            stated_elsewhere > 0 && size_without > 0,
            "{stated_elsewhere} {size_without}"
        );
    }

    #[test]
    fn an_allocation_without_a_feature_is_always_on() {
        assert_eq!(allocation_on_feature(""), lit(true));
        assert_eq!(
            postgres_allocation_on(&serde_json::json!({"size": 1})),
            lit(true)
        );
        let on = val(&ValuePath::new(["features", "durableTelemetry"]));
        assert_eq!(allocation_on_feature("durableTelemetry"), on);
        let declared = serde_json::json!({"size": 1, "feature": "durableTelemetry"});
        assert_eq!(postgres_allocation_on(&declared), on);
    }
}
