//! The registry: every rule once, with what it refuses, how `values.schema.json`
//! enforces it at install time, how to go beyond it, and the guard that checks it.
//! [`check_guards`] runs it; the chart README's contract table and the rule list in
//! the repository's README are generated from it ([`readme_rule_list`]).

use super::typed_values::TypedWorkloads;
use super::Finding;
use super::{
    bundled, capacity, drain, env_unique, exposed_port, job_partition, managed_env, names,
    one_autoscaler, pooler_mode, redis_eviction, rollout_strategy, security_restricted,
    settings_one_value, shared_stores, single_leader, timeouts, typed_values,
};
use crate::spec::Spec;
use serde_json::Value;

/// A guard: every finding of its rule on one preset's resolved values.
#[derive(Debug, Clone, Copy)]
pub enum Check {
    /// A function of the spec alone: the same on the defaults and every preset, so
    /// `generate` runs it once ([`spec_rule_findings`]).
    Spec(fn(&Spec) -> Vec<Finding>),
    /// A function of the values.
    Values(fn(&Spec, &Value) -> Vec<Finding>),
    /// A function of the values that reads them into the typed model, each whole
    /// number an integer ([`crate::values::WholeNumbers`]): the second half of the
    /// guards `render` runs on another core ([`whole_number_rule_findings`]).
    WholeNumbers(fn(&Spec, &Value) -> Vec<Finding>),
    /// A function of the values and of the workloads read into the typed model once
    /// per preset ([`TypedWorkloads`]), shared by reference with every check of this
    /// kind; run with those of [`Check::WholeNumbers`].
    Typed(fn(&Spec, &Value, &TypedWorkloads) -> Vec<Finding>),
    /// The rule's share of the one capacity computation both capacity rules read
    /// ([`capacity::capacity_findings`]), done once per preset by [`check_guards`].
    Capacity,
}

impl Rule {
    /// This rule's findings on one preset's resolved values (none for a rule only the
    /// values schema enforces).
    pub fn findings(&self, spec: &Spec, values: &Value) -> Vec<Finding> {
        match self.check {
            None => Vec::new(),
            Some(Check::Spec(check)) => check(spec),
            Some(Check::Values(check)) => check(spec, values),
            Some(Check::WholeNumbers(check)) => check(spec, values),
            Some(Check::Typed(check)) => check(spec, values, &TypedWorkloads::read(spec, values)),
            Some(Check::Capacity) => {
                capacity::only(self.id, capacity::capacity_findings(spec, values))
            }
        }
    }
}

/// One rule of the catalogue: what the guard refuses, how `values.schema.json`
/// enforces it at install time, how to go beyond it, and the guard.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Rule {
    pub id: &'static str,
    /// What the guard refuses.
    pub refuses: &'static str,
    /// How plain Helm refuses the same values: a bound, a `const`, a derived value.
    pub install_time: &'static str,
    /// What to do to go beyond it.
    pub beyond: &'static str,
    /// The guard; `None` for a rule only the values schema enforces.
    #[serde(skip)]
    pub check: Option<Check>,
}

/// Every rule, in the order the docs list them.
pub const RULES: &[Rule] = &[
    Rule {
        id: "capacity.postgres",
        refuses: "peak PostgreSQL connections across a rollout above `maxConnections` - `reserve`",
        install_time: "bound: `capacityPlan` names a checked plan (the defaults or a preset); replicas, autoscaler maxima, surge, processes per pod, allocation sizes, retiring generations, reservations and the reserve at most the plan's, `maxConnections` at least the plan's peak + reserve, features and workloads the plan has off stay off",
        beyond: "add a preset with the new figures to `shipshape.yaml`, regenerate, and install with its `values-<preset>.yaml`",
        check: Some(Check::Capacity),
    },
    Rule {
        id: "capacity.redis",
        refuses: "peak Redis clients above a server's `maxClients` or the declared total",
        install_time: "bound: as `capacity.postgres`; each server's `maxClients` is 0 (unchecked) or at least the plan's peak on it, the total at least the plan's total",
        beyond: "as `capacity.postgres`",
        check: Some(Check::Capacity),
    },
    Rule {
        id: "replicas.shared-stores",
        refuses: "a shared store in pod memory while a workload can run more than one pod; Redis stores without `storeRedis.url`",
        install_time: "if/then: `replicaCount` >= 2 or an autoscaler on requires every fatal shared store on `redis`; a store on `redis` requires a non-empty `storeRedis.url`",
        beyond: "set the stores' `backend` to `redis` (the `scale-out` preset does)",
        check: Some(Check::Values(shared_stores::check)),
    },
    Rule {
        id: "jobs.partition",
        refuses: "a scheduled job that runs in no workload or in two, for some combination of pools",
        install_time: "const: `scheduling` (jobs, pools, allow-lists) is fixed; the api/jobs on-off combinations that would leave a job without an owner are refused",
        beyond: "change `scheduling` in `shipshape.yaml` and regenerate",
        check: Some(Check::Values(job_partition::check)),
    },
    Rule {
        id: "pool.single-leader",
        refuses: "a pool with more than one replica (or an HPA up to two or more) and neither leader election nor claiming",
        install_time: "if/then: `replicaCount` >= 2, or an HPA on with `maxReplicas` >= 2, requires `leaderElection` or `claiming`",
        beyond: "turn on `leaderElection` (failover) or `claiming` (parallel)",
        check: Some(Check::Typed(single_leader::check)),
    },
    Rule {
        id: "autoscaling.one-autoscaler",
        refuses: "an HPA and a KEDA ScaledObject on one workload; `minReplicas` above `maxReplicas` (api, pool and worker)",
        install_time: "not: both `enabled`; min <= max enumerated over every `maxReplicas` a plan allows",
        beyond: "turn one autoscaler off; keep `minReplicas` <= `maxReplicas`",
        check: Some(Check::WholeNumbers(one_autoscaler::check)),
    },
    Rule {
        id: "rollout.drain",
        refuses: "a grace period shorter than drain + shutdown; a PodDisruptionBudget allowing 0 unavailable (`maxUnavailable` 0, or `minAvailable` at least the workload's fewest pods)",
        install_time: "interval: `drainSeconds` and `shutdownSeconds` at most the plan's, `terminationGracePeriodSeconds` at least their sum; an enabled budget's `maxUnavailable` is not 0 or `0%`, and its `minAvailable` is below `replicaCount` or the autoscaler's `minReplicas`, enumerated over every count a plan allows",
        beyond: "add a preset with the longer drain and its grace period, and regenerate",
        check: Some(Check::Typed(drain::check)),
    },
    Rule {
        id: "service.exposed-port",
        refuses: "an Ingress or ServiceMonitor on a workload whose Service is off; a Service on a pool or worker without a `port`",
        install_time: "if/then: `ingress.enabled` or `serviceMonitor.enabled` requires `service.enabled`; `service.enabled` requires `port` >= 1",
        beyond: "set the workload's `port` and turn its `service` on",
        check: Some(Check::Values(exposed_port::check)),
    },
    Rule {
        id: "rollout.strategy",
        refuses: "a `maxSurge`/`maxUnavailable` Kubernetes refuses (`12.5%`, `-5%`, `\"2\"`, 1.5), or both 0",
        install_time: "pattern and bound: a whole number or `N%` (`maxUnavailable` at most `100%`), never both 0; `maxSurge` adds at most the plan's surge pods",
        beyond: "write counts as numbers and percentages as `N%`",
        check: Some(Check::Values(rollout_strategy::check)),
    },
    Rule {
        id: "postgres.pooler-mode",
        refuses: "PgBouncer in transaction or statement mode",
        install_time: "if/then: `postgresPooler.enabled` requires `poolMode: session`",
        beyond: "none: transaction pooling runs queries in the wrong tenant's schema",
        check: Some(Check::Values(pooler_mode::check)),
    },
    Rule {
        id: "timeouts.order",
        refuses: "lock > statement or statement > transaction (foreground, background); a deadline <= 0",
        install_time: "interval: lock at most the plan's lock, statement between the plan's lock and transaction, transaction at least the plan's; every deadline above 0",
        beyond: "add a preset with the new deadlines and regenerate",
        check: Some(Check::Values(timeouts::check)),
    },
    Rule {
        id: "env.managed",
        refuses: "user `env` setting a variable the chart manages; `--workers`/`-w` or `NAME=` for a managed variable anywhere in `args`/`command` (shell strings too); a managed key of `config.<section>` or a plain Redis URL in it",
        install_time: "not: the managed names in `env`, the worker flags and assignments by pattern, the managed keys and `redis://` strings in the settings section",
        beyond: "set `processesPerPod`, the allocation sizes or `startupSettings` instead",
        check: Some(Check::Values(managed_env::check)),
    },
    Rule {
        id: "env.unique",
        refuses: "a variable name twice in one container's `env` (application container, sidecars, init containers)",
        install_time: "none: draft-07 cannot compare two list items' names; Kubernetes keeps the last entry",
        beyond: "set each variable once",
        check: Some(Check::Values(env_unique::check)),
    },
    Rule {
        id: "redis.eviction",
        refuses: "a critical Redis server declared with an evicting policy",
        install_time: "const: a critical server's `maxmemoryPolicy` is `noeviction`; roles and the other servers' policies are fixed",
        beyond: "put caches on a `cache` server",
        check: Some(Check::WholeNumbers(redis_eviction::check)),
    },
    Rule {
        id: "dependencies.bundled",
        refuses: "a bundled evaluation server that would not enforce the declared budget: a reserve not below `maxConnections`, more connections than PostgreSQL runs, a Valkey `maxClients` of 0 or above 65504, an eviction policy Valkey does not know",
        install_time: "derived: the servers' limits are rendered from the budgets the capacity guards read; if/then per plan: the bundled PostgreSQL's `maxConnections` above the plan's reserve bound and at most 262000, a bundled Valkey's `maxClients` in [1, 65504] and `maxmemoryPolicy` one of Valkey's",
        beyond: "use an external server (`bundled.<server>.enabled: false`) and declare its real limits",
        check: Some(Check::Values(bundled::check)),
    },
    Rule {
        id: "settings.one-value",
        refuses: "a workload counted with another size than the configuration file states",
        install_time: "derived: another workload's stated allocation takes the `sizesFrom` workload's size; its own entry is `const`",
        beyond: "change the `sizesFrom` workload's size",
        check: Some(Check::Values(settings_one_value::check)),
    },
    Rule {
        id: "names.unique",
        refuses: "two objects of one kind with the same name for some release name (up to 53 characters) or name override, such as a migrate workload named `config` whose hook ConfigMap would delete the chart's on upgrade",
        install_time: "pattern: `nameOverride` and `fullnameOverride` are empty or DNS labels of at most 63 characters; each name keeps its own suffix, and the guard checks every release name and full name length",
        beyond: "rename a workload, or shorten the spec's `takeover` name templates",
        check: Some(Check::Spec(names::check)),
    },
    Rule {
        id: "security.restricted",
        refuses: "values beyond Pod Security \"restricted\": a privileged container, privilege escalation, running as root, an added capability but `NET_BIND_SERVICE`, a `hostPath` volume, an unconfined seccomp profile (application container, sidecars, init containers)",
        install_time: "not/const, minimum, enum: per workload the same, but for what the spec relaxes for it",
        beyond: "relax a part for one workload in `shipshape.yaml` with a reason (`security.relax.<workload>`); the chart README prints it",
        check: Some(Check::Values(security_restricted::check)),
    },
    Rule {
        id: "spec.structure",
        refuses: "values that change what the spec declares (job registry, variable names, feature switches, allocation structure, settings keys)",
        install_time: "const",
        beyond: "change `shipshape.yaml` and regenerate",
        // Only the values schema enforces it: there is no Rust function to run.
        check: None,
    },
    Rule {
        id: "values.types",
        refuses: "values that do not fit the typed model (the guards could not check them)",
        install_time: "bound: every integer at most 2147483647, percentages by pattern, so every accepted value fits the types",
        beyond: "none",
        check: Some(Check::Typed(typed_values::check)),
    },
];

/// Runs every guard on one preset's resolved values: every finding, errors first, then
/// by values path and rule id.
pub fn check_guards(spec: &Spec, values: &Value) -> Vec<Finding> {
    check_guards_with(
        spec,
        values,
        capacity::capacity_findings(spec, values),
        &spec_rule_findings(spec),
    )
}

/// [`check_guards`] with both capacity rules' findings already computed
/// ([`capacity::capacity_findings_over`]: `generate` shares the capacity report), and
/// the spec rules' ([`spec_rule_findings`]: `generate` runs them once for every preset).
pub fn check_guards_with(
    spec: &Spec,
    values: &Value,
    capacity: Vec<Finding>,
    spec_findings: &[Finding],
) -> Vec<Finding> {
    sorted_findings(vec![
        capacity,
        spec_findings.to_vec(),
        value_rule_findings(spec, values),
        whole_number_rule_findings(spec, values),
    ])
}

/// The findings of the rules that read only the spec ([`Check::Spec`]): the same for
/// every preset's values, computed once per run.
pub fn spec_rule_findings(spec: &Spec) -> Vec<Finding> {
    findings_of_rules(spec, &Value::Null, |check| matches!(check, Check::Spec(_)))
}

/// The findings of the rules that read the values as they are ([`Check::Values`]): with
/// [`whole_number_rule_findings`] and the capacity rules' findings, every finding of
/// [`check_guards`]. `render` computes the parts on different cores.
pub fn value_rule_findings(spec: &Spec, values: &Value) -> Vec<Finding> {
    findings_of_rules(spec, values, |check| matches!(check, Check::Values(_)))
}

/// The findings of the rules that read the values into the typed model
/// ([`Check::WholeNumbers`] and [`Check::Typed`]), in the rules' order; the workloads
/// are read once for all of them.
pub fn whole_number_rule_findings(spec: &Spec, values: &Value) -> Vec<Finding> {
    let typed = TypedWorkloads::read(spec, values);
    RULES
        .iter()
        .flat_map(|rule| match rule.check {
            Some(Check::WholeNumbers(check)) => check(spec, values),
            Some(Check::Typed(check)) => check(spec, values, &typed),
            _ => Vec::new(),
        })
        .collect()
}

/// The findings ([`Rule::findings`]) of every rule whose check is of the kind `kind`
/// picks, in the rules' order.
fn findings_of_rules(spec: &Spec, values: &Value, kind: fn(&Check) -> bool) -> Vec<Finding> {
    RULES
        .iter()
        .filter(|rule| rule.check.as_ref().is_some_and(kind))
        .flat_map(|rule| rule.findings(spec, values))
        .collect()
}

/// The findings of every part, errors first, then by values path and rule id. Each
/// rule's findings come from one part, so the parts' order changes nothing.
pub fn sorted_findings(parts: Vec<Vec<Finding>>) -> Vec<Finding> {
    let mut findings: Vec<Finding> = parts.into_iter().flatten().collect();
    findings.sort_by(|a, b| (a.severity, &a.path, a.rule).cmp(&(b.severity, &b.path, b.rule)));
    findings
}

/// The rule list of the repository's README (between `<!-- rules:start -->` and
/// `<!-- rules:end -->`): one Markdown bullet per rule, its id and what it refuses.
pub fn readme_rule_list() -> String {
    RULES
        .iter()
        .map(|rule| format!("- `{}`: {}\n", rule.id, rule.refuses))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, values, with};
    use crate::guards::Severity;
    use serde_json::json;

    #[test]
    fn every_rule_is_listed_once() {
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
        for rule in RULES {
            for text in [rule.refuses, rule.install_time, rule.beyond] {
                assert!(!text.is_empty() && !text.ends_with('.'), "{}", rule.id);
            }
        }
    }

    #[test]
    fn only_spec_structure_has_no_guard() {
        let without: Vec<&str> = RULES
            .iter()
            .filter(|r| r.check.is_none())
            .map(|r| r.id)
            .collect();
        assert_eq!(without, ["spec.structure"]);
    }

    /// Each guard's file opens with its rule id, so the file and the registry agree.
    #[test]
    fn every_guard_has_a_file_that_opens_with_its_rule_id() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/guards");
        let first_lines: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
            .map(|text| text.lines().next().unwrap_or_default().to_string())
            .collect();
        for rule in RULES.iter().filter(|r| r.check.is_some()) {
            let opening = format!("`{}`", rule.id);
            let files = first_lines
                .iter()
                .filter(|l| l.starts_with("//! `") && l.contains(&opening))
                .count();
            assert_eq!(files, 1, "{}", rule.id);
        }
    }

    /// Every finding of a guard carries its own rule id, on the presets of both
    /// examples and on values that break several rules at once.
    #[test]
    fn each_guard_reports_its_own_rule_only() {
        let broken = [
            ("workloads.api.replicaCount", json!(2.0)),
            ("workloads.api.terminationGracePeriodSeconds", json!(1.0)),
            ("workloads.api.rollingUpdate.maxSurge", json!("1.5%")),
            ("workloads.jobs.enabled", json!(false)),
            ("dependencyCapacity.postgres.maxConnections", json!(1.0)),
            (
                "postgresPooler",
                json!({"enabled": true, "poolMode": "transaction"}),
            ),
        ];
        let mut seen = std::collections::BTreeSet::new();
        for name in ["agent-platform", "llm-gateway"] {
            let spec = example(name);
            let mut all = vec![values(&spec, None), with(values(&spec, None), &broken)];
            all.extend(
                crate::capacity::fit::presets(&spec)
                    .keys()
                    .map(|p| values(&spec, Some(p))),
            );
            for v in &all {
                for rule in RULES {
                    for f in rule.findings(&spec, v) {
                        assert_eq!(f.rule, rule.id, "{f}");
                        seen.insert(f.rule);
                    }
                }
            }
        }
        assert!(seen.len() >= 6, "{seen:?}");
    }

    /// The agent platform's values with a second api replica, a drain longer than the
    /// api's timeout and the pooler in statement mode (errors and warnings of several
    /// rules), and `more` set after them.
    fn agent_platform_breaking_rules(more: &[(&str, Value)]) -> (Spec, Value) {
        let spec = example("agent-platform");
        let mut set = vec![
            ("workloads.api.replicaCount", json!(2.0)),
            ("workloads.api.terminationGracePeriodSeconds", json!(59.0)),
            (
                "postgresPooler",
                json!({"enabled": true, "poolMode": "statement"}),
            ),
        ];
        set.extend(more.iter().cloned());
        let v = with(values(&spec, None), &set);
        (spec, v)
    }

    #[test]
    fn check_guards_returns_every_finding_errors_first_then_by_path() {
        let (spec, v) = agent_platform_breaking_rules(&[]);
        let findings = check_guards(&spec, &v);
        let summary: Vec<(Severity, &str, &str)> = findings
            .iter()
            .map(|f| (f.severity, f.path.as_str(), f.rule))
            .collect();
        let mut sorted = summary.clone();
        sorted.sort();
        assert_eq!(summary, sorted);
        assert_eq!(
            summary.first(),
            Some(&(
                Severity::Error,
                "postgresPooler.poolMode",
                "postgres.pooler-mode"
            ))
        );
        assert_eq!(
            summary.last(),
            Some(&(
                Severity::Warning,
                "stores.tool-effect-journal.backend",
                "replicas.shared-stores"
            ))
        );
        assert!(summary.contains(&(
            Severity::Error,
            "workloads.api.terminationGracePeriodSeconds",
            "rollout.drain"
        )));
        assert_eq!(findings.len(), 12, "{findings:#?}");
    }

    /// The three parts `render` computes apart hold each rule's findings in one part
    /// (the rules that read the values as they are, those that read whole numbers, the
    /// capacity rules), and sorted in any order they are [`check_guards`]' findings.
    #[test]
    fn the_parts_of_the_findings_sort_into_check_guards() {
        let (spec, v) =
            agent_platform_breaking_rules(&[("workloads.api.maxUnavailable", json!(0))]);
        let value_rules = value_rule_findings(&spec, &v);
        let whole_rules = whole_number_rule_findings(&spec, &v);
        let capacity = capacity::capacity_findings(&spec, &v);
        let kind_of = |id: &str| RULES.iter().find(|r| r.id == id).map(|r| r.check);
        assert!(!value_rules.is_empty() && !whole_rules.is_empty());
        for f in &value_rules {
            assert!(
                matches!(kind_of(f.rule), Some(Some(Check::Values(_)))),
                "{}",
                f.rule
            );
        }
        for f in &whole_rules {
            assert!(
                matches!(
                    kind_of(f.rule),
                    Some(Some(Check::WholeNumbers(_) | Check::Typed(_)))
                ),
                "{}",
                f.rule
            );
        }
        let whole = check_guards(&spec, &v);
        assert_eq!(
            whole.len(),
            value_rules.len() + whole_rules.len() + capacity.len()
        );
        assert_eq!(
            sorted_findings(vec![whole_rules, capacity, value_rules]),
            whole
        );
    }

    /// The typed part runs both kinds of rules that read the typed model: those that
    /// read the values themselves (`autoscaling.one-autoscaler`) and those that share
    /// the workloads' one read (`rollout.drain`).
    #[test]
    fn the_typed_part_runs_both_kinds_of_typed_rules() {
        let (spec, v) = agent_platform_breaking_rules(&[
            ("workloads.api.autoscaling.enabled", json!(true)),
            ("workloads.api.keda.enabled", json!(true)),
        ]);
        let rules: std::collections::BTreeSet<&str> = whole_number_rule_findings(&spec, &v)
            .iter()
            .map(|f| f.rule)
            .collect();
        assert!(rules.contains("autoscaling.one-autoscaler"), "{rules:?}");
        assert!(rules.contains("rollout.drain"), "{rules:?}");
    }

    /// The rules that read only the spec are run once by [`spec_rule_findings`], and
    /// [`check_guards`] holds their findings with the others' on any values.
    #[test]
    fn the_spec_rules_findings_are_computed_apart_and_joined_into_check_guards() {
        let text = "chart: {name: shop, version: 1.0.0, appVersion: '1', description: d}\nimage: {repository: example/shop}\nworkloads:\n  api: {web: {}}\n  migrate: {config: {}}\n";
        let spec = crate::spec::load_spec(text, "test.yaml").unwrap();
        let spec_rules = spec_rule_findings(&spec);
        let rules: Vec<(&str, &str)> = spec_rules
            .iter()
            .map(|f| (f.rule, f.path.as_str()))
            .collect();
        assert_eq!(rules, [("names.unique", "workloads.config")]);
        for f in &spec_rules {
            let kind = RULES.iter().find(|r| r.id == f.rule).map(|r| r.check);
            assert!(matches!(kind, Some(Some(Check::Spec(_)))), "{}", f.rule);
        }
        let v = with(
            values(&spec, None),
            &[("workloads.api.replicaCount", json!(2))],
        );
        let value_rules = value_rule_findings(&spec, &v);
        let whole_rules = whole_number_rule_findings(&spec, &v);
        let capacity = capacity::capacity_findings(&spec, &v);
        assert!(value_rules.iter().all(|f| f.rule != "names.unique"));
        let whole = check_guards(&spec, &v);
        assert!(whole.iter().any(|f| f.rule == "names.unique"));
        assert_eq!(
            sorted_findings(vec![value_rules, spec_rules.clone(), whole_rules, capacity]),
            whole
        );
        // Handed findings of its own, `check_guards_with` reports those instead.
        let capacity = capacity::capacity_findings(&spec, &v);
        let without = check_guards_with(&spec, &v, capacity, &[]);
        assert_eq!(without.len() + spec_rules.len(), whole.len());
        assert!(without.iter().all(|f| f.rule != "names.unique"));
    }

    #[test]
    fn the_readme_list_has_one_bullet_per_rule() {
        let list = readme_rule_list();
        assert_eq!(list.lines().count(), RULES.len());
        assert!(list.starts_with(
            "- `capacity.postgres`: peak PostgreSQL connections across a rollout above `maxConnections` - `reserve`\n"
        ));
        assert!(list.ends_with(
            "- `values.types`: values that do not fit the typed model (the guards could not check them)\n"
        ));
    }
}
