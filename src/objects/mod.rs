//! Stage 8, build objects: every Kubernetes object of the chart, built once per
//! workload class as a tree with value holes ([`tree`]), one file per kind.
//!
//! Each kind is written with [`crate::manifest!`], so it reads like the YAML it
//! prints. Workload names are the only spec text that appears outside value
//! references: they are validated DNS labels (see [`crate::spec`]) and become path
//! segments, component labels and name suffixes.
//!
//! - [`common`]: names, labels, metadata and the image, the parts every kind shares
//!   (names, labels and the configuration are named templates of `_helpers.tpl`).
//! - [`service_account`], [`config_map`], [`capacity_config_map`], [`secret`]: the
//!   chart's own.
//! - [`deployment`], [`job`] with [`pod`] (pod template, container) and
//!   [`env`](mod@env) (the env the chart manages): the workloads.
//! - [`stateful_set`] with [`service::bundled_service`], [`secret::bundled_secret`] and
//!   [`config_map::postgres_init_config_map`]: the bundled evaluation servers.
//! - [`service`], [`ingress`], [`service_monitor`], [`disruption_budget`], [`network_policy`], [`autoscaler`],
//!   [`scaled_object`]: what a workload class adds.

pub mod autoscaler;
pub mod capacity_config_map;
pub mod common;
pub mod config_map;
pub mod deployment;
pub mod disruption_budget;
pub mod env;
pub mod ingress;
pub mod job;
pub mod network_policy;
pub mod pod;
pub mod scaled_object;
pub mod secret;
pub mod service;
pub mod service_account;
pub mod service_monitor;
pub mod stateful_set;
pub mod tree;

use crate::capacity::CapacityExprs;
use crate::expr::{val, Expr, SmolStr, ValuePath};
use crate::objects::tree::Document;
use crate::spec::{Spec, WorkloadClass};
use serde_json::Value;

/// Builds every document of the chart, in a stable order.
pub fn build_objects(spec: &Spec) -> Vec<Document> {
    let mut docs = Vec::new();
    each_object(spec, &mut |doc| docs.push(doc));
    docs
}

/// [`build_objects`], and for each document the workload whose objects it is
/// ([`each_object_of`]).
pub fn build_objects_of(spec: &Spec) -> (Vec<Document>, Vec<Option<String>>) {
    build_objects_over(spec, &crate::capacity::capacity_exprs(spec))
}

/// [`build_objects_of`] with the spec's capacity formula already built: `generate`
/// builds it once for every stage.
pub fn build_objects_over(
    spec: &Spec,
    exprs: &CapacityExprs,
) -> (Vec<Document>, Vec<Option<String>>) {
    let (mut docs, mut workloads) = (Vec::new(), Vec::new());
    each_object_in_part_of(spec, Some(exprs), 0, 1, &mut |doc, workload| {
        docs.push(doc);
        workloads.push(workload.map(str::to_string));
    });
    (docs, workloads)
}

/// Builds the documents of [`build_objects`] one at a time, in the same order, and
/// hands each to `emit`. `render` renders each document as it is built and drops it:
/// the object trees of 400 workloads were most of its memory.
pub fn each_object(spec: &Spec, emit: &mut dyn FnMut(Document)) {
    each_object_of(spec, &mut |doc, _| emit(doc));
}

/// [`each_object`], with each document the workload whose objects it is (`None` for
/// the chart's own): its values are most of what the document reads.
pub fn each_object_of(spec: &Spec, emit: &mut dyn FnMut(Document, Option<&str>)) {
    each_object_in_part(spec, 0, 1, emit);
}

/// [`each_object_of`] of part `part` (from 0) of `parts`, which together hand over
/// every document once, in the same order: the chart's own documents are in the first
/// part, and the workloads are cut into `parts` runs of equal length (within one).
/// `render` builds and renders the parts on different cores.
pub fn each_object_in_part(
    spec: &Spec,
    part: usize,
    parts: usize,
    emit: &mut dyn FnMut(Document, Option<&str>),
) {
    each_object_in_part_of(spec, None, part, parts, emit);
}

/// [`each_object_in_part`] with the spec's capacity formula, when it is given, or
/// built here for the first part (the only one with the chart's own documents, the
/// capacity ConfigMap among them).
fn each_object_in_part_of(
    spec: &Spec,
    exprs: Option<&CapacityExprs>,
    part: usize,
    parts: usize,
    emit: &mut dyn FnMut(Document, Option<&str>),
) {
    if part == 0 {
        let built;
        let exprs = match exprs {
            Some(exprs) => exprs,
            None => {
                built = crate::capacity::capacity_exprs(spec);
                &built
            }
        };
        let mut chart_wide = |doc| emit(doc, None);
        each_chart_object(spec, exprs, &mut chart_wide);
    }
    let all = spec.workloads.all();
    let count = all.len();
    let (first, end) = (count * part / parts, count * (part + 1) / parts);
    // The same for every workload: copied once, not once per workload (the pools'
    // names made this quadratic in workloads).
    let shared_stores: Vec<String> = spec.shared_stores().iter().map(|s| s.to_string()).collect();
    let pool_workloads: Vec<String> = spec.workloads.pool.keys().cloned().collect();
    for (name, workload) in all.into_iter().take(end).skip(first) {
        let declared = workload.allocation_values();
        let w = Workload {
            name,
            class: workload.class(),
            secret_url_servers: env::secret_url_servers(spec, &declared),
            declared,
            shared_stores: &shared_stores,
            pool_workloads: &pool_workloads,
            spec,
        };
        each_workload_object(&w, &mut |doc| emit(doc, Some(name)));
    }
}

/// The chart's own documents, before any workload's.
fn each_chart_object(spec: &Spec, exprs: &CapacityExprs, emit: &mut dyn FnMut(Document)) {
    emit(service_account::service_account(spec));
    emit(config_map::config_map(spec));
    emit(capacity_config_map::capacity_config_map(spec, exprs));
    if !spec.secrets.keys.is_empty() {
        emit(secret::secret(spec));
    }
    emit(secret::bundled_secret(spec));
    emit(config_map::postgres_init_config_map(spec));
    emit(stateful_set::postgres_stateful_set(spec));
    emit(service::bundled_service(
        spec,
        stateful_set::POSTGRES,
        "postgres",
        5432,
    ));
    emit(network_policy::bundled_network_policy(
        spec,
        stateful_set::POSTGRES,
        "postgres",
        val(&stateful_set::postgres_value("enabled")),
    ));
    for server in crate::values::bundled_redis_servers(spec) {
        let component = stateful_set::valkey_component(server);
        emit(stateful_set::valkey_stateful_set(spec, server));
        emit(service::bundled_service(spec, &component, "valkey", 6379));
        emit(network_policy::bundled_network_policy(
            spec,
            &component,
            "valkey",
            val(&stateful_set::redis_value(server, "enabled")),
        ));
    }
}

/// One workload's documents, by its class.
fn each_workload_object(w: &Workload<'_>, emit: &mut dyn FnMut(Document)) {
    match w.class {
        WorkloadClass::Api => {
            emit(config_map::workload_config_map(w));
            emit(deployment::deployment(w));
            emit(service::service(w));
            emit(ingress::ingress(w));
            emit(service_monitor::service_monitor(w));
            emit(disruption_budget::disruption_budget(w));
            emit(network_policy::network_policy(w));
            emit(autoscaler::autoscaler(w));
            emit(scaled_object::scaled_object(w));
        }
        WorkloadClass::Pool | WorkloadClass::Worker => {
            emit(config_map::workload_config_map(w));
            emit(deployment::deployment(w));
            emit(service::service(w));
            emit(service_monitor::service_monitor(w));
            emit(disruption_budget::disruption_budget(w));
            emit(network_policy::network_policy(w));
            emit(autoscaler::autoscaler(w));
        }
        WorkloadClass::Jobs => {
            emit(config_map::workload_config_map(w));
            emit(deployment::deployment(w));
            emit(network_policy::network_policy(w));
        }
        WorkloadClass::Migrate => {
            emit(config_map::hook_config_map(w));
            emit(network_policy::network_policy(w));
            emit(job::migrate_job(w));
        }
    }
}

/// One workload being built.
pub struct Workload<'a> {
    pub name: &'a str,
    pub class: WorkloadClass,
    /// The spec's declaration of the workload's connection allocations (the `postgres`
    /// and `redis` of its default values): which exist and what they depend on.
    pub declared: Value,
    /// The spec's shared stores.
    pub shared_stores: &'a [String],
    /// The names of the spec's `pool` workloads.
    pub pool_workloads: &'a [String],
    /// Redis servers with a URL from a Secret that this workload has allocations on.
    pub secret_url_servers: Vec<String>,
    /// The spec, for the sizes its startup settings state and the chart's name.
    pub spec: &'a Spec,
}

impl Workload<'_> {
    /// `workloads.<name>`.
    pub fn path(&self) -> ValuePath {
        ValuePath(vec![
            SmolStr::new_static("workloads"),
            SmolStr::new(self.name),
        ])
    }

    /// `workloads.<name>.<key>`, made in one allocation: the builders ask for
    /// thousands of them.
    pub fn value(&self, key: &str) -> ValuePath {
        ValuePath(vec![
            SmolStr::new_static("workloads"),
            SmolStr::new(self.name),
            SmolStr::new(key),
        ])
    }

    /// `workloads.<name>.enabled`.
    pub fn enabled(&self) -> Expr {
        val(&self.value("enabled"))
    }

    /// `<release>-<workload>`, cut to 63 characters.
    pub fn object_name(&self) -> Expr {
        common::release_name_with(self.spec, self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::example;

    /// Each document's file and workload, in the order they are handed over.
    fn files_of(spec: &Spec, part: usize, parts: usize) -> Vec<(String, Option<String>)> {
        let mut out = Vec::new();
        each_object_in_part(spec, part, parts, &mut |doc, workload| {
            out.push((doc.file.clone(), workload.map(str::to_string)));
        });
        out
    }

    /// The parts, one after the other, hand over every document once in the order of
    /// [`each_object_of`], however many there are (more parts than workloads too); the
    /// chart's own documents are in the first part only.
    #[test]
    fn the_parts_hand_over_every_document_once_in_order() {
        for name in ["agent-platform", "llm-gateway", "web-shop"] {
            let spec = example(name);
            let mut whole = Vec::new();
            each_object_of(&spec, &mut |doc, workload| {
                whole.push((doc.file.clone(), workload.map(str::to_string)));
            });
            assert_eq!(files_of(&spec, 0, 1), whole, "{name}");
            assert!(
                whole.iter().any(|(_, w)| w.is_none()),
                "{name}: the chart's own"
            );
            for (workload, _) in spec.workloads.all() {
                let of = |(_, w): &(String, Option<String>)| w.as_deref() == Some(workload);
                assert!(whole.iter().any(of), "{name}: {workload}");
            }
            let workloads = spec.workloads.all().len();
            for parts in [2, 3, workloads, workloads + 2] {
                let each: Vec<_> = (0..parts).map(|p| files_of(&spec, p, parts)).collect();
                assert_eq!(each.concat(), whole, "{name}: {parts} parts");
                for later in &each[1..] {
                    assert!(later.iter().all(|(_, w)| w.is_some()), "{name}: {parts}");
                }
                let sizes: Vec<usize> = (0..parts)
                    .map(|p| {
                        let mut seen: Vec<_> =
                            each[p].iter().filter_map(|(_, w)| w.clone()).collect();
                        seen.dedup();
                        seen.len()
                    })
                    .collect();
                let (most, least) = (sizes.iter().max().unwrap(), sizes.iter().min().unwrap());
                assert!(most - least <= 1, "{name}: {sizes:?}");
            }
        }
    }

    /// The files each workload class adds, as [`each_object`] builds them.
    fn class_files(class: WorkloadClass) -> &'static [&'static str] {
        match class {
            WorkloadClass::Api => &[
                "configmap",
                "deployment",
                "service",
                "ingress",
                "servicemonitor",
                "pdb",
                "networkpolicy",
                "hpa",
                "scaledobject",
            ],
            WorkloadClass::Pool | WorkloadClass::Worker => &[
                "configmap",
                "deployment",
                "service",
                "servicemonitor",
                "pdb",
                "networkpolicy",
                "hpa",
            ],
            WorkloadClass::Jobs => &["configmap", "deployment", "networkpolicy"],
            WorkloadClass::Migrate => &["configmap", "networkpolicy", "job"],
        }
    }

    /// Every document once, with a file name of its own: the chart's own objects and
    /// each workload's, by class; [`build_objects`] holds what [`each_object`] hands
    /// out, in the same order.
    #[test]
    fn every_workload_has_its_class_documents_and_both_builders_agree() {
        for name in ["agent-platform", "llm-gateway", "web-shop"] {
            let spec = example(name);
            let docs = build_objects(&spec);
            let mut handed = Vec::new();
            each_object(&spec, &mut |doc| handed.push(doc));
            assert_eq!(docs, handed, "{name}");
            let files: Vec<&str> = docs.iter().map(|d| d.file.as_str()).collect();
            let mut unique = files.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), files.len(), "{name}: {files:?}");
            for own in [
                "serviceaccount.yaml",
                "configmap.yaml",
                "dependency-capacity.yaml",
            ] {
                assert!(files.contains(&own), "{name}: {own} in {files:?}");
            }
            let mut expected = 0;
            for (workload, w) in spec.workloads.all() {
                for kind in class_files(w.class()) {
                    let file = format!("{workload}-{kind}.yaml");
                    assert!(files.contains(&file.as_str()), "{name}: {file}");
                    expected += 1;
                }
            }
            let bundled = files.iter().filter(|f| f.starts_with("bundled-")).count();
            assert_eq!(
                files.len(),
                expected + bundled + 3 + usize::from(!spec.secrets.keys.is_empty()),
                "{name}: {files:?}"
            );
        }
    }
}
