//! What a guard returns: one [`Finding`] per broken rule, with its [`Severity`].

use std::fmt;

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Fails generation.
    Error,
    /// Printed, generation goes on.
    Warning,
}

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Stable rule id, e.g. `rollout.drain`.
    pub rule: &'static str,
    pub severity: Severity,
    /// The values path the finding is about.
    pub path: String,
    pub message: String,
    /// The arithmetic behind the finding, when there is any.
    pub arithmetic: Option<String>,
    /// How to fix it.
    pub hint: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(
            f,
            "{level}[{}] `{}`: {}",
            self.rule, self.path, self.message
        )?;
        if let Some(arithmetic) = &self.arithmetic {
            for line in arithmetic.lines() {
                write!(f, "\n    {line}")?;
            }
        }
        write!(f, "\n  hint: {}", self.hint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(severity: Severity, arithmetic: Option<&str>) -> Finding {
        Finding {
            rule: "rollout.drain",
            severity,
            path: "workloads.web.terminationGracePeriodSeconds".into(),
            message: "a pod is killed too early".into(),
            arithmetic: arithmetic.map(str::to_string),
            hint: "set it to at least 330".into(),
        }
    }

    #[test]
    fn display_prints_level_rule_path_arithmetic_and_hint() {
        let text = finding(Severity::Error, Some("a 300 + b 30 = 330\n> c 100")).to_string();
        assert_eq!(
            text,
            "error[rollout.drain] `workloads.web.terminationGracePeriodSeconds`: a pod is killed too early\n    a 300 + b 30 = 330\n    > c 100\n  hint: set it to at least 330"
        );
        let text = finding(Severity::Warning, None).to_string();
        assert_eq!(
            text,
            "warning[rollout.drain] `workloads.web.terminationGracePeriodSeconds`: a pod is killed too early\n  hint: set it to at least 330"
        );
    }

    #[test]
    fn errors_sort_before_warnings() {
        assert!(Severity::Error < Severity::Warning);
    }
}
