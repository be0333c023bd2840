//! The migrate workload's Job: a Helm hook, `pre-install,pre-upgrade` (before the new
//! pods roll) or `post-install,post-upgrade` by `hookPhase`, deleted once it succeeded.

use crate::manifest;
use crate::objects::common::{hook_annotations, metadata};
use crate::objects::pod::pod_template;
use crate::objects::tree::{if_set, Document};
use crate::objects::Workload;

pub fn migrate_job(w: &Workload<'_>) -> Document {
    let annotations = manifest!(entries {
        "annotations": (hook_annotations(w, "-5", "before-hook-creation,hook-succeeded")),
    });
    Document {
        file: format!("{}-job.yaml", w.name),
        when: Some(w.enabled()),
        root: manifest!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": (metadata(w.spec, w.object_name(), Some(w.name), annotations)),
            "spec": {
                "backoffLimit": (w.value("backoffLimit")),
                "activeDeadlineSeconds": (w.value("activeDeadlineSeconds")),
                ..(if_set("ttlSecondsAfterFinished", &w.value("ttlSecondsAfterFinished"))),
                "template": (pod_template(w)),
            },
        }),
    }
}
