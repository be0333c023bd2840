//! `timeouts.order`: refuses lock > statement or statement > transaction (in the
//! foreground and the background budgets), and a deadline <= 0. A lock wait longer
//! than the statement deadline, or a statement longer than its transaction, outlives
//! the limit meant to end it; a deadline of 0 or less (or not finite) means no
//! deadline at all. At install time `values.schema.json` gives intervals: lock at most
//! the plan's lock, statement between the plan's lock and transaction, transaction at
//! least the plan's, every deadline above 0.

use super::{Finding, Severity};
use crate::spec::Spec;
use serde_json::Value;

/// `timeouts.order`: lock <= statement <= transaction, for the foreground and the
/// background budgets; every deadline positive and finite.
pub fn check(_spec: &Spec, values: &Value) -> Vec<Finding> {
    let Some(settings) = values
        .get("startupSettings")
        .and_then(|s| serde_json::from_value::<crate::model::StartupSettings>(s.clone()).ok())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, budget) in [
        ("foreground", &settings.foreground),
        ("background", &settings.background),
    ] {
        let steps = [
            ("lock", &budget.lock),
            ("statement", &budget.statement),
            ("transaction", &budget.transaction),
        ];
        for pair in steps.windows(2) {
            let ((a_name, a), (b_name, b)) = (pair[0], pair[1]);
            if a.seconds > b.seconds {
                out.push(Finding {
                    rule: "timeouts.order",
                    severity: Severity::Error,
                    path: format!("startupSettings.{name}.{a_name}.seconds"),
                    message: format!(
                        "the {name} {a_name} deadline `{}` is longer than the {b_name} deadline `{}`: a statement would outlive the limit meant to end it",
                        a.key, b.key
                    ),
                    arithmetic: Some(format!(
                        "startupSettings.{name}.{a_name}.seconds {} > startupSettings.{name}.{b_name}.seconds {}",
                        a.seconds, b.seconds
                    )),
                    hint: format!("keep lock <= statement <= transaction: lower `startupSettings.{name}.{a_name}.seconds` to at most {}", b.seconds),
                });
            }
        }
        for (step, t) in steps {
            out.extend(positive_deadline(
                &format!("startupSettings.{name}.{step}"),
                t,
            ));
        }
    }
    for (name, t) in &settings.deadlines {
        out.extend(positive_deadline(
            &format!("startupSettings.deadlines.{name}"),
            t,
        ));
    }
    out
}

fn positive_deadline(path: &str, t: &crate::model::TimeoutSetting) -> Option<Finding> {
    (!(t.seconds > 0.0 && t.seconds.is_finite())).then(|| Finding {
        rule: "timeouts.order",
        severity: Severity::Error,
        path: format!("{path}.seconds"),
        message: format!(
            "the deadline `{}` must be positive and finite, not {}",
            t.key, t.seconds
        ),
        arithmetic: None,
        hint: format!("set `{path}.seconds` to a number of seconds above 0"),
    })
}
