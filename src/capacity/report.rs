//! The capacity report: the formula's expressions evaluated over one preset's values,
//! per workload and per budget.
//!
//! Every figure is an [`Expr`] of [`crate::capacity::formula`] evaluated with
//! [`Expr::evaluate_saturating`]: Helm's int64 arithmetic, which the ConfigMap uses,
//! except that an overflow saturates instead of wrapping. So the report equals the
//! ConfigMap for every value set whose arithmetic fits int64, and absurd values give the
//! largest integer (and a finding) instead of a wrapped number or a panic. A negative
//! figure (only from negative inputs, which the values schema refuses) is shown as 0.

use crate::capacity::formula::{sum_saturating, CapacityExprs, WorkloadExprs};
use crate::capacity::inputs::{capacity_exprs, check_inputs, eval_context};
use crate::expr::{EvalContext, EvalError, Expr};
use crate::spec::Spec;
use serde::Serialize;
use serde_json::Value;

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
    /// Whether an autoscaler owns the pods (`maxReplicas` is then the knob).
    #[serde(skip)]
    pub autoscaled: bool,
    /// Redis clients at peak on each server, in the order of
    /// [`CapacityReport::redis_servers`]: the terms of each server's total.
    #[serde(skip)]
    pub redis_by_server: Vec<u64>,
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
    fn new(
        [workloads, reservations, peak]: [u64; 3],
        limit: Option<u64>,
        reserve: u64,
        budget: Option<u64>,
    ) -> Self {
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

/// The capacity formula of a spec and the values it is evaluated over.
pub struct Capacity<'a> {
    /// The formula: its own, or one shared by every preset of a run.
    pub exprs: std::borrow::Cow<'a, CapacityExprs>,
    pub(crate) ctx: EvalContext<'a>,
}

/// The capacity report of one preset's resolved values.
pub fn capacity_report(spec: &Spec, values: &Value) -> Result<CapacityReport, EvalError> {
    Capacity::of(spec, values).report()
}

impl<'a> Capacity<'a> {
    /// The spec's formula over `values`.
    pub fn of(spec: &'a Spec, values: &'a Value) -> Self {
        Capacity::new(capacity_exprs(spec), eval_context(spec, values))
    }

    /// The spec's formula, already built ([`capacity_exprs`]), over `values`:
    /// `generate` builds it once for every preset.
    pub fn over(exprs: &'a CapacityExprs, spec: &'a Spec, values: &'a Value) -> Self {
        Capacity {
            exprs: std::borrow::Cow::Borrowed(exprs),
            ctx: eval_context(spec, values),
        }
    }

    /// A formula over the values of `ctx`.
    pub fn new(exprs: CapacityExprs, ctx: EvalContext<'a>) -> Self {
        Capacity {
            exprs: std::borrow::Cow::Owned(exprs),
            ctx,
        }
    }

    /// One figure: `expr` evaluated, int64 overflow saturated, a negative result as 0.
    pub fn number(&self, expr: &Expr) -> Result<u64, EvalError> {
        Ok(clamp(expr.evaluate_saturating_int(&self.ctx)?))
    }

    /// Whether `expr` is true in Go's sense.
    pub fn truth(&self, expr: &Expr) -> Result<bool, EvalError> {
        expr.evaluate_saturating_truth(&self.ctx)
    }

    /// Every workload's row and every budget's total.
    ///
    /// Each total is a sum of the workloads' terms ([`CapacityExprs::postgres_peak`]
    /// and the others: `add term... reservation...`). The report evaluates every
    /// workload's terms once, for its row, and adds them up in the same order with the
    /// same saturating `add` the sum's expression evaluates with, instead of evaluating
    /// each workload again per total; a test checks that the totals equal their
    /// expressions evaluated.
    pub fn report(&self) -> Result<CapacityReport, EvalError> {
        check_inputs(&self.exprs, &self.ctx)?;
        let e = &self.exprs;
        let n = e.workloads.len();
        let mut workloads = Vec::with_capacity(n);
        let (mut postgres_terms, mut redis_terms) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut server_terms = vec![Vec::with_capacity(n); e.redis_servers.len()];
        for w in &e.workloads {
            let mut terms = self.row(w)?;
            postgres_terms.push(terms.postgres);
            redis_terms.push(terms.redis);
            for (server, sum) in e.redis_servers.iter().zip(&mut server_terms) {
                let per_process = terms.figures.redis_on(&server.name);
                let clients = terms.figures.peak_processes.saturating_mul(per_process);
                terms.row.redis_by_server.push(clamp(clients));
                sum.push(clients);
            }
            workloads.push(terms.row);
        }
        let raws = |es: &[(String, Expr)]| -> Result<Vec<i64>, EvalError> {
            es.iter().map(|(_, x)| self.raw(x)).collect()
        };
        let pg_reserved = raws(&e.postgres_reservations)?;
        let postgres = Total::new(
            [
                clamp(sum_saturating(&postgres_terms)),
                clamp(sum_saturating(&pg_reserved)),
                clamp(sum_saturating(postgres_terms.iter().chain(&pg_reserved))),
            ],
            Some(self.number(&e.postgres_max_connections)?),
            self.number(&e.postgres_reserve)?,
            Some(self.number(&e.postgres_budget())?),
        );
        let redis_limit = self.number(&e.redis_max_connections)?;
        let redis_reserved = self.raw(&e.redis_reserved_clients)?;
        let redis_total = Total::new(
            [
                clamp(sum_saturating(&redis_terms)),
                clamp(redis_reserved),
                clamp(sum_saturating(redis_terms.iter().chain([&redis_reserved]))),
            ],
            Some(redis_limit),
            0,
            Some(redis_limit),
        );
        let mut redis_servers = Vec::new();
        for (server, terms) in e.redis_servers.iter().zip(&server_terms) {
            // A server without its own `maxclients` is counted but not checked.
            let limit = Some(self.number(&server.max_clients)?).filter(|l| *l > 0);
            let reserved = self.raw(&server.reserved_clients)?;
            let total = Total::new(
                [
                    clamp(sum_saturating(terms)),
                    clamp(reserved),
                    clamp(sum_saturating(terms.iter().chain([&reserved]))),
                ],
                limit,
                0,
                limit,
            );
            redis_servers.push((server.name.clone(), total));
        }
        Ok(CapacityReport {
            workloads,
            postgres,
            redis_total,
            redis_servers,
        })
    }

    /// `expr` evaluated, int64 overflow saturated, before a negative result becomes 0.
    fn raw(&self, expr: &Expr) -> Result<i64, EvalError> {
        expr.evaluate_saturating_int(&self.ctx)
    }

    fn row(&self, w: &WorkloadExprs) -> Result<RowTerms, EvalError> {
        // A workload's inputs are its values: looked up from `workloads.<name>`.
        let ctx = self.ctx.within("workloads", &w.name);
        let figures = w.terms(|e| e.evaluate_saturating_int(&ctx))?;
        let peak_processes = figures.peak_processes; // `mul peak perProcess`, as `postgres_connections` and `redis_connections` are.
        let postgres = peak_processes.saturating_mul(figures.postgres_per_process);
        let redis = peak_processes.saturating_mul(figures.redis_per_process);
        let row = WorkloadRow {
            name: w.name.clone(),
            class: w.class.name().to_string(),
            max_pods: clamp(figures.max_pods),
            surge_pods: clamp(figures.surge_pods),
            retiring: clamp(figures.retiring),
            processes_per_pod: clamp(figures.processes_of_pods),
            peak_processes: clamp(peak_processes),
            postgres_per_process: clamp(figures.postgres_per_process),
            postgres: clamp(postgres),
            redis_per_process: clamp(figures.redis_per_process),
            redis: clamp(redis),
            autoscaled: w.autoscaled.evaluate_saturating_truth(&ctx)?,
            redis_by_server: Vec::with_capacity(self.exprs.redis_servers.len()),
        };
        Ok(RowTerms {
            row,
            postgres,
            redis,
            figures,
        })
    }
}

/// A workload's row and its terms in the totals, before negatives become 0.
struct RowTerms {
    row: WorkloadRow,
    postgres: i64,
    redis: i64,
    figures: crate::capacity::formula::WorkloadTerms,
}

/// A figure as the report shows it: a negative one (only from negative inputs) as 0.
fn clamp(raw: i64) -> u64 {
    u64::try_from(raw).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::fit::{preset_values, presets};

    /// The totals the report adds up from the workloads' terms equal the totals'
    /// expressions evaluated (what the ConfigMap prints), for every example and preset.
    #[test]
    fn totals_equal_their_expressions() {
        for name in crate::spec::testing::EXAMPLES {
            let spec = crate::spec::testing::example(name);
            let all = presets(&spec);
            let mut names: Vec<Option<&str>> = vec![None];
            names.extend(all.keys().map(|k| Some(k.as_str())));
            for preset in names {
                let values = preset_values(&spec, preset).unwrap();
                let capacity = Capacity::of(&spec, &values);
                let report = capacity.report().unwrap();
                let e = &capacity.exprs;
                let n = |x: &Expr| capacity.number(x).unwrap();
                let at = format!("{name} {preset:?}");
                assert_eq!(
                    report.postgres.workloads,
                    n(&e.postgres_workloads()),
                    "{at}"
                );
                assert_eq!(
                    report.postgres.reservations,
                    n(&e.postgres_reserved()),
                    "{at}"
                );
                assert_eq!(report.postgres.peak, n(&e.postgres_peak()), "{at}");
                assert_eq!(
                    report.redis_total.workloads,
                    n(&e.redis_workloads(None)),
                    "{at}"
                );
                assert_eq!(report.redis_total.peak, n(&e.redis_peak()), "{at}");
                for (server, (name, total)) in e.redis_servers.iter().zip(&report.redis_servers) {
                    assert_eq!(&server.name, name);
                    let workloads = n(&e.redis_workloads(Some(name)));
                    assert_eq!(total.workloads, workloads, "{at} {name}");
                    assert_eq!(total.peak, n(&e.redis_server_peak(server)), "{at} {name}");
                }
                for (w, row) in e.workloads.iter().zip(&report.workloads) {
                    assert_eq!(row.peak_processes, n(&w.peak_processes()), "{at}");
                    assert_eq!(row.postgres, n(&w.postgres_connections()), "{at}");
                    assert_eq!(row.redis, n(&w.redis_connections(None)), "{at}");
                }
            }
        }
    }
}
