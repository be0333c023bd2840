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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, places, values, with};
    use serde_json::json;

    /// The gateway's deadlines: foreground 0.2 <= 1 <= 2, background 1 <= 5 <= 10.
    fn deadlines(changes: &[(&str, f64)]) -> Vec<Finding> {
        let spec = example("llm-gateway");
        let changes: Vec<(String, Value)> = changes
            .iter()
            .map(|(path, s)| (format!("startupSettings.{path}.seconds"), json!(s)))
            .collect();
        let changes: Vec<(&str, Value)> = changes
            .iter()
            .map(|(p, v)| (p.as_str(), v.clone()))
            .collect();
        check(&spec, &with(values(&spec, None), &changes))
    }

    fn at(paths: &[&str]) -> Vec<(&'static str, String)> {
        paths
            .iter()
            .map(|p| ("timeouts.order", format!("startupSettings.{p}.seconds")))
            .collect()
    }

    #[test]
    fn the_declared_deadlines_pass() {
        assert_eq!(deadlines(&[]), []);
    }

    #[test]
    fn equal_deadlines_pass() {
        assert_eq!(
            deadlines(&[("foreground.lock", 1.0), ("foreground.transaction", 1.0)]),
            []
        );
    }

    #[test]
    fn a_lock_longer_than_the_statement_is_refused_with_the_arithmetic() {
        let findings = deadlines(&[("foreground.lock", 1.001)]);
        assert_eq!(places(&findings), at(&["foreground.lock"]));
        let f = &findings[0];
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(
            f.arithmetic.as_deref(),
            Some("startupSettings.foreground.lock.seconds 1.001 > startupSettings.foreground.statement.seconds 1")
        );
        assert!(f.message.contains("`db_lock_timeout_seconds`"), "{f}");
        assert!(f.hint.ends_with("to at most 1"), "{f}");
    }

    #[test]
    fn a_statement_longer_than_the_transaction_is_refused_in_the_background_too() {
        assert_eq!(
            places(&deadlines(&[("background.statement", 11.0)])),
            at(&["background.statement"])
        );
        assert_eq!(
            places(&deadlines(&[
                ("background.lock", 12.0),
                ("background.statement", 11.0)
            ])),
            at(&["background.lock", "background.statement"])
        );
    }

    #[test]
    fn a_deadline_of_zero_or_less_is_refused_and_the_smallest_positive_passes() {
        for bad in [0.0, -1.0] {
            let findings = deadlines(&[("foreground.lock", bad)]);
            assert_eq!(places(&findings), at(&["foreground.lock"]), "{bad}");
            assert!(
                findings[0].message.contains("must be positive"),
                "{}",
                findings[0]
            );
            assert_eq!(
                places(&deadlines(&[("deadlines.acquisition", bad)])),
                at(&["deadlines.acquisition"])
            );
        }
        assert_eq!(deadlines(&[("foreground.lock", f64::MIN_POSITIVE)]), []);
        assert_eq!(
            deadlines(&[("deadlines.redisSocket", f64::MIN_POSITIVE)]),
            []
        );
    }

    #[test]
    fn a_deadline_that_is_not_finite_is_refused() {
        let t = crate::model::TimeoutSetting {
            key: "k".into(),
            seconds: f64::INFINITY,
        };
        assert!(positive_deadline("p", &t).is_some());
        let t = crate::model::TimeoutSetting {
            seconds: f64::NAN,
            ..t
        };
        assert!(positive_deadline("p", &t).is_some());
    }

    #[test]
    fn a_spec_without_startup_settings_has_nothing_to_check() {
        let spec = example("agent-platform");
        assert_eq!(check(&spec, &values(&spec, None)), []);
    }
}
