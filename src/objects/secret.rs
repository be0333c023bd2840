//! The application's secrets: the Secret the chart creates from `secrets.data` when
//! no `existingSecret` is named (for evaluation), and the env entries that read each
//! declared key from whichever Secret holds them; and the bundled evaluation servers'
//! passwords.

use crate::expr::{lit, val, Builtin, Expr, ValuePath};
use crate::manifest;
use crate::objects::common::{metadata, release_name_with};
use crate::objects::tree::{entries_of, Document, ListPart};
use crate::spec::Spec;

/// The Secret holding the keys: `existingSecret`, or the one the chart creates.
fn secret_name(spec: &Spec) -> Expr {
    let existing = val(&ValuePath::new(["secrets", "existingSecret"]));
    Expr::If(
        Box::new(existing.clone()),
        Box::new(existing),
        Box::new(release_name_with(spec, "secrets")),
    )
}

/// `<release>-secrets`, when no existing Secret is named (the chart has this
/// template only when the spec declares keys).
pub fn secret(spec: &Spec) -> Document {
    let secrets = ValuePath::new(["secrets"]);
    let create = Expr::Not(Box::new(val(&secrets.child("existingSecret"))));
    Document {
        file: "secret.yaml".into(),
        when: Some(create),
        root: manifest!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": (metadata(spec, release_name_with(spec, "secrets"), None, vec![])),
            "type": "Opaque",
            "stringData": { ..(entries_of(&secrets.child("data"))) },
        }),
    }
}

/// One env entry per declared key, read from the Secret.
pub fn secret_env(spec: &Spec) -> Vec<ListPart> {
    spec.secrets
        .keys
        .keys()
        .map(|key| ListPart::Item {
            value: manifest!({
                "name": (key.as_str()),
                "valueFrom": {
                    "secretKeyRef": { "name": (secret_name(spec)), "key": (key.as_str()) },
                },
            }),
            when: None,
        })
        .collect()
}

/// The checksum that rolls the pods when the secrets' values change.
pub fn secrets_checksum() -> Expr {
    Expr::Sha256Json(Box::new(val(&ValuePath::new(["secrets"]))))
}

/// The bundled servers' Secret: `bundled.existingSecret`, or `<release>-bundled`.
pub fn bundled_secret_name(spec: &Spec) -> Expr {
    let existing = val(&ValuePath::new(["bundled", "existingSecret"]));
    Expr::If(
        Box::new(existing.clone()),
        Box::new(existing),
        Box::new(release_name_with(spec, "bundled")),
    )
}

/// A password derived from the release's namespace and name: the same on every
/// upgrade (a server's volume keeps the first one), never printed by the chart's notes.
fn derived_password(purpose: &str) -> Expr {
    Expr::Sha256(Box::new(Expr::Concat(vec![
        lit(format!("shipshape-bundled/{purpose}/")),
        Expr::Builtin(Builtin::ReleaseNamespace),
        lit("/"),
        Expr::Builtin(Builtin::ReleaseName),
    ])))
}

/// Whether any bundled server runs.
pub fn any_bundled(spec: &Spec) -> Expr {
    let mut on = vec![val(&ValuePath::new(["bundled", "postgres", "enabled"]))];
    for server in crate::values::bundled_redis_servers(spec) {
        on.push(val(&ValuePath::new([
            "bundled", "redis", server, "enabled",
        ])));
    }
    Expr::Or(on)
}

/// `<release>-bundled`, the bundled servers' passwords, when a bundled server runs and
/// no `bundled.existingSecret` is named.
pub fn bundled_secret(spec: &Spec) -> Document {
    let create = Expr::And(vec![
        any_bundled(spec),
        Expr::Not(Box::new(val(&ValuePath::new([
            "bundled",
            "existingSecret",
        ])))),
    ]);
    Document {
        file: "bundled-secret.yaml".into(),
        when: Some(create),
        root: manifest!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": (metadata(spec, release_name_with(spec, "bundled"), None, vec![])),
            "type": "Opaque",
            "stringData": {
                "password": (derived_password("app")),
                "postgres-password": (derived_password("postgres")),
                "valkey-password": (derived_password("valkey")),
            },
        }),
    }
}
