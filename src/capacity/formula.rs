//! The capacity formula, written once as expressions over values ([`Expr`]).
//!
//! [`WorkloadExprs`] holds one workload's inputs (max pods, the rendered `maxSurge`,
//! processes per pod, connections per process of every allocation) and derives from
//! them surge pods, retiring pods, peak processes and connections; [`CapacityExprs`]
//! adds the budgets and derives the totals. The `<release>-dependency-capacity`
//! ConfigMap prints these expressions as Go template text ([`Expr::to_go`]); the guard,
//! `shipshape capacity` and the findings evaluate the very same expressions natively
//! ([`Expr::evaluate_saturating`], see [`crate::capacity::report`]). The report adds
//! up the workloads' terms it has evaluated for the totals, in the order and with the
//! saturating `add` of the totals' sums, and [`WorkloadExprs::terms`] combines a
//! workload's inputs, each evaluated once, with the saturating `add` and `mul` of the
//! derived expressions written beside it; a test holds every such figure equal to
//! its expression evaluated.

use crate::expr::{lit, val, CmpOp, Expr, ValuePath};
use crate::spec::WorkloadClass;

/// The capacity formula, in one paragraph a platform engineer can check by hand.
///
/// Used verbatim in the chart README, in `--help`, in the capacity ConfigMap and under
/// capacity findings.
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

/// One workload's capacity inputs, and the formula over them.
#[derive(Clone, Debug)]
pub struct WorkloadExprs {
    pub name: String,
    pub class: WorkloadClass,
    /// Whether an autoscaler owns the replica count.
    pub autoscaled: Expr,
    /// Pods at most: the autoscaler maximum, else replicas; 0 when disabled.
    pub max_pods: Expr,
    /// Pods a rollout adds on top (0 when there are no pods): [`surge_pods`] of
    /// `max_pods` and `max_surge`.
    pub surge_pods: Expr,
    /// The rendered `maxSurge`, a count or a percentage (`None` for the migrate hook
    /// Job, which has no rollout).
    pub max_surge: Option<Expr>,
    /// Processes per pod.
    pub processes: Expr,
    /// PostgreSQL connections per process, by allocation (0 while its feature is off;
    /// allocations that are part of another are left out).
    pub postgres: Vec<(String, Expr)>,
    /// Redis clients per process, by allocation: `(name, server, size)`.
    pub redis: Vec<(String, String, Expr)>,
    /// The peak processes as a named template ([`WorkloadExprs::with_named_pods`]),
    /// used in place of the product [`WorkloadExprs::peak_processes`] builds.
    named_peak: Option<Expr>,
}

/// Pods a rolling update adds to `max_pods`: `maxSurge` as a count, or as a percentage
/// of `max_pods` rounded up (as Kubernetes rounds it); 0 when there are no pods.
pub fn surge_pods(max_pods: &Expr, max_surge: &Expr) -> Expr {
    Expr::If(
        Box::new(max_pods.clone().cmp(CmpOp::Gt, lit(0))),
        Box::new(Expr::SurgePods(
            Box::new(max_pods.clone()),
            Box::new(max_surge.clone()),
        )),
        Box::new(lit(0)),
    )
}

/// Old ReplicaSet generations whose pods may still hold connections during a rollout.
pub fn retiring_generations() -> Expr {
    val(&budget_path().child("retiringGenerations"))
}

fn budget_path() -> ValuePath {
    ValuePath::new(["dependencyCapacity"])
}

/// `add a b ... 0`: a sum that is valid Go template text even without terms.
fn sum_with_zero(mut terms: Vec<Expr>) -> Expr {
    terms.push(lit(0));
    Expr::Add(terms)
}

impl WorkloadExprs {
    /// A workload's formula from its inputs; the surge pods follow from `max_pods` and
    /// `max_surge`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: &str,
        class: WorkloadClass,
        autoscaled: Expr,
        max_pods: Expr,
        max_surge: Option<Expr>,
        processes: Expr,
        postgres: Vec<(String, Expr)>,
        redis: Vec<(String, String, Expr)>,
    ) -> Self {
        let surge = max_surge
            .as_ref()
            .map_or_else(|| lit(0), |s| surge_pods(&max_pods, s));
        WorkloadExprs {
            name: name.to_string(),
            class,
            autoscaled,
            max_pods,
            surge_pods: surge,
            max_surge,
            processes,
            postgres,
            redis,
            named_peak: None,
        }
    }

    /// The same workload with other max pods (and the surge pods that follow): the
    /// findings search the largest max pods that fits with it.
    pub fn with_max_pods(&self, max_pods: Expr) -> Self {
        WorkloadExprs::new(
            &self.name,
            self.class,
            self.autoscaled.clone(),
            max_pods,
            self.max_surge.clone(),
            self.processes.clone(),
            self.postgres.clone(),
            self.redis.clone(),
        )
    }

    /// The same workload whose max pods, surge pods and peak processes are the named
    /// templates `name("maxPods")`, `name("surgePods")` and `name("peakProcesses")`
    /// (each the decimal text of its integer): the capacity ConfigMap's template
    /// prints each once and refers to it with `include` wherever the formula uses it,
    /// instead of repeating it in every total. Go's and Sprig's integer functions read
    /// the text back as the same integer, so every term evaluates as before.
    pub fn with_named_pods(&self, name: impl Fn(&str) -> String) -> Self {
        let named =
            |term: &str, e: Expr| crate::expr::named(name(term), Expr::IntString(Box::new(e)));
        let mut w = self.with_max_pods(named("maxPods", self.max_pods.clone()));
        w.surge_pods = named("surgePods", w.surge_pods);
        w.named_peak = Some(named("peakProcesses", w.peak_processes()));
        w
    }

    fn is_hook_job(&self) -> bool {
        self.class == WorkloadClass::Migrate
    }

    /// Pods of retiring generations: `max pods x retiring generations` (none for the
    /// migrate hook Job).
    pub fn retiring(&self) -> Expr {
        if self.is_hook_job() {
            return lit(0);
        }
        Expr::Mul(vec![self.max_pods.clone(), retiring_generations()])
    }

    /// Processes per pod as the report shows them: 0 when the workload has no pods.
    pub fn processes_of_pods(&self) -> Expr {
        Expr::If(
            Box::new(self.max_pods.clone().cmp(CmpOp::Gt, lit(0))),
            Box::new(self.processes.clone()),
            Box::new(lit(0)),
        )
    }

    /// `(max pods + surge pods + max pods x retiring generations) x processes per pod`;
    /// for the migrate hook Job `max pods x processes per pod`.
    pub fn peak_processes(&self) -> Expr {
        if let Some(named) = &self.named_peak {
            return named.clone();
        }
        if self.is_hook_job() {
            // The hook Job: its pods, no surge, no retiring generation.
            return Expr::Mul(vec![self.max_pods.clone(), self.processes.clone()]);
        }
        Expr::Mul(vec![
            Expr::Add(vec![
                self.max_pods.clone(),
                self.surge_pods.clone(),
                self.retiring(),
            ]),
            self.processes.clone(),
        ])
    }

    /// PostgreSQL connections of one process: the sum of its allocations.
    pub fn postgres_per_process(&self) -> Expr {
        sum_with_zero(self.postgres.iter().map(|(_, e)| e.clone()).collect())
    }

    /// PostgreSQL connections at the peak.
    pub fn postgres_connections(&self) -> Expr {
        Expr::Mul(vec![self.peak_processes(), self.postgres_per_process()])
    }

    /// The Redis allocations of one process on one server or (`None`) on all:
    /// `(name, clients)`.
    pub fn redis_allocations(&self, server: Option<&str>) -> Vec<(String, Expr)> {
        self.redis
            .iter()
            .filter(|(_, s, _)| server.is_none_or(|want| want == s))
            .map(|(name, _, e)| (name.clone(), e.clone()))
            .collect()
    }

    /// Redis clients of one process, on one server or (`None`) on all.
    pub fn redis_per_process(&self, server: Option<&str>) -> Expr {
        sum_with_zero(
            self.redis_allocations(server)
                .into_iter()
                .map(|(_, e)| e)
                .collect(),
        )
    }

    /// Redis clients at the peak, on one server or (`None`) on all.
    pub fn redis_connections(&self, server: Option<&str>) -> Expr {
        Expr::Mul(vec![self.peak_processes(), self.redis_per_process(server)])
    }
}

/// One workload's figures, each evaluated once ([`WorkloadExprs::terms`]), before a
/// negative one (only from negative inputs) becomes 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadTerms {
    pub max_pods: i64,
    pub surge_pods: i64,
    pub retiring: i64,
    /// [`WorkloadExprs::processes_of_pods`].
    pub processes_of_pods: i64,
    pub peak_processes: i64,
    pub postgres_per_process: i64,
    /// Redis clients per process on every server: [`WorkloadExprs::redis_per_process`]
    /// of `None`.
    pub redis_per_process: i64,
    /// Each Redis allocation's clients per process, with its server.
    pub redis_allocations: Vec<(String, i64)>,
}

impl WorkloadTerms {
    /// Redis clients per process on one server.
    pub fn redis_on(&self, server: &str) -> i64 {
        sum_saturating(
            self.redis_allocations
                .iter()
                .filter(|(s, _)| s == server)
                .map(|(_, n)| *n),
        )
    }
}

/// `add a b ... 0` as [`Expr::Add`] evaluates it: from 0, saturating (the report's
/// totals add up the workloads' terms with it too).
pub fn sum_saturating<T: std::borrow::Borrow<i64>>(terms: impl IntoIterator<Item = T>) -> i64 {
    terms
        .into_iter()
        .fold(0, |sum, term| sum.saturating_add(*term.borrow()))
}

/// `mul a b ...` as [`Expr::Mul`] evaluates it: from 1, saturating.
fn product_saturating(terms: impl IntoIterator<Item = i64>) -> i64 {
    terms.into_iter().fold(1, i64::saturating_mul)
}

impl WorkloadExprs {
    /// The workload's figures with each input expression evaluated once by `raw`
    /// (which converts to an integer and saturates, as the totals' expressions do), and
    /// combined with the saturating `add` and `mul` of [`WorkloadExprs::peak_processes`]
    /// and the others, instead of building and evaluating each derived expression,
    /// which repeats max pods four times. The inputs are evaluated in the order those
    /// expressions evaluate them, so the first error is theirs. A test holds every
    /// figure equal to its expression evaluated.
    pub fn terms<E>(&self, raw: impl Fn(&Expr) -> Result<i64, E>) -> Result<WorkloadTerms, E> {
        let (max_pods, surge_pods, retiring, processes, peak_processes) = match &self.named_peak {
            // The ConfigMap's form: its peak is a named template over the same inputs.
            Some(named) => {
                let peak = raw(named)?;
                let processes = raw(&self.processes)?;
                let max_pods = raw(&self.max_pods)?;
                (
                    max_pods,
                    raw(&self.surge_pods)?,
                    raw(&self.retiring())?,
                    processes,
                    peak,
                )
            }
            None if self.is_hook_job() => {
                let max_pods = raw(&self.max_pods)?;
                let processes = raw(&self.processes)?;
                let surge_pods = raw(&self.surge_pods)?;
                let peak = product_saturating([max_pods, processes]);
                (max_pods, surge_pods, 0, processes, peak)
            }
            None => {
                let max_pods = raw(&self.max_pods)?;
                let surge_pods = raw(&self.surge_pods)?;
                let retiring = product_saturating([max_pods, raw(&retiring_generations())?]);
                let processes = raw(&self.processes)?;
                let pods = sum_saturating([max_pods, surge_pods, retiring]);
                let peak = product_saturating([pods, processes]);
                (max_pods, surge_pods, retiring, processes, peak)
            }
        };
        let mut postgres = Vec::with_capacity(self.postgres.len());
        for (_, e) in &self.postgres {
            postgres.push(raw(e)?);
        }
        let mut redis_allocations = Vec::with_capacity(self.redis.len());
        for (_, server, e) in &self.redis {
            redis_allocations.push((server.clone(), raw(e)?));
        }
        Ok(WorkloadTerms {
            max_pods,
            surge_pods,
            retiring,
            processes_of_pods: if max_pods > 0 { processes } else { 0 },
            peak_processes,
            postgres_per_process: sum_saturating(postgres),
            redis_per_process: sum_saturating(redis_allocations.iter().map(|(_, n)| *n)),
            redis_allocations,
        })
    }
}

/// One Redis server's budget.
#[derive(Clone, Debug)]
pub struct RedisServerExprs {
    pub name: String,
    /// The server's own client limit (0: not checked on its own).
    pub max_clients: Expr,
    /// Clients of others on this server, counted in its peak.
    pub reserved_clients: Expr,
}

/// The whole formula: every workload, the budgets and the totals.
#[derive(Clone, Debug)]
pub struct CapacityExprs {
    /// Every workload, in report order.
    pub workloads: Vec<WorkloadExprs>,
    /// Connections of other clients counted in the PostgreSQL peak, by name.
    pub postgres_reservations: Vec<(String, Expr)>,
    /// PostgreSQL `max_connections`.
    pub postgres_max_connections: Expr,
    /// Connections kept free below `max_connections`.
    pub postgres_reserve: Expr,
    /// The declared Redis total.
    pub redis_max_connections: Expr,
    /// Clients of others counted in the Redis total.
    pub redis_reserved_clients: Expr,
    /// Each Redis server: the declared ones, then servers only named by allocations.
    pub redis_servers: Vec<RedisServerExprs>,
}

impl CapacityExprs {
    /// The formula over `workloads` with the budgets at their values paths
    /// (`dependencyCapacity...`): the named PostgreSQL reservations and Redis servers are
    /// the declared ones; a server an allocation names without a declaration is counted
    /// with no limit and no reserved clients.
    pub fn new<'n>(
        workloads: Vec<WorkloadExprs>,
        reservations: impl IntoIterator<Item = &'n str>,
        servers: impl IntoIterator<Item = &'n str>,
    ) -> Self {
        let pg = budget_path().child("postgres");
        let redis = budget_path().child("redis");
        let mut redis_servers: Vec<RedisServerExprs> = servers
            .into_iter()
            .map(|name| {
                let path = redis.child("servers").child(name);
                RedisServerExprs {
                    name: name.to_string(),
                    max_clients: val(&path.child("maxClients")),
                    reserved_clients: val(&path.child("reservedClients")),
                }
            })
            .collect();
        for w in &workloads {
            for (_, server, _) in &w.redis {
                if !redis_servers.iter().any(|s| &s.name == server) {
                    redis_servers.push(RedisServerExprs {
                        name: server.clone(),
                        max_clients: lit(0),
                        reserved_clients: lit(0),
                    });
                }
            }
        }
        CapacityExprs {
            postgres_reservations: reservations
                .into_iter()
                .map(|r| (r.to_string(), val(&pg.child("reservations").child(r))))
                .collect(),
            postgres_max_connections: val(&pg.child("maxConnections")),
            postgres_reserve: val(&pg.child("reserve")),
            redis_max_connections: val(&redis.child("maxConnections")),
            redis_reserved_clients: val(&redis.child("reservedClients")),
            redis_servers,
            workloads,
        }
    }

    /// The same formula with each workload's inputs replaced by `f` of them, the
    /// budgets copied as they are.
    pub fn with_each_workload(&self, f: impl FnMut(&WorkloadExprs) -> WorkloadExprs) -> Self {
        CapacityExprs {
            workloads: self.workloads.iter().map(f).collect(),
            postgres_reservations: self.postgres_reservations.clone(),
            postgres_max_connections: self.postgres_max_connections.clone(),
            postgres_reserve: self.postgres_reserve.clone(),
            redis_max_connections: self.redis_max_connections.clone(),
            redis_reserved_clients: self.redis_reserved_clients.clone(),
            redis_servers: self.redis_servers.clone(),
        }
    }

    /// Every values path the formula reads: each workload's inputs, and the whole
    /// `dependencyCapacity` (the budgets, which `check_inputs` also reads whole). A
    /// report over [`crate::values::project_values`] of these paths is the report over
    /// the whole values.
    pub fn value_paths(&self) -> Vec<ValuePath> {
        let mut paths = vec![budget_path()];
        for w in &self.workloads {
            let inputs = [&w.autoscaled, &w.max_pods, &w.surge_pods, &w.processes];
            let allocations = w.postgres.iter().map(|(_, e)| e);
            let redis = w.redis.iter().map(|(_, _, e)| e);
            for e in inputs
                .into_iter()
                .chain(&w.max_surge)
                .chain(&w.named_peak)
                .chain(allocations)
                .chain(redis)
            {
                paths.extend(e.value_paths());
            }
        }
        paths
    }

    fn postgres_terms(&self) -> Vec<Expr> {
        self.workloads
            .iter()
            .map(WorkloadExprs::postgres_connections)
            .collect()
    }

    fn postgres_reservation_terms(&self) -> Vec<Expr> {
        self.postgres_reservations
            .iter()
            .map(|(_, e)| e.clone())
            .collect()
    }

    /// PostgreSQL connections of all workloads at the peak.
    pub fn postgres_workloads(&self) -> Expr {
        sum_with_zero(self.postgres_terms())
    }

    /// The PostgreSQL reservations counted in the peak.
    pub fn postgres_reserved(&self) -> Expr {
        sum_with_zero(self.postgres_reservation_terms())
    }

    /// The PostgreSQL peak: every workload's connections plus the reservations.
    pub fn postgres_peak(&self) -> Expr {
        let mut terms = self.postgres_terms();
        terms.extend(self.postgres_reservation_terms());
        Expr::Add(terms)
    }

    /// The PostgreSQL budget: `max_connections - reserve`.
    pub fn postgres_budget(&self) -> Expr {
        Expr::Sub(
            Box::new(self.postgres_max_connections.clone()),
            Box::new(self.postgres_reserve.clone()),
        )
    }

    fn redis_terms(&self, server: Option<&str>) -> Vec<Expr> {
        self.workloads
            .iter()
            .map(|w| w.redis_connections(server))
            .collect()
    }

    /// Redis clients of all workloads at the peak, on one server or (`None`) on all.
    pub fn redis_workloads(&self, server: Option<&str>) -> Expr {
        sum_with_zero(self.redis_terms(server))
    }

    /// The Redis total: every workload's clients plus the reserved clients.
    pub fn redis_peak(&self) -> Expr {
        let mut terms = self.redis_terms(None);
        terms.push(self.redis_reserved_clients.clone());
        Expr::Add(terms)
    }

    /// The peak of one Redis server: every workload's clients on it plus the server's
    /// reserved clients.
    pub fn redis_server_peak(&self, server: &RedisServerExprs) -> Expr {
        let mut terms = self.redis_terms(Some(&server.name));
        terms.push(server.reserved_clients.clone());
        Expr::Add(terms)
    }
}
