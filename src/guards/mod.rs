//! Stage 3, guards: Rust functions over resolved values that refuse unsafe presets.
//!
//! Each guard has a stable rule id and returns every finding (it never stops at the
//! first), each with the values path, a message, the arithmetic where there is any,
//! and a fix hint. An error in any preset fails generation; nothing is written.

pub mod partition;

use crate::expr::ValuePath;
use crate::model::{ApiValues, IntOrString};
use crate::spec::{Spec, WorkloadClass};
use crate::values::integral_numbers;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt;

/// One rule of the catalogue: what the guard refuses, how `values.schema.json`
/// enforces it at install time, and how to go beyond it. The chart README's contract
/// table is generated from this list.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct RuleEntry {
    pub id: &'static str,
    /// What the guard refuses.
    pub refuses: &'static str,
    /// How plain Helm refuses the same values: a bound, a `const`, a derived value.
    pub install_time: &'static str,
    /// What to do to go beyond it.
    pub beyond: &'static str,
}

/// Every rule, in the order the docs list them.
pub const RULE_CATALOG: &[RuleEntry] = &[
    RuleEntry {
        id: "capacity.postgres",
        refuses: "peak PostgreSQL connections across a rollout above `maxConnections` - `reserve`",
        install_time: "bound: `capacityPlan` names a checked plan (the defaults or a preset); replicas, autoscaler maxima, surge, processes per pod, allocation sizes, retiring generations, reservations and the reserve at most the plan's, `maxConnections` at least the plan's peak + reserve, features and workloads the plan has off stay off",
        beyond: "add a preset with the new figures to `shipshape.yaml`, regenerate, and install with its `values-<preset>.yaml`",
    },
    RuleEntry {
        id: "capacity.redis",
        refuses: "peak Redis clients above a server's `maxClients` or the declared total",
        install_time: "bound: as `capacity.postgres`; each server's `maxClients` is 0 (unchecked) or at least the plan's peak on it, the total at least the plan's total",
        beyond: "as `capacity.postgres`",
    },
    RuleEntry {
        id: "replicas.shared-stores",
        refuses: "a shared store in pod memory while a workload can run more than one pod; Redis stores without `storeRedis.url`",
        install_time: "if/then: `replicaCount` >= 2 or an autoscaler on requires every fatal shared store on `redis`; a store on `redis` requires a non-empty `storeRedis.url`",
        beyond: "set the stores' `backend` to `redis` (the `scale-out` preset does)",
    },
    RuleEntry {
        id: "jobs.partition",
        refuses: "a scheduled job that runs in no workload or in two, for some combination of pools",
        install_time: "const: `scheduling` (jobs, pools, allow-lists) is fixed; the api/jobs on-off combinations that would leave a job without an owner are refused",
        beyond: "change `scheduling` in `shipshape.yaml` and regenerate",
    },
    RuleEntry {
        id: "pool.single-leader",
        refuses: "a pool with more than one replica and neither leader election nor claiming",
        install_time: "if/then: `replicaCount` >= 2 requires `leaderElection` or `claiming`",
        beyond: "turn on `leaderElection` (failover) or `claiming` (parallel)",
    },
    RuleEntry {
        id: "autoscaling.one-autoscaler",
        refuses: "an HPA and a KEDA ScaledObject on one workload; `minReplicas` above `maxReplicas`",
        install_time: "not: both `enabled`; min <= max enumerated over every `maxReplicas` a plan allows",
        beyond: "turn one autoscaler off; keep `minReplicas` <= `maxReplicas`",
    },
    RuleEntry {
        id: "rollout.drain",
        refuses: "a grace period shorter than drain + shutdown; a PodDisruptionBudget allowing 0 unavailable",
        install_time: "interval: `drainSeconds` and `shutdownSeconds` at most the plan's, `terminationGracePeriodSeconds` at least their sum; an enabled budget's `maxUnavailable` is not 0 or `0%`",
        beyond: "add a preset with the longer drain and its grace period, and regenerate",
    },
    RuleEntry {
        id: "rollout.strategy",
        refuses: "a `maxSurge`/`maxUnavailable` Kubernetes refuses (`12.5%`, `-5%`, `\"2\"`, 1.5), or both 0",
        install_time: "pattern and bound: a whole number or `N%` (`maxUnavailable` at most `100%`), never both 0; `maxSurge` adds at most the plan's surge pods",
        beyond: "write counts as numbers and percentages as `N%`",
    },
    RuleEntry {
        id: "postgres.pooler-mode",
        refuses: "PgBouncer in transaction or statement mode",
        install_time: "if/then: `postgresPooler.enabled` requires `poolMode: session`",
        beyond: "none: transaction pooling runs queries in the wrong tenant's schema",
    },
    RuleEntry {
        id: "timeouts.order",
        refuses: "lock > statement or statement > transaction (foreground, background); a deadline <= 0",
        install_time: "interval: lock at most the plan's lock, statement between the plan's lock and transaction, transaction at least the plan's; every deadline above 0",
        beyond: "add a preset with the new deadlines and regenerate",
    },
    RuleEntry {
        id: "env.managed",
        refuses: "user `env` setting a variable the chart manages; `--workers`/`-w` or `NAME=` for a managed variable anywhere in `args`/`command` (shell strings too); `config.<section>` set directly",
        install_time: "not: the managed names in `env`, the worker flags and assignments by pattern, the settings section in `config`",
        beyond: "set `processesPerPod`, the allocation sizes or `startupSettings` instead",
    },
    RuleEntry {
        id: "redis.eviction",
        refuses: "a critical Redis server declared with an evicting policy",
        install_time: "const: a critical server's `maxmemoryPolicy` is `noeviction`; roles and the other servers' policies are fixed",
        beyond: "put caches on a `cache` server",
    },
    RuleEntry {
        id: "settings.one-value",
        refuses: "a workload counted with another size than the configuration file states",
        install_time: "derived: another workload's stated allocation takes the `sizesFrom` workload's size; its own entry is `const`",
        beyond: "change the `sizesFrom` workload's size",
    },
    RuleEntry {
        id: "spec.structure",
        refuses: "values that change what the spec declares (job registry, variable names, allocation structure, settings keys)",
        install_time: "const",
        beyond: "change `shipshape.yaml` and regenerate",
    },
    RuleEntry {
        id: "values.types",
        refuses: "values that do not fit the typed model (the guards could not check them)",
        install_time: "bound: every integer at most 2147483647, percentages by pattern, so every accepted value fits the types",
        beyond: "none",
    },
];

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

/// The typed values of one workload, or `None` if they do not fit the type (the
/// values schema is checked before the guards, so that does not happen in practice).
pub fn workload_values<T: DeserializeOwned>(values: &Value, name: &str) -> Option<T> {
    let raw = values.get("workloads")?.get(name)?;
    serde_json::from_value(integral_numbers(raw)).ok()
}

/// Runs every guard on one preset's resolved values.
pub fn check_guards(spec: &Spec, values: &Value) -> Vec<Finding> {
    let mut findings = typed_values(spec, values);
    findings.extend(rollout_strategy(spec, values));
    for (name, workload) in spec.workloads.all() {
        if workload.class() == WorkloadClass::Api {
            if let Some(api) = workload_values::<ApiValues>(values, name) {
                findings.extend(one_autoscaler(name, &api));
                findings.extend(drain(name, &api));
            }
        }
    }
    findings.extend(capacity(spec, values));
    findings.extend(shared_stores(spec, values));
    findings.extend(job_partition(spec, values));
    findings.extend(single_leader(spec, values));
    findings.extend(pooler_mode(values));
    findings.extend(timeouts_order(values));
    findings.extend(managed_env(spec, values));
    findings.extend(redis_eviction(values));
    findings.extend(settings_one_value(spec, values));
    findings.sort_by(|a, b| (a.severity, &a.path, a.rule).cmp(&(b.severity, &b.path, b.rule)));
    findings
}

fn fits<T: DeserializeOwned>(path: &str, value: Option<&Value>) -> Option<Finding> {
    let raw = value?;
    let e = serde_json::from_value::<T>(integral_numbers(raw)).err()?;
    Some(Finding {
        rule: "values.types",
        severity: Severity::Error,
        path: path.to_string(),
        message: format!("the values do not fit the chart's types ({e}); the guards cannot check them"),
        arithmetic: None,
        hint: "use whole numbers from 0 to 2147483647 for counts and sizes, and the documented forms elsewhere (`values.schema.json` says which)".into(),
    })
}

/// `values.types`: every part of the values the guards read deserializes into its
/// typed model, so no guard falls back to a default (a budget read as 0, say).
fn typed_values(spec: &Spec, values: &Value) -> Vec<Finding> {
    use crate::model::{
        DependencyCapacity, JobsValues, MigrateValues, PoolValues, PostgresPooler, Scheduling,
        SharedStoreValues, StartupSettings, WorkerValues,
    };
    let mut out = Vec::new();
    for (name, workload) in spec.workloads.all() {
        let path = format!("workloads.{name}");
        let raw = values.get("workloads").and_then(|w| w.get(name));
        if raw.is_none() {
            out.push(Finding {
                rule: "values.types",
                severity: Severity::Error,
                path: path.clone(),
                message: "the workload's values are missing".into(),
                arithmetic: None,
                hint: format!("keep `{path}` (a `null` deletes it)"),
            });
            continue;
        }
        out.extend(match workload.class() {
            WorkloadClass::Api => fits::<ApiValues>(&path, raw),
            WorkloadClass::Jobs => fits::<JobsValues>(&path, raw),
            WorkloadClass::Pool => fits::<PoolValues>(&path, raw),
            WorkloadClass::Worker => fits::<WorkerValues>(&path, raw),
            WorkloadClass::Migrate => fits::<MigrateValues>(&path, raw),
        });
    }
    out.extend(fits::<DependencyCapacity>(
        "dependencyCapacity",
        values.get("dependencyCapacity"),
    ));
    out.extend(fits::<Scheduling>("scheduling", values.get("scheduling")));
    out.extend(fits::<PostgresPooler>(
        "postgresPooler",
        values.get("postgresPooler"),
    ));
    out.extend(
        fits::<std::collections::BTreeMap<String, SharedStoreValues>>(
            "stores",
            values.get("stores"),
        ),
    );
    if spec.startup_settings.is_some() {
        out.extend(fits::<StartupSettings>(
            "startupSettings",
            values.get("startupSettings"),
        ));
    }
    out
}

/// `rollout.strategy`: `maxSurge` and `maxUnavailable` are what Kubernetes accepts (a
/// whole number, or `N%`; `maxUnavailable` at most `100%`) and never both 0; a
/// PodDisruptionBudget's `maxUnavailable` likewise.
fn rollout_strategy(spec: &Spec, values: &Value) -> Vec<Finding> {
    use crate::model::{int_or_percent, IntOrPercent};
    let mut out = Vec::new();
    let bad = |path: String, raw: &Value, max_percent: u64| {
        Finding {
        rule: "rollout.strategy",
        severity: Severity::Error,
        path: path.clone(),
        message: format!(
            "{} is not a whole number or a percentage from `0%` to `{max_percent}%`; Kubernetes refuses it",
            crate::expr::gojson::to_go_json(raw)
        ),
        arithmetic: None,
        hint: format!("set `{path}` to a count such as 1 or a percentage such as `25%`"),
    }
    };
    for (name, workload) in spec.workloads.all() {
        if workload.class() == WorkloadClass::Migrate {
            continue;
        }
        let w = ValuePath::new(["workloads", name]);
        let mut parsed: Vec<Option<IntOrPercent>> = Vec::new();
        for (key, max_percent) in [("maxSurge", 999), ("maxUnavailable", 100)] {
            let path = w.child("rollingUpdate").child(key);
            let Some(raw) = path.lookup(values) else {
                parsed.push(None);
                continue;
            };
            let value = int_or_percent(raw, max_percent);
            if value.is_none() {
                out.push(bad(path.to_string(), raw, max_percent));
            }
            parsed.push(value);
        }
        if let [Some(surge), Some(unavailable)] = parsed[..] {
            if surge.is_zero() && unavailable.is_zero() {
                out.push(Finding {
                    rule: "rollout.strategy",
                    severity: Severity::Error,
                    path: format!("workloads.{name}.rollingUpdate"),
                    message: "`maxSurge` and `maxUnavailable` are both 0: a rollout could never replace a pod, and Kubernetes refuses it".into(),
                    arithmetic: None,
                    hint: format!("set `workloads.{name}.rollingUpdate.maxSurge` to 1"),
                });
            }
        }
        let pdb = w.child("podDisruptionBudget").child("maxUnavailable");
        if let Some(raw) = pdb.lookup(values) {
            if int_or_percent(raw, 100).is_none() {
                out.push(bad(pdb.to_string(), raw, 100));
            }
        }
    }
    out
}

/// `autoscaling.one-autoscaler`: never an HPA and a ScaledObject for one workload;
/// minimum within maximum.
fn one_autoscaler(name: &str, api: &ApiValues) -> Vec<Finding> {
    let mut out = Vec::new();
    let base = format!("workloads.{name}");
    if !api.enabled {
        return out;
    }
    if api.autoscaling.enabled && api.keda.enabled {
        out.push(Finding {
            rule: "autoscaling.one-autoscaler",
            severity: Severity::Error,
            path: base.clone(),
            message: "both an HPA (`autoscaling.enabled`) and a KEDA ScaledObject (`keda.enabled`) are on; they would fight over the replica count".into(),
            arithmetic: None,
            hint: format!("turn one off: `{base}.keda.enabled=false` or `{base}.autoscaling.enabled=false`"),
        });
    }
    for (key, on, min, max) in [
        (
            "autoscaling",
            api.autoscaling.enabled,
            api.autoscaling.min_replicas,
            api.autoscaling.max_replicas,
        ),
        (
            "keda",
            api.keda.enabled,
            api.keda.min_replicas,
            api.keda.max_replicas,
        ),
    ] {
        if on && min > max {
            out.push(Finding {
                rule: "autoscaling.one-autoscaler",
                severity: Severity::Error,
                path: format!("{base}.{key}"),
                message: format!("`minReplicas` {min} is above `maxReplicas` {max}"),
                arithmetic: None,
                hint: format!("set `{base}.{key}.maxReplicas` to at least {min}"),
            });
        }
    }
    out
}

/// `rollout.drain`: the grace period covers the drain window and the shutdown; the
/// PodDisruptionBudget never blocks a node drain; scale-in is not faster than the drain.
fn drain(name: &str, api: &ApiValues) -> Vec<Finding> {
    let mut out = Vec::new();
    let base = format!("workloads.{name}");
    if !api.enabled {
        return out;
    }
    let needed = u64::from(api.drain_seconds) + u64::from(api.shutdown_seconds);
    if u64::from(api.termination_grace_period_seconds) < needed {
        out.push(Finding {
            rule: "rollout.drain",
            severity: Severity::Error,
            path: format!("{base}.terminationGracePeriodSeconds"),
            message: format!(
                "a pod is killed after {} s, before its drain window and shutdown end; open streams are cut",
                api.termination_grace_period_seconds
            ),
            arithmetic: Some(format!(
                "drainSeconds {} + shutdownSeconds {} = {needed} > terminationGracePeriodSeconds {}",
                api.drain_seconds, api.shutdown_seconds, api.termination_grace_period_seconds
            )),
            hint: format!("set `{base}.terminationGracePeriodSeconds` to at least {needed}"),
        });
    }
    let pdb = &api.pod_disruption_budget;
    let blocks = match &pdb.max_unavailable {
        IntOrString::Int(n) => *n <= 0,
        IntOrString::Str(s) => s
            .trim_end_matches('%')
            .trim()
            .parse::<f64>()
            .is_ok_and(|p| p <= 0.0),
    };
    if pdb.enabled && blocks {
        out.push(Finding {
            rule: "rollout.drain",
            severity: Severity::Error,
            path: format!("{base}.podDisruptionBudget.maxUnavailable"),
            message:
                "a PodDisruptionBudget that allows no pod to be unavailable blocks every node drain"
                    .into(),
            arithmetic: None,
            hint: format!("set `{base}.podDisruptionBudget.maxUnavailable` to 1 or more"),
        });
    }
    let autoscaled = api.autoscaling.enabled || api.keda.enabled;
    let down = &api.autoscaling.scale_down;
    if autoscaled && down.period_seconds < api.drain_seconds {
        out.push(Finding {
            rule: "rollout.drain",
            severity: Severity::Warning,
            path: format!("{base}.autoscaling.scaleDown.periodSeconds"),
            message: format!(
                "scale-in removes up to {} pod(s) every {} s while each removed pod drains for {} s; streams on several pods are cut at once",
                down.pods, down.period_seconds, api.drain_seconds
            ),
            arithmetic: Some(format!("periodSeconds {} < drainSeconds {}", down.period_seconds, api.drain_seconds)),
            hint: format!("set `{base}.autoscaling.scaleDown.periodSeconds` to at least {}", api.drain_seconds),
        });
    }
    out
}

/// `capacity.postgres` and `capacity.redis`: the peak connections of every workload
/// across a rollout fit the declared budgets.
fn capacity(spec: &Spec, values: &Value) -> Vec<Finding> {
    let capacity = crate::capacity::Capacity::of(spec, values);
    let findings = match capacity.report().and_then(|r| capacity.findings(&r)) {
        Ok(findings) => findings,
        Err(e) => {
            return vec![Finding {
                rule: "capacity.postgres",
                severity: Severity::Error,
                path: "dependencyCapacity".into(),
                message: format!("the capacity inputs cannot be evaluated: {e}"),
                arithmetic: None,
                hint: "check the workloads' replica counts, surge and allocation sizes".into(),
            }]
        }
    };
    findings
        .into_iter()
        .map(|f| Finding {
            rule: f.rule,
            severity: Severity::Error,
            path: if f.rule == "capacity.postgres" {
                "dependencyCapacity.postgres".into()
            } else {
                "dependencyCapacity.redis".into()
            },
            message: f.message,
            arithmetic: Some(format!(
                "peak processes = (max pods + surge pods + max pods x retiring generations) x processes per pod\n{}",
                f.arithmetic
            )),
            hint: f.hint,
        })
        .collect()
}

/// Whether a workload can run more than one pod, from its resolved values.
fn runs_several_pods(values: &Value, name: &str, class: WorkloadClass) -> bool {
    let w = values.get("workloads").and_then(|w| w.get(name));
    let get = |k: &str| w.and_then(|w| w.get(k));
    let enabled = get("enabled").and_then(Value::as_bool).unwrap_or(false);
    let replicas = get("replicaCount").and_then(Value::as_f64).unwrap_or(0.0);
    let on = |k: &str| {
        get(k)
            .and_then(|a| a.get("enabled"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    enabled
        && match class {
            WorkloadClass::Migrate => false,
            WorkloadClass::Api => replicas > 1.0 || on("autoscaling") || on("keda"),
            _ => replicas > 1.0,
        }
}

/// `replicas.shared-stores`: a workload that can run more than one pod needs every
/// shared store on Redis (a non-fatal store: a warning), and a Redis URL.
fn shared_stores(spec: &Spec, values: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    let several: Vec<&str> = spec
        .workloads
        .all()
        .into_iter()
        .filter(|(n, w)| runs_several_pods(values, n, w.class()))
        .map(|(n, _)| n)
        .collect();
    let backend = |store: &str| {
        values
            .get("stores")
            .and_then(|s| s.get(store))
            .and_then(|s| s.get("backend"))
            .and_then(Value::as_str)
            .unwrap_or("memory")
            .to_string()
    };
    if !several.is_empty() {
        let who = several
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ");
        for (name, store) in &spec.stores {
            if store.class != crate::model::StoreClass::Shared || backend(name) == "redis" {
                continue;
            }
            out.push(Finding {
                rule: "replicas.shared-stores",
                severity: if store.fatal { Severity::Error } else { Severity::Warning },
                path: format!("stores.{name}.backend"),
                message: format!(
                    "the shared store `{name}` keeps its state in each pod's memory while {who} can run more than one pod: pods would disagree{}",
                    if store.fatal { "" } else { " (reported, not fatal)" }
                ),
                arithmetic: None,
                hint: format!("set `stores.{name}.backend=redis`, or run one pod"),
            });
        }
    }
    let uses_redis = spec.shared_stores().iter().any(|s| backend(s) == "redis");
    let url = values
        .get("storeRedis")
        .and_then(|r| r.get("url"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if uses_redis && url.is_empty() {
        out.push(Finding {
            rule: "replicas.shared-stores",
            severity: Severity::Error,
            path: "storeRedis.url".into(),
            message: "shared stores are on Redis but no Redis URL is set".into(),
            arithmetic: None,
            hint: "set `storeRedis.url`, e.g. `redis://valkey:6379`".into(),
        });
    }
    out
}

/// `jobs.partition`: for every combination of enabled pools, every scheduled job runs in
/// exactly one workload (proved structurally), and the registry is consistent.
fn job_partition(spec: &Spec, values: &Value) -> Vec<Finding> {
    use crate::guards::partition::{check_registry, prove_partition, Pool};
    let scheduling: crate::model::Scheduling = values
        .get("scheduling")
        .and_then(|s| serde_json::from_value(s.clone()).ok())
        .unwrap_or_default();
    let pools: Vec<Pool> = scheduling
        .pools
        .iter()
        .map(|(name, p)| Pool {
            name: name.clone(),
            jobs: p.jobs.clone(),
            allowed: p.allowed.clone(),
        })
        .collect();
    let enabled = |class: WorkloadClass| {
        spec.workloads
            .all()
            .into_iter()
            .filter(|(_, w)| w.class() == class)
            .any(|(n, _)| {
                values
                    .get("workloads")
                    .and_then(|w| w.get(n))
                    .and_then(|w| w.get("enabled"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
            })
    };
    let mut findings = check_registry(&scheduling.jobs, &pools);
    findings.extend(prove_partition(
        &scheduling.jobs,
        &pools,
        enabled(WorkloadClass::Api),
        enabled(WorkloadClass::Jobs),
    ));
    findings
        .into_iter()
        .map(|f| Finding {
            rule: f.rule,
            severity: Severity::Error,
            path: f.path,
            message: f.message,
            arithmetic: None,
            hint: f.hint,
        })
        .collect()
}

/// `pool.single-leader`: a pool with more than one replica needs leader election or
/// per-job claiming.
fn single_leader(spec: &Spec, values: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    for name in spec.workloads.pool.keys() {
        let Some(pool) = workload_values::<crate::model::PoolValues>(values, name) else {
            continue;
        };
        if pool.enabled && pool.replica_count > 1 && !pool.leader_election && !pool.claiming {
            out.push(Finding {
                rule: "pool.single-leader",
                severity: Severity::Error,
                path: format!("workloads.{name}.replicaCount"),
                message: format!(
                    "the pool `{name}` runs {} replicas with neither leader election nor claiming: its jobs would run in every replica",
                    pool.replica_count
                ),
                arithmetic: None,
                hint: format!("set `workloads.{name}.leaderElection=true` (failover) or `workloads.{name}.claiming=true` (parallel), or `replicaCount=1`"),
            });
        }
    }
    out
}

/// `postgres.pooler-mode`: PgBouncer stays in session mode.
fn pooler_mode(values: &Value) -> Vec<Finding> {
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

/// `timeouts.order`: lock <= statement <= transaction, for the foreground and the
/// background budgets; every deadline positive and finite.
fn timeouts_order(values: &Value) -> Vec<Finding> {
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

/// The environment variables the chart sets on a workload, from values.
pub fn managed_env_names(values: &Value, workload: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let w = values.get("workloads").and_then(|w| w.get(workload));
    names.extend(strings(w.and_then(|w| w.get("processEnv"))));
    for dependency in ["postgres", "redis"] {
        if let Some(allocations) = w.and_then(|w| w.get(dependency)).and_then(Value::as_object) {
            names.extend(
                allocations
                    .values()
                    .filter_map(|a| a.get("env").and_then(Value::as_str))
                    .map(str::to_string),
            );
        }
    }
    if let Some(m) = values.get("managedEnv").and_then(Value::as_object) {
        names.extend(m.values().filter_map(Value::as_str).map(str::to_string));
    }
    if let Some(m) = values.get("stores").and_then(Value::as_object) {
        names.extend(
            m.values()
                .filter_map(|s| s.get("env").and_then(Value::as_str))
                .map(str::to_string),
        );
    }
    if let Some(m) = values
        .get("dependencyCapacity")
        .and_then(|d| d.get("redis"))
        .and_then(|r| r.get("servers"))
        .and_then(Value::as_object)
    {
        names.extend(
            m.values()
                .filter_map(|s| s.get("urlEnv").and_then(Value::as_str))
                .map(str::to_string),
        );
    }
    names.retain(|n| !n.is_empty());
    names.sort();
    names.dedup();
    names
}

/// Whether a character ends a word of a command line, in a shell string too: ASCII
/// white space (Go's `\s`) and shell punctuation. The same class as
/// [`crate::contract::schema::managed_args_pattern`].
fn is_arg_separator(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\x0c' | '\r' | ' ' | '\'' | '"' | '`' | ';' | '&' | '|' | '(' | ')'
    )
}

fn words(arg: &str) -> impl Iterator<Item = &str> {
    arg.split(is_arg_separator).filter(|w| !w.is_empty())
}

/// Whether a command-line argument sets the worker count anywhere in it, also inside
/// a shell string (`sh -c "exec app --workers 4"`): a word `--workers`, `--workers=4`
/// (or an abbreviation argparse accepts, down to `--wo`), `-w` or `-w4`.
pub fn sets_workers(arg: &str) -> bool {
    words(arg).any(|word| {
        let head = word.split('=').next().unwrap_or(word);
        let long = [
            "--wo",
            "--wor",
            "--work",
            "--worke",
            "--worker",
            "--workers",
        ]
        .contains(&head);
        let short = word
            .strip_prefix("-w")
            .is_some_and(|rest| rest.bytes().all(|b| b.is_ascii_digit()));
        long || short
    })
}

/// Whether a command-line argument assigns one of the managed variables (`NAME=...`)
/// anywhere in it, as a shell string or `env NAME=4 app` would.
pub fn sets_managed_variable(arg: &str, managed: &[String]) -> bool {
    words(arg).any(|word| {
        managed.iter().any(|m| {
            word.strip_prefix(m.as_str())
                .is_some_and(|r| r.starts_with('='))
        })
    })
}

/// `env.managed`: the variables the chart derives cannot be overridden by user `env`
/// (explicit env wins over `envFrom`, so those cannot either), user `args`/`command`
/// cannot set a worker count, and the startup settings section of `config` is the
/// chart's.
fn managed_env(spec: &Spec, values: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    for (name, _) in spec.workloads.all() {
        let managed = managed_env_names(values, name);
        let w = values.get("workloads").and_then(|w| w.get(name));
        let user_env = w
            .and_then(|w| w.get("env"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for (i, entry) in user_env.iter().enumerate() {
            let Some(var) = entry.get("name").and_then(Value::as_str) else {
                continue;
            };
            if managed.iter().any(|m| m == var) {
                out.push(Finding {
                    rule: "env.managed",
                    severity: Severity::Error,
                    path: format!("workloads.{name}.env[{i}]"),
                    message: format!("`{var}` is set by the chart from the values the capacity and replica guards check; a user `env` entry would override it"),
                    arithmetic: None,
                    hint: format!("remove `{var}` from `workloads.{name}.env` and change the value it is derived from instead"),
                });
            }
        }
        for key in ["args", "command"] {
            let list = w
                .and_then(|w| w.get(key))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for (i, arg) in list.iter().enumerate() {
                let text = arg.as_str().unwrap_or_default();
                if sets_workers(text) {
                    out.push(Finding {
                        rule: "env.managed",
                        severity: Severity::Error,
                        path: format!("workloads.{name}.{key}[{i}]"),
                        message: format!("`{}` starts processes the capacity budgets do not count", text.escape_debug()),
                        arithmetic: None,
                        hint: format!("remove it and set `workloads.{name}.processesPerPod`; the chart passes it as the workers variables"),
                    });
                } else if sets_managed_variable(text, &managed) {
                    out.push(Finding {
                        rule: "env.managed",
                        severity: Severity::Error,
                        path: format!("workloads.{name}.{key}[{i}]"),
                        message: format!("`{}` assigns a variable the chart manages", text.escape_debug()),
                        arithmetic: None,
                        hint: format!("remove the assignment and change the value it is derived from (`workloads.{name}.processesPerPod`, an allocation's size)"),
                    });
                }
            }
        }
    }
    if let Some(section) = values
        .get("startupSettings")
        .and_then(|s| s.get("section"))
        .and_then(Value::as_str)
    {
        if let Some(set) = values.get("config").and_then(|c| c.get(section)) {
            let plain_url = set.as_object().is_some_and(|m| {
                m.values().any(|v| {
                    v.as_str()
                        .is_some_and(|s| s.starts_with("redis://") || s.starts_with("rediss://"))
                })
            });
            out.push(Finding {
                rule: "env.managed",
                severity: Severity::Error,
                path: format!("config.{section}"),
                message: if plain_url {
                    format!("`config.{section}` is written by the chart, and a Redis URL must not be given in plain text")
                } else {
                    format!("`config.{section}` is written by the chart from `startupSettings` and the allocations")
                },
                arithmetic: None,
                hint: "set the deadlines under `startupSettings`, the sizes under the workloads' allocations, and a separate Redis server's URL as `dependencyCapacity.redis.servers.<name>.urlSecret` (a Secret reference)".into(),
            });
        }
    }
    out
}

/// `redis.eviction`: the critical Redis server must be `noeviction`.
fn redis_eviction(values: &Value) -> Vec<Finding> {
    let servers: std::collections::BTreeMap<String, crate::model::RedisServer> = values
        .get("dependencyCapacity")
        .and_then(|d| d.get("redis"))
        .and_then(|r| r.get("servers"))
        .and_then(|s| serde_json::from_value(integral_numbers(s)).ok())
        .unwrap_or_default();
    let mut out = Vec::new();
    for (name, server) in servers {
        if server.role == Some(crate::model::RedisRole::Critical)
            && server.maxmemory_policy != "noeviction"
        {
            out.push(Finding {
                rule: "redis.eviction",
                severity: Severity::Error,
                path: format!("dependencyCapacity.redis.servers.{name}.maxmemoryPolicy"),
                message: format!(
                    "the critical Redis server `{name}` holds sessions, admission and coordination state but is declared with `{}`: under memory pressure it would evict them",
                    if server.maxmemory_policy.is_empty() { "no policy" } else { &server.maxmemory_policy }
                ),
                arithmetic: None,
                hint: "provision it with `maxmemory-policy noeviction` and declare `maxmemoryPolicy: noeviction`; put caches on a `cache` server, which may use `allkeys-lru`".into(),
            });
        }
    }
    out
}

/// `settings.one-value`: the configuration file states one size per stated
/// allocation, and every workload's processes read that file, so every workload opens
/// the `sizesFrom` workload's size ([`crate::capacity::allocations::effective_size`]). Another
/// workload's entry is fixed by the spec and must agree with the stated one there;
/// values may not set it.
fn settings_one_value(spec: &Spec, values: &Value) -> Vec<Finding> {
    let Some(settings) = &spec.startup_settings else {
        return Vec::new();
    };
    let from = settings.sizes_from.as_str();
    if !spec.workloads.all().iter().any(|(n, _)| *n == from) {
        return vec![Finding {
            rule: "settings.one-value",
            severity: Severity::Error,
            path: "startupSettings.sizesFrom".into(),
            message: format!("no workload `{from}`"),
            arithmetic: None,
            hint: "name the workload whose allocation sizes the configuration file states".into(),
        }];
    }
    let mut out = Vec::new();
    for (dependency, alloc, stated) in crate::capacity::allocations::stated_allocations(spec) {
        for (other, workload) in spec.workloads.all() {
            if other == from {
                continue;
            }
            let declared = workload.to_values();
            let Some(declared) = declared.get(dependency).and_then(|d| d.get(&alloc)) else {
                continue;
            };
            let path = format!("workloads.{other}.{dependency}.{alloc}");
            if declared.get("size") != stated.get("size")
                || declared.get("sizeWithout") != stated.get("sizeWithout")
            {
                out.push(Finding {
                    rule: "settings.one-value",
                    severity: Severity::Error,
                    path: format!("{path}.size"),
                    message: format!(
                        "the configuration file states `{alloc}` = {} (from `{from}`), but the spec declares `{other}` with {}: the application would open what the file says",
                        stated.get("size").map(crate::expr::gojson::to_go_json).unwrap_or_default(),
                        declared.get("size").map(crate::expr::gojson::to_go_json).unwrap_or_default()
                    ),
                    arithmetic: None,
                    hint: format!("give `{other}` the same `{alloc}` size as `{from}` in `shipshape.yaml`"),
                });
                continue;
            }
            let given = ValuePath::new(["workloads", other, dependency, &alloc]).lookup(values);
            if given.map(integral_numbers) != Some(integral_numbers(declared)) {
                out.push(Finding {
                    rule: "settings.one-value",
                    severity: Severity::Error,
                    path: format!("{path}.size"),
                    message: format!(
                        "`{path}` is taken from `workloads.{from}.{dependency}.{alloc}`: the configuration file states one `{alloc}` for every process, so it cannot be set here"
                    ),
                    arithmetic: None,
                    hint: format!("leave `{path}` as the chart has it and change `workloads.{from}.{dependency}.{alloc}.size` instead"),
                });
            }
        }
    }
    out
}
