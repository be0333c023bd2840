//! The install-time contract: `values.schema.json`, which makes Helm refuse at
//! `helm install` every values file the guards would refuse.
//!
//! - [`schema`]: the schema itself, from the model's types plus the rules below.
//! - [`rules`]: the guards draft-07 can say, as `if`/`then` rules on the whole tree.
//! - [`plans`]: one checked capacity plan per preset, as bounds in the schema.
//! - [`definitions`]: the parts of rules every workload of a class shares, written once.
//! - [`model_schemas`]: the model's types' schemas, read from `schemas/values-model.json`
//!   (or, to check values only, without their [`annotations`], each definition parsed
//!   when the values reach it).

pub mod annotations;
pub mod definitions;
pub mod model_schemas;
pub mod plans;
pub mod rules;
pub mod schema;

use crate::spec::Spec;
use crate::values::frozen_schema::FrozenSchema;
use crate::values::presets::{Preset, PLAN_KEY};
use serde_json::Value;
use std::collections::BTreeMap;

/// A JSON object of `entries`, their values moved in. `json!` serializes every value
/// it interpolates into a copy, so a rule nested in `json!` was copied once per level
/// (a third of `render` at 400 workloads); the contract nests large parts with this.
pub(crate) fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(key, value)| (key.to_string(), value))
            .collect(),
    )
}

/// Everything the contract is built from, computed once per spec: the presets (with
/// the built-ins' fitted maxima), every plan's bounds and the root rules. `generate`
/// builds it once and shares it with the schema, the chart README and every preset.
pub struct Contract {
    /// Every preset of the spec, fitted ([`crate::capacity::fit::presets`]).
    pub presets: BTreeMap<String, Preset>,
    /// The plans: the defaults and each preset. Their `then` schemas are moved into
    /// the `capacity.plan` rules, so each plan's `schema` is null here.
    pub plans: Vec<plans::PlanContract>,
    /// The rules on the whole values tree, plans included.
    pub rules: Vec<rules::RootRule>,
    /// The largest pod counts the plans allow: the rules that compare two fields are
    /// enumerated up to them ([`definitions::shared_definitions`]).
    pub pods: plans::PodBounds,
}

impl Contract {
    /// Computes the presets, the plans and the rules of `spec`.
    pub fn of(spec: &Spec) -> Self {
        Contract::over(spec, &crate::values::default_values(spec))
    }

    /// [`Contract::of`] over the chart's defaults already built
    /// ([`crate::values::default_values`]). Each plan is resolved over the part of the
    /// defaults its bounds read ([`plans::read_paths`]), as [`PlanPods::of`] does: its
    /// contract is the one over its whole values, without a copy of every workload's
    /// values for each plan.
    pub fn over(spec: &Spec, defaults: &Value) -> Self {
        let exprs = crate::capacity::capacity_exprs(spec);
        Contract::over_emitting(spec, defaults, &exprs, false, &mut |_, _| {})
    }

    /// [`Contract::over`] with each root rule's schema frozen as it is built (in the
    /// rules' order), its `schema` left null: `generate` writes and compiles the rules
    /// from their frozen form
    /// ([`crate::values::schema_program::SchemaProgram::compile_with_rules`]). Each
    /// rule's JSON is dropped once frozen, and the next rule is built in its memory;
    /// each plan's schema is built frozen ([`plans::plan_contract_frozen_over`]) and
    /// becomes its `capacity.plan` rule's `then`. At 400 workloads the rules' JSON
    /// held about 70 MB until the end.
    /// The spec's capacity formula, `exprs`, is built once per run
    /// ([`crate::capacity::capacity_exprs`]) and shared with the other stages.
    pub fn over_frozen(
        spec: &Spec,
        defaults: &Value,
        exprs: &crate::capacity::CapacityExprs,
    ) -> (Self, Vec<FrozenSchema>) {
        let mut frozen = Vec::new();
        let contract = Contract::over_emitting(spec, defaults, exprs, true, &mut |rule, plans| {
            // A plan's rule is built around its null schema; its `if` names the plan.
            let plan = (rule.rule == rules::CAPACITY_PLAN)
                .then(|| {
                    rule.schema
                        .pointer(&format!("/if/properties/{PLAN_KEY}/const"))
                })
                .flatten()
                .and_then(Value::as_str)
                .and_then(|name| plans.remove(name));
            let mut schema = FrozenSchema::of_schema(std::mem::take(&mut rule.schema));
            if let Some(then) = plan {
                schema.insert("then", then);
            }
            frozen.push(schema);
        });
        (contract, frozen)
    }

    /// [`Contract::over`], the plans' schemas `frozen` or not, with `emit` given each
    /// root rule as it is built, before it is kept, and the plans' frozen schemas by
    /// name (which it may take).
    fn over_emitting(
        spec: &Spec,
        defaults: &Value,
        exprs: &crate::capacity::CapacityExprs,
        frozen: bool,
        emit: &mut dyn FnMut(&mut rules::RootRule, &mut BTreeMap<String, FrozenSchema>),
    ) -> Self {
        let map = crate::values::entries_of(defaults);
        let presets = crate::capacity::fit::presets_over(spec, map);
        let projected = crate::values::project_values(map, &plans::read_paths(spec, exprs));
        let values = schema::each_plan_values(&projected, &presets);
        let mut plans = schema::plan_contracts_with(spec, exprs, &presets, &values, frozen);
        let pods = plans::PodBounds::of(&plans);
        let mut frozen_plans: BTreeMap<String, FrozenSchema> = plans
            .iter_mut()
            .filter_map(|plan| Some((plan.name.clone(), plan.frozen_schema.take()?)))
            .collect();
        let mut rules = Vec::new();
        rules::each_root_rule(spec, &mut plans, pods, defaults, &mut |mut rule| {
            emit(&mut rule, &mut frozen_plans);
            rules.push(rule);
        });
        Contract {
            presets,
            plans,
            rules,
            pods,
        }
    }

    /// Moves the root rules' schemas out (for [`schema::values_schema_with`]), leaving
    /// each rule's `schema` null and its rule id, path and description in place (the
    /// chart README lists those): the schema of 400 workloads is not copied.
    pub fn take_rule_schemas(&mut self) -> Vec<serde_json::Value> {
        self.rules
            .iter_mut()
            .map(|r| std::mem::take(&mut r.schema))
            .collect()
    }

    /// The contract that decides values whose `capacityPlan` is `plan` (`None` when
    /// the spec has no such plan): that plan's bounds and rules, and the rules that
    /// compare two fields enumerated over every plan's pod counts, read from each
    /// plan's capacity report without building its contract. For such values its
    /// schema accepts exactly what the whole schema accepts, since every other plan's
    /// rules are `if capacityPlan == <other>`; `render` checks with it and builds the
    /// whole schema only to word the violations of values it refuses.
    pub fn for_plan(spec: &Spec, presets: BTreeMap<String, Preset>, plan: &str) -> Option<Self> {
        Contract::for_plan_over(spec, presets, plan, &crate::values::default_values(spec))
    }

    /// [`Contract::for_plan`] over the chart's defaults already built.
    pub fn for_plan_over(
        spec: &Spec,
        presets: BTreeMap<String, Preset>,
        plan: &str,
        defaults: &Value,
    ) -> Option<Self> {
        let (mut own, pods) = plan_and_pod_bounds(spec, &presets, plan, defaults)?;
        let rules = rules::root_rules_over(spec, &mut own, pods, defaults);
        Some(Contract {
            presets,
            plans: own,
            rules,
            pods,
        })
    }
}

/// What every plan's bounds are read from, and the largest pod counts of every plan,
/// each read from the plan's capacity report without building its contract. They
/// depend on the spec and the chart's defaults only, never on the values checked, so
/// `render` computes them while it merges the values.
pub struct PlanPods {
    exprs: crate::capacity::CapacityExprs,
    /// The defaults, over the paths the bounds read.
    map: serde_json::Map<String, Value>,
    names: Vec<String>,
    /// The largest of every plan's pod counts.
    pub pods: plans::PodBounds,
}

impl PlanPods {
    /// Every plan's pod counts, read from its capacity report.
    pub fn of(spec: &Spec, presets: &BTreeMap<String, Preset>, defaults: &Value) -> Self {
        let names = schema::plan_names_of(presets);
        let exprs = crate::capacity::capacity_exprs(spec);
        // Each plan is resolved over the part of the defaults its bounds read.
        let map = crate::values::project_values(
            crate::values::entries_of(defaults),
            &plans::read_paths(spec, &exprs),
        );
        let mut pods = plans::PodBounds::default();
        for name in &names {
            let values = schema::plan_values_sharing_over(&map, presets, name);
            pods = pods.max(plans::pod_bounds_over(&exprs, spec, &values));
        }
        PlanPods {
            exprs,
            map,
            names,
            pods,
        }
    }

    /// The contract of plan `plan` alone (`None` when the spec has no such plan).
    pub fn own_plan(
        &self,
        spec: &Spec,
        presets: &BTreeMap<String, Preset>,
        plan: &str,
    ) -> Option<Vec<plans::PlanContract>> {
        if !self.names.iter().any(|n| n == plan) {
            return None;
        }
        let values = schema::plan_values_sharing_over(&self.map, presets, plan);
        Some(vec![plans::plan_contract_over(
            &self.exprs,
            spec,
            plan,
            &values,
        )])
    }
}

/// The contract of plan `plan` alone (`None` when the spec has no such plan), and the
/// largest pod counts of every plan ([`PlanPods`]).
fn plan_and_pod_bounds(
    spec: &Spec,
    presets: &BTreeMap<String, Preset>,
    plan: &str,
    defaults: &Value,
) -> Option<(Vec<plans::PlanContract>, plans::PodBounds)> {
    if !schema::plan_names_of(presets).iter().any(|n| n == plan) {
        return None;
    }
    let pods = PlanPods::of(spec, presets, defaults);
    Some((pods.own_plan(spec, presets, plan)?, pods.pods))
}

/// Whether `values`, whose `capacityPlan` is `plan`, pass the schema of
/// [`Contract::for_plan`] (which decides them as the whole `values.schema.json` does),
/// without holding that schema: [`frame_verdict`] of the schema without its root rules,
/// then [`root_rules_verdict`], which builds, walks and drops each root rule in turn. A
/// schema is its rules' conjunction (draft-07 `allOf`), so this is `Some(true)` exactly
/// when the walk of the assembled schema would be. `None` when the spec has no such
/// plan or the walk cannot decide; `Some(false)` when a rule refuses the values (the
/// caller then builds the schema to word why). At 400 workloads the rules are most of
/// `render`'s memory.
pub fn plan_schema_verdict(
    spec: &Spec,
    presets: &BTreeMap<String, Preset>,
    plan: &str,
    defaults: &Value,
    values: &Value,
) -> Option<bool> {
    if !schema::plan_names_of(presets).iter().any(|n| n == plan) {
        return None;
    }
    both_verdicts(
        frame_verdict(spec, values),
        root_rules_verdict(spec, presets, plan, defaults, values),
    )
}

/// [`plan_schema_verdict`] of its two halves, each computed on its own (`render` runs
/// them on two cores): the frame's verdict unless it is `Some(true)`, then the rules'.
pub fn both_verdicts(frame: Option<bool>, rules: Option<bool>) -> Option<bool> {
    match frame {
        Some(true) => rules,
        other => other,
    }
}

/// Whether `values` pass [`schema::frame_schema`]: `values.schema.json` without its
/// root rules (`None` when the walk cannot decide). The frame is built without the
/// model's definitions ([`model_schemas::ModelSchemas::without_definitions`]) and
/// walked by [`walked_frame_verdict`].
pub fn frame_verdict(spec: &Spec, values: &Value) -> Option<bool> {
    let frame = schema::frame_schema_with(spec, model_schemas::ModelSchemas::without_definitions());
    walked_frame_verdict(&frame, values)
}

/// Whether `values` pass `frame`, a frame schema built with
/// [`model_schemas::ModelSchemas::without_definitions`]: the walk finds the model's
/// definitions with [`model_schemas::model_definition`], without their annotations,
/// which accept the same values. Decides as the frame with the model's definitions.
pub fn walked_frame_verdict(frame: &Value, values: &Value) -> Option<bool> {
    crate::values::schema_verdict::schema_verdict_beside(
        frame,
        values,
        model_schemas::model_definition,
    )
}

/// Whether `values`, whose `capacityPlan` is `plan`, pass every root rule of
/// [`Contract::for_plan`], each walked as an entry of the whole schema's `allOf` with
/// the definitions only the rules refer to, and dropped: the first rule that refuses the
/// values (or cannot be decided) decides. `None` when the spec has no such plan.
pub fn root_rules_verdict(
    spec: &Spec,
    presets: &BTreeMap<String, Preset>,
    plan: &str,
    defaults: &Value,
    values: &Value,
) -> Option<bool> {
    if !schema::plan_names_of(presets).iter().any(|n| n == plan) {
        return None;
    }
    let pods = PlanPods::of(spec, presets, defaults);
    root_rules_verdict_with(spec, presets, plan, defaults, values, &pods)
}

/// [`root_rules_verdict`] with every plan's pod counts already read: the rules on
/// each workload's own values ([`workload_rules_verdict`]), then those that read the
/// plans ([`contract_rules_verdict`]), as [`both_rule_verdicts`] joins them.
pub fn root_rules_verdict_with(
    spec: &Spec,
    presets: &BTreeMap<String, Preset>,
    plan: &str,
    defaults: &Value,
    values: &Value,
    plan_pods: &PlanPods,
) -> Option<bool> {
    let root = rule_definitions_root(spec, defaults);
    both_rule_verdicts(
        workload_rules_verdict(spec, defaults, &root, values),
        contract_rules_verdict(spec, presets, plan, defaults, &root, values, plan_pods),
    )
}

/// A root holding the definitions the root rules refer to but those enumerated over
/// the pod counts (which are decided by code, not built): what each rule is walked
/// in. It reads no pod count, so `render` builds it while they are read.
pub fn rule_definitions_root(spec: &Spec, defaults: &Value) -> Value {
    object([(
        "definitions",
        Value::Object(schema::root_rule_definitions_not_enumerated(spec, defaults)),
    )])
}

/// Whether `values` pass the first root rules, those on each workload's own values
/// ([`rules::each_workload_rule`]), each walked in `root`
/// ([`rule_definitions_root`]) and dropped: the first that refuses the values (or
/// cannot be decided) decides.
pub fn workload_rules_verdict(
    spec: &Spec,
    defaults: &Value,
    root: &Value,
    values: &Value,
) -> Option<bool> {
    use crate::values::schema_verdict::schema_verdict_in_with;
    let mut verdict = Some(true);
    rules::each_workload_rule(spec, defaults, &mut |rule| {
        if verdict == Some(true) {
            verdict = schema_verdict_in_with(root, &rule.schema, values, &[]);
        }
    });
    verdict
}

/// Whether `values`, whose `capacityPlan` is `plan`, pass the last root rules, those
/// that read the plans ([`rules::each_contract_rule`]), as [`workload_rules_verdict`]
/// walks its own; `None` when the spec has no such plan.
pub fn contract_rules_verdict(
    spec: &Spec,
    presets: &BTreeMap<String, Preset>,
    plan: &str,
    defaults: &Value,
    root: &Value,
    values: &Value,
    plan_pods: &PlanPods,
) -> Option<Option<bool>> {
    use crate::values::schema_verdict::{schema_verdict_in_with, NativeDefinition};
    let mut own = plan_pods.own_plan(spec, presets, plan)?;
    let pods = plan_pods.pods;
    let enumerated = definitions::enumerated_definitions(spec, pods);
    let checks: Vec<_> = enumerated
        .iter()
        .map(|e| (e.name(), move |v: &Value| e.holds(v)))
        .collect();
    let natives: Vec<NativeDefinition<'_>> = checks
        .iter()
        .map(|(name, check)| (name.as_str(), check as &dyn Fn(&Value) -> bool))
        .collect();
    let mut verdict = Some(true);
    rules::each_contract_rule(spec, &mut own, pods, defaults, &mut |rule| {
        if verdict == Some(true) {
            verdict = schema_verdict_in_with(root, &rule.schema, values, &natives);
        }
    });
    Some(verdict)
}

/// The verdict of every root rule, in their order, from the verdicts of the first
/// ([`workload_rules_verdict`]) and the last ([`contract_rules_verdict`]): the
/// first that is not a pass decides; `None` (undecided) when there is no such plan,
/// whatever the first rules say.
pub fn both_rule_verdicts(workload: Option<bool>, contract: Option<Option<bool>>) -> Option<bool> {
    let contract = contract?;
    if workload == Some(true) {
        contract
    } else {
        workload
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, set};
    use crate::values::schema_verdict::schema_verdict;
    use serde_json::{json, Value};

    const EXAMPLES: [&str; 3] = ["agent-platform", "llm-gateway", "web-shop"];

    /// A plan's values changed at the edges of the rules enumerated over the pod
    /// bounds (`minReplicas <= maxReplicas`, a PDB's `minAvailable` below the fewest
    /// pods), on enabled and disabled workloads, below, at and past `largest`.
    fn probes(spec: &Spec, base: &Value, largest: u64) -> Vec<Value> {
        let l = largest;
        let mut out = vec![base.clone()];
        for (name, workload) in spec.workloads.all() {
            let w = format!("workloads.{name}");
            for enabled in [true, false] {
                for key in workload.class().autoscalers() {
                    for (min, max) in [
                        (1, 1),
                        (2, 1),
                        (1, 2),
                        (3, 5),
                        (5, 3),
                        (l, l),
                        (l + 1, l),
                        (l, l + 1),
                        (l + 2, l + 1),
                        (100, 101),
                        (101, 100),
                    ] {
                        let mut v = base.clone();
                        set(&mut v, &format!("{w}.enabled"), json!(enabled));
                        set(&mut v, &format!("{w}.{key}.enabled"), json!(true));
                        set(&mut v, &format!("{w}.{key}.minReplicas"), json!(min));
                        set(&mut v, &format!("{w}.{key}.maxReplicas"), json!(max));
                        out.push(v);
                    }
                }
                if base["workloads"][name].get("podDisruptionBudget").is_none() {
                    continue;
                }
                for (replicas, min_available) in [
                    (1, 0),
                    (1, 1),
                    (2, 1),
                    (2, 2),
                    (l, l.saturating_sub(1)),
                    (l, l),
                    (l + 1, l),
                    (l + 2, l + 2),
                ] {
                    let mut v = base.clone();
                    set(&mut v, &format!("{w}.enabled"), json!(enabled));
                    for key in workload.class().autoscalers() {
                        set(&mut v, &format!("{w}.{key}.enabled"), json!(false));
                    }
                    set(&mut v, &format!("{w}.replicaCount"), json!(replicas));
                    set(
                        &mut v,
                        &format!("{w}.podDisruptionBudget"),
                        json!({"enabled": true, "minAvailable": min_available}),
                    );
                    out.push(v);
                }
            }
        }
        out
    }

    /// Values that break the root rules which are not enumerated over pod bounds, one
    /// per rule and workload: a managed variable in `env`, a worker count in `args`, a
    /// privileged container; and a key the chart does not have (refused by the schema
    /// without its rules).
    fn rule_probes(spec: &Spec, base: &Value) -> Vec<Value> {
        let mut out = Vec::new();
        let defaults = crate::values::default_values(spec);
        let mut unknown = base.clone();
        set(&mut unknown, "noSuchKey", json!(1));
        out.push(unknown);
        for (name, _) in spec.workloads.all() {
            let w = format!("workloads.{name}");
            let managed = crate::guards::managed_env_names(&defaults, name);
            if let Some(first) = managed.first() {
                let mut v = base.clone();
                set(
                    &mut v,
                    &format!("{w}.env"),
                    json!([{"name": first, "value": "1"}]),
                );
                out.push(v);
            }
            for (key, value) in [
                ("args", json!(["serve", "--workers", "4"])),
                ("args", json!(["serve", "--port", "4"])),
                ("securityContext", json!({"privileged": true})),
            ] {
                let mut v = base.clone();
                set(&mut v, &format!("{w}.{key}"), value);
                out.push(v);
            }
        }
        out
    }

    /// The root rules' verdict from its two halves is the first that is not a pass,
    /// the workloads' rules first, and undecided when there is no such plan.
    #[test]
    fn both_rule_verdicts_take_the_first_that_is_not_a_pass() {
        let halves = [Some(true), Some(false), None];
        for workload in halves {
            assert_eq!(both_rule_verdicts(workload, None), None, "{workload:?}");
            for contract in halves {
                let expected = if workload == Some(true) {
                    contract
                } else {
                    workload
                };
                assert_eq!(
                    both_rule_verdicts(workload, Some(contract)),
                    expected,
                    "{workload:?}, {contract:?}"
                );
            }
        }
    }

    /// The two halves `render` checks apart are every root rule, in their order, and
    /// the workloads' half needs no definition enumerated over the pod counts (it is
    /// walked without them).
    #[test]
    fn the_root_rules_are_the_workloads_rules_then_the_plans_rules() {
        for example_name in EXAMPLES {
            let spec = example(example_name);
            let defaults = crate::values::default_values(&spec);
            let mut plans = schema::plan_contracts(&spec);
            let pods = plans::PodBounds::of(&plans);
            let key = |r: &rules::RootRule| (r.rule, r.path.clone(), r.schema.clone());
            let mut whole = Vec::new();
            rules::each_root_rule(&spec, &mut plans.clone(), pods, &defaults, &mut |r| {
                whole.push(key(&r))
            });
            let mut halves = Vec::new();
            rules::each_workload_rule(&spec, &defaults, &mut |r| halves.push(key(&r)));
            let first = halves.len();
            rules::each_contract_rule(&spec, &mut plans, pods, &defaults, &mut |r| {
                halves.push(key(&r))
            });
            assert!(first > 0 && halves.len() > first, "{example_name}");
            assert_eq!(whole, halves, "{example_name}");
            let enumerated: Vec<String> = definitions::enumerated_definitions(&spec, pods)
                .iter()
                .map(|e| format!("\"#/definitions/{}\"", e.name()))
                .collect();
            assert!(!enumerated.is_empty(), "{example_name}");
            for (rule, path, schema) in &whole[..first] {
                let text = schema.to_string();
                assert!(
                    enumerated.iter().all(|e| !text.contains(e.as_str())),
                    "{example_name}: {rule} at {path} refers to {enumerated:?}"
                );
            }
            // Each enumerated definition once, and each one some rule of the plans'
            // refers to (only the definitions the spec's workloads use).
            for (i, e) in enumerated.iter().enumerate() {
                assert!(!enumerated[..i].contains(e), "{example_name}: {e} twice");
                assert!(
                    whole[first..]
                        .iter()
                        .any(|(_, _, s)| s.to_string().contains(e.as_str())),
                    "{example_name}: no rule of the plans' refers to {e}"
                );
            }
        }
    }

    /// For values that name a plan, the schema of that plan alone accepts exactly what
    /// the whole schema accepts, and so does its walk one rule at a time
    /// ([`plan_schema_verdict`]).
    #[test]
    fn a_plans_own_schema_decides_its_values_as_the_whole_schema_does() {
        for example_name in EXAMPLES {
            let spec = example(example_name);
            let whole = Contract::of(&spec);
            let largest = plans::PodBounds::of(&whole.plans);
            let whole_schema = schema::values_schema_of(&spec, &whole);
            let whole_validator = jsonschema::draft7::new(&whole_schema).unwrap();
            let defaults = crate::values::default_values(&spec);
            assert_eq!(
                plan_schema_verdict(&spec, &whole.presets, "no-such-plan", &defaults, &defaults),
                None
            );
            for plan in schema::plan_names(&spec) {
                let own = Contract::for_plan(&spec, whole.presets.clone(), &plan).unwrap();
                assert_eq!(own.plans.len(), 1, "{example_name}: {plan}");
                assert_eq!(
                    own.plans[0],
                    whole.plans.iter().find(|p| p.name == plan).unwrap().clone()
                );
                let own_schema = schema::values_schema_of(&spec, &own);
                assert!(
                    own_schema.to_string().len() < whole_schema.to_string().len()
                        || whole.plans.len() == 1
                );
                let own_validator = jsonschema::draft7::new(&own_schema).unwrap();
                let base = schema::plan_values(&spec, &whole.presets, &plan);
                assert_eq!(base[crate::values::presets::PLAN_KEY], json!(plan));
                let (mut accepted, mut refused) = (0, 0);
                let bounds = probes(&spec, &base, largest.pod_count.max(largest.max_replicas));
                let rules = rule_probes(&spec, &base);
                // The walk one rule at a time rebuilds the contract on each call: it
                // is asked about every rule probe and every eighth bound probe.
                let all = (bounds.into_iter().enumerate().map(|(i, v)| (i % 8 == 0, v)))
                    .chain(rules.into_iter().map(|v| (true, v)));
                for (one_at_a_time, values) in all {
                    let verdict = whole_validator.is_valid(&values);
                    if one_at_a_time {
                        assert_eq!(
                            plan_schema_verdict(&spec, &whole.presets, &plan, &defaults, &values),
                            Some(verdict),
                            "{example_name}, plan {plan}, one rule at a time: {values}"
                        );
                    }
                    for schema in [&whole_schema, &own_schema] {
                        assert_eq!(
                            schema_verdict(schema, &values),
                            Some(verdict),
                            "{example_name}, plan {plan}: {values}"
                        );
                    }
                    assert_eq!(
                        own_validator.is_valid(&values),
                        verdict,
                        "{example_name}, plan {plan}: {values}"
                    );
                    if verdict {
                        accepted += 1;
                    } else {
                        refused += 1;
                    }
                }
                assert!(
                    accepted > 0 && refused > 0,
                    "{example_name}, plan {plan}: {accepted} accepted, {refused} refused"
                );
            }
        }
    }

    /// The plans named from the fitted presets are the spec's plans, and a plan's values
    /// over defaults built once are those resolved on their own.
    #[test]
    fn plans_and_their_values_from_shared_defaults_are_the_specs() {
        for example_name in EXAMPLES {
            let spec = example(example_name);
            let presets = crate::capacity::fit::presets(&spec);
            let names = schema::plan_names_of(&presets);
            assert_eq!(names, schema::plan_names(&spec));
            assert!(names.len() > 2, "{names:?}");
            let defaults = crate::values::default_values_map(&spec);
            for plan in &names {
                let preset =
                    (plan != crate::values::presets::DEFAULT_PRESET).then_some(plan.as_str());
                let alone =
                    crate::values::presets::resolve_preset(&spec, &presets, preset).unwrap();
                assert_eq!(schema::plan_values_over(&defaults, &presets, plan), alone);
                let sharing = schema::plan_values_sharing_over(&defaults, &presets, plan);
                assert_eq!(*sharing, alone, "{example_name}: {plan}");
                assert!(!sharing.copies().is_empty(), "{example_name}: {plan}");
                // The whole values a review reads: the defaults themselves for the
                // `default` plan, borrowed, not copied.
                let whole = serde_json::Value::Object(defaults.clone());
                let of = schema::plan_values_of(&whole, &presets, plan);
                assert_eq!(*of, alone, "{example_name}: {plan}");
                assert_eq!(
                    matches!(of, std::borrow::Cow::Borrowed(_)),
                    preset.is_none(),
                    "{example_name}: {plan}"
                );
                let sharing = schema::plan_values_sharing_defaults(&whole, &presets, plan);
                assert_eq!(*sharing, *of, "{example_name}: {plan}");
                assert_eq!(
                    sharing.copies().is_empty(),
                    preset.is_none(),
                    "{example_name}: {plan}"
                );
            }
            // A plan the spec does not have resolves to nothing.
            assert_eq!(
                *schema::plan_values_sharing_over(&defaults, &presets, "no-such-plan"),
                serde_json::Value::Null
            );
            // The `default` plan is the defaults themselves, even beside a preset of
            // that name.
            let mut named_default = presets.clone();
            let any = presets.values().next().unwrap().clone();
            named_default.insert(crate::values::presets::DEFAULT_PRESET.to_string(), any);
            let whole = serde_json::Value::Object(defaults.clone());
            let values = schema::plan_values_sharing_defaults(
                &whole,
                &named_default,
                crate::values::presets::DEFAULT_PRESET,
            );
            assert!(matches!(
                values,
                schema::PlanValues::Whole(std::borrow::Cow::Borrowed(_))
            ));
            assert!(values.copies().is_empty());
            assert_eq!(
                *schema::plan_values_sharing_over(
                    &defaults,
                    &named_default,
                    crate::values::presets::DEFAULT_PRESET
                ),
                *values
            );
        }
    }

    /// The examples' specs and every spec fixture that generates, with their paths.
    fn generating_specs() -> impl Iterator<Item = (std::path::PathBuf, Spec)> {
        let root = env!("CARGO_MANIFEST_DIR");
        let examples = EXAMPLES
            .iter()
            .map(move |e| std::path::PathBuf::from(format!("{root}/examples/{e}/shipshape.yaml")));
        let fixtures = std::fs::read_dir(format!("{root}/tests/fixtures/spec/ok"))
            .unwrap()
            .map(|e| e.unwrap().path());
        examples.chain(fixtures).map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let spec = crate::spec::load_spec(&text, &path.display().to_string()).unwrap();
            (path, spec)
        })
    }

    /// Built frozen, the contract is the same contract, and its root rules with the
    /// schema's root are the whole schema: each rule frozen from its JSON, each plan's
    /// rule holding its plan's schema (built frozen). Compiled from the two parts, the
    /// schema decides the defaults and every plan's values as the whole schema does.
    #[test]
    fn a_contract_built_frozen_is_the_same_contract_and_schema() {
        use crate::values::frozen_schema::whole_schema;
        let mut plans_seen = 0;
        for (path, spec) in generating_specs() {
            let defaults = crate::values::default_values(&spec);
            let mut json = Contract::over(&spec, &defaults);
            let exprs = crate::capacity::capacity_exprs(&spec);
            let (frozen, rules) = Contract::over_frozen(&spec, &defaults, &exprs);
            assert_eq!(frozen.presets, json.presets, "{}", path.display());
            assert_eq!(frozen.pods, json.pods, "{}", path.display());
            let described = |c: &Contract| -> Vec<(String, &str, String)> {
                c.rules
                    .iter()
                    .map(|r| (r.path.clone(), r.rule, r.description.clone()))
                    .collect()
            };
            assert_eq!(described(&frozen), described(&json), "{}", path.display());
            assert!(frozen.rules.iter().all(|r| r.schema.is_null()));
            for (a, b) in frozen.plans.iter().zip(&json.plans) {
                assert_eq!((&a.name, &a.bounds), (&b.name, &b.bounds));
                assert!(a.frozen_schema.is_none(), "taken into its rule");
            }
            plans_seen += json.plans.len();
            let whole =
                schema::values_schema_with(&spec, json.take_rule_schemas(), json.pods, &defaults);
            let root = schema::values_schema_with(&spec, Vec::new(), frozen.pods, &defaults);
            assert!(root.get("allOf").is_none());
            assert_eq!(whole_schema(&root, &rules), whole, "{}", path.display());
            let parts =
                crate::values::schema_program::SchemaProgram::compile_with_rules(&root, &rules);
            let program = crate::values::schema_program::SchemaProgram::compile(&whole);
            for name in schema::plan_names_of(&json.presets) {
                let values = schema::plan_values_over(
                    crate::values::entries_of(&defaults),
                    &json.presets,
                    &name,
                );
                assert_eq!(parts.verdict(&values), program.verdict(&values), "{name}");
            }
        }
        assert!(plans_seen > 10, "{plans_seen}");
    }

    /// A plan's values noting the defaults' copies are the plan's values; each copy
    /// is an object or an array equal to the defaults' at the same place, and the
    /// schema's verdict on the values, knowing the copies, is its verdict on them
    /// whole: for the examples and every spec fixture that generates.
    #[test]
    fn the_copies_of_the_defaults_in_a_plans_values_are_equal_to_them() {
        let (mut plans_checked, mut copies_checked) = (0, 0);
        for (path, spec) in generating_specs() {
            let defaults = crate::values::default_values(&spec);
            let mut contract = Contract::over(&spec, &defaults);
            let schema = schema::values_schema_with(
                &spec,
                contract.take_rule_schemas(),
                contract.pods,
                &defaults,
            );
            let program = crate::values::schema_program::SchemaProgram::compile(&schema);
            if program.verdict(&defaults) != Some(true) {
                continue;
            }
            for plan in schema::plan_names_of(&contract.presets) {
                let of = schema::plan_values_of(&defaults, &contract.presets, &plan);
                let values =
                    schema::plan_values_sharing_defaults(&defaults, &contract.presets, &plan);
                let copies = values.copies();
                assert_eq!(*values, *of, "{}: {plan}", path.display());
                let parts = crate::values::parts_at(&values, copies);
                assert_eq!(parts.len(), copies.len(), "{}: {plan}", path.display());
                for (place, part) in copies.iter().zip(&parts) {
                    let twin = place.iter().try_fold(&defaults, |v, k| v.get(*k));
                    assert_eq!(Some(*part), twin, "{}: {plan} {place:?}", path.display());
                    assert!(part.is_object() || part.is_array());
                }
                assert_eq!(
                    program.verdict_with_copies(&values, &parts),
                    program.verdict(&values),
                    "{}: {plan}",
                    path.display()
                );
                plans_checked += 1;
                copies_checked += parts.len();
            }
        }
        assert!(
            plans_checked >= 20 && copies_checked > 200,
            "{plans_checked} plans, {copies_checked} copies"
        );
    }

    /// Every plan's contract and pod bounds over the projection of the defaults on the
    /// paths they read ([`plans::read_paths`]) are those over the whole defaults, for
    /// the examples and every spec fixture that generates.
    #[test]
    fn plans_over_the_projected_defaults_are_the_plans_over_the_whole() {
        let mut checked = 0;
        for (path, spec) in generating_specs() {
            let defaults = crate::values::default_values_map(&spec);
            let exprs = crate::capacity::capacity_exprs(&spec);
            let projected =
                crate::values::project_values(&defaults, &plans::read_paths(&spec, &exprs));
            assert!(projected.len() < defaults.len(), "{}", path.display());
            let presets = crate::capacity::fit::presets(&spec);
            assert_eq!(
                presets,
                crate::capacity::fit::presets_over(&spec, &defaults)
            );
            for plan in schema::plan_names_of(&presets) {
                let whole = schema::plan_values_over(&defaults, &presets, &plan);
                let part = schema::plan_values_over(&projected, &presets, &plan);
                assert_eq!(
                    plans::plan_contract_over(&exprs, &spec, &plan, &whole),
                    plans::plan_contract_over(&exprs, &spec, &plan, &part),
                    "{}: {plan}",
                    path.display()
                );
                assert_eq!(
                    plans::pod_bounds_over(&exprs, &spec, &whole),
                    plans::pod_bounds_over(&exprs, &spec, &part)
                );
                checked += 1;
            }
        }
        assert!(checked > 20, "{checked} plans");
    }

    /// The pod bounds read from a plan's capacity report are those its contract's
    /// bounds give.
    #[test]
    fn pod_bounds_from_the_report_equal_the_contracts() {
        for example_name in EXAMPLES {
            let spec = example(example_name);
            let presets = crate::capacity::fit::presets(&spec);
            for plan in schema::plan_names(&spec) {
                let values = schema::plan_values(&spec, &presets, &plan);
                let contract = plans::plan_contract(&spec, &plan, &values);
                assert_eq!(
                    plans::pod_bounds(&spec, &values),
                    plans::PodBounds::of(std::slice::from_ref(&contract)),
                    "{example_name}: {plan}"
                );
            }
            // Each workload alone, with 9 replicas and its autoscalers off: a class with
            // a replica count bounds 9 pods, the migrate hook Job none.
            let base = schema::plan_values(&spec, &presets, crate::values::presets::DEFAULT_PRESET);
            for (only, workload) in spec.workloads.all() {
                let mut values = base.clone();
                for (name, _) in spec.workloads.all() {
                    set(
                        &mut values,
                        &format!("workloads.{name}.enabled"),
                        json!(name == only),
                    );
                }
                for key in workload.class().autoscalers() {
                    set(
                        &mut values,
                        &format!("workloads.{only}.{key}.enabled"),
                        json!(false),
                    );
                }
                if workload.class() != crate::spec::WorkloadClass::Migrate {
                    set(
                        &mut values,
                        &format!("workloads.{only}.replicaCount"),
                        json!(9),
                    );
                }
                let bounds = plans::pod_bounds(&spec, &values);
                let contract = plans::plan_contract(&spec, "only", &values);
                assert_eq!(
                    bounds,
                    plans::PodBounds::of(std::slice::from_ref(&contract)),
                    "{example_name}: {only}"
                );
                let expected = if workload.class() == crate::spec::WorkloadClass::Migrate {
                    0
                } else {
                    9
                };
                assert_eq!(bounds.pod_count, expected, "{example_name}: {only}");
            }
            // Values whose capacity does not evaluate bound nothing.
            assert_eq!(
                plans::pod_bounds(&spec, &Value::Null),
                plans::PodBounds::default()
            );
        }
    }

    #[test]
    fn a_plan_the_spec_does_not_have_has_no_contract_of_its_own() {
        let spec = example("web-shop");
        let presets = crate::capacity::fit::presets(&spec);
        assert!(Contract::for_plan(&spec, presets, "no-such-plan").is_none());
    }

    #[test]
    fn pod_bounds_take_the_larger_of_each() {
        let a = plans::PodBounds {
            max_replicas: 3,
            pod_count: 9,
        };
        let b = plans::PodBounds {
            max_replicas: 5,
            pod_count: 4,
        };
        assert_eq!(
            a.max(b),
            plans::PodBounds {
                max_replicas: 5,
                pod_count: 9
            }
        );
        assert_eq!(
            b.max(a),
            plans::PodBounds {
                max_replicas: 5,
                pod_count: 9
            }
        );
    }

    /// Every place in values, as a JSON pointer.
    fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                    out.push(here.clone());
                    pointers(v, here, out);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    let here = format!("{at}/{i}");
                    out.push(here.clone());
                    pointers(v, here, out);
                }
            }
            _ => {}
        }
    }

    /// Values to put anywhere: edges of the bounds, look-alikes of the rules' patterns,
    /// wrong types, and the plans' names.
    fn replacements(plans: &[String]) -> Vec<Value> {
        let mut out = vec![
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(1),
            json!(2),
            json!(3),
            json!(-1),
            json!(1.5),
            json!(2.0),
            json!(10),
            json!(300),
            json!(u64::MAX),
            json!(""),
            json!("x"),
            json!("redis"),
            json!("memory"),
            json!("--workers=2"),
            json!(["-w4"]),
            json!(["run", "--wor", "3"]),
            json!("DB_POOL_SIZE=3"),
            json!("50%"),
            json!("101%"),
            json!("1Gi"),
            json!({}),
            json!([]),
            json!({"zz": 1}),
            json!([{"name": "WEB_CONCURRENCY", "value": "4"}]),
            json!([{"name": "OTHER", "value": "4"}]),
        ];
        out.extend(plans.iter().map(|p| json!(p)));
        out
    }

    /// The schema walk, and the schema compiled for many checks, give `jsonschema`'s
    /// verdict on every example's whole schema and on each plan's own, for a plan's
    /// values changed in one to three places: a value replaced (by one above or by
    /// another place's), a key removed or added. So does the compiled schema checking
    /// only what differs from the plan's values, when they pass.
    #[test]
    fn the_schema_walk_decides_as_jsonschema_on_changed_values() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
        let checked = std::cell::Cell::new((0, 0));
        let beside = std::cell::Cell::new(0);
        for example_name in EXAMPLES {
            let spec = example(example_name);
            let whole = Contract::of(&spec);
            let plans = schema::plan_names(&spec);
            let mut schemas = vec![schema::values_schema_of(&spec, &whole)];
            for plan in &plans {
                let own = Contract::for_plan(&spec, whole.presets.clone(), plan).unwrap();
                schemas.push(schema::values_schema_of(&spec, &own));
            }
            let validators: Vec<_> = schemas
                .iter()
                .map(|s| jsonschema::draft7::new(s).unwrap())
                .collect();
            let programs: Vec<_> = schemas
                .iter()
                .map(crate::values::schema_program::SchemaProgram::compile)
                .collect();
            let bases: Vec<Value> = plans
                .iter()
                .map(|p| schema::plan_values(&spec, &whole.presets, p))
                .collect();
            let candidates = replacements(&plans);
            let change = (
                0..4u8,
                any::<prop::sample::Index>(),
                any::<prop::sample::Index>(),
            );
            let config = Config {
                cases: 96,
                failure_persistence: None,
                ..Config::default()
            };
            let rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
            let mut runner = TestRunner::new_with_rng(config, rng);
            runner
                .run(
                    &(
                        any::<prop::sample::Index>(),
                        prop::collection::vec(change, 1..4),
                    ),
                    |(base, changes)| {
                        let base = base.get(&bases);
                        let mut values = base.clone();
                        for (kind, at, what) in changes {
                            let mut places = Vec::new();
                            pointers(&values, String::new(), &mut places);
                            let place = at.get(&places).clone();
                            let (parent, key) = place.rsplit_once('/').unwrap();
                            let new = match kind {
                                0 => what.get(&candidates).clone(),
                                1 => values.pointer(what.get(&places).as_str()).unwrap().clone(),
                                _ => Value::Null,
                            };
                            let target = values.pointer_mut(parent).unwrap();
                            match (kind, target) {
                                (2, Value::Object(map)) => {
                                    map.remove(&key.replace("~1", "/").replace("~0", "~"));
                                }
                                (3, Value::Object(map)) => {
                                    map.insert("unknownKey".into(), json!(1));
                                }
                                (0 | 1, _) => *values.pointer_mut(&place).unwrap() = new,
                                _ => {}
                            }
                        }
                        for ((schema, validator), program) in
                            schemas.iter().zip(&validators).zip(&programs)
                        {
                            let verdict = validator.is_valid(&values);
                            prop_assert_eq!(schema_verdict(schema, &values), Some(verdict));
                            prop_assert_eq!(program.verdict(&values), Some(verdict));
                            // Beside the plan's values, when they pass.
                            if program.verdict(base) == Some(true) {
                                prop_assert_eq!(
                                    program.verdict_beside(&values, base),
                                    Some(verdict)
                                );
                                beside.set(beside.get() + 1);
                            }
                            let (yes, no) = checked.get();
                            checked.set(if verdict {
                                (yes + 1, no)
                            } else {
                                (yes, no + 1)
                            });
                        }
                        Ok(())
                    },
                )
                .unwrap();
        }
        // Both verdicts come up often enough to mean something.
        let (accepted, refused) = checked.get();
        assert!(
            accepted > 100 && refused > 100,
            "{accepted} accepted, {refused} refused"
        );
        assert!(beside.get() > 200, "{} checked beside", beside.get());
    }
}
