//! Dependency connection peaks: the `capacity.postgres` and `capacity.redis` guards.
//!
//! The caller resolves values, feature flags and enabled workloads into plain numbers
//! ([`WorkloadLoad`], [`Budgets`]); this module only does the arithmetic described by
//! [`FORMULA`], reports it ([`compute_capacity`], [`format_table`], [`format_markdown`])
//! and explains every exceeded budget ([`capacity_findings`]).
//!
//! All arithmetic saturates instead of overflowing, so absurd inputs produce a huge peak
//! (and a finding) rather than a panic.

pub mod allocations;
pub mod breakdown;
pub mod fit;
pub mod formula;
pub mod svg;

use serde::{Deserialize, Serialize};
use std::fmt;

/// The capacity formula, in one paragraph a platform engineer can check by hand.
///
/// Used verbatim in the chart README, in `--help` and under capacity findings.
pub const FORMULA: &str = "peak processes of a workload = (max pods + surge pods + max pods x \
retiring generations) x processes per pod, where max pods is the autoscaler's `maxReplicas` when \
an HPA or KEDA ScaledObject is on and `replicas` otherwise (0 when the workload is disabled), \
surge pods is the rendered `maxSurge` (a percentage of max pods rounded up, as Kubernetes does), \
and the `migrate` hook Job counts its own pods with no surge and no retiring generation because \
its connections are open while the old release still runs; the PostgreSQL peak = sum over \
workloads of peak processes x the sizes of that workload's enabled allocations + the declared \
reservations (operators, migrations, other clients), and it must not exceed `max_connections` \
minus the declared reserve; the Redis peak of each server = sum over workloads of peak processes \
x the client allocations on that server + that server's reserved clients, checked against the \
server's own `maxclients`, and the Redis total = sum over workloads of peak processes x all \
Redis allocations + the reserved clients, checked against the declared total; a peak equal to \
its budget passes, one connection more fails";

/// The workload class of the schema migration hook Job.
const MIGRATE: &str = "migrate";

/// `maxSurge` of a rolling update, as rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Surge {
    /// An absolute number of extra pods.
    Pods(u64),
    /// A percentage of the desired pods, rounded up as Kubernetes does.
    Percent(u64),
}

impl Surge {
    /// Extra pods a rollout may start on top of `max_pods` (0 when `max_pods` is 0).
    #[must_use]
    pub fn pods(self, max_pods: u64) -> u64 {
        if max_pods == 0 {
            return 0;
        }
        match self {
            Surge::Pods(n) => n,
            Surge::Percent(p) => max_pods.saturating_mul(p).div_ceil(100),
        }
    }
}

/// One Redis client allocation opened by every process of a workload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedisAllocation {
    /// Allocation name (`critical`, `cache`, `bulk`, ...).
    pub name: String,
    /// Redis server the allocation connects to.
    pub server: String,
    /// Clients per process.
    pub clients: u64,
}

/// The resolved load one workload puts on the dependencies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkloadLoad {
    /// Workload name as it appears in the spec.
    pub name: String,
    /// Workload class: `api`, `jobs`, `pool`, `worker` or `migrate`.
    pub class: String,
    /// Whether the workload is rendered at all.
    pub enabled: bool,
    /// Fixed replicas (ignored when `autoscaler_max` is set); for `migrate`, the Job's pods.
    pub replicas: u64,
    /// HPA or KEDA `maxReplicas` when an autoscaler is on (ignored for `migrate`).
    pub autoscaler_max: Option<u64>,
    /// Rendered `maxSurge` (ignored for `migrate`).
    pub surge: Surge,
    /// Server processes per pod (`WEB_CONCURRENCY`, `UVICORN_WORKERS`, ...).
    pub processes_per_pod: u64,
    /// Enabled PostgreSQL allocations: name and effective connections per process.
    pub postgres: Vec<(String, u64)>,
    /// Redis allocations opened by every process.
    pub redis: Vec<RedisAllocation>,
}

/// The declared limit of one Redis server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedisServerBudget {
    /// Server name, matched against [`RedisAllocation::server`].
    pub name: String,
    /// The server's own client limit; `None` leaves this server unchecked.
    pub max_clients: Option<u64>,
    /// Clients reserved on this server, counted in its peak.
    pub reserved_clients: u64,
}

/// The declared dependency budgets.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Budgets {
    /// Old ReplicaSet generations that may still run during a rollout.
    pub retiring_generations: u64,
    /// PostgreSQL `max_connections` declared for the deployment.
    pub postgres_max_connections: u64,
    /// Connections kept free: the budget is `max_connections - reserve`.
    pub postgres_reserve: u64,
    /// Reservations counted in the peak (operators, migrations, other clients).
    pub postgres_reservations: Vec<(String, u64)>,
    /// Declared Redis total, conservatively summing all servers.
    pub redis_max_connections: u64,
    /// Redis clients reserved in the total, counted in the total peak.
    pub redis_reserved_clients: u64,
    /// Each Redis server's own limit; the first entry of a name wins.
    pub redis_servers: Vec<RedisServerBudget>,
}

/// One workload's computed peak.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkloadRow {
    /// Workload name.
    pub name: String,
    /// Workload class.
    pub class: String,
    /// Autoscaler maximum or fixed replicas (the Job's pods for `migrate`, 0 when disabled).
    pub max_pods: u64,
    /// Surge pods during a rollout.
    pub surge_pods: u64,
    /// Retiring pods: max pods x retiring generations.
    pub retiring: u64,
    /// Processes per pod (0 when disabled).
    pub processes_per_pod: u64,
    /// `(max_pods + surge_pods + retiring) x processes_per_pod`.
    pub peak_processes: u64,
    /// Sum of the PostgreSQL allocations of one process.
    pub postgres_per_process: u64,
    /// PostgreSQL connections at peak: `peak_processes x postgres_per_process`.
    pub postgres: u64,
    /// Sum of the Redis allocations of one process, on all servers.
    pub redis_per_process: u64,
    /// Redis clients at peak: `peak_processes x redis_per_process`.
    pub redis: u64,
}

/// A peak compared with its budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Total {
    /// Connections opened by the workloads.
    pub workloads: u64,
    /// Reserved connections or clients, counted in the peak.
    pub reservations: u64,
    /// `workloads + reservations`.
    pub peak: u64,
    /// Declared limit (`None`: not checked).
    pub limit: Option<u64>,
    /// Connections kept free below the limit.
    pub reserve: u64,
    /// `limit - reserve`; the peak must not exceed it.
    pub budget: Option<u64>,
    /// `peak - budget` when the peak exceeds the budget, else 0.
    pub exceeded_by: u64,
}

impl Total {
    fn new(workloads: u64, reservations: u64, limit: Option<u64>, reserve: u64) -> Self {
        let peak = workloads.saturating_add(reservations);
        let budget = limit.map(|l| l.saturating_sub(reserve));
        let exceeded_by = budget.map_or(0, |b| peak.saturating_sub(b));
        Total {
            workloads,
            reservations,
            peak,
            limit,
            reserve,
            budget,
            exceeded_by,
        }
    }

    /// Whether the peak exceeds the budget (a peak equal to the budget passes).
    #[must_use]
    pub fn exceeded(&self) -> bool {
        self.budget.is_some_and(|b| self.peak > b)
    }

    /// Connections left below the budget (`None` when unchecked).
    #[must_use]
    pub fn spare(&self) -> Option<u64> {
        self.budget.map(|b| b.saturating_sub(self.peak))
    }
}

/// Peaks of every workload and every budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CapacityReport {
    /// One row per workload, in input order (disabled workloads show zeros).
    pub workloads: Vec<WorkloadRow>,
    /// PostgreSQL peak against `max_connections - reserve`.
    pub postgres: Total,
    /// Redis total against the declared total.
    pub redis_total: Total,
    /// Each Redis server: declared servers first, then servers only named by allocations.
    pub redis_servers: Vec<(String, Total)>,
}

/// One exceeded budget, explained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CapacityFinding {
    /// `capacity.postgres` or `capacity.redis`.
    pub rule: &'static str,
    /// One line: the peak, the budget and by how much it is exceeded.
    pub message: String,
    /// Lines a reader can check by hand: each workload, reservations, peak, budget.
    pub arithmetic: String,
    /// The knobs that fix it, with the largest fitting `maxReplicas` per autoscaled workload.
    pub hint: String,
}

impl fmt::Display for CapacityFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}\n{}\nhint: {}",
            self.rule, self.message, self.arithmetic, self.hint
        )
    }
}

/// Pod counts and peak processes of one workload for a given max pods.
struct Shape {
    max_pods: u64,
    surge_pods: u64,
    retiring: u64,
    peak_processes: u64,
}

fn is_migrate(load: &WorkloadLoad) -> bool {
    load.class == MIGRATE
}

fn configured_max_pods(load: &WorkloadLoad) -> u64 {
    if !load.enabled {
        0
    } else if is_migrate(load) {
        load.replicas
    } else {
        load.autoscaler_max.unwrap_or(load.replicas)
    }
}

fn shape_with(load: &WorkloadLoad, max_pods: u64, retiring_generations: u64) -> Shape {
    let (surge_pods, retiring) = if is_migrate(load) {
        (0, 0)
    } else {
        (
            load.surge.pods(max_pods),
            max_pods.saturating_mul(retiring_generations),
        )
    };
    let processes_per_pod = if load.enabled {
        load.processes_per_pod
    } else {
        0
    };
    let peak_processes = max_pods
        .saturating_add(surge_pods)
        .saturating_add(retiring)
        .saturating_mul(processes_per_pod);
    Shape {
        max_pods,
        surge_pods,
        retiring,
        peak_processes,
    }
}

fn sum(values: impl IntoIterator<Item = u64>) -> u64 {
    values.into_iter().fold(0, u64::saturating_add)
}

/// Which budget a computation is about.
#[derive(Clone, Copy)]
enum Resource<'a> {
    Postgres,
    RedisTotal,
    RedisServer(&'a str),
}

impl Resource<'_> {
    /// Allocation names and sizes of one process of `load` counted against this budget.
    fn allocations<'l>(&self, load: &'l WorkloadLoad) -> Vec<(&'l str, u64)> {
        match self {
            Resource::Postgres => load
                .postgres
                .iter()
                .map(|(n, c)| (n.as_str(), *c))
                .collect(),
            Resource::RedisTotal => load
                .redis
                .iter()
                .map(|a| (a.name.as_str(), a.clients))
                .collect(),
            Resource::RedisServer(server) => load
                .redis
                .iter()
                .filter(|a| a.server == *server)
                .map(|a| (a.name.as_str(), a.clients))
                .collect(),
        }
    }

    fn per_process(&self, load: &WorkloadLoad) -> u64 {
        sum(self.allocations(load).into_iter().map(|(_, c)| c))
    }

    fn unit(&self) -> &'static str {
        match self {
            Resource::Postgres => "connections",
            Resource::RedisTotal | Resource::RedisServer(_) => "clients",
        }
    }
}

/// Computes every workload's peak processes and the PostgreSQL and Redis peaks.
#[must_use]
pub fn compute_capacity(loads: &[WorkloadLoad], budgets: &Budgets) -> CapacityReport {
    let gens = budgets.retiring_generations;
    let workloads: Vec<WorkloadRow> = loads
        .iter()
        .map(|load| {
            let shape = shape_with(load, configured_max_pods(load), gens);
            let postgres_per_process = Resource::Postgres.per_process(load);
            let redis_per_process = Resource::RedisTotal.per_process(load);
            WorkloadRow {
                name: load.name.clone(),
                class: load.class.clone(),
                max_pods: shape.max_pods,
                surge_pods: shape.surge_pods,
                retiring: shape.retiring,
                processes_per_pod: if load.enabled {
                    load.processes_per_pod
                } else {
                    0
                },
                peak_processes: shape.peak_processes,
                postgres_per_process,
                postgres: shape.peak_processes.saturating_mul(postgres_per_process),
                redis_per_process,
                redis: shape.peak_processes.saturating_mul(redis_per_process),
            }
        })
        .collect();

    let postgres = Total::new(
        sum(workloads.iter().map(|r| r.postgres)),
        sum(budgets.postgres_reservations.iter().map(|(_, c)| *c)),
        Some(budgets.postgres_max_connections),
        budgets.postgres_reserve,
    );
    let redis_total = Total::new(
        sum(workloads.iter().map(|r| r.redis)),
        budgets.redis_reserved_clients,
        Some(budgets.redis_max_connections),
        0,
    );

    let mut server_names: Vec<&str> = Vec::new();
    let declared = budgets.redis_servers.iter().map(|s| s.name.as_str());
    let referenced = loads
        .iter()
        .flat_map(|l| l.redis.iter().map(|a| a.server.as_str()));
    for name in declared.chain(referenced) {
        if !server_names.contains(&name) {
            server_names.push(name);
        }
    }
    let redis_servers = server_names
        .into_iter()
        .map(|name| {
            let resource = Resource::RedisServer(name);
            let used = sum(workloads.iter().zip(loads).map(|(row, load)| {
                row.peak_processes
                    .saturating_mul(resource.per_process(load))
            }));
            let declared = budgets.redis_servers.iter().find(|s| s.name == name);
            let total = Total::new(
                used,
                declared.map_or(0, |s| s.reserved_clients),
                declared.and_then(|s| s.max_clients),
                0,
            );
            (name.to_string(), total)
        })
        .collect();

    CapacityReport {
        workloads,
        postgres,
        redis_total,
        redis_servers,
    }
}

/// Explains every exceeded budget of `report`, which must come from
/// `compute_capacity(loads, budgets)`: PostgreSQL first, then the Redis total, then each
/// Redis server in report order. Empty when everything fits.
#[must_use]
pub fn capacity_findings(
    report: &CapacityReport,
    loads: &[WorkloadLoad],
    budgets: &Budgets,
) -> Vec<CapacityFinding> {
    let mut findings = Vec::new();

    let pg = &report.postgres;
    if pg.exceeded() {
        let budget = pg.budget.unwrap_or(0);
        let limit = pg.limit.unwrap_or(0);
        let reservations = if budgets.postgres_reservations.is_empty() {
            "reservations: none".to_string()
        } else {
            format!(
                "reservations: {} = {}",
                join_terms(
                    budgets
                        .postgres_reservations
                        .iter()
                        .map(|(n, c)| format!("{n} {c}"))
                ),
                pg.reservations
            )
        };
        findings.push(explain(
            "capacity.postgres",
            Resource::Postgres,
            pg,
            report,
            loads,
            budgets,
            Texts {
                message: format!(
                    "peak postgresql connections {} exceed the budget of {budget} \
                     (`max_connections` {limit} - reserve {}): exceeded by {}",
                    pg.peak, pg.reserve, pg.exceeded_by
                ),
                reservations,
                budget: format!(
                    "budget: `max_connections` {limit} - reserve {} = {budget}",
                    pg.reserve
                ),
                raise: format!(
                    "raise the declared postgresql `max_connections` to at least {}",
                    pg.peak.saturating_add(pg.reserve)
                ),
            },
        ));
    }

    let total = &report.redis_total;
    if total.exceeded() {
        let budget = total.budget.unwrap_or(0);
        findings.push(explain(
            "capacity.redis",
            Resource::RedisTotal,
            total,
            report,
            loads,
            budgets,
            Texts {
                message: format!(
                    "peak redis clients {} exceed the declared redis total of {budget}: \
                     exceeded by {}",
                    total.peak, total.exceeded_by
                ),
                reservations: format!("reserved clients: {}", total.reservations),
                budget: format!("budget: declared redis total {budget}"),
                raise: format!("raise the declared redis total to at least {}", total.peak),
            },
        ));
    }

    for (name, server) in &report.redis_servers {
        if !server.exceeded() {
            continue;
        }
        let budget = server.budget.unwrap_or(0);
        findings.push(explain(
            "capacity.redis",
            Resource::RedisServer(name),
            server,
            report,
            loads,
            budgets,
            Texts {
                message: format!(
                    "peak clients on redis server `{name}` {} exceed its limit of {budget}: \
                     exceeded by {}",
                    server.peak, server.exceeded_by
                ),
                reservations: format!("reserved clients on `{name}`: {}", server.reservations),
                budget: format!("budget: `maxclients` of redis server `{name}` {budget}"),
                raise: format!(
                    "raise the `maxclients` of redis server `{name}` and its declared limit \
                     to at least {}",
                    server.peak
                ),
            },
        ));
    }

    findings
}

/// Budget-specific wording of a finding.
struct Texts {
    message: String,
    reservations: String,
    budget: String,
    raise: String,
}

fn explain(
    rule: &'static str,
    resource: Resource<'_>,
    total: &Total,
    report: &CapacityReport,
    loads: &[WorkloadLoad],
    budgets: &Budgets,
    texts: Texts,
) -> CapacityFinding {
    let unit = resource.unit();
    let gens = budgets.retiring_generations;
    let budget = total.budget.unwrap_or(0);
    let mut lines = Vec::new();
    let mut terms = Vec::new();
    let mut fits = Vec::new();

    for (row, load) in report.workloads.iter().zip(loads) {
        let allocations = resource.allocations(load);
        let per_process = sum(allocations.iter().map(|(_, c)| *c));
        let connections = row.peak_processes.saturating_mul(per_process);
        if connections == 0 {
            continue;
        }
        let pods = if is_migrate(load) {
            format!(
                "hook job pods {}, no surge, no retiring generation, processes per pod {}: \
                 {} x {} = {} peak processes",
                row.max_pods,
                row.processes_per_pod,
                row.max_pods,
                row.processes_per_pod,
                row.peak_processes
            )
        } else {
            let source = if load.autoscaler_max.is_some() {
                "autoscaler maximum"
            } else {
                "replicas"
            };
            format!(
                "max pods {} ({source}), surge {}, retiring {} x {gens} = {}, processes per \
                 pod {}: ({} + {} + {}) x {} = {} peak processes",
                row.max_pods,
                row.surge_pods,
                row.max_pods,
                row.retiring,
                row.processes_per_pod,
                row.max_pods,
                row.surge_pods,
                row.retiring,
                row.processes_per_pod,
                row.peak_processes
            )
        };
        lines.push(format!(
            "`{}` ({}): {pods}; {} x {per_process} per process ({}) = {connections} {unit}",
            row.name,
            row.class,
            row.peak_processes,
            join_terms(allocations.iter().map(|(n, c)| format!("{n} {c}"))),
        ));
        terms.push(connections.to_string());

        if !is_migrate(load) {
            let others = total.peak.saturating_sub(connections);
            let fit = largest_fitting(load, gens, per_process, others, budget, row.max_pods);
            let knob = if load.autoscaler_max.is_some() {
                "maxReplicas"
            } else {
                "replicas"
            };
            // A fixed workload that cannot fit even at one pod is no useful knob; an
            // autoscaled one is always named, since its maximum is the usual fix.
            let value = match (load.autoscaler_max.is_some(), fit) {
                (_, Some(m)) => Some(m.to_string()),
                (true, None) => Some("none fits, even 1 exceeds the budget".to_string()),
                (false, None) => None,
            };
            if let Some(value) = value {
                fits.push(format!(
                    "largest `{knob}` for `{}` that fits with everything else unchanged: {value}",
                    row.name
                ));
            }
        }
    }

    lines.push(texts.reservations);
    if total.reservations > 0 {
        terms.push(total.reservations.to_string());
    }
    let peak_line = if terms.len() > 1 {
        format!("peak: {} = {} {unit}", terms.join(" + "), total.peak)
    } else {
        format!("peak: {} {unit}", total.peak)
    };
    lines.push(peak_line);
    lines.push(texts.budget);
    lines.push(format!("exceeded by {}", total.exceeded_by));

    let or = if fits.is_empty() { "" } else { "or " };
    fits.push(format!(
        "{or}lower allocation sizes, processes per pod, `dependencyCapacity.retiringGenerations` or the \
         reservations"
    ));
    fits.push(format!("or {}", texts.raise));

    CapacityFinding {
        rule,
        message: texts.message,
        arithmetic: lines.join("\n"),
        hint: fits.join("; "),
    }
}

/// Largest max pods in `1..=current` such that `others` plus this workload's peak fits
/// `budget`; `None` when even 1 pod does not fit.
fn largest_fitting(
    load: &WorkloadLoad,
    gens: u64,
    per_process: u64,
    others: u64,
    budget: u64,
    current: u64,
) -> Option<u64> {
    let fits = |m: u64| {
        let peak = shape_with(load, m, gens).peak_processes;
        others.saturating_add(peak.saturating_mul(per_process)) <= budget
    };
    if current == 0 || !fits(1) {
        return None;
    }
    // Invariant: fits(lo); the peak is monotone in max pods.
    let (mut lo, mut hi) = (1, current);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(lo)
}

fn join_terms(terms: impl IntoIterator<Item = String>) -> String {
    let joined: Vec<String> = terms.into_iter().collect();
    if joined.is_empty() {
        "none".to_string()
    } else {
        joined.join(" + ")
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Align {
    Left,
    Right,
}

const WORKLOAD_HEADERS: [&str; 11] = [
    "workload",
    "class",
    "max pods",
    "surge",
    "retiring",
    "processes/pod",
    "peak processes",
    "postgres/process",
    "postgres",
    "redis/process",
    "redis",
];

const BUDGET_HEADERS: [&str; 8] = [
    "budget",
    "workloads",
    "reserved",
    "peak",
    "limit",
    "reserve",
    "budget",
    "status",
];

fn workload_table(report: &CapacityReport) -> (Vec<Align>, Vec<Vec<String>>) {
    let mut aligns = vec![Align::Left, Align::Left];
    aligns.extend([Align::Right; 9]);
    let rows = report
        .workloads
        .iter()
        .map(|r| {
            vec![
                format!("`{}`", r.name),
                r.class.clone(),
                r.max_pods.to_string(),
                r.surge_pods.to_string(),
                r.retiring.to_string(),
                r.processes_per_pod.to_string(),
                r.peak_processes.to_string(),
                r.postgres_per_process.to_string(),
                r.postgres.to_string(),
                r.redis_per_process.to_string(),
                r.redis.to_string(),
            ]
        })
        .collect();
    (aligns, rows)
}

fn budget_table(report: &CapacityReport) -> (Vec<Align>, Vec<Vec<String>>) {
    let mut aligns = vec![Align::Left];
    aligns.extend([Align::Right; 6]);
    aligns.push(Align::Left);
    let opt = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
    let row = |label: String, t: &Total| {
        let status = if t.exceeded() {
            format!("exceeded by {}", t.exceeded_by)
        } else {
            match t.spare() {
                Some(spare) => format!("ok, {spare} spare"),
                None => "not checked".to_string(),
            }
        };
        vec![
            label,
            t.workloads.to_string(),
            t.reservations.to_string(),
            t.peak.to_string(),
            opt(t.limit),
            t.reserve.to_string(),
            opt(t.budget),
            status,
        ]
    };
    let mut rows = vec![
        row("postgresql".to_string(), &report.postgres),
        row("redis total".to_string(), &report.redis_total),
    ];
    for (name, total) in &report.redis_servers {
        rows.push(row(format!("redis `{name}`"), total));
    }
    (aligns, rows)
}

fn plain_table(headers: &[&str], aligns: &[Align], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .zip(aligns)
            .map(|((cell, w), align)| match align {
                Align::Left => format!("{cell:<w$}"),
                Align::Right => format!("{cell:>w$}"),
            })
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut out = vec![line(headers.to_vec())];
    for row in rows {
        out.push(line(row.iter().map(String::as_str).collect()));
    }
    out.join("\n")
}

fn markdown_table(headers: &[&str], aligns: &[Align], rows: &[Vec<String>]) -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let line = |cells: Vec<String>| format!("| {} |", cells.join(" | "));
    let mut out = vec![
        line(headers.iter().map(|h| cell(h)).collect()),
        line(
            aligns
                .iter()
                .map(|a| match a {
                    Align::Left => "---".to_string(),
                    Align::Right => "---:".to_string(),
                })
                .collect(),
        ),
    ];
    for row in rows {
        out.push(line(row.iter().map(|c| cell(c)).collect()));
    }
    out.join("\n")
}

/// Plain-text report: the workload table, then the budget table, columns aligned.
#[must_use]
pub fn format_table(report: &CapacityReport) -> String {
    let (wa, wr) = workload_table(report);
    let (ba, br) = budget_table(report);
    format!(
        "{}\n\n{}\n",
        plain_table(&WORKLOAD_HEADERS, &wa, &wr),
        plain_table(&BUDGET_HEADERS, &ba, &br)
    )
}

/// Markdown report for a chart README: the workload table and the budget table.
#[must_use]
pub fn format_markdown(report: &CapacityReport) -> String {
    let (wa, wr) = workload_table(report);
    let (ba, br) = budget_table(report);
    format!(
        "{}\n\n{}\n",
        markdown_table(&WORKLOAD_HEADERS, &wa, &wr),
        markdown_table(&BUDGET_HEADERS, &ba, &br)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(name: &str, class: &str) -> WorkloadLoad {
        WorkloadLoad {
            name: name.to_string(),
            class: class.to_string(),
            enabled: true,
            replicas: 1,
            autoscaler_max: None,
            surge: Surge::Pods(1),
            processes_per_pod: 1,
            postgres: Vec::new(),
            redis: Vec::new(),
        }
    }

    impl WorkloadLoad {
        fn replicas(mut self, n: u64) -> Self {
            self.replicas = n;
            self
        }
        fn hpa(mut self, max: u64) -> Self {
            self.autoscaler_max = Some(max);
            self
        }
        fn surge(mut self, s: Surge) -> Self {
            self.surge = s;
            self
        }
        fn ppp(mut self, n: u64) -> Self {
            self.processes_per_pod = n;
            self
        }
        fn disabled(mut self) -> Self {
            self.enabled = false;
            self
        }
        fn pg(mut self, allocations: &[(&str, u64)]) -> Self {
            self.postgres = allocations
                .iter()
                .map(|(n, c)| (n.to_string(), *c))
                .collect();
            self
        }
        fn redis(mut self, allocations: &[(&str, &str, u64)]) -> Self {
            self.redis = allocations
                .iter()
                .map(|(n, s, c)| RedisAllocation {
                    name: n.to_string(),
                    server: s.to_string(),
                    clients: *c,
                })
                .collect();
            self
        }
    }

    const GATEWAY_PG: [(&str, u64); 4] = [
        ("control", 20),
        ("foreground", 8),
        ("telemetry", 5),
        ("telemetry_worker", 5),
    ];
    const REDIS_SPLIT: [(&str, &str, u64); 3] = [
        ("critical", "critical", 64),
        ("cache", "cache", 16),
        ("bulk", "cache", 16),
    ];
    const REDIS_ONE: [(&str, &str, u64); 3] = [
        ("critical", "critical", 64),
        ("cache", "critical", 16),
        ("bulk", "critical", 16),
    ];

    fn server(name: &str, max: Option<u64>, reserved: u64) -> RedisServerBudget {
        RedisServerBudget {
            name: name.to_string(),
            max_clients: max,
            reserved_clients: reserved,
        }
    }

    fn gateway_budgets() -> Budgets {
        Budgets {
            retiring_generations: 2,
            postgres_max_connections: 5000,
            postgres_reserve: 20,
            postgres_reservations: vec![("operators".into(), 100), ("migrations".into(), 2)],
            redis_max_connections: 10000,
            redis_reserved_clients: 128,
            redis_servers: Vec::new(),
        }
    }

    fn gateway(batch: bool, redis: &[(&str, &str, u64)]) -> Vec<WorkloadLoad> {
        let mut loads = vec![load("api", "api").hpa(12).pg(&GATEWAY_PG).redis(redis)];
        let worker = load("batch-worker", "worker")
            .replicas(2)
            .pg(&GATEWAY_PG)
            .redis(redis);
        loads.push(if batch { worker } else { worker.disabled() });
        loads
    }

    fn server_total<'a>(report: &'a CapacityReport, name: &str) -> &'a Total {
        report
            .redis_servers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t)
            .expect("server in report")
    }

    #[test]
    fn gateway_production_api_only() {
        let budgets = gateway_budgets();
        let loads = gateway(false, &REDIS_SPLIT);
        let report = compute_capacity(&loads, &budgets);
        let api = &report.workloads[0];
        assert_eq!(
            (
                api.max_pods,
                api.surge_pods,
                api.retiring,
                api.peak_processes
            ),
            (12, 1, 24, 37)
        );
        assert_eq!((api.postgres_per_process, api.postgres), (38, 1406));
        assert_eq!((api.redis_per_process, api.redis), (96, 3552));
        assert_eq!(report.workloads[1].peak_processes, 0);
        assert_eq!(report.postgres.workloads, 1406);
        assert_eq!(report.postgres.reservations, 102);
        assert_eq!(report.postgres.peak, 1508);
        assert_eq!(report.redis_total.workloads, 3552);
        assert_eq!(report.redis_total.peak, 3680);
        assert_eq!(server_total(&report, "critical").peak, 37 * 64);
        assert_eq!(server_total(&report, "cache").peak, 37 * 32);
        assert!(capacity_findings(&report, &loads, &budgets).is_empty());
    }

    #[test]
    fn gateway_production_with_batch_workers() {
        let budgets = gateway_budgets();
        let loads = gateway(true, &REDIS_SPLIT);
        let report = compute_capacity(&loads, &budgets);
        let worker = &report.workloads[1];
        assert_eq!(
            (worker.max_pods, worker.surge_pods, worker.retiring),
            (2, 1, 4)
        );
        assert_eq!(worker.peak_processes, 7);
        assert_eq!((worker.postgres, worker.redis), (266, 672));
        assert_eq!(report.postgres.workloads, 1406 + 266);
        assert_eq!(report.postgres.peak, 1774);
        assert_eq!(report.redis_total.peak, 4352);
        assert_eq!(server_total(&report, "critical").peak, 44 * 64);
        assert_eq!(server_total(&report, "cache").peak, 44 * 32);
    }

    #[test]
    fn gateway_all_redis_on_critical() {
        let mut budgets = gateway_budgets();
        budgets.redis_servers = vec![server("critical", Some(4224), 0), server("cache", None, 0)];
        for (batch, expected) in [(false, 3552), (true, 4224)] {
            let loads = gateway(batch, &REDIS_ONE);
            let report = compute_capacity(&loads, &budgets);
            assert_eq!(server_total(&report, "critical").peak, expected);
            assert_eq!(server_total(&report, "cache").peak, 0);
            assert_eq!(report.redis_total.peak, expected + 128);
            assert!(capacity_findings(&report, &loads, &budgets).is_empty());
        }
    }

    #[test]
    fn gateway_finding_shows_rows_budget_and_fitting_knobs() {
        let mut budgets = gateway_budgets();
        budgets.postgres_max_connections = 1800;
        budgets.postgres_reserve = 100;
        let loads = gateway(true, &REDIS_SPLIT);
        let report = compute_capacity(&loads, &budgets);
        let findings = capacity_findings(&report, &loads, &budgets);
        assert_eq!(findings.len(), 1);
        let f = &findings[0];
        assert_eq!(f.rule, "capacity.postgres");
        assert_eq!(
            f.message,
            "peak postgresql connections 1774 exceed the budget of 1700 \
             (`max_connections` 1800 - reserve 100): exceeded by 74"
        );
        let expected = "\
`api` (api): max pods 12 (autoscaler maximum), surge 1, retiring 12 x 2 = 24, processes per pod 1: (12 + 1 + 24) x 1 = 37 peak processes; 37 x 38 per process (control 20 + foreground 8 + telemetry 5 + telemetry_worker 5) = 1406 connections
`batch-worker` (worker): max pods 2 (replicas), surge 1, retiring 2 x 2 = 4, processes per pod 1: (2 + 1 + 4) x 1 = 7 peak processes; 7 x 38 per process (control 20 + foreground 8 + telemetry 5 + telemetry_worker 5) = 266 connections
reservations: operators 100 + migrations 2 = 102
peak: 1406 + 266 + 102 = 1774 connections
budget: `max_connections` 1800 - reserve 100 = 1700
exceeded by 74";
        assert_eq!(f.arithmetic, expected);
        // api: others 368 + (3m + 1) x 38 <= 1700 -> m = 11 (1660); m = 12 gives 1774
        assert!(f.hint.contains(
            "largest `maxReplicas` for `api` that fits with everything else unchanged: 11"
        ));
        // batch-worker: others 1508 + (3r + 1) x 38 <= 1700 -> r = 1 (1660)
        assert!(f.hint.contains(
            "largest `replicas` for `batch-worker` that fits with everything else unchanged: 1"
        ));
        assert!(f
            .hint
            .contains("raise the declared postgresql `max_connections` to at least 1874"));
        assert!(f
            .to_string()
            .starts_with("capacity.postgres: peak postgresql"));
    }

    fn evaluation(reserve: u64) -> (Vec<WorkloadLoad>, Budgets) {
        let loads = vec![load("api", "api").pg(&[("control", 20), ("foreground", 8)])];
        let budgets = Budgets {
            retiring_generations: 1,
            postgres_max_connections: 100,
            postgres_reserve: reserve,
            ..Budgets::default()
        };
        (loads, budgets)
    }

    #[test]
    fn evaluation_exactly_met_passes() {
        let (loads, budgets) = evaluation(16);
        let report = compute_capacity(&loads, &budgets);
        assert_eq!(report.workloads[0].peak_processes, 3);
        assert_eq!(report.postgres.peak, 84);
        assert_eq!(report.postgres.budget, Some(84));
        assert!(!report.postgres.exceeded());
        assert_eq!(report.postgres.spare(), Some(0));
        assert!(capacity_findings(&report, &loads, &budgets).is_empty());
    }

    #[test]
    fn evaluation_one_more_connection_fails_by_one() {
        let (loads, budgets) = evaluation(17);
        let report = compute_capacity(&loads, &budgets);
        assert_eq!(report.postgres.exceeded_by, 1);
        let findings = capacity_findings(&report, &loads, &budgets);
        assert_eq!(findings.len(), 1);
        assert!(findings[0].message.ends_with("exceeded by 1"));
        assert!(findings[0]
            .arithmetic
            .contains("3 x 28 per process (control 20 + foreground 8) = 84 connections"));
        // One fixed pod is already too many: lowering `replicas` is no fix, so it is not
        // suggested; the generic knobs are.
        assert!(!findings[0].hint.contains("largest `replicas`"));
        assert!(findings[0].hint.contains("lower allocation sizes"));
    }

    #[test]
    fn autoscaled_workload_none_fits() {
        let (mut loads, budgets) = evaluation(17);
        loads[0] = loads[0].clone().hpa(3);
        let report = compute_capacity(&loads, &budgets);
        assert_eq!(report.postgres.peak, 7 * 28);
        let findings = capacity_findings(&report, &loads, &budgets);
        assert!(findings[0].hint.contains(
            "largest `maxReplicas` for `api` that fits with everything else unchanged: none fits"
        ));
    }

    fn agent_platform(with_jobs: bool, api_hpa: Option<u64>) -> (Vec<WorkloadLoad>, Budgets) {
        let api_pool = if with_jobs { 12 } else { 15 };
        let mut api = load("core", "api").pg(&[("hikari", api_pool)]);
        if let Some(max) = api_hpa {
            api = api.hpa(max);
        }
        let jobs = load("core-jobs", "jobs").pg(&[("hikari", 10)]);
        let loads = vec![
            api,
            if with_jobs { jobs } else { jobs.disabled() },
            load("core-ingest", "pool").pg(&[("hikari", 6)]),
            load("core-worker", "worker").pg(&[("hikari", 8)]),
            load("core-migrate", "migrate").pg(&[("hikari", 10)]),
        ];
        let budgets = Budgets {
            retiring_generations: 1,
            postgres_max_connections: 200,
            postgres_reserve: 20,
            ..Budgets::default()
        };
        (loads, budgets)
    }

    #[test]
    fn agent_platform_with_jobs() {
        let (loads, budgets) = agent_platform(true, None);
        let report = compute_capacity(&loads, &budgets);
        let pg: Vec<u64> = report.workloads.iter().map(|r| r.postgres).collect();
        assert_eq!(pg, vec![36, 30, 18, 24, 10]);
        let migrate = &report.workloads[4];
        assert_eq!(
            (migrate.max_pods, migrate.surge_pods, migrate.retiring),
            (1, 0, 0)
        );
        assert_eq!(report.postgres.peak, 118);
        assert_eq!(report.postgres.budget, Some(180));
        assert!(capacity_findings(&report, &loads, &budgets).is_empty());
    }

    #[test]
    fn agent_platform_without_jobs_uses_api_15() {
        let (loads, budgets) = agent_platform(false, None);
        let report = compute_capacity(&loads, &budgets);
        let pg: Vec<u64> = report.workloads.iter().map(|r| r.postgres).collect();
        assert_eq!(pg, vec![45, 0, 18, 24, 10]);
        assert_eq!(report.postgres.peak, 97);
        assert!(!report.postgres.exceeded());
    }

    #[test]
    fn agent_platform_autoscaled_api_suggests_largest_fitting_max() {
        let (loads, budgets) = agent_platform(true, Some(4));
        let report = compute_capacity(&loads, &budgets);
        assert_eq!(report.workloads[0].peak_processes, 9);
        assert_eq!(report.postgres.peak, 190);
        let findings = capacity_findings(&report, &loads, &budgets);
        assert_eq!(findings.len(), 1);
        assert!(findings[0].message.ends_with("exceeded by 10"));
        // others 82 + (2m + 1) x 12 <= 180 -> m = 3 (166); m = 4 gives 190
        assert!(findings[0].hint.contains(
            "largest `maxReplicas` for `core` that fits with everything else unchanged: 3"
        ));
        assert!(findings[0].arithmetic.contains(
            "`core-migrate` (migrate): hook job pods 1, no surge, no retiring generation, \
             processes per pod 1: 1 x 1 = 1 peak processes; 1 x 10 per process (hikari 10) \
             = 10 connections"
        ));
    }

    #[test]
    fn surge_pods_round_up() {
        let cases = [
            (3, Surge::Percent(25), 1),
            (5, Surge::Percent(25), 2),
            (3, Surge::Percent(50), 2),
            (1, Surge::Percent(100), 1),
            (10, Surge::Percent(10), 1),
            (3, Surge::Percent(200), 6),
            (4, Surge::Percent(0), 0),
            (0, Surge::Percent(25), 0),
            (0, Surge::Pods(1), 0),
            (3, Surge::Pods(2), 2),
        ];
        for (pods, surge, expected) in cases {
            assert_eq!(surge.pods(pods), expected, "{surge:?} of {pods}");
            let loads = [load("w", "worker").replicas(pods).surge(surge)];
            let report = compute_capacity(&loads, &Budgets::default());
            assert_eq!(
                report.workloads[0].surge_pods, expected,
                "{surge:?} of {pods}"
            );
            assert_eq!(report.workloads[0].peak_processes, pods + expected);
        }
    }

    #[test]
    fn peak_processes_table() {
        // (workload, retiring generations, max pods, surge, retiring, peak processes)
        let cases = [
            (load("a", "api").replicas(2).ppp(4), 1, 2, 1, 2, 20),
            (
                load("a", "api")
                    .replicas(2)
                    .hpa(5)
                    .surge(Surge::Percent(25))
                    .ppp(3),
                2,
                5,
                2,
                10,
                51,
            ),
            (
                load("p", "pool")
                    .replicas(3)
                    .surge(Surge::Percent(50))
                    .ppp(2),
                0,
                3,
                2,
                0,
                10,
            ),
            (
                load("w", "worker").replicas(3).ppp(2).disabled(),
                2,
                0,
                0,
                0,
                0,
            ),
            (load("a", "api").hpa(10).disabled(), 2, 0, 0, 0, 0),
            (
                load("m", "migrate").hpa(5).surge(Surge::Pods(3)),
                2,
                1,
                0,
                0,
                1,
            ),
            (load("m", "migrate").replicas(2).ppp(2), 3, 2, 0, 0, 4),
            (load("m", "migrate").disabled(), 2, 0, 0, 0, 0),
        ];
        for (l, gens, max, surge, retiring, peak) in cases {
            let budgets = Budgets {
                retiring_generations: gens,
                ..Budgets::default()
            };
            let loads = [l.pg(&[("pool", 10)])];
            let r = &compute_capacity(&loads, &budgets).workloads[0];
            assert_eq!(
                (r.max_pods, r.surge_pods, r.retiring, r.peak_processes),
                (max, surge, retiring, peak),
                "{}",
                loads[0].name
            );
            assert_eq!(r.postgres, peak * 10);
        }
    }

    #[test]
    fn redis_servers_checked_against_their_own_limits() {
        let loads = gateway(false, &REDIS_SPLIT);
        // (critical limit, cache limit, critical exceeded by, cache exceeded by)
        let cases = [
            (Some(2400), Some(1200), 18, 0),
            (Some(2418), Some(1184), 0, 0),
            (Some(2500), Some(1100), 0, 84),
            (Some(2417), Some(1183), 1, 1),
            (None, None, 0, 0),
        ];
        for (critical, cache, critical_over, cache_over) in cases {
            let mut budgets = gateway_budgets();
            budgets.redis_servers =
                vec![server("critical", critical, 50), server("cache", cache, 0)];
            let report = compute_capacity(&loads, &budgets);
            assert_eq!(server_total(&report, "critical").peak, 2418);
            assert_eq!(server_total(&report, "cache").peak, 1184);
            assert_eq!(server_total(&report, "critical").exceeded_by, critical_over);
            assert_eq!(server_total(&report, "cache").exceeded_by, cache_over);
            let findings = capacity_findings(&report, &loads, &budgets);
            let expected = usize::from(critical_over > 0) + usize::from(cache_over > 0);
            assert_eq!(findings.len(), expected, "{critical:?} {cache:?}");
            for f in &findings {
                assert_eq!(f.rule, "capacity.redis");
            }
            if critical_over > 0 {
                assert_eq!(
                    findings[0].message,
                    format!(
                        "peak clients on redis server `critical` 2418 exceed its limit of {}: \
                         exceeded by {critical_over}",
                        2418 - critical_over
                    )
                );
                assert!(findings[0]
                    .arithmetic
                    .contains("37 x 64 per process (critical 64) = 2368 clients"));
                assert!(findings[0]
                    .arithmetic
                    .contains("peak: 2368 + 50 = 2418 clients"));
            }
            if cache_over > 0 {
                let f = findings.last().expect("cache finding");
                assert!(f.message.contains("`cache`"));
                assert!(f.arithmetic.contains("(cache 16 + bulk 16) = 1184 clients"));
            }
        }
    }

    #[test]
    fn budgets_exactly_met_pass_and_one_more_fails() {
        let loads = gateway(true, &REDIS_SPLIT);
        // (postgres max, reserve, redis total, postgres exceeded by, redis exceeded by)
        let cases = [
            (1774, 0, 4352, 0, 0),
            (1794, 20, 4352, 0, 0),
            (1773, 0, 4352, 1, 0),
            (1794, 21, 4351, 1, 1),
            (1774, 0, 4351, 0, 1),
        ];
        for (max, reserve, redis, pg_over, redis_over) in cases {
            let mut budgets = gateway_budgets();
            budgets.postgres_max_connections = max;
            budgets.postgres_reserve = reserve;
            budgets.redis_max_connections = redis;
            let report = compute_capacity(&loads, &budgets);
            assert_eq!(report.postgres.exceeded_by, pg_over);
            assert_eq!(report.redis_total.exceeded_by, redis_over);
            let findings = capacity_findings(&report, &loads, &budgets);
            let rules: Vec<&str> = findings.iter().map(|f| f.rule).collect();
            let mut expected = Vec::new();
            if pg_over > 0 {
                expected.push("capacity.postgres");
            }
            if redis_over > 0 {
                expected.push("capacity.redis");
            }
            assert_eq!(rules, expected);
            for f in &findings {
                assert!(f.message.ends_with("exceeded by 1"), "{}", f.message);
                assert!(f.arithmetic.ends_with("exceeded by 1"));
            }
        }
    }

    #[test]
    fn every_exceeded_budget_is_reported() {
        let loads = gateway(true, &REDIS_SPLIT);
        let mut budgets = gateway_budgets();
        budgets.postgres_max_connections = 100;
        budgets.redis_max_connections = 100;
        budgets.redis_servers = vec![
            server("critical", Some(10), 0),
            server("cache", Some(10), 0),
        ];
        let report = compute_capacity(&loads, &budgets);
        let findings = capacity_findings(&report, &loads, &budgets);
        let messages: Vec<&str> = findings.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(findings.len(), 4, "{messages:?}");
        assert_eq!(findings[0].rule, "capacity.postgres");
        assert!(messages[1].starts_with("peak redis clients 4352"));
        assert!(messages[2].contains("`critical`"));
        assert!(messages[3].contains("`cache`"));
        for f in &findings {
            assert!(f.hint.contains("none fits"));
            assert!(!f.message.ends_with('.'));
            assert!(f.message.starts_with(char::is_lowercase));
            assert!(f.hint.starts_with(char::is_lowercase));
        }
    }

    #[test]
    fn largest_fitting_max_replicas_with_percentage_surge() {
        let loads = [load("api", "api")
            .hpa(8)
            .surge(Surge::Percent(25))
            .pg(&[("pool", 10)])];
        let budgets = Budgets {
            retiring_generations: 1,
            postgres_max_connections: 100,
            ..Budgets::default()
        };
        let report = compute_capacity(&loads, &budgets);
        // 8 + ceil(2) + 8 = 18 processes
        assert_eq!(report.postgres.peak, 180);
        let findings = capacity_findings(&report, &loads, &budgets);
        // m = 4: (4 + 1 + 4) x 10 = 90 fits; m = 5: (5 + 2 + 5) x 10 = 120 does not
        assert!(findings[0].hint.contains(
            "largest `maxReplicas` for `api` that fits with everything else unchanged: 4"
        ));
        for (max, fit) in [(1, Some(1)), (4, Some(4)), (5, Some(4)), (1000, Some(4))] {
            assert_eq!(largest_fitting(&loads[0], 1, 10, 0, 100, max), fit);
        }
        assert_eq!(largest_fitting(&loads[0], 1, 10, 80, 100, 8), None);
        assert_eq!(largest_fitting(&loads[0], 1, 10, 0, 100, 0), None);
    }

    #[test]
    fn undeclared_redis_server_is_reported_but_not_checked() {
        let loads = gateway(false, &REDIS_SPLIT);
        let mut budgets = gateway_budgets();
        budgets.redis_servers = vec![server("sessions", Some(5), 2)];
        let report = compute_capacity(&loads, &budgets);
        let names: Vec<&str> = report
            .redis_servers
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        assert_eq!(names, vec!["sessions", "critical", "cache"]);
        assert_eq!(server_total(&report, "sessions").peak, 2);
        assert_eq!(server_total(&report, "critical").budget, None);
        assert!(capacity_findings(&report, &loads, &budgets).is_empty());
    }

    #[test]
    fn huge_inputs_saturate_instead_of_panicking() {
        let loads = [load("api", "api")
            .hpa(u64::MAX)
            .surge(Surge::Percent(u64::MAX))
            .ppp(u64::MAX)
            .pg(&[("pool", u64::MAX)])];
        let budgets = Budgets {
            retiring_generations: u64::MAX,
            postgres_max_connections: 10,
            ..Budgets::default()
        };
        let report = compute_capacity(&loads, &budgets);
        assert_eq!(report.postgres.peak, u64::MAX);
        assert_eq!(capacity_findings(&report, &loads, &budgets).len(), 1);
    }

    #[test]
    fn plain_table_columns_are_aligned() {
        let mut budgets = gateway_budgets();
        budgets.redis_servers = vec![server("critical", Some(2400), 50)];
        let report = compute_capacity(&gateway(true, &REDIS_SPLIT), &budgets);
        let table = format_table(&report);
        let (workloads, totals) = table.split_once("\n\n").expect("two tables");
        let lines: Vec<&str> = workloads.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines.iter().all(|l| l.len() == lines[0].len()), "{table}");
        assert!(lines[0].starts_with("workload        class   max pods"));
        assert!(lines[1].starts_with("`api`           api           12"));
        assert!(lines[1].ends_with("1406             96   3552"));
        assert!(totals.contains("postgresql"));
        assert!(totals.contains("exceeded by 466"));
        assert!(totals.contains("ok, 3206 spare"));
        assert!(totals.contains("not checked"));
        let status_col = totals.lines().next().and_then(|l| l.find("status"));
        for line in totals.lines().skip(1) {
            let found = ["ok", "exceeded", "not checked"]
                .iter()
                .filter_map(|s| line.find(s))
                .min();
            assert_eq!(found, status_col, "{line}");
        }
    }

    #[test]
    fn markdown_tables() {
        let report = compute_capacity(&gateway(true, &REDIS_SPLIT), &gateway_budgets());
        let md = format_markdown(&report);
        assert!(md.starts_with(
            "| workload | class | max pods | surge | retiring | processes/pod | peak processes \
             | postgres/process | postgres | redis/process | redis |\n\
             | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n\
             | `api` | api | 12 | 1 | 24 | 1 | 37 | 38 | 1406 | 96 | 3552 |\n\
             | `batch-worker` | worker | 2 | 1 | 4 | 1 | 7 | 38 | 266 | 96 | 672 |\n\n"
        ));
        assert!(
            md.contains("| postgresql | 1672 | 102 | 1774 | 5000 | 20 | 4980 | ok, 3206 spare |")
        );
        assert!(
            md.contains("| redis total | 4224 | 128 | 4352 | 10000 | 0 | 10000 | ok, 5648 spare |")
        );
        assert!(md.contains("| redis `critical` | 2816 | 0 | 2816 | - | 0 | - | not checked |"));
        assert!(md.ends_with("|\n"));
    }

    #[test]
    fn report_serializes_to_json() {
        let report = compute_capacity(&gateway(false, &REDIS_SPLIT), &gateway_budgets());
        let json = serde_json::to_value(&report).expect("serialize");
        assert_eq!(json["postgres"]["peak"], 1508);
        assert_eq!(json["redis_total"]["peak"], 3680);
        assert_eq!(json["workloads"][0]["peak_processes"], 37);
        assert_eq!(json["redis_servers"][0][0], "critical");
        let surge = serde_json::to_value(Surge::Percent(25)).expect("serialize");
        assert_eq!(surge, serde_json::json!({"percent": 25}));
    }

    #[test]
    fn reservations_alone_exceeding_suggest_sizes_and_limit() {
        let loads = [load("core-migrate", "migrate").pg(&[("hikari", 10)])];
        let budgets = Budgets {
            retiring_generations: 1,
            postgres_max_connections: 200,
            postgres_reserve: 20,
            postgres_reservations: vec![("other-clients".into(), 200)],
            ..Budgets::default()
        };
        let report = compute_capacity(&loads, &budgets);
        assert_eq!(report.postgres.peak, 210);
        let findings = capacity_findings(&report, &loads, &budgets);
        assert_eq!(findings.len(), 1);
        assert_eq!(
            findings[0].hint,
            "lower allocation sizes, processes per pod, `dependencyCapacity.retiringGenerations` or the \
             reservations; or raise the declared postgresql `max_connections` to at least 230"
        );
        assert!(findings[0]
            .arithmetic
            .contains("reservations: other-clients 200 = 200\npeak: 10 + 200 = 210 connections"));
    }

    #[test]
    fn formula_is_one_lowercase_paragraph() {
        assert!(!FORMULA.contains('\n'));
        assert!(FORMULA.starts_with("peak processes"));
        assert!(!FORMULA.ends_with('.'));
        assert!(FORMULA.contains("rounded up"));
    }
}
