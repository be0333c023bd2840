//! The bundled evaluation servers' StatefulSets: PostgreSQL, and one Valkey per
//! declared Redis server marked bundled. Their limits are read from the values paths
//! the capacity guards read (`dependencyCapacity`), so a bundled server enforces
//! exactly the budget the guards checked.

use crate::expr::{lit, val, Expr, ValuePath};
use crate::manifest;
use crate::objects::common::{metadata, selector_labels, standard_labels};
use crate::objects::tree::{Document, Node};
use crate::spec::Spec;

/// The bundled PostgreSQL's component label and object name suffix.
pub const POSTGRES: &str = "bundled-postgres";

/// A bundled Valkey server's component label and object name suffix.
pub fn valkey_component(server: &str) -> String {
    format!("bundled-valkey-{server}")
}

/// `bundled.postgres.<key>`.
pub fn postgres_value(key: &str) -> ValuePath {
    ValuePath::new(["bundled", "postgres", key])
}

/// `bundled.redis.<server>.<key>`.
pub fn redis_value(server: &str, key: &str) -> ValuePath {
    ValuePath::new(["bundled", "redis", server, key])
}

/// `-c name=<int>`: a PostgreSQL setting from an integer value.
fn setting(name: &str, path: &ValuePath) -> Expr {
    Expr::Concat(vec![
        lit(format!("{name}=")),
        Expr::IntString(Box::new(val(path))),
    ])
}

fn image(base: &ValuePath) -> Expr {
    Expr::Concat(vec![
        val(&base.child("image").child("repository")),
        lit(":"),
        val(&base.child("image").child("tag")),
    ])
}

/// Pod Security "restricted", as a high uid no node user has (the postgres image
/// runs under any uid; it fakes its passwd entry).
fn pod_security() -> Node {
    manifest!({
        "runAsNonRoot": true,
        "runAsUser": 10001,
        "runAsGroup": 10001,
        "fsGroup": 10001,
        "seccompProfile": { "type": "RuntimeDefault" },
    })
}

fn container_security() -> Node {
    manifest!({
        "allowPrivilegeEscalation": false,
        "readOnlyRootFilesystem": true,
        "runAsNonRoot": true,
        "capabilities": { "drop": ["ALL"] },
    })
}

/// The one volume claim of a bundled server, `data`.
fn volume_claim(base: &ValuePath) -> Node {
    manifest!({
        "metadata": { "name": "data" },
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": { "requests": { "storage": (base.child("storage")) } },
        },
    })
}

/// An env entry reading a key of the bundled servers' Secret.
pub fn secret_env(spec: &Spec, name: &str, key: &str) -> Node {
    manifest!({
        "name": (name),
        "valueFrom": {
            "secretKeyRef": { "name": (crate::objects::secret::bundled_secret_name(spec)), "key": (key) },
        },
    })
}

/// The bundled PostgreSQL: `max_connections` is `dependencyCapacity.postgres.maxConnections`
/// and `superuser_reserved_connections` its `reserve`; the application's role is not a
/// superuser, so it can hold at most the budget the capacity guard checks.
pub fn postgres_stateful_set(spec: &Spec) -> Document {
    let base = ValuePath::new(["bundled", "postgres"]);
    let budget = ValuePath::new(["dependencyCapacity", "postgres"]);
    let name = crate::objects::common::release_name_with(spec, POSTGRES);
    let init = crate::objects::common::release_name_with(spec, "bundled-postgres-init");
    Document {
        file: "bundled-postgres-statefulset.yaml".into(),
        when: Some(val(&base.child("enabled"))),
        root: manifest!({
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": (metadata(spec, name.clone(), Some(POSTGRES), vec![])),
            "spec": {
                "serviceName": (name),
                "replicas": 1,
                "selector": { "matchLabels": { ..(selector_labels(spec, Some(POSTGRES))) } },
                "template": {
                    "metadata": { "labels": { ..(standard_labels(spec, Some(POSTGRES))) } },
                    "spec": {
                        "automountServiceAccountToken": false,
                        "securityContext": (pod_security()),
                        "containers": [{
                            "name": "postgres",
                            "image": (image(&base)),
                            "args": [
                                "-c",
                                (setting("max_connections", &budget.child("maxConnections"))),
                                "-c",
                                (setting("superuser_reserved_connections", &budget.child("reserve"))),
                            ],
                            "env": [
                                (secret_env(spec, "POSTGRES_PASSWORD", "postgres-password")),
                                { "name": "POSTGRES_DB", "value": (base.child("database")) },
                                { "name": "SHIPSHAPE_APP_USER", "value": (base.child("username")) },
                                (secret_env(spec, "SHIPSHAPE_APP_PASSWORD", "password")),
                                { "name": "PGDATA", "value": "/var/lib/postgresql/data/pgdata" },
                            ],
                            "ports": [{ "name": "postgres", "containerPort": 5432, "protocol": "TCP" }],
                            "readinessProbe": {
                                "exec": { "command": ["pg_isready", "-h", "127.0.0.1", "-p", "5432"] },
                                "periodSeconds": 5,
                                "timeoutSeconds": 3,
                            },
                            "livenessProbe": {
                                "exec": { "command": ["pg_isready", "-h", "127.0.0.1", "-p", "5432"] },
                                "initialDelaySeconds": 30,
                                "periodSeconds": 10,
                                "timeoutSeconds": 5,
                                "failureThreshold": 6,
                            },
                            "resources": (base.child("resources")),
                            "securityContext": (container_security()),
                            "volumeMounts": [
                                { "name": "data", "mountPath": "/var/lib/postgresql/data" },
                                { "name": "run", "mountPath": "/var/run/postgresql" },
                                { "name": "tmp", "mountPath": "/tmp" },
                                { "name": "init", "mountPath": "/docker-entrypoint-initdb.d", "readOnly": true },
                            ],
                        }],
                        "volumes": [
                            { "name": "run", "emptyDir": {} },
                            { "name": "tmp", "emptyDir": {} },
                            { "name": "init", "configMap": { "name": (init), "defaultMode": 365 } },
                        ],
                    },
                },
                "volumeClaimTemplates": [(volume_claim(&base))],
            },
        }),
    }
}

/// A bundled Valkey server: `--maxclients` is the server's declared `maxClients`,
/// `--maxmemory-policy` its declared `maxmemoryPolicy` (so a critical server is
/// `noeviction` by construction).
pub fn valkey_stateful_set(spec: &Spec, server: &str) -> Document {
    let base = ValuePath::new(["bundled", "redis", server]);
    let declared = ValuePath::new(["dependencyCapacity", "redis", "servers", server]);
    let component = valkey_component(server);
    let name = crate::objects::common::release_name_with(spec, &component);
    Document {
        file: format!("{component}-statefulset.yaml"),
        when: Some(val(&base.child("enabled"))),
        root: manifest!({
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": (metadata(spec, name.clone(), Some(component.as_str()), vec![])),
            "spec": {
                "serviceName": (name),
                "replicas": 1,
                "selector": { "matchLabels": { ..(selector_labels(spec, Some(component.as_str()))) } },
                "template": {
                    "metadata": { "labels": { ..(standard_labels(spec, Some(component.as_str()))) } },
                    "spec": {
                        "automountServiceAccountToken": false,
                        "securityContext": (pod_security()),
                        "containers": [{
                            "name": "valkey",
                            "image": (image(&base)),
                            "args": [
                                "valkey-server",
                                "--maxclients",
                                (Expr::IntString(Box::new(val(&declared.child("maxClients"))))),
                                "--maxmemory-policy",
                                (declared.child("maxmemoryPolicy")),
                                "--requirepass",
                                (format!("$({})", crate::model::VALKEY_PASSWORD_ENV)),
                            ],
                            "env": [(secret_env(spec, crate::model::VALKEY_PASSWORD_ENV, "valkey-password"))],
                            "ports": [{ "name": "valkey", "containerPort": 6379, "protocol": "TCP" }],
                            "readinessProbe": {
                                "tcpSocket": { "port": "valkey" },
                                "periodSeconds": 5,
                                "timeoutSeconds": 3,
                            },
                            "livenessProbe": {
                                "tcpSocket": { "port": "valkey" },
                                "initialDelaySeconds": 10,
                                "periodSeconds": 10,
                                "failureThreshold": 6,
                            },
                            "resources": (base.child("resources")),
                            "securityContext": (container_security()),
                            "volumeMounts": [{ "name": "data", "mountPath": "/data" }],
                        }],
                    },
                },
                "volumeClaimTemplates": [(volume_claim(&base))],
            },
        }),
    }
}
