//! The capacity report: the formula's expressions evaluated over one preset's values,
//! per workload and per budget.
//!
//! Every figure is an [`Expr`] of [`crate::capacity::formula`] evaluated with
//! [`Expr::evaluate_saturating`]: Helm's int64 arithmetic, which the ConfigMap uses,
//! except that an overflow saturates instead of wrapping. So the report equals the
//! ConfigMap for every value set whose arithmetic fits int64, and absurd values give the
//! largest integer (and a finding) instead of a wrapped number or a panic. A negative
//! figure (only from negative inputs, which the values schema refuses) is shown as 0.

use crate::capacity::formula::{CapacityExprs, WorkloadExprs};
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
    /// The formula.
    pub exprs: CapacityExprs,
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

    /// A formula over the values of `ctx`.
    pub fn new(exprs: CapacityExprs, ctx: EvalContext<'a>) -> Self {
        Capacity { exprs, ctx }
    }

    /// One figure: `expr` evaluated, int64 overflow saturated, a negative result as 0.
    pub fn number(&self, expr: &Expr) -> Result<u64, EvalError> {
        let value = expr.evaluate_saturating(&self.ctx)?;
        Ok(u64::try_from(crate::expr::sprig_int(&value)).unwrap_or(0))
    }

    /// Whether `expr` is true in Go's sense.
    pub fn truth(&self, expr: &Expr) -> Result<bool, EvalError> {
        Ok(crate::expr::truthy(&expr.evaluate_saturating(&self.ctx)?))
    }

    /// Every workload's row and every budget's total.
    pub fn report(&self) -> Result<CapacityReport, EvalError> {
        check_inputs(&self.exprs, &self.ctx)?;
        let workloads = self
            .exprs
            .workloads
            .iter()
            .map(|w| self.row(w))
            .collect::<Result<_, _>>()?;
        let e = &self.exprs;
        let postgres = Total::new(
            [
                self.number(&e.postgres_workloads())?,
                self.number(&e.postgres_reserved())?,
                self.number(&e.postgres_peak())?,
            ],
            Some(self.number(&e.postgres_max_connections)?),
            self.number(&e.postgres_reserve)?,
            Some(self.number(&e.postgres_budget())?),
        );
        let redis_limit = self.number(&e.redis_max_connections)?;
        let redis_total = Total::new(
            [
                self.number(&e.redis_workloads(None))?,
                self.number(&e.redis_reserved_clients)?,
                self.number(&e.redis_peak())?,
            ],
            Some(redis_limit),
            0,
            Some(redis_limit),
        );
        let mut redis_servers = Vec::new();
        for server in &e.redis_servers {
            // A server without its own `maxclients` is counted but not checked.
            let limit = Some(self.number(&server.max_clients)?).filter(|l| *l > 0);
            let total = Total::new(
                [
                    self.number(&e.redis_workloads(Some(&server.name)))?,
                    self.number(&server.reserved_clients)?,
                    self.number(&e.redis_server_peak(server))?,
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

    fn row(&self, w: &WorkloadExprs) -> Result<WorkloadRow, EvalError> {
        Ok(WorkloadRow {
            name: w.name.clone(),
            class: w.class.name().to_string(),
            max_pods: self.number(&w.max_pods)?,
            surge_pods: self.number(&w.surge_pods)?,
            retiring: self.number(&w.retiring())?,
            processes_per_pod: self.number(&w.processes_of_pods())?,
            peak_processes: self.number(&w.peak_processes())?,
            postgres_per_process: self.number(&w.postgres_per_process())?,
            postgres: self.number(&w.postgres_connections())?,
            redis_per_process: self.number(&w.redis_per_process(None))?,
            redis: self.number(&w.redis_connections(None))?,
            autoscaled: self.truth(&w.autoscaled)?,
        })
    }
}
