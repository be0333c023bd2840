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
            let Some(declared) =
                crate::capacity::allocations::allocation_value(&workload, dependency, &alloc)
            else {
                continue;
            };
            let declared = &declared;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, places, values, with};
    use crate::model::{PostgresAllocation, SizeWithout};
    use serde_json::json;

    /// The gateway: the configuration file states the api's sizes, and the
    /// `batch-worker` declares the same allocations.
    fn gateway() -> Spec {
        example("llm-gateway")
    }

    fn worker_control(spec: &mut Spec) -> &mut PostgresAllocation {
        spec.workloads
            .worker
            .get_mut("batch-worker")
            .unwrap()
            .postgres
            .get_mut("control")
            .unwrap()
    }

    fn at(path: &str) -> Vec<(&'static str, String)> {
        vec![("settings.one-value", path.to_string())]
    }

    #[test]
    fn the_same_sizes_everywhere_pass() {
        let spec = gateway();
        assert_eq!(check(&spec, &values(&spec, None)), []);
        for preset in ["production", "production-split"] {
            assert_eq!(check(&spec, &values(&spec, Some(preset))), [], "{preset}");
        }
    }

    #[test]
    fn a_spec_declaring_another_size_for_another_workload_is_refused() {
        let mut spec = gateway();
        worker_control(&mut spec).size = 21;
        let findings = check(&spec, &values(&spec, None));
        assert_eq!(
            places(&findings),
            at("workloads.batch-worker.postgres.control.size")
        );
        assert_eq!(findings[0].severity, Severity::Error);
        assert_eq!(
            findings[0].message,
            "the configuration file states `control` = 20 (from `api`), but the spec declares `batch-worker` with 21: the application would open what the file says"
        );
    }

    #[test]
    fn a_spec_declaring_another_size_without_a_workload_is_refused() {
        let mut spec = gateway();
        worker_control(&mut spec).size_without = Some(SizeWithout {
            workload: "api".into(),
            size: 20,
        });
        assert_eq!(
            places(&check(&spec, &values(&spec, None))),
            at("workloads.batch-worker.postgres.control.size")
        );
    }

    #[test]
    fn values_setting_another_workloads_stated_size_are_refused() {
        let spec = gateway();
        for size in [63.0, 65.0] {
            let v = with(
                values(&spec, None),
                &[("workloads.batch-worker.redis.critical.size", json!(size))],
            );
            let findings = check(&spec, &v);
            assert_eq!(
                places(&findings),
                at("workloads.batch-worker.redis.critical.size"),
                "{size}"
            );
            assert!(findings[0].message.starts_with(
                "`workloads.batch-worker.redis.critical` is taken from `workloads.api.redis.critical`"
            ));
        }
    }

    #[test]
    fn the_sizes_from_workload_itself_may_change_its_sizes() {
        let spec = gateway();
        let v = with(
            values(&spec, None),
            &[("workloads.api.postgres.control.size", json!(30.0))],
        );
        assert_eq!(check(&spec, &v), []);
    }

    #[test]
    fn sizes_from_must_name_a_workload() {
        let mut spec = gateway();
        spec.startup_settings.as_mut().unwrap().sizes_from = "nowhere".into();
        let findings = check(&spec, &values(&spec, None));
        assert_eq!(places(&findings), at("startupSettings.sizesFrom"));
        assert_eq!(findings[0].message, "no workload `nowhere`");
    }

    #[test]
    fn a_spec_without_startup_settings_has_nothing_to_check() {
        let spec = example("agent-platform");
        assert_eq!(check(&spec, &values(&spec, None)), []);
    }
}
