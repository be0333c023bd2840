//! `postgres.pooler-mode`: refuses PgBouncer in transaction or statement mode. The
//! application sets each tenant's schema on its connection; a pooler that hands the
//! connection to another client between transactions or statements would run queries
//! in the wrong tenant's schema, so there is no going beyond this rule. At install
//! time `values.schema.json` says, by `if`/`then`: `postgresPooler.enabled` requires
//! `poolMode: session`.

use super::{Finding, Severity};
use crate::spec::Spec;
use serde_json::Value;

/// `postgres.pooler-mode`: PgBouncer stays in session mode.
pub fn check(_spec: &Spec, values: &Value) -> Vec<Finding> {
    let pooler: crate::model::PostgresPooler = values
        .get("postgresPooler")
        .and_then(|p| serde_json::from_value(p.clone()).ok())
        .unwrap_or_default();
    if pooler.enabled && pooler.pool_mode != "session" {
        vec![Finding {
            rule: "postgres.pooler-mode",
            severity: Severity::Error,
            path: "postgresPooler.poolMode".into(),
            message: format!(
                "PgBouncer in `{}` mode hands a connection to another client between statements or transactions; queries would run in the wrong tenant's schema",
                pooler.pool_mode
            ),
            arithmetic: None,
            hint: "set `postgresPooler.poolMode=session`".into(),
        }]
    } else {
        Vec::new()
    }
}
