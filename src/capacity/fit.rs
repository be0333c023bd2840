//! Presets that fit: a built-in preset's `autoscaling.maxReplicas` is a ceiling, and
//! where the spec does not set it, it becomes the largest count whose rollout peak
//! fits every budget. These are the presets every stage after `capacity` uses.
//!
//! The peak never decreases when a maximum grows (see `ARCHITECTURE.md`), so the
//! largest fitting count is found by bisection over `1..=ceiling`, each step one
//! evaluation of the capacity formula on the preset's resolved values.

use crate::capacity::{capacity_exprs, Capacity, CapacityExprs, CapacityReport};
use crate::spec::Spec;
use crate::values::presets::{declared_presets, resolve_preset, FitTarget, Preset};
use crate::values::{default_values_map, resolve_values_over, ValuesError};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Every preset of the spec, with the maxima a built-in preset fits to the budgets.
pub fn presets(spec: &Spec) -> BTreeMap<String, Preset> {
    fitted(spec, || Fitting::of(spec))
}

/// [`presets`] over the chart's defaults already built.
pub fn presets_over(spec: &Spec, defaults: &Map<String, Value>) -> BTreeMap<String, Preset> {
    fitted(spec, || Fitting::over(spec, defaults))
}

/// [`presets_over`] with only the preset `name` fitted and the others as declared:
/// what merging the values of that one preset reads. `render` merges with these while
/// the others are fitted beside it.
pub fn presets_over_fitting_only(
    spec: &Spec,
    defaults: &Map<String, Value>,
    name: Option<&str>,
) -> BTreeMap<String, Preset> {
    let mut all = declared_presets(spec);
    if let Some(preset) = name.and_then(|name| all.get_mut(name)) {
        if !preset.fit.is_empty() {
            fit_preset(&Fitting::over(spec, defaults), preset);
        }
    }
    all
}

/// The declared presets, fitted with what `fitting` builds, only when one has a
/// maximum to fit.
fn fitted<'a>(spec: &'a Spec, fitting: impl FnOnce() -> Fitting<'a>) -> BTreeMap<String, Preset> {
    let mut all = declared_presets(spec);
    if all.values().all(|p| p.fit.is_empty()) {
        return all;
    }
    // The defaults and the capacity formula are the same for every step of every fit.
    let fitting = fitting();
    for preset in all.values_mut() {
        fit_preset(&fitting, preset);
    }
    all
}

/// What each step of a fit reads: the spec, the part of its defaults the capacity
/// formula reads, and the formula, built once.
pub struct Fitting<'a> {
    spec: &'a Spec,
    defaults: Map<String, Value>,
    exprs: CapacityExprs,
}

impl<'a> Fitting<'a> {
    /// Builds the defaults and the formula of `spec`.
    pub fn of(spec: &'a Spec) -> Self {
        Fitting::over(spec, &default_values_map(spec))
    }

    /// [`Fitting::of`] over the chart's defaults already built: each step resolves the
    /// preset over their projection on the formula's paths
    /// ([`crate::values::project_values`]), which gives the same report.
    pub fn over(spec: &'a Spec, defaults: &Map<String, Value>) -> Self {
        let exprs = capacity_exprs(spec);
        Fitting {
            spec,
            defaults: crate::values::project_values(defaults, &exprs.value_paths()),
            exprs,
        }
    }

    /// Whether the preset `overlay` over the defaults fits every budget.
    fn fits(&self, overlay: &Map<String, Value>) -> bool {
        let values = resolve_values_over(&self.defaults, Some(overlay), &[]);
        Capacity::over(&self.exprs, self.spec, &values)
            .report()
            .is_ok_and(|r| fits_every_budget(&r))
    }
}

/// Resolves the values of one preset (`None`: the chart's defaults) over the spec.
pub fn preset_values(spec: &Spec, preset: Option<&str>) -> Result<Value, ValuesError> {
    resolve_preset(spec, &presets(spec), preset)
}

/// Whether no budget of the report is exceeded (PostgreSQL, the Redis total, each
/// Redis server).
#[must_use]
pub fn fits_every_budget(report: &CapacityReport) -> bool {
    !report.postgres.exceeded()
        && !report.redis_total.exceeded()
        && report.redis_servers.iter().all(|(_, t)| !t.exceeded())
}

/// Sets every target's maximum in `overlay` to `m` (at most its ceiling; with
/// `floors`, at least the spec's `minReplicas`), and a built-in `minReplicas` above it
/// down to it.
fn set_maxima(overlay: &mut Map<String, Value>, targets: &[FitTarget], m: u64, floors: bool) {
    for t in targets {
        let floor = if floors { t.spec_min_replicas } else { None };
        let max = m.min(t.ceiling).max(floor.unwrap_or(0));
        let Some(autoscaling) = overlay
            .get_mut("workloads")
            .and_then(|w| w.get_mut(&t.workload))
            .and_then(|w| w.get_mut("autoscaling"))
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        autoscaling.insert("maxReplicas".into(), Value::from(max));
        if t.spec_min_replicas.is_none() {
            let min = autoscaling.get("minReplicas").and_then(Value::as_f64);
            if min.is_some_and(|min| min > max as f64) {
                autoscaling.insert("minReplicas".into(), Value::from(max));
            }
        }
    }
}

/// The largest `m` in `1..=ceiling` such that the preset with every target's maximum
/// set to `m` fits every budget; `None` when even 1 does not. A `minReplicas` the spec
/// sets plays no part: it cannot change the peak.
pub fn largest_fitting_max_replicas(
    fitting: &Fitting,
    overlay: &Map<String, Value>,
    targets: &[FitTarget],
) -> Option<u64> {
    let ceiling = targets.iter().map(|t| t.ceiling).max()?;
    let fits = |m: u64| {
        let mut candidate = overlay.clone();
        set_maxima(&mut candidate, targets, m, false);
        fitting.fits(&candidate)
    };
    if ceiling == 0 || !fits(1) {
        return None;
    }
    // Invariant: fits(lo); the peak is monotone in every maximum.
    let (mut lo, mut hi) = (1, ceiling);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(lo)
}

fn names(targets: &[&FitTarget]) -> String {
    let names: Vec<String> = targets
        .iter()
        .map(|t| format!("`{}`", t.workload))
        .collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Lowers the preset's ceilings to the largest fitting count and says so in its
/// description (the chart README prints it).
fn fit_preset(fitting: &Fitting, preset: &mut Preset) {
    if preset.fit.is_empty() {
        return;
    }
    let targets = std::mem::take(&mut preset.fit);
    let fitted = largest_fitting_max_replicas(fitting, &preset.values, &targets);
    set_maxima(&mut preset.values, &targets, fitted.unwrap_or(1), true);
    let ceiling = targets.iter().map(|t| t.ceiling).max().unwrap_or(0);
    let all: Vec<&FitTarget> = targets.iter().collect();
    let note = match fitted {
        Some(m) => {
            let (verb, each) = if targets.len() > 1 {
                ("scale", " each")
            } else {
                ("scales", "")
            };
            let why = if m == ceiling {
                "the built-in ceiling, whose rollout peak fits".to_string()
            } else {
                format!(
                    "the largest count whose rollout peak fits (the built-in ceiling is \
                     {ceiling})"
                )
            };
            let mut note = format!(
                "Fitted to this spec's budgets: {} {verb} to at most {m} pods{each}, {why}.",
                names(&all),
            );
            let floored: Vec<&FitTarget> = targets
                .iter()
                .filter(|t| t.spec_min_replicas.is_some_and(|min| min > m))
                .collect();
            if !floored.is_empty() {
                note.push_str(&format!(
                    " The `minReplicas` this spec sets for {} is higher and is kept as the \
                     maximum.",
                    names(&floored)
                ));
            }
            note
        }
        None => format!(
            "No maximum of {} fits this spec's budgets, not even 1 pod: the capacity guard \
             explains why.",
            names(&all)
        ),
    };
    if !preset.description.is_empty() {
        preset.description.push(' ');
    }
    preset.description.push_str(&note);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::capacity_report;
    use crate::values::resolve_values;

    /// A report within every budget, with two Redis servers.
    fn report_within_budgets() -> CapacityReport {
        let total = |peak: u64, budget: u64| crate::capacity::report::Total {
            workloads: peak,
            reservations: 0,
            peak,
            limit: Some(budget),
            reserve: 0,
            budget: Some(budget),
            exceeded_by: peak.saturating_sub(budget),
        };
        CapacityReport {
            workloads: Vec::new(),
            postgres: total(10, 10),
            redis_total: total(20, 20),
            redis_servers: vec![("a".into(), total(5, 5)), ("b".into(), total(15, 15))],
        }
    }

    #[test]
    fn every_budget_counts_including_each_redis_server() {
        let fits = report_within_budgets();
        // Each budget met exactly fits.
        assert!(fits_every_budget(&fits));
        let mut over = fits.clone();
        over.postgres.peak += 1;
        assert!(!fits_every_budget(&over));
        let mut over = fits.clone();
        over.redis_total.peak += 1;
        assert!(!fits_every_budget(&over));
        for server in 0..2 {
            let mut over = fits.clone();
            over.redis_servers[server].1.peak += 1;
            assert!(!fits_every_budget(&over), "server {server}");
        }
    }

    /// One api workload with 12 connections per process, retiring generations 1:
    /// m pods peak at (m + 1 + m) x 12 connections.
    fn spec(max_connections: u32, presets: &str) -> Spec {
        let text = format!(
            "chart: {{name: t, version: 1.0.0, appVersion: '1', description: x}}\n\
             image: {{repository: example/t}}\n\
             dependencyCapacity: {{postgres: {{maxConnections: {max_connections}, reserve: 20}}}}\n\
             workloads: {{api: {{web: {{postgres: {{main: {{size: 12}}}}}}}}}}\n{presets}"
        );
        crate::spec::load_spec(&text, "t.yaml").unwrap()
    }

    const BUILTIN: &str = "presets: {autoscaling: {builtin: true}}";

    fn max_replicas(spec: &Spec) -> (Value, Value) {
        let values = preset_values(spec, Some("autoscaling")).unwrap();
        let a = &values["workloads"]["web"]["autoscaling"];
        (a["maxReplicas"].clone(), a["minReplicas"].clone())
    }

    #[test]
    fn the_maximum_is_the_largest_count_that_fits() {
        // 200 - 20 = 180: (2m + 1) x 12 <= 180 -> m = 7 (180); 8 gives 204.
        let s = spec(200, BUILTIN);
        assert_eq!(max_replicas(&s), (7.0.into(), 3.0.into()));
        let values = preset_values(&s, Some("autoscaling")).unwrap();
        let report = capacity_report(&s, &values).unwrap();
        assert_eq!(report.postgres.peak, 180);
        assert!(fits_every_budget(&report));
        let description = &presets(&s)["autoscaling"].description;
        assert!(
            description.ends_with(
                "Fitted to this spec's budgets: `web` scales to at most 7 pods, the largest \
                 count whose rollout peak fits (the built-in ceiling is 12)."
            ),
            "{description}"
        );
    }

    #[test]
    fn the_ceiling_holds_when_the_budget_is_large() {
        assert_eq!(max_replicas(&spec(5000, BUILTIN)).0, 12.0);
    }

    #[test]
    fn a_small_budget_lowers_min_replicas_too() {
        // 100 - 20 = 80: (2m + 1) x 12 <= 80 -> m = 2.
        assert_eq!(max_replicas(&spec(100, BUILTIN)), (2.0.into(), 2.0.into()));
    }

    #[test]
    fn a_maximum_the_spec_sets_is_kept_even_over_budget() {
        let s = spec(
            200,
            "presets: {autoscaling: {builtin: true, values: {workloads: {web: {autoscaling: {maxReplicas: 12}}}}}}",
        );
        assert_eq!(max_replicas(&s).0, 12.0);
        let values = preset_values(&s, Some("autoscaling")).unwrap();
        assert!(!fits_every_budget(&capacity_report(&s, &values).unwrap()));
    }

    #[test]
    fn a_min_replicas_the_spec_sets_is_a_floor() {
        let s = spec(
            200,
            "presets: {autoscaling: {builtin: true, values: {workloads: {web: {autoscaling: {minReplicas: 9}}}}}}",
        );
        assert_eq!(max_replicas(&s), (9.0.into(), 9.0.into()));
        assert!(presets(&s)["autoscaling"]
            .description
            .contains("The `minReplicas` this spec sets for `web` is higher"));
    }

    #[test]
    fn nothing_fits_when_even_the_defaults_do_not() {
        // (1 + 1 + 1) x 12 = 36 > 30 - 20.
        let s = spec(30, BUILTIN);
        assert_eq!(max_replicas(&s).0, 1.0);
        assert!(presets(&s)["autoscaling"]
            .description
            .contains("No maximum of `web` fits"));
    }

    #[test]
    fn bisection_agrees_with_a_linear_search() {
        for max_connections in (40..=400).step_by(7) {
            let s = spec(max_connections, BUILTIN);
            let preset = &declared_presets(&s)["autoscaling"];
            let linear = (1..=12).rev().find(|&m| {
                let mut overlay = preset.values.clone();
                set_maxima(&mut overlay, &preset.fit, m, false);
                let values = resolve_values(&s, Some(&overlay), &[]);
                fits_every_budget(&capacity_report(&s, &values).unwrap())
            });
            assert_eq!(
                largest_fitting_max_replicas(&Fitting::of(&s), &preset.values, &preset.fit),
                linear,
                "maxConnections {max_connections}"
            );
        }
    }

    /// Fitting one preset gives it as every preset fitted has it, and leaves the others
    /// as declared; with none named, every preset is as declared.
    #[test]
    fn one_preset_fitted_is_as_every_preset_fitted_has_it() {
        let mut fitted_some = false;
        for (name, spec) in crate::capacity::tests::example_specs() {
            let defaults = default_values_map(&spec);
            let (all, declared) = (presets_over(&spec, &defaults), declared_presets(&spec));
            assert_eq!(presets_over_fitting_only(&spec, &defaults, None), declared);
            for preset in all.keys() {
                let one = presets_over_fitting_only(&spec, &defaults, Some(preset));
                assert_eq!(
                    one.keys().collect::<Vec<_>>(),
                    all.keys().collect::<Vec<_>>()
                );
                for (other, value) in &one {
                    let expected = if other == preset {
                        &all[other]
                    } else {
                        &declared[other]
                    };
                    assert_eq!(value, expected, "{name}: {other} with {preset} fitted");
                }
                fitted_some |= one[preset] != declared[preset];
            }
        }
        assert!(fitted_some, "an example has a preset to fit");
    }
}
