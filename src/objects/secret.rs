//! The application's secrets: the Secret the chart creates from `secrets.data` when
//! no `existingSecret` is named (for evaluation), and the env entries that read each
//! declared key from whichever Secret holds them.

use crate::expr::{val, Expr, ValuePath};
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
