//! `<release>-dependency-capacity`: the peak connections of the values being
//! installed, printed by the template from the one capacity formula the guard and
//! `shipshape capacity` evaluate ([`crate::capacity::capacity_exprs`]).

use crate::capacity::formula::retiring_generations;
use crate::capacity::{CapacityExprs, FORMULA};
use crate::expr::Expr;
use crate::manifest;
use crate::objects::common::{metadata, release_name_with, template_name};
use crate::objects::tree::{Document, MapPart, Node};
use crate::spec::Spec;

fn int(e: Expr) -> Node {
    Node::Leaf(Expr::IntString(Box::new(e)))
}

/// The ConfigMap of `spec`'s capacity formula ([`crate::capacity::capacity_exprs`],
/// built once per run and shared with the other stages).
pub fn capacity_config_map(spec: &Spec, exprs: &CapacityExprs) -> Document {
    // Each workload's max pods and surge pods are written once, as named templates
    // (`<chart>.capacity.<workload>.maxPods`), not again in every term and total.
    let capacity = exprs.with_each_workload(|w| {
        let prefix = template_name(spec, &format!("capacity.{}", w.name));
        w.with_named_pods(|term| format!("{prefix}.{term}"))
    });
    let mut data: Vec<MapPart> = manifest!(entries {
        "formula": (FORMULA),
        "retiringGenerations": (int(retiring_generations())),
    });
    for w in &capacity.workloads {
        data.extend(manifest!(entries {
            (format!("{}.maxPods", w.name)): (int(w.max_pods.clone())),
            (format!("{}.surgePods", w.name)): (int(w.surge_pods.clone())),
            (format!("{}.peakProcesses", w.name)): (int(w.peak_processes())),
            (format!("{}.postgres", w.name)): (int(w.postgres_connections())),
            (format!("{}.redis", w.name)): (int(w.redis_connections(None))),
        }));
    }
    data.extend(manifest!(entries {
        "postgres.peak": (int(capacity.postgres_peak())),
        "postgres.budget": (int(capacity.postgres_budget())),
        "redis.peak": (int(capacity.redis_peak())),
        "redis.budget": (int(capacity.redis_max_connections.clone())),
    }));
    for server in &capacity.redis_servers {
        data.extend(manifest!(entries {
            (format!("redis.{}.peak", server.name)): (int(capacity.redis_server_peak(server))),
            (format!("redis.{}.maxClients", server.name)): (int(server.max_clients.clone())),
        }));
    }
    let name = release_name_with(spec, "dependency-capacity");
    Document {
        file: "dependency-capacity.yaml".into(),
        when: None,
        root: manifest!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": (metadata(spec, name, None, vec![])),
            "data": { ..(data) },
        }),
    }
}
