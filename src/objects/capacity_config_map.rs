//! `<release>-dependency-capacity`: the peak connections of the values being
//! installed, computed by the template from the same formula as the capacity guard
//! and `shipshape capacity` ([`crate::capacity::formula`]).

use crate::capacity::formula::workload_exprs;
use crate::capacity::FORMULA;
use crate::expr::{val, Expr, ValuePath};
use crate::manifest;
use crate::objects::common::{metadata, release_name_with};
use crate::objects::tree::{Document, MapPart, Node};
use crate::spec::Spec;

fn int(e: Expr) -> Node {
    Node::Leaf(Expr::IntString(Box::new(e)))
}

pub fn capacity_config_map(spec: &Spec) -> Document {
    let budget = ValuePath::new(["dependencyCapacity"]);
    let workloads = workload_exprs(spec);
    let mut data: Vec<MapPart> = manifest!(entries {
        "formula": (FORMULA),
        "retiringGenerations": (int(val(&budget.child("retiringGenerations")))),
    });
    for w in &workloads {
        data.extend(manifest!(entries {
            (format!("{}.maxPods", w.name)): (int(w.max_pods.clone())),
            (format!("{}.surgePods", w.name)): (int(w.surge_pods.clone())),
            (format!("{}.peakProcesses", w.name)): (int(w.peak_processes())),
            (format!("{}.postgres", w.name)): (int(w.postgres_connections())),
            (format!("{}.redis", w.name)): (int(w.redis_connections(None))),
        }));
    }
    let pg = budget.child("postgres");
    let mut pg_peak: Vec<Expr> = workloads.iter().map(|w| w.postgres_connections()).collect();
    pg_peak.extend(
        spec.dependency_capacity
            .postgres
            .reservations
            .keys()
            .map(|k| val(&pg.child("reservations").child(k))),
    );
    let pg_budget = Expr::Sub(
        Box::new(val(&pg.child("maxConnections"))),
        Box::new(val(&pg.child("reserve"))),
    );
    let redis = budget.child("redis");
    let mut redis_peak: Vec<Expr> = workloads
        .iter()
        .map(|w| w.redis_connections(None))
        .collect();
    redis_peak.push(val(&redis.child("reservedClients")));
    data.extend(manifest!(entries {
        "postgres.peak": (int(Expr::Add(pg_peak))),
        "postgres.budget": (int(pg_budget)),
        "redis.peak": (int(Expr::Add(redis_peak))),
        "redis.budget": (int(val(&redis.child("maxConnections")))),
    }));
    for server in spec.dependency_capacity.redis.servers.keys() {
        let server_path = redis.child("servers").child(server);
        let mut peak: Vec<Expr> = workloads
            .iter()
            .map(|w| w.redis_connections(Some(server)))
            .collect();
        peak.push(val(&server_path.child("reservedClients")));
        data.extend(manifest!(entries {
            (format!("redis.{server}.peak")): (int(Expr::Add(peak))),
            (format!("redis.{server}.maxClients")): (int(val(&server_path.child("maxClients")))),
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
