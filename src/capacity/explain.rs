//! Every exceeded budget explained: each workload's arithmetic, the reservations, the
//! peak and the budget, and the knobs that fix it (with the largest fitting
//! `maxReplicas`). The figures are the report's, and the pieces they are made of are the
//! formula's expressions evaluated the same way.

use crate::capacity::formula::{retiring_generations, WorkloadExprs};
use crate::capacity::report::{Capacity, CapacityReport, Total};
use crate::expr::{lit, EvalError, Expr};
use serde::Serialize;
use std::fmt;

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

/// Which budget a finding is about.
#[derive(Clone, Copy)]
pub(crate) enum Resource<'a> {
    Postgres,
    RedisTotal,
    RedisServer(&'a str),
}

impl Resource<'_> {
    /// The allocations of one process of `w` counted against this budget.
    fn allocations(&self, w: &WorkloadExprs) -> Vec<(String, Expr)> {
        match self {
            Resource::Postgres => w.postgres.clone(),
            Resource::RedisTotal => w.redis_allocations(None),
            Resource::RedisServer(server) => w.redis_allocations(Some(server)),
        }
    }

    fn per_process(&self, w: &WorkloadExprs) -> Expr {
        match self {
            Resource::Postgres => w.postgres_per_process(),
            Resource::RedisTotal => w.redis_per_process(None),
            Resource::RedisServer(server) => w.redis_per_process(Some(server)),
        }
    }

    pub(crate) fn connections(&self, w: &WorkloadExprs) -> Expr {
        match self {
            Resource::Postgres => w.postgres_connections(),
            Resource::RedisTotal => w.redis_connections(None),
            Resource::RedisServer(server) => w.redis_connections(Some(server)),
        }
    }

    fn unit(&self) -> &'static str {
        match self {
            Resource::Postgres => "connections",
            Resource::RedisTotal | Resource::RedisServer(_) => "clients",
        }
    }
}

/// Budget-specific wording of a finding.
struct Texts {
    message: String,
    reservations: String,
    budget: String,
    raise: String,
}

impl Capacity<'_> {
    /// Explains every exceeded budget of `report`, which must come from
    /// [`Capacity::report`]: PostgreSQL first, then the Redis total, then each Redis
    /// server in report order. Empty when everything fits.
    pub fn findings(&self, report: &CapacityReport) -> Result<Vec<CapacityFinding>, EvalError> {
        let mut findings = Vec::new();

        let pg = &report.postgres;
        if pg.exceeded() {
            let budget = pg.budget.unwrap_or(0);
            let limit = pg.limit.unwrap_or(0);
            let mut named = Vec::new();
            for (name, e) in &self.exprs.postgres_reservations {
                named.push(format!("{name} {}", self.number(e)?));
            }
            let reservations = if named.is_empty() {
                "reservations: none".to_string()
            } else {
                format!("reservations: {} = {}", join_terms(named), pg.reservations)
            };
            findings.push(self.explain(
                "capacity.postgres",
                Resource::Postgres,
                pg,
                report,
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
            )?);
        }

        let total = &report.redis_total;
        if total.exceeded() {
            let budget = total.budget.unwrap_or(0);
            findings.push(self.explain(
                "capacity.redis",
                Resource::RedisTotal,
                total,
                report,
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
            )?);
        }

        for (name, server) in &report.redis_servers {
            if !server.exceeded() {
                continue;
            }
            let budget = server.budget.unwrap_or(0);
            findings.push(self.explain(
                "capacity.redis",
                Resource::RedisServer(name),
                server,
                report,
                Texts {
                    message: format!(
                        "peak clients on redis server `{name}` {} exceed its limit of \
                         {budget}: exceeded by {}",
                        server.peak, server.exceeded_by
                    ),
                    reservations: format!("reserved clients on `{name}`: {}", server.reservations),
                    budget: format!("budget: `maxclients` of redis server `{name}` {budget}"),
                    raise: format!(
                        "raise the `maxclients` of redis server `{name}` and its declared \
                         limit to at least {}",
                        server.peak
                    ),
                },
            )?);
        }

        Ok(findings)
    }

    fn explain(
        &self,
        rule: &'static str,
        resource: Resource<'_>,
        total: &Total,
        report: &CapacityReport,
        texts: Texts,
    ) -> Result<CapacityFinding, EvalError> {
        let unit = resource.unit();
        let gens = self.number(&retiring_generations())?;
        let budget = total.budget.unwrap_or(0);
        let mut lines = Vec::new();
        let mut terms = Vec::new();
        let mut fits = Vec::new();

        for (row, w) in report.workloads.iter().zip(&self.exprs.workloads) {
            let connections = self.number(&resource.connections(w))?;
            if connections == 0 {
                continue;
            }
            let per_process = self.number(&resource.per_process(w))?;
            let mut allocations = Vec::new();
            for (name, e) in resource.allocations(w) {
                allocations.push(format!("{name} {}", self.number(&e)?));
            }
            let pods = if w.class == crate::spec::WorkloadClass::Migrate {
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
                let source = if row.autoscaled {
                    "autoscaler maximum"
                } else {
                    "replicas"
                };
                format!(
                    "max pods {} ({source}), surge {}, retiring {} x {gens} = {}, processes \
                     per pod {}: ({} + {} + {}) x {} = {} peak processes",
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
                join_terms(allocations),
            ));
            terms.push(connections.to_string());

            if w.class != crate::spec::WorkloadClass::Migrate {
                let others = total.peak.saturating_sub(connections);
                let fit = self.largest_fitting(w, resource, others, budget, row.max_pods)?;
                let knob = if row.autoscaled {
                    "maxReplicas"
                } else {
                    "replicas"
                };
                // A fixed workload that cannot fit even at one pod is no useful knob; an
                // autoscaled one is always named, since its maximum is the usual fix.
                let value = match (row.autoscaled, fit) {
                    (_, Some(m)) => Some(m.to_string()),
                    (true, None) => Some("none fits, even 1 exceeds the budget".to_string()),
                    (false, None) => None,
                };
                if let Some(value) = value {
                    fits.push(format!(
                        "largest `{knob}` for `{}` that fits with everything else unchanged: \
                         {value}",
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
            "{or}lower allocation sizes, processes per pod, \
             `dependencyCapacity.retiringGenerations` or the reservations"
        ));
        fits.push(format!("or {}", texts.raise));

        Ok(CapacityFinding {
            rule,
            message: texts.message,
            arithmetic: lines.join("\n"),
            hint: fits.join("; "),
        })
    }

    /// Largest max pods in `1..=current` such that `others` plus the connections of `w`
    /// with that many pods fit `budget`; `None` when even 1 pod does not fit.
    pub(crate) fn largest_fitting(
        &self,
        w: &WorkloadExprs,
        resource: Resource<'_>,
        others: u64,
        budget: u64,
        current: u64,
    ) -> Result<Option<u64>, EvalError> {
        let fits = |m: u64| -> Result<bool, EvalError> {
            let connections = self.number(&resource.connections(&w.with_max_pods(lit(m))))?;
            Ok(others.saturating_add(connections) <= budget)
        };
        if current == 0 || !fits(1)? {
            return Ok(None);
        }
        // Invariant: fits(lo); the peak is monotone in max pods.
        let (mut lo, mut hi) = (1, current);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if fits(mid)? {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        Ok(Some(lo))
    }
}

fn join_terms(terms: Vec<String>) -> String {
    if terms.is_empty() {
        "none".to_string()
    } else {
        terms.join(" + ")
    }
}
