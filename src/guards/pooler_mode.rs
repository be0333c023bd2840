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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, values, with};
    use serde_json::json;

    fn pooler(enabled: bool, mode: &str) -> Vec<Finding> {
        let spec = example("agent-platform");
        let v = with(
            values(&spec, None),
            &[(
                "postgresPooler",
                json!({"enabled": enabled, "poolMode": mode}),
            )],
        );
        check(&spec, &v)
    }

    #[test]
    fn session_mode_passes() {
        let spec = example("agent-platform");
        assert_eq!(check(&spec, &values(&spec, None)), []);
        assert_eq!(pooler(true, "session"), []);
    }

    #[test]
    fn transaction_and_statement_modes_are_refused() {
        for mode in ["transaction", "statement"] {
            let findings = pooler(true, mode);
            assert_eq!(findings.len(), 1, "{mode}");
            let f = &findings[0];
            assert_eq!(
                (f.rule, f.path.as_str()),
                ("postgres.pooler-mode", "postgresPooler.poolMode")
            );
            assert_eq!(f.severity, Severity::Error);
            assert!(
                f.message
                    .starts_with(&format!("PgBouncer in `{mode}` mode")),
                "{f}"
            );
        }
    }

    #[test]
    fn a_disabled_pooler_is_not_checked() {
        assert_eq!(pooler(false, "transaction"), []);
    }
}
