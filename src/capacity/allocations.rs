//! Which connection allocations exist and how large each is, as expressions over
//! values: shared by the capacity formula, the guards and the ConfigMap.

use crate::expr::{lit, val, Expr, ValuePath};
use crate::spec::Spec;
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
    let mut out = Vec::new();
    for (alloc, d) in postgres {
        if !d.setting.is_empty() {
            out.push((
                "postgres",
                alloc.clone(),
                serde_json::to_value(d).unwrap_or(Value::Null),
            ));
        }
    }
    for (alloc, d) in redis {
        if !d.setting.is_empty() {
            out.push((
                "redis",
                alloc.clone(),
                serde_json::to_value(d).unwrap_or(Value::Null),
            ));
        }
    }
    out
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
            if let Some((_, _, from)) = stated_allocations(spec)
                .into_iter()
                .find(|(d, a, _)| *d == dependency && a == alloc)
            {
                let from_without = size_without_of(&from);
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
