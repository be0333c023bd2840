//! `values.types`: refuses values that do not fit the typed model, since the guards
//! could not check them. Every other guard reads the values through the model's types;
//! a value that does not deserialize (a count above 2147483647, a fraction where a
//! whole number belongs, a string where a number belongs) would make a guard fall back
//! to a default, a budget read as 0, say, and pass what it should refuse. This rule
//! reports such values instead. At install time `values.schema.json` bounds every
//! integer by 2147483647 and checks percentages by pattern, so every value Helm
//! accepts fits the types.
//!
//! [`TypedWorkloads`], the one typed read of a preset's workloads that this rule and
//! the other guards of the typed model share, lives here beside the rule that makes
//! it safe.

use super::{Finding, Severity};
use crate::model::{ApiValues, JobsValues, MigrateValues, PoolValues, WorkerValues};
use crate::spec::{Spec, WorkloadRef};
use crate::values::WholeNumbers;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// One preset's workloads read into the typed model once, each whole number an
/// integer ([`WholeNumbers`]), and shared by reference with every guard that reads
/// them ([`Check::Typed`](super::registry::Check::Typed)): `values.types` reports the
/// workloads that do not fit, the others check the ones that do.
pub struct TypedWorkloads<'s> {
    /// Every workload of the spec, in [`Workloads::all`](crate::spec::Workloads::all)'s
    /// order (by class, then by name): `None` when the values have none, the
    /// deserializer's message when they do not fit.
    each: Vec<(&'s str, Option<Result<Typed, String>>)>,
}

/// One workload's values in the type of its class, kept for the classes a guard
/// reads typed (api and pool). The variants differ in size; they live side by side
/// in one vector, allocated once, where a box each would be one more allocation per
/// workload.
#[allow(clippy::large_enum_variant)]
enum Typed {
    Api(ApiValues),
    Pool(PoolValues),
    /// A jobs, worker or migrate workload's values: read to know that they fit, not
    /// kept, as no guard reads them typed.
    Fits,
}

impl<'s> TypedWorkloads<'s> {
    /// Reads every workload of `spec` from `values.workloads`.
    pub fn read(spec: &'s Spec, values: &Value) -> Self {
        let workloads = values.get("workloads");
        let each = spec
            .workloads
            .all()
            .into_iter()
            .map(|(name, workload)| {
                let typed = workloads
                    .and_then(|w| w.get(name))
                    .map(|raw| match workload {
                        WorkloadRef::Api(_) => typed(raw).map(Typed::Api),
                        WorkloadRef::Jobs(_) => typed::<JobsValues>(raw).map(|_| Typed::Fits),
                        WorkloadRef::Pool(_) => typed(raw).map(Typed::Pool),
                        WorkloadRef::Worker(_) => typed::<WorkerValues>(raw).map(|_| Typed::Fits),
                        WorkloadRef::Migrate(_) => typed::<MigrateValues>(raw).map(|_| Typed::Fits),
                    });
                (name, typed)
            })
            .collect();
        TypedWorkloads { each }
    }

    /// The workloads whose values fit, in the spec's order.
    fn fitting(&self) -> impl Iterator<Item = (&'s str, &Typed)> + '_ {
        self.each
            .iter()
            .filter_map(|(name, typed)| Some((*name, typed.as_ref()?.as_ref().ok()?)))
    }

    /// Every api workload whose values fit [`ApiValues`], in the spec's order.
    pub fn api(&self) -> impl Iterator<Item = (&'s str, &ApiValues)> + '_ {
        self.fitting().filter_map(|(name, typed)| match typed {
            Typed::Api(api) => Some((name, api)),
            _ => None,
        })
    }

    /// Every pool whose values fit [`PoolValues`], in the spec's order.
    pub fn pools(&self) -> impl Iterator<Item = (&'s str, &PoolValues)> + '_ {
        self.fitting().filter_map(|(name, typed)| match typed {
            Typed::Pool(pool) => Some((name, pool)),
            _ => None,
        })
    }
}

/// `raw` read as `T`, or the deserializer's message.
fn typed<T: DeserializeOwned>(raw: &Value) -> Result<T, String> {
    T::deserialize(WholeNumbers(raw)).map_err(|e| e.to_string())
}

/// The finding of a part of the values at `path` that does not fit its type.
fn unfit(path: String, error: &str) -> Finding {
    Finding {
        rule: "values.types",
        severity: Severity::Error,
        path,
        message: format!("the values do not fit the chart's types ({error}); the guards cannot check them"),
        arithmetic: None,
        hint: "use whole numbers from 0 to 2147483647 for counts and sizes, and the documented forms elsewhere (`values.schema.json` says which)".into(),
    }
}

fn fits<T: DeserializeOwned>(path: &str, value: Option<&Value>) -> Option<Finding> {
    let error = typed::<T>(value?).err()?;
    Some(unfit(path.to_string(), &error))
}

/// `values.types`: every part of the values the guards read deserializes into its
/// typed model, so no guard falls back to a default (a budget read as 0, say). The
/// workloads are `typed`'s, read once for every guard.
pub fn check(spec: &Spec, values: &Value, typed: &TypedWorkloads) -> Vec<Finding> {
    use crate::model::{
        DependencyCapacity, PostgresPooler, Scheduling, SharedStoreValues, StartupSettings,
    };
    let mut out = Vec::new();
    for (name, read) in &typed.each {
        let path = format!("workloads.{name}");
        match read {
            None => out.push(Finding {
                rule: "values.types",
                severity: Severity::Error,
                path: path.clone(),
                message: "the workload's values are missing".into(),
                arithmetic: None,
                hint: format!("keep `{path}` (a `null` deletes it)"),
            }),
            Some(Err(error)) => out.push(unfit(path, error)),
            Some(Ok(_)) => {}
        }
    }
    out.extend(fits::<DependencyCapacity>(
        "dependencyCapacity",
        values.get("dependencyCapacity"),
    ));
    out.extend(fits::<Scheduling>("scheduling", values.get("scheduling")));
    out.extend(fits::<PostgresPooler>(
        "postgresPooler",
        values.get("postgresPooler"),
    ));
    out.extend(
        fits::<std::collections::BTreeMap<String, SharedStoreValues>>(
            "stores",
            values.get("stores"),
        ),
    );
    if spec.startup_settings.is_some() {
        out.extend(fits::<StartupSettings>(
            "startupSettings",
            values.get("startupSettings"),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, places, values, with};
    use serde_json::json;

    fn at(path: &str) -> Vec<(&'static str, String)> {
        vec![("values.types", path.to_string())]
    }

    /// The rule on `values`, its workloads read as the registry reads them.
    fn check(spec: &Spec, values: &Value) -> Vec<Finding> {
        super::check(spec, values, &TypedWorkloads::read(spec, values))
    }

    #[test]
    fn the_examples_and_their_presets_fit() {
        for name in ["agent-platform", "llm-gateway"] {
            let spec = example(name);
            assert_eq!(check(&spec, &values(&spec, None)), [], "{name}");
            for preset in crate::capacity::fit::presets(&spec).keys() {
                assert_eq!(
                    check(&spec, &values(&spec, Some(preset))),
                    [],
                    "{name} {preset}"
                );
            }
        }
    }

    #[test]
    fn a_workload_of_any_class_that_does_not_fit_is_reported() {
        let spec = example("agent-platform");
        for name in ["api", "jobs", "ingest", "temporal", "migrate"] {
            for bad in [json!(-1.0), json!(1.5), json!(4294967296.0), json!("2")] {
                let path = format!("workloads.{name}.processesPerPod");
                let findings = check(&spec, &with(values(&spec, None), &[(&path, bad.clone())]));
                assert_eq!(
                    places(&findings),
                    at(&format!("workloads.{name}")),
                    "{path} {bad}"
                );
                assert_eq!(findings[0].severity, Severity::Error);
                assert!(findings[0]
                    .message
                    .starts_with("the values do not fit the chart's types ("));
            }
        }
    }

    #[test]
    fn the_largest_u32_fits_the_types() {
        let spec = example("agent-platform");
        let v = with(
            values(&spec, None),
            &[("workloads.api.processesPerPod", json!(4294967295.0))],
        );
        assert_eq!(check(&spec, &v), []);
    }

    #[test]
    fn a_missing_workload_is_reported() {
        let spec = example("agent-platform");
        let mut v = values(&spec, None);
        v["workloads"].as_object_mut().unwrap().remove("jobs");
        let findings = check(&spec, &v);
        assert_eq!(places(&findings), at("workloads.jobs"));
        assert_eq!(findings[0].message, "the workload's values are missing");
        assert_eq!(
            findings[0].hint,
            "keep `workloads.jobs` (a `null` deletes it)"
        );
    }

    #[test]
    fn every_section_the_guards_read_is_checked() {
        for (example_name, path, bad) in [
            (
                "agent-platform",
                "dependencyCapacity.retiringGenerations",
                json!(-1.0),
            ),
            ("agent-platform", "scheduling.jobs", json!("all")),
            ("agent-platform", "postgresPooler.enabled", json!("yes")),
            ("agent-platform", "stores.a2a-tasks.backend", json!("disk")),
            ("llm-gateway", "startupSettings.foreground", json!(1.0)),
        ] {
            let spec = example(example_name);
            let findings = check(&spec, &with(values(&spec, None), &[(path, bad)]));
            let section = path.split('.').next().unwrap();
            assert_eq!(places(&findings), at(section), "{path}");
        }
    }

    #[test]
    fn startup_settings_are_not_read_when_the_spec_has_none() {
        let spec = example("agent-platform");
        let v = with(values(&spec, None), &[("startupSettings", json!(1.0))]);
        assert_eq!(check(&spec, &v), []);
    }

    #[test]
    fn each_workload_is_read_once_typed_missing_or_not_fitting() {
        let spec = example("agent-platform");
        let v = with(
            values(&spec, None),
            &[
                ("workloads.api.drainSeconds", json!(45.0)),
                ("workloads.ingest.replicaCount", json!(3.0)),
            ],
        );
        let typed = TypedWorkloads::read(&spec, &v);
        let names: Vec<&str> = spec.workloads.all().into_iter().map(|(n, _)| n).collect();
        let read: Vec<&str> = typed.each.iter().map(|(n, _)| *n).collect();
        assert_eq!(read, names);
        let apis: Vec<(&str, u32)> = typed.api().map(|(n, a)| (n, a.drain_seconds)).collect();
        assert_eq!(apis, [("api", 45)]);
        let pools: Vec<(&str, u32)> = typed.pools().map(|(n, p)| (n, p.replica_count)).collect();
        assert!(pools.contains(&("ingest", 3)), "{pools:?}");
        assert_eq!(pools.len(), spec.workloads.pool.len());
        // A workload whose values do not fit is in neither list; one without values
        // is missing.
        let bad = with(
            v.clone(),
            &[
                ("workloads.api.drainSeconds", json!(-1.0)),
                ("workloads.ingest.replicaCount", json!(0.5)),
            ],
        );
        let typed = TypedWorkloads::read(&spec, &bad);
        assert_eq!(typed.api().count(), 0);
        assert!(typed.pools().all(|(n, _)| n != "ingest"));
        assert_eq!(typed.pools().count(), spec.workloads.pool.len() - 1);
        let mut gone = v;
        gone["workloads"].as_object_mut().unwrap().remove("api");
        let typed = TypedWorkloads::read(&spec, &gone);
        assert!(matches!(
            typed.each.iter().find(|(n, _)| *n == "api"),
            Some((_, None))
        ));
        assert_eq!(places(&check(&spec, &gone)), at("workloads.api"));
    }
}
