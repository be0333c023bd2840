//! `settings.one-value`: refuses a workload counted with another size than the
//! configuration file states. The configuration file states one size per allocation
//! and every workload's processes read it, so a workload whose values say another size
//! would be counted by the capacity guards with a size it never opens. At install time
//! the rule cannot be broken: another workload's stated allocation is derived from the
//! `sizesFrom` workload's size, and its own entry is `const` in `values.schema.json`.

use super::{Finding, Severity};
use crate::expr::ValuePath;
use crate::spec::Spec;
use crate::values::integral_numbers;
use serde_json::Value;

/// `settings.one-value`: the configuration file states one size per stated
/// allocation, and every workload's processes read that file, so every workload opens
/// the `sizesFrom` workload's size ([`crate::capacity::allocations::effective_size`]). Another
/// workload's entry is fixed by the spec and must agree with the stated one there;
/// values may not set it.
pub fn check(spec: &Spec, values: &Value) -> Vec<Finding> {
    let Some(settings) = &spec.startup_settings else {
        return Vec::new();
    };
    let from = settings.sizes_from.as_str();
    if !spec.workloads.all().iter().any(|(n, _)| *n == from) {
        return vec![Finding {
            rule: "settings.one-value",
            severity: Severity::Error,
            path: "startupSettings.sizesFrom".into(),
            message: format!("no workload `{from}`"),
            arithmetic: None,
            hint: "name the workload whose allocation sizes the configuration file states".into(),
        }];
    }
    let mut out = Vec::new();
    for (dependency, alloc, stated) in crate::capacity::allocations::stated_allocations(spec) {
        for (other, workload) in spec.workloads.all() {
            if other == from {
                continue;
            }
            let declared = workload.to_values();
            let Some(declared) = declared.get(dependency).and_then(|d| d.get(&alloc)) else {
                continue;
            };
            let path = format!("workloads.{other}.{dependency}.{alloc}");
            if declared.get("size") != stated.get("size")
                || declared.get("sizeWithout") != stated.get("sizeWithout")
            {
                out.push(Finding {
                    rule: "settings.one-value",
                    severity: Severity::Error,
                    path: format!("{path}.size"),
                    message: format!(
                        "the configuration file states `{alloc}` = {} (from `{from}`), but the spec declares `{other}` with {}: the application would open what the file says",
                        stated.get("size").map(crate::expr::gojson::to_go_json).unwrap_or_default(),
                        declared.get("size").map(crate::expr::gojson::to_go_json).unwrap_or_default()
                    ),
                    arithmetic: None,
                    hint: format!("give `{other}` the same `{alloc}` size as `{from}` in `shipshape.yaml`"),
                });
                continue;
            }
            let given = ValuePath::new(["workloads", other, dependency, &alloc]).lookup(values);
            if given.map(integral_numbers) != Some(integral_numbers(declared)) {
                out.push(Finding {
                    rule: "settings.one-value",
                    severity: Severity::Error,
                    path: format!("{path}.size"),
                    message: format!(
                        "`{path}` is taken from `workloads.{from}.{dependency}.{alloc}`: the configuration file states one `{alloc}` for every process, so it cannot be set here"
                    ),
                    arithmetic: None,
                    hint: format!("leave `{path}` as the chart has it and change `workloads.{from}.{dependency}.{alloc}.size` instead"),
                });
            }
        }
    }
    out
}
