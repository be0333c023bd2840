//! The ServiceAccount the pods run as (when `serviceAccount.create`), without an
//! automounted token.

use crate::expr::{val, ValuePath};
use crate::manifest;
use crate::objects::common::{metadata, service_account_name};
use crate::objects::tree::{entries_of, Document};
use crate::spec::Spec;

pub fn service_account(spec: &Spec) -> Document {
    let sa = ValuePath::new(["serviceAccount"]);
    let annotations = sa.child("annotations");
    let more = manifest!(entries {
        "annotations" if (val(&annotations)): { ..(entries_of(&annotations)) },
    });
    Document {
        file: "serviceaccount.yaml".into(),
        when: Some(val(&sa.child("create"))),
        root: manifest!({
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": (metadata(spec, service_account_name(spec), None, more)),
            "automountServiceAccountToken": false,
        }),
    }
}
