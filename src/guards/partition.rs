//! The `jobs.partition` guard: every scheduled job runs in exactly one workload.
//!
//! One image runs as several workloads. Which scheduled jobs a workload runs is decided
//! by ownership:
//!
//! - a job owned by an enabled pool runs in that pool's workload only;
//! - otherwise, if the `jobs` workload is enabled, it runs there (the jobs pod runs every
//!   job except those of offloaded pools, see [`offloaded_pools`]);
//! - otherwise it runs in the api workload, unless it is `apiExcluded`, in which case it
//!   runs nowhere;
//! - a job owned by a pool whose workload is disabled falls back like a job without a pool.
//!
//! "Exactly one workload" counts workloads, not replicas: a locked job is safe in a
//! multi-replica workload because its advisory lock lets one pod win; an unlocked job runs
//! in every replica and must say why ([`check_registry`]).
//!
//! [`prove_partition`] proves the partition for every combination of enabled pools in time
//! linear in the number of jobs plus pool entries, without enumerating combinations.
//! [`enumerate_placements`] is the brute-force counterpart the tests cross-check it with.
//!
//! Spec paths in findings follow the layout `scheduling.jobs[<index>]` for jobs and
//! `scheduling.pools.<name>.jobs[<index>]` / `scheduling.pools.<name>.allowed[<index>]`
//! for pools.

use crate::model::ScheduledJob;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::{Deserialize, Serialize};

/// The stable id of this guard.
pub const RULE: &str = "jobs.partition";

/// How many names a message lists before it says "and N more".
const MAX_LISTED: usize = 5;

/// A named pool: a workload of the same image that runs only the jobs it lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Pool {
    /// The pool's name, unique among pools.
    pub name: String,
    /// The jobs the pool owns.
    pub jobs: Vec<String>,
    /// A fixed allow-list: when set, the pool may own only these jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<String>>,
}

/// Which workloads of a preset are enabled.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Topology {
    /// Whether the `jobs` workload is enabled.
    #[serde(default)]
    pub jobs_workload_enabled: bool,
    /// Whether the `api` workload is enabled.
    #[serde(default)]
    pub api_enabled: bool,
    /// The pools whose pool workload is enabled.
    #[serde(default)]
    pub enabled_pools: Vec<String>,
}

/// The workload a job runs in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Placement {
    /// The `jobs` workload.
    Jobs,
    /// The workload of the named pool.
    Pool(String),
    /// The `api` workload.
    Api,
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Placement::Jobs => f.write_str("the `jobs` workload"),
            Placement::Pool(name) => write!(f, "pool `{name}`"),
            Placement::Api => f.write_str("the `api` workload"),
        }
    }
}

/// Each job's name with every workload it runs in, in registry order.
pub type JobPlacements = Vec<(String, Vec<Placement>)>;

/// One combination of [`enumerate_placements`]: the enabled pools and [`JobPlacements`].
pub type Combination = (Vec<String>, JobPlacements);

/// One violation of `jobs.partition`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{rule}: {path}: {message} (hint: {hint})")]
pub struct PartitionFinding {
    /// Always [`RULE`].
    pub rule: &'static str,
    /// The spec path the finding is about, e.g. `scheduling.pools.ingest.jobs[2]`.
    pub path: String,
    /// What is wrong: lowercase, no trailing period, names in backticks.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

impl PartitionFinding {
    fn new(path: String, message: String, hint: String) -> Self {
        Self {
            rule: RULE,
            path,
            message,
            hint,
        }
    }
}

fn job_path(index: usize) -> String {
    format!("scheduling.jobs[{index}]")
}

fn pool_path(pool: &str) -> String {
    format!("scheduling.pools.{pool}")
}

fn pool_job_path(pool: &str, index: usize) -> String {
    format!("scheduling.pools.{pool}.jobs[{index}]")
}

fn pool_allowed_path(pool: &str, index: usize) -> String {
    format!("scheduling.pools.{pool}.allowed[{index}]")
}

/// Formats names as "`a`", "`a` and `b`", "`a`, `b` and `c`", capped at [`MAX_LISTED`].
fn list_names<S: AsRef<str>>(names: &[S]) -> String {
    let shown: Vec<String> = names
        .iter()
        .take(MAX_LISTED)
        .map(|n| format!("`{}`", n.as_ref()))
        .collect();
    let rest = names.len().saturating_sub(MAX_LISTED);
    match (shown.as_slice(), rest) {
        ([], _) => String::from("no jobs"),
        ([one], 0) => one.clone(),
        (many, 0) => {
            let (last, init) = many
                .split_last()
                .map_or((String::new(), &[][..]), |(l, i)| (l.clone(), i));
            format!("{} and {last}", init.join(", "))
        }
        (many, rest) => format!("{} and {rest} more", many.join(", ")),
    }
}

/// Levenshtein distance over characters, ignoring ASCII and Unicode case.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().flat_map(char::to_lowercase).collect();
    let b: Vec<char> = b.chars().flat_map(char::to_lowercase).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != cb);
            cur[j + 1] = substitute.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The closest candidate within a third of the name's length (at least 2 edits), if any.
///
/// Runs only for names that are already known to be wrong, so it stays off the linear
/// path of a valid registry.
fn did_you_mean<'a>(
    unknown: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let len = unknown.chars().count();
    let limit = (len / 3).max(2);
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        if candidate.chars().count().abs_diff(len) > limit {
            continue;
        }
        let distance = edit_distance(unknown, candidate);
        if distance <= limit && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, name)| name)
}

fn unknown_job_hint(unknown: &str, jobs: &[ScheduledJob], otherwise: &str) -> String {
    match did_you_mean(unknown, jobs.iter().map(|j| j.name.as_str())) {
        Some(name) => format!("did you mean `{name}`; otherwise {otherwise}"),
        None => otherwise.to_owned(),
    }
}

/// Checks the registry's structure, in time linear in its total size.
///
/// Reports duplicate job or pool names, unlocked jobs without a reason, pools naming an
/// unknown job (with a "did you mean"), a job listed in two pools or twice in one pool, a
/// pool holding a job outside its `allowed` list, and an `allowed` list naming an unknown
/// job. Every problem is reported; nothing stops at the first.
pub fn check_registry(jobs: &[ScheduledJob], pools: &[Pool]) -> Vec<PartitionFinding> {
    let mut findings = Vec::new();

    let mut job_index: HashMap<&str, usize> = HashMap::with_capacity(jobs.len());
    for (i, job) in jobs.iter().enumerate() {
        match job_index.entry(job.name.as_str()) {
            Entry::Occupied(first) => findings.push(PartitionFinding::new(
                job_path(i),
                format!(
                    "job `{}` is defined twice (first at `{}`)",
                    job.name,
                    job_path(*first.get())
                ),
                String::from("give every scheduled job a unique name, or remove the duplicate"),
            )),
            Entry::Vacant(slot) => {
                slot.insert(i);
            }
        }
        let has_reason = job
            .unlocked_reason
            .as_deref()
            .is_some_and(|r| !r.trim().is_empty());
        if !job.locked && !has_reason {
            findings.push(PartitionFinding::new(
                format!("{}.unlockedReason", job_path(i)),
                format!(
                    "job `{}` is unlocked but has no reason: it runs in every replica of its workload",
                    job.name
                ),
                String::from(
                    "take the advisory lock (`locked: true`), or say why every replica must run it in `unlockedReason`",
                ),
            ));
        }
    }

    let mut pool_seen: HashSet<&str> = HashSet::with_capacity(pools.len());
    // job name -> (pool name, index in that pool's `jobs`) of its first owner
    let mut owner: HashMap<&str, (&str, usize)> = HashMap::new();
    for pool in pools {
        if !pool_seen.insert(pool.name.as_str()) {
            findings.push(PartitionFinding::new(
                pool_path(&pool.name),
                format!("pool `{}` is defined twice", pool.name),
                String::from("give every pool a unique name, or merge the two definitions"),
            ));
        }

        let allowed: Option<HashSet<&str>> = pool
            .allowed
            .as_ref()
            .map(|list| list.iter().map(String::as_str).collect());
        if let Some(list) = &pool.allowed {
            for (k, name) in list.iter().enumerate() {
                if !job_index.contains_key(name.as_str()) {
                    findings.push(PartitionFinding::new(
                        pool_allowed_path(&pool.name, k),
                        format!(
                            "the `allowed` list of pool `{}` names unknown job `{name}`",
                            pool.name
                        ),
                        unknown_job_hint(
                            name,
                            jobs,
                            "remove it from the list or add the job to `scheduling.jobs`",
                        ),
                    ));
                }
            }
        }

        for (k, name) in pool.jobs.iter().enumerate() {
            if !job_index.contains_key(name.as_str()) {
                findings.push(PartitionFinding::new(
                    pool_job_path(&pool.name, k),
                    format!("pool `{}` names unknown job `{name}`", pool.name),
                    unknown_job_hint(
                        name,
                        jobs,
                        "remove it from the pool or add the job to `scheduling.jobs`",
                    ),
                ));
                continue;
            }
            if let (Some(set), Some(list)) = (&allowed, &pool.allowed) {
                if !set.contains(name.as_str()) {
                    findings.push(PartitionFinding::new(
                        pool_job_path(&pool.name, k),
                        format!(
                            "pool `{}` may hold only {}, not `{name}`",
                            pool.name,
                            list_names(list)
                        ),
                        format!(
                            "remove `{name}` from pool `{}`; the `jobs` workload runs it",
                            pool.name
                        ),
                    ));
                }
            }
            match owner.entry(name.as_str()) {
                Entry::Vacant(slot) => {
                    slot.insert((pool.name.as_str(), k));
                }
                Entry::Occupied(first) => {
                    let (first_pool, first_k) = *first.get();
                    let (message, hint) = if first_pool == pool.name {
                        (
                            format!(
                                "job `{name}` is listed twice in pool `{}` (first at `{}`)",
                                pool.name,
                                pool_job_path(first_pool, first_k)
                            ),
                            String::from("remove the duplicate entry"),
                        )
                    } else {
                        (
                            format!(
                                "job `{name}` is in pools `{first_pool}` and `{}`: a job belongs to at most one pool",
                                pool.name
                            ),
                            format!(
                                "keep `{name}` in one pool: remove it from pool `{}` or from pool `{first_pool}`",
                                pool.name
                            ),
                        )
                    };
                    findings.push(PartitionFinding::new(
                        pool_job_path(&pool.name, k),
                        message,
                        hint,
                    ));
                }
            }
        }
    }
    findings
}

/// Where `job` runs for `topology`, given the pool that owns it (if any).
///
/// Returns `None` when the job runs in no workload: no enabled owning pool, no `jobs`
/// workload, and the api is disabled or the job is `apiExcluded`.
pub fn placement(
    job: &ScheduledJob,
    owner: Option<&str>,
    topology: &Topology,
) -> Option<Placement> {
    if let Some(pool) = owner {
        if topology.enabled_pools.iter().any(|p| p == pool) {
            return Some(Placement::Pool(pool.to_owned()));
        }
    }
    if topology.jobs_workload_enabled {
        Some(Placement::Jobs)
    } else if topology.api_enabled && !job.api_excluded {
        Some(Placement::Api)
    } else {
        None
    }
}

/// One owning pool of a job: the pool's name and the job's index in that pool's `jobs`.
struct Owner<'a> {
    group: usize,
    pool: &'a str,
    index: usize,
}

/// Distinct owning pools (by name) of every job name, built in linear time.
fn owners_by_job(pools: &[Pool]) -> HashMap<&str, Vec<Owner<'_>>> {
    // Group pool entries by name so a job listed twice under one name counts once.
    let mut group_of: HashMap<&str, usize> = HashMap::with_capacity(pools.len());
    let mut groups: Vec<Vec<&Pool>> = Vec::new();
    for pool in pools {
        let next = groups.len();
        let g = *group_of.entry(pool.name.as_str()).or_insert(next);
        if g == next {
            groups.push(Vec::new());
        }
        groups[g].push(pool);
    }
    let mut owners: HashMap<&str, Vec<Owner<'_>>> = HashMap::new();
    for (g, group) in groups.iter().enumerate() {
        for pool in group {
            for (index, name) in pool.jobs.iter().enumerate() {
                let list = owners.entry(name.as_str()).or_default();
                // Groups are visited in order, so a repeat within this group is the last.
                if list.last().is_none_or(|o| o.group != g) {
                    list.push(Owner {
                        group: g,
                        pool: pool.name.as_str(),
                        index,
                    });
                }
            }
        }
    }
    owners
}

/// Proves that, for every combination of enabled pools, every job runs in exactly one
/// workload; returns a finding for each way a job can break that.
///
/// The argument is by ownership, in time linear in jobs plus pool entries. A job with
/// owning pools `O` runs, for enabled pools `S`, in `|O ∩ S|` pool workloads plus one
/// fallback workload when `O ∩ S` is empty and a fallback exists. The fallback exists iff
/// the `jobs` workload is enabled, or the api is enabled and the job is not `apiExcluded`;
/// it does not depend on `S`. So the job runs exactly once in every combination iff
/// `|O| <= 1` (otherwise enabling two owners runs it twice) and the fallback exists
/// (otherwise disabling every owner runs it nowhere).
///
/// A pool naming an unknown job is not reported here (see [`check_registry`]); a job in
/// two pools is reported here as the job that runs twice when both are enabled.
pub fn prove_partition(
    jobs: &[ScheduledJob],
    pools: &[Pool],
    api_enabled: bool,
    jobs_workload_enabled: bool,
) -> Vec<PartitionFinding> {
    let owners = owners_by_job(pools);
    let mut findings = Vec::new();
    for (i, job) in jobs.iter().enumerate() {
        let own: &[Owner<'_>] = owners.get(job.name.as_str()).map_or(&[], Vec::as_slice);
        let names: Vec<&str> = own.iter().map(|o| o.pool).collect();

        if let [first, second, ..] = own {
            let message = if own.len() == 2 {
                format!(
                    "job `{}` runs twice when pools `{}` and `{}` are both enabled",
                    job.name, first.pool, second.pool
                )
            } else {
                format!(
                    "job `{}` runs in {} workloads when pools {} are all enabled",
                    job.name,
                    own.len(),
                    list_names(&names)
                )
            };
            findings.push(PartitionFinding::new(
                pool_job_path(second.pool, second.index),
                message,
                format!(
                    "a job belongs to at most one pool: keep `{}` in one of pools {}",
                    job.name,
                    list_names(&names)
                ),
            ));
        }

        let fallback = jobs_workload_enabled || (api_enabled && !job.api_excluded);
        if !fallback {
            let api = if api_enabled {
                "the api never runs it (`apiExcluded`)"
            } else {
                "the api is disabled"
            };
            let when = match own {
                [] => String::from("for every combination of pools"),
                [one] => format!("when pool `{}` is disabled", one.pool),
                _ => format!("when pools {} are disabled", list_names(&names)),
            };
            let alternative = if api_enabled {
                ", or clear `apiExcluded` if the api may run it"
            } else if job.api_excluded {
                ""
            } else {
                ", or enable the api"
            };
            findings.push(PartitionFinding::new(
                job_path(i),
                format!(
                    "job `{}` runs in no workload {when} and there is no jobs workload: {api}",
                    job.name
                ),
                format!("enable the `jobs` workload so every job has a fallback{alternative}"),
            ));
        }
    }
    findings
}

/// Brute force over all `2^n` subsets of the distinct pool names: for each subset (the
/// enabled pools, in pool order), each job with the workloads it runs in.
///
/// Computed from run-sets, independently of [`placement`]: the `jobs` workload runs every
/// job not owned by an enabled pool; a pool workload runs the jobs it lists; when there is
/// no `jobs` workload, the api runs every job that is neither `apiExcluded` nor owned by
/// an enabled pool. A job's list holds every workload whose run-set contains it, so an
/// empty list means "nowhere" and two entries mean "twice". Exponential: meant for tests.
pub fn enumerate_placements(
    jobs: &[ScheduledJob],
    pools: &[Pool],
    api_enabled: bool,
    jobs_workload_enabled: bool,
) -> Vec<Combination> {
    let mut names: Vec<&str> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for pool in pools {
        if seen.insert(pool.name.as_str()) {
            names.push(pool.name.as_str());
        }
    }

    let mut result = Vec::new();
    let mut enabled = vec![false; names.len()];
    loop {
        let enabled_names: Vec<&str> = names
            .iter()
            .zip(&enabled)
            .filter_map(|(name, on)| on.then_some(*name))
            .collect();
        let run_sets: Vec<(&str, HashSet<&str>)> = enabled_names
            .iter()
            .map(|&name| {
                let set = pools
                    .iter()
                    .filter(|p| p.name == name)
                    .flat_map(|p| p.jobs.iter().map(String::as_str))
                    .collect();
                (name, set)
            })
            .collect();
        let offloaded: HashSet<&str> = run_sets
            .iter()
            .flat_map(|(_, set)| set.iter().copied())
            .collect();

        let per_job = jobs
            .iter()
            .map(|job| {
                let name = job.name.as_str();
                let mut places = Vec::new();
                if jobs_workload_enabled && !offloaded.contains(name) {
                    places.push(Placement::Jobs);
                }
                for (pool, set) in &run_sets {
                    if set.contains(name) {
                        places.push(Placement::Pool((*pool).to_owned()));
                    }
                }
                if api_enabled
                    && !jobs_workload_enabled
                    && !job.api_excluded
                    && !offloaded.contains(name)
                {
                    places.push(Placement::Api);
                }
                (job.name.clone(), places)
            })
            .collect();
        result.push((
            enabled_names.iter().map(|n| (*n).to_owned()).collect(),
            per_job,
        ));

        // Binary increment of `enabled`; stop after the all-enabled subset.
        let mut carried_out = true;
        for bit in enabled.iter_mut() {
            if *bit {
                *bit = false;
            } else {
                *bit = true;
                carried_out = false;
                break;
            }
        }
        if carried_out {
            break;
        }
    }
    result
}

/// The pools the `jobs` workload is told to skip: the enabled pools, sorted and deduplicated.
pub fn offloaded_pools(enabled_pools: &[String]) -> Vec<String> {
    let mut pools = enabled_pools.to_vec();
    pools.sort();
    pools.dedup();
    pools
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locked(name: &str) -> ScheduledJob {
        ScheduledJob {
            name: name.to_owned(),
            locked: true,
            unlocked_reason: None,
            api_excluded: false,
        }
    }

    fn unlocked(name: &str, reason: &str) -> ScheduledJob {
        ScheduledJob {
            name: name.to_owned(),
            locked: false,
            unlocked_reason: Some(reason.to_owned()),
            api_excluded: false,
        }
    }

    fn excluded(name: &str) -> ScheduledJob {
        ScheduledJob {
            api_excluded: true,
            ..locked(name)
        }
    }

    fn pool(name: &str, jobs: &[&str]) -> Pool {
        Pool {
            name: name.to_owned(),
            jobs: jobs.iter().map(|j| (*j).to_owned()).collect(),
            allowed: None,
        }
    }

    fn strings(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    const POLLERS: [&str; 2] = ["KnowledgeIngestionPoller", "KnowledgeUrlPoller"];

    /// The agent platform of seed 000: four pools, the ingest pool fixed to the two
    /// knowledge pollers, heavy re-embedding kept off the api, three per-JVM jobs.
    fn seed_jobs() -> Vec<ScheduledJob> {
        vec![
            locked("KnowledgeIngestionPoller"),
            locked("KnowledgeUrlPoller"),
            locked("WebhookDeliveryPoller"),
            locked("WebhookRetrySweep"),
            locked("IntakeEmailPoller"),
            locked("IntakeFormSweep"),
            locked("UsageMeteringSweep"),
            locked("InvoiceExportJob"),
            locked("BudgetResetJob"),
            excluded("KnowledgeReembedJobRunner"),
            locked("AgentJobSweeper"),
            locked("WorkflowTimeoutSweep"),
            locked("A2aTaskExpirySweep"),
            locked("AuditRetentionSweep"),
            locked("StudioApprovalExpirySweep"),
            locked("TenantQuotaResetJob"),
            locked("ProviderHealthProbe"),
            locked("McpRegistryRefresh"),
            locked("SessionCleanupJob"),
            unlocked("BrowserSessionReaper", "browser sessions live in this JVM"),
            unlocked("McpHeartbeat", "heartbeat of this JVM's MCP connections"),
            unlocked("LandingEventBufferFlush", "flushes this JVM's event buffer"),
        ]
    }

    fn seed_pools() -> Vec<Pool> {
        vec![
            Pool {
                allowed: Some(strings(&POLLERS)),
                ..pool("ingest", &POLLERS)
            },
            pool("webhooks", &["WebhookDeliveryPoller", "WebhookRetrySweep"]),
            pool("intake", &["IntakeEmailPoller", "IntakeFormSweep"]),
            pool(
                "billing",
                &["UsageMeteringSweep", "InvoiceExportJob", "BudgetResetJob"],
            ),
        ]
    }

    fn owner_of<'a>(job: &str, pools: &'a [Pool]) -> Option<&'a str> {
        pools
            .iter()
            .find(|p| p.jobs.iter().any(|j| j == job))
            .map(|p| p.name.as_str())
    }

    fn exactly_once_everywhere(table: &[Combination]) -> bool {
        table
            .iter()
            .all(|(_, per_job)| per_job.iter().all(|(_, places)| places.len() == 1))
    }

    fn assert_style(findings: &[PartitionFinding]) {
        for f in findings {
            assert_eq!(f.rule, RULE);
            assert!(f.path.starts_with("scheduling."), "{f}");
            for text in [&f.message, &f.hint] {
                assert!(!text.is_empty(), "{f}");
                assert!(!text.ends_with('.'), "trailing period: {f}");
                let first = text.chars().next().unwrap_or('x');
                assert!(!first.is_uppercase(), "capitalized: {f}");
            }
            assert!(f.message.contains('`'), "no backticked name: {f}");
        }
    }

    #[test]
    fn seed_registry_is_clean() {
        let findings = check_registry(&seed_jobs(), &seed_pools());
        assert!(findings.is_empty(), "{findings:#?}");
    }

    #[test]
    fn seed_sixteen_combinations_every_job_exactly_once() {
        let jobs = seed_jobs();
        let pools = seed_pools();
        let table = enumerate_placements(&jobs, &pools, true, true);
        assert_eq!(table.len(), 16);
        let subsets: HashSet<Vec<String>> = table.iter().map(|(s, _)| s.clone()).collect();
        assert_eq!(subsets.len(), 16, "every subset once");
        for (enabled, per_job) in &table {
            assert_eq!(per_job.len(), jobs.len());
            for (name, places) in per_job {
                assert_eq!(places.len(), 1, "`{name}` with {enabled:?}: {places:?}");
            }
        }
        assert!(prove_partition(&jobs, &pools, true, true).is_empty());
        // also without the api: the jobs workload is the fallback for everything
        assert!(exactly_once_everywhere(&enumerate_placements(
            &jobs, &pools, false, true
        )));
        assert!(prove_partition(&jobs, &pools, false, true).is_empty());
    }

    #[test]
    fn seed_enumeration_matches_placement() {
        let jobs = seed_jobs();
        let pools = seed_pools();
        for (jobs_on, api_on) in [(true, true), (false, true), (true, false), (false, false)] {
            for (enabled, per_job) in enumerate_placements(&jobs, &pools, api_on, jobs_on) {
                let topology = Topology {
                    jobs_workload_enabled: jobs_on,
                    api_enabled: api_on,
                    enabled_pools: enabled.clone(),
                };
                for (job, (name, places)) in jobs.iter().zip(&per_job) {
                    assert_eq!(&job.name, name);
                    let expected = placement(job, owner_of(name, &pools), &topology);
                    assert_eq!(places.clone(), expected.into_iter().collect::<Vec<_>>());
                }
            }
        }
    }

    #[test]
    fn seed_ingest_pool_takes_the_pollers_off_the_jobs_workload() {
        let jobs = seed_jobs();
        let pools = seed_pools();
        let topology = Topology {
            jobs_workload_enabled: true,
            api_enabled: true,
            enabled_pools: strings(&["ingest"]),
        };
        let poller = &jobs[0];
        assert_eq!(
            placement(poller, Some("ingest"), &topology),
            Some(Placement::Pool("ingest".into()))
        );
        let webhook = &jobs[2];
        assert_eq!(
            placement(webhook, owner_of(&webhook.name, &pools), &topology),
            Some(Placement::Jobs)
        );
    }

    #[test]
    fn seed_without_jobs_workload_reembed_runs_nowhere() {
        let jobs = seed_jobs();
        let pools = seed_pools();
        let findings = prove_partition(&jobs, &pools, true, false);
        assert_style(&findings);
        assert_eq!(findings.len(), 1, "{findings:#?}");
        assert_eq!(findings[0].path, "scheduling.jobs[9]");
        assert!(findings[0].message.contains("`KnowledgeReembedJobRunner`"));
        assert!(findings[0].message.contains("`apiExcluded`"));
        assert!(findings[0].hint.contains("enable the `jobs` workload"));

        let table = enumerate_placements(&jobs, &pools, true, false);
        assert_eq!(table.len(), 16);
        for (_, per_job) in &table {
            for (name, places) in per_job {
                if name == "KnowledgeReembedJobRunner" {
                    assert!(places.is_empty());
                } else {
                    assert_eq!(places.len(), 1, "`{name}`: {places:?}");
                }
            }
        }
    }

    #[test]
    fn api_excluded_job_without_jobs_workload_is_a_finding() {
        let jobs = vec![excluded("Reembed"), locked("Sweep")];
        let findings = prove_partition(&jobs, &[], true, false);
        assert_style(&findings);
        assert_eq!(findings.len(), 1);
        assert_eq!(
            findings[0].message,
            "job `Reembed` runs in no workload for every combination of pools and there is no jobs workload: the api never runs it (`apiExcluded`)"
        );
        let topology = Topology {
            jobs_workload_enabled: false,
            api_enabled: true,
            enabled_pools: vec![],
        };
        assert_eq!(placement(&jobs[0], None, &topology), None);
        assert_eq!(placement(&jobs[1], None, &topology), Some(Placement::Api));
    }

    #[test]
    fn disabled_pool_without_fallback_names_the_combination() {
        let jobs = vec![locked("A"), locked("B")];
        let pools = vec![pool("x", &["A"])];
        let findings = prove_partition(&jobs, &pools, false, false);
        assert_style(&findings);
        assert_eq!(findings.len(), 2);
        assert_eq!(
            findings[0].message,
            "job `A` runs in no workload when pool `x` is disabled and there is no jobs workload: the api is disabled"
        );
        assert!(findings[0].hint.contains("enable the api"));
        // with the pool enabled `A` is fine, with it disabled it runs nowhere
        let table = enumerate_placements(&jobs, &pools, false, false);
        assert_eq!(table[0].1[0].1, vec![]);
        assert_eq!(table[1].1[0].1, vec![Placement::Pool("x".into())]);
    }

    #[test]
    fn placement_rules() {
        let job = locked("J");
        let mut topology = Topology {
            jobs_workload_enabled: true,
            api_enabled: true,
            enabled_pools: strings(&["p"]),
        };
        assert_eq!(
            placement(&job, Some("p"), &topology),
            Some(Placement::Pool("p".into()))
        );
        assert_eq!(placement(&job, Some("q"), &topology), Some(Placement::Jobs));
        assert_eq!(placement(&job, None, &topology), Some(Placement::Jobs));
        topology.jobs_workload_enabled = false;
        assert_eq!(placement(&job, Some("q"), &topology), Some(Placement::Api));
        assert_eq!(placement(&excluded("E"), None, &topology), None);
        topology.api_enabled = false;
        assert_eq!(placement(&job, None, &topology), None);
        assert_eq!(
            placement(&job, Some("p"), &topology),
            Some(Placement::Pool("p".into()))
        );
    }

    #[test]
    fn ingest_pool_holding_a_third_job_is_a_finding() {
        let jobs = seed_jobs();
        let mut pools = seed_pools();
        pools[0].jobs.push("AgentJobSweeper".into());
        let findings = check_registry(&jobs, &pools);
        assert_style(&findings);
        assert_eq!(findings.len(), 1, "{findings:#?}");
        assert_eq!(findings[0].path, "scheduling.pools.ingest.jobs[2]");
        assert_eq!(
            findings[0].message,
            "pool `ingest` may hold only `KnowledgeIngestionPoller` and `KnowledgeUrlPoller`, not `AgentJobSweeper`"
        );
    }

    #[test]
    fn unknown_job_in_pool_suggests_the_closest_name() {
        let jobs = seed_jobs();
        let mut pools = seed_pools();
        pools[1].jobs.push("WebhookRetrySwep".into());
        pools[2].jobs.push("CompletelyDifferent".into());
        let findings = check_registry(&jobs, &pools);
        assert_style(&findings);
        assert_eq!(findings.len(), 2, "{findings:#?}");
        assert_eq!(findings[0].path, "scheduling.pools.webhooks.jobs[2]");
        assert_eq!(
            findings[0].message,
            "pool `webhooks` names unknown job `WebhookRetrySwep`"
        );
        assert!(findings[0]
            .hint
            .starts_with("did you mean `WebhookRetrySweep`"));
        assert_eq!(findings[1].path, "scheduling.pools.intake.jobs[2]");
        assert!(!findings[1].hint.contains("did you mean"));
        // unknown names are the registry's business, not the proof's
        assert!(prove_partition(&jobs, &pools, true, true).is_empty());
    }

    #[test]
    fn job_in_two_pools_is_reported_and_runs_twice() {
        let jobs = vec![locked("A"), locked("B")];
        let pools = vec![pool("x", &["A"]), pool("y", &["B", "A"])];
        let registry = check_registry(&jobs, &pools);
        assert_style(&registry);
        assert_eq!(registry.len(), 1);
        assert_eq!(registry[0].path, "scheduling.pools.y.jobs[1]");
        assert!(registry[0].message.contains("pools `x` and `y`"));

        let proof = prove_partition(&jobs, &pools, true, true);
        assert_style(&proof);
        assert_eq!(proof.len(), 1);
        assert_eq!(
            proof[0].message,
            "job `A` runs twice when pools `x` and `y` are both enabled"
        );
        assert_eq!(proof[0].path, "scheduling.pools.y.jobs[1]");

        let table = enumerate_placements(&jobs, &pools, true, true);
        let both = table
            .iter()
            .find(|(s, _)| s.len() == 2)
            .map(|(_, per_job)| per_job[0].1.clone());
        assert_eq!(
            both,
            Some(vec![
                Placement::Pool("x".into()),
                Placement::Pool("y".into())
            ])
        );
    }

    #[test]
    fn job_in_three_pools_counts_the_workloads() {
        let jobs = vec![locked("A")];
        let pools = vec![pool("x", &["A"]), pool("y", &["A"]), pool("z", &["A"])];
        let proof = prove_partition(&jobs, &pools, true, true);
        assert_style(&proof);
        assert_eq!(
            proof[0].message,
            "job `A` runs in 3 workloads when pools `x`, `y` and `z` are all enabled"
        );
        assert_eq!(check_registry(&jobs, &pools).len(), 2);
    }

    #[test]
    fn job_listed_twice_in_one_pool() {
        let jobs = vec![locked("A")];
        let pools = vec![pool("x", &["A", "A"])];
        let findings = check_registry(&jobs, &pools);
        assert_style(&findings);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].path, "scheduling.pools.x.jobs[1]");
        assert!(findings[0].message.contains("listed twice in pool `x`"));
        // one workload, so no partition problem
        assert!(prove_partition(&jobs, &pools, true, true).is_empty());
        assert!(exactly_once_everywhere(&enumerate_placements(
            &jobs, &pools, true, true
        )));
    }

    #[test]
    fn allowed_list_naming_an_unknown_job() {
        let jobs = seed_jobs();
        let mut pools = seed_pools();
        pools[0].allowed = Some(strings(&["KnowledgeIngestionPoller", "KnowledgeUrlPoler"]));
        let findings = check_registry(&jobs, &pools);
        assert_style(&findings);
        // the unknown allowed name, and the real poller now outside the list
        assert_eq!(findings.len(), 2, "{findings:#?}");
        assert_eq!(findings[0].path, "scheduling.pools.ingest.allowed[1]");
        assert!(findings[0]
            .message
            .contains("unknown job `KnowledgeUrlPoler`"));
        assert!(findings[0]
            .hint
            .starts_with("did you mean `KnowledgeUrlPoller`"));
        assert_eq!(findings[1].path, "scheduling.pools.ingest.jobs[1]");
    }

    #[test]
    fn unlocked_job_needs_a_reason() {
        let jobs = vec![
            ScheduledJob {
                unlocked_reason: None,
                ..unlocked("NoReason", "")
            },
            unlocked("Blank", "  "),
            unlocked("WithReason", "per-JVM cache"),
            locked("Locked"),
        ];
        let findings = check_registry(&jobs, &[]);
        assert_style(&findings);
        let paths: Vec<&str> = findings.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "scheduling.jobs[0].unlockedReason",
                "scheduling.jobs[1].unlockedReason"
            ]
        );
    }

    #[test]
    fn duplicate_job_and_pool_names() {
        let jobs = vec![locked("A"), locked("B"), locked("A")];
        let pools = vec![pool("x", &["A"]), pool("x", &["B"])];
        let findings = check_registry(&jobs, &pools);
        assert_style(&findings);
        assert_eq!(findings.len(), 2, "{findings:#?}");
        assert_eq!(findings[0].path, "scheduling.jobs[2]");
        assert!(findings[0]
            .message
            .contains("first at `scheduling.jobs[0]`"));
        assert_eq!(findings[1].path, "scheduling.pools.x");
        assert_eq!(findings[1].message, "pool `x` is defined twice");
        // a duplicated pool name is one workload: 2 subsets, not 4
        assert_eq!(enumerate_placements(&jobs, &pools, true, true).len(), 2);
    }

    #[test]
    fn offloaded_pools_are_sorted_and_unique() {
        let enabled = strings(&["webhooks", "billing", "ingest", "billing"]);
        assert_eq!(
            offloaded_pools(&enabled),
            strings(&["billing", "ingest", "webhooks"])
        );
        assert!(offloaded_pools(&[]).is_empty());
    }

    #[test]
    fn edit_distance_and_suggestions() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("Poller", "poller"), 0);
        let names = ["KnowledgeUrlPoller", "KnowledgeIngestionPoller"];
        assert_eq!(
            did_you_mean("knowledgeurlpoler", names),
            Some("KnowledgeUrlPoller")
        );
        assert_eq!(did_you_mean("Billing", names), None);
        assert_eq!(did_you_mean("ab", ["xy", "ax"]), Some("ax"));
        // exactly at the limit (2 edits for a 7-character name) still suggests
        assert_eq!(did_you_mean("Sweeper", ["Sweep"]), Some("Sweep"));
        assert_eq!(did_you_mean("Sweeper", ["Swe"]), None);
    }

    #[test]
    fn list_names_formats() {
        assert_eq!(list_names::<&str>(&[]), "no jobs");
        assert_eq!(list_names(&["a"]), "`a`");
        assert_eq!(list_names(&["a", "b", "c"]), "`a`, `b` and `c`");
        assert_eq!(
            list_names(&["a", "b", "c", "d", "e", "f", "g"]),
            "`a`, `b`, `c`, `d`, `e` and 2 more"
        );
    }

    #[test]
    fn finding_display() {
        let f = PartitionFinding::new("scheduling.jobs[0]".into(), "m".into(), "h".into());
        assert_eq!(
            f.to_string(),
            "jobs.partition: scheduling.jobs[0]: m (hint: h)"
        );
        assert_eq!(Placement::Pool("x".into()).to_string(), "pool `x`");
    }

    /// SplitMix64: small, seeded, good enough to shuffle test registries.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: usize) -> usize {
            // n is tiny, the modulo bias is irrelevant here
            (self.next() % n as u64) as usize
        }

        fn one_in(&mut self, n: usize) -> bool {
            self.below(n) == 0
        }
    }

    #[test]
    fn proof_agrees_with_enumeration_on_random_registries() {
        let mut rng = Rng(0x5EED_0000_0000_0014);
        let (mut clean, mut broken) = (0, 0);
        for case in 0..300 {
            let pool_count = rng.below(6);
            let job_count = rng.below(8);
            let mut pools: Vec<Pool> = (0..pool_count)
                .map(|p| pool(&format!("p{p}"), &[]))
                .collect();
            let mut jobs = Vec::new();
            for j in 0..job_count {
                let name = format!("j{j}");
                let mut job = locked(&name);
                job.api_excluded = rng.one_in(3);
                let wanted = rng.below(3).min(pool_count);
                let mut chosen: Vec<usize> = Vec::new();
                while chosen.len() < wanted {
                    let p = rng.below(pool_count);
                    if !chosen.contains(&p) {
                        chosen.push(p);
                    }
                }
                for p in chosen {
                    pools[p].jobs.push(name.clone());
                }
                jobs.push(job);
            }
            if pool_count > 0 && rng.one_in(5) {
                let p = rng.below(pool_count);
                pools[p].jobs.push("ghost".into());
            }
            let api_on = !rng.one_in(4);
            let jobs_on = rng.one_in(2);

            let proof = prove_partition(&jobs, &pools, api_on, jobs_on);
            assert_style(&proof);
            let table = enumerate_placements(&jobs, &pools, api_on, jobs_on);
            assert_eq!(table.len(), 1 << pool_count);
            let ok = exactly_once_everywhere(&table);
            assert_eq!(
                proof.is_empty(),
                ok,
                "case {case}: api={api_on} jobs={jobs_on} {jobs:?} {pools:?} {proof:#?}"
            );
            if ok {
                clean += 1;
            } else {
                broken += 1;
            }

            for (i, job) in jobs.iter().enumerate() {
                // per job: the proof flags it iff some combination is not exactly once
                let job_ok = table.iter().all(|(_, per_job)| per_job[i].1.len() == 1);
                let job_proof = prove_partition(&jobs[i..=i], &pools, api_on, jobs_on);
                assert_eq!(
                    job_proof.is_empty(),
                    job_ok,
                    "case {case} job `{}`",
                    job.name
                );

                // single-owner jobs: placement agrees with the enumeration
                let owners: Vec<&str> = pools
                    .iter()
                    .filter(|p| p.jobs.contains(&job.name))
                    .map(|p| p.name.as_str())
                    .collect();
                if owners.len() <= 1 {
                    for (enabled, per_job) in &table {
                        let topology = Topology {
                            jobs_workload_enabled: jobs_on,
                            api_enabled: api_on,
                            enabled_pools: enabled.clone(),
                        };
                        let expected: Vec<Placement> =
                            placement(job, owners.first().copied(), &topology)
                                .into_iter()
                                .collect();
                        assert_eq!(per_job[i].1, expected, "case {case} job `{}`", job.name);
                    }
                }
            }
        }
        assert!(clean > 50 && broken > 50, "clean {clean}, broken {broken}");
    }
}
