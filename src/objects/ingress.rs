//! The api's Ingress (`networking.k8s.io/v1`): every host of `hosts` (any host when
//! there is none) routes every path of `paths` to the api Service's `http` port;
//! TLS and the class when set.

use crate::expr::{val, Expr};
use crate::manifest;
use crate::objects::common::metadata;
use crate::objects::tree::{entries_of, if_set, Document, ListPart};
use crate::objects::Workload;

pub fn ingress(w: &Workload<'_>) -> Document {
    let ing = w.value("ingress");
    let annotations = ing.child("annotations");
    let more = manifest!(entries {
        "annotations" if (val(&annotations)): { ..(entries_of(&annotations)) },
    });
    let path = manifest!({
        "path": (Expr::ItemField("path".into())),
        "pathType": (Expr::ItemField("pathType".into())),
        "backend": {
            "service": { "name": (w.object_name()), "port": { "name": "http" } },
        },
    });
    let http = manifest!({
        "paths": [..(ListPart::Each { list: ing.child("paths"), item: path })],
    });
    let rule = manifest!({ "host": (Expr::Item), "http": (http.clone()) });
    let hosts = ing.child("hosts");
    let no_hosts = Expr::Not(Box::new(val(&hosts)));
    Document {
        file: format!("{}-ingress.yaml", w.name),
        when: Some(Expr::And(vec![w.enabled(), val(&ing.child("enabled"))])),
        root: manifest!({
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": (metadata(w.spec, w.object_name(), Some(w.name), more)),
            "spec": {
                ..(if_set("ingressClassName", &ing.child("className"))),
                ..(if_set("tls", &ing.child("tls"))),
                "rules": [
                    ..(ListPart::Each { list: hosts, item: rule }),
                    // Without hosts, one rule for every host name.
                    { "http": (http) } if (no_hosts),
                ],
            },
        }),
    }
}
