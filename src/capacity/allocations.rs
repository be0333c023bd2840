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
    let Some((_, workload)) = spec
        .workloads
        .all()
        .into_iter()
        .find(|(n, _)| *n == settings.sizes_from)
    else {
        return Vec::new();
    };
    let declared = workload.allocation_values();
    let mut out = Vec::new();
    for dependency in ["postgres", "redis"] {
        if let Some(allocations) = declared.get(dependency).and_then(Value::as_object) {
            for (alloc, d) in allocations {
                let setting = d.get("setting").and_then(Value::as_str).unwrap_or("");
                if !setting.is_empty() {
                    out.push((dependency, alloc.clone(), d.clone()));
                }
            }
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
    if let Some(settings) = &spec.startup_settings {
        if settings.sizes_from != workload {
            if let Some((_, _, from)) = stated_allocations(spec)
                .into_iter()
                .find(|(d, a, _)| *d == dependency && a == alloc)
            {
                return effective_size(spec, &settings.sizes_from, dependency, alloc, &from);
            }
        }
    }
    if dependency == "postgres" {
        effective_postgres_size(workload, alloc, declared)
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
    let path = ValuePath::new(["workloads", workload, "postgres", alloc]);
    let size = val(&path.child("size"));
    match declared
        .get("sizeWithout")
        .and_then(|s| s.get("workload"))
        .and_then(Value::as_str)
    {
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
    match declared.get("feature").and_then(Value::as_str) {
        Some(f) if !f.is_empty() => val(&ValuePath::new(["features", f])),
        _ => lit(true),
    }
}
