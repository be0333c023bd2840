//! The formula's unit tests. Workloads and budgets are described as plain numbers (as
//! a values tree) and go through the one formula: [`CapacityExprs`] evaluated by
//! [`Capacity`], the same path the guard and the ConfigMap use.

use crate::capacity::explain::{CapacityFinding, Resource};
use crate::capacity::formula::{surge_pods, CapacityExprs, WorkloadExprs};
use crate::capacity::report::{capacity_report, Capacity, CapacityReport, Total};
use crate::capacity::tables::{format_markdown, format_table};
use crate::capacity::FORMULA;
use crate::expr::{lit, val, EvalContext, Expr, ValuePath};
use crate::spec::WorkloadClass;
use serde_json::{json, Map, Value};

/// `maxSurge` of a rolling update, as rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Surge {
    /// An absolute number of extra pods.
    Pods(u64),
    /// A percentage of the desired pods, rounded up as Kubernetes does.
    Percent(u64),
}

impl Surge {
    fn value(self) -> Value {
        match self {
            Surge::Pods(n) => json!(n),
            Surge::Percent(p) => json!(format!("{p}%")),
        }
    }

    /// The formula's surge pods for `max_pods`.
    fn pods(self, max_pods: u64) -> u64 {
        let values = json!({});
        let capacity = Capacity::new(fixture_exprs(&[], &Budgets::default()), ctx(&values));
        capacity
            .number(&surge_pods(&lit(max_pods), &Expr::Lit(self.value())))
            .unwrap()
    }
}

/// One Redis client allocation of a test workload.
#[derive(Debug, Clone)]
struct RedisAllocation {
    name: String,
    server: String,
    clients: u64,
}

/// A test workload in plain numbers; [`workload`] turns it into the formula's inputs.
#[derive(Debug, Clone)]
struct WorkloadLoad {
    name: String,
    class: WorkloadClass,
    enabled: bool,
    /// Fixed replicas; for `migrate`, the Job's pods.
    replicas: u64,
    /// The autoscaler's maximum when one is on (ignored for `migrate`).
    autoscaler_max: Option<u64>,
    surge: Surge,
    processes_per_pod: u64,
    postgres: Vec<(String, u64)>,
    redis: Vec<RedisAllocation>,
}

fn class(name: &str) -> WorkloadClass {
    match name {
        "api" => WorkloadClass::Api,
        "jobs" => WorkloadClass::Jobs,
        "pool" => WorkloadClass::Pool,
        "worker" => WorkloadClass::Worker,
        "migrate" => WorkloadClass::Migrate,
        other => panic!("unknown class {other}"),
    }
}

fn load(name: &str, class_name: &str) -> WorkloadLoad {
    WorkloadLoad {
        name: name.to_string(),
        class: class(class_name),
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

    /// The workload's values under `workloads.<name>`.
    fn values(&self) -> Value {
        let sizes = |allocations: Vec<(&String, u64)>| {
            let map: Map<String, Value> = allocations
                .into_iter()
                .map(|(n, c)| (n.clone(), json!({ "size": c })))
                .collect();
            Value::Object(map)
        };
        json!({
            "enabled": self.enabled,
            "replicaCount": self.replicas,
            "autoscaling": {
                "enabled": self.autoscaler_max.is_some(),
                "maxReplicas": self.autoscaler_max.unwrap_or(0),
            },
            "rollingUpdate": {"maxSurge": self.surge.value()},
            "processesPerPod": self.processes_per_pod,
            "postgres": sizes(self.postgres.iter().map(|(n, c)| (n, *c)).collect()),
            "redis": sizes(self.redis.iter().map(|a| (&a.name, a.clients)).collect()),
        })
    }
}

/// The formula's inputs of a test workload: max pods is the autoscaler's maximum when
/// one is on, else the replicas (the Job's pods for `migrate`), 0 when disabled.
fn workload(load: &WorkloadLoad) -> WorkloadExprs {
    let path = ValuePath::new(["workloads", &load.name]);
    let autoscaled = val(&path.child("autoscaling").child("enabled"));
    let replicas = val(&path.child("replicaCount"));
    let pods = if load.class == WorkloadClass::Migrate {
        replicas
    } else {
        Expr::If(
            Box::new(autoscaled.clone()),
            Box::new(val(&path.child("autoscaling").child("maxReplicas"))),
            Box::new(replicas),
        )
    };
    let max_pods = Expr::If(
        Box::new(val(&path.child("enabled"))),
        Box::new(pods),
        Box::new(lit(0)),
    );
    let max_surge = (load.class != WorkloadClass::Migrate)
        .then(|| val(&path.child("rollingUpdate").child("maxSurge")));
    let size =
        |dependency: &str, alloc: &str| val(&path.child(dependency).child(alloc).child("size"));
    WorkloadExprs::new(
        &load.name,
        load.class,
        autoscaled.clone(),
        max_pods,
        max_surge,
        val(&path.child("processesPerPod")),
        load.postgres
            .iter()
            .map(|(n, _)| (n.clone(), size("postgres", n)))
            .collect(),
        load.redis
            .iter()
            .map(|a| (a.name.clone(), a.server.clone(), size("redis", &a.name)))
            .collect(),
    )
}

/// The declared limit of one Redis server.
#[derive(Debug, Clone)]
struct RedisServerBudget {
    name: String,
    max_clients: Option<u64>,
    reserved_clients: u64,
}

/// The declared dependency budgets, as `dependencyCapacity` values.
#[derive(Debug, Clone, Default)]
struct Budgets {
    retiring_generations: u64,
    postgres_max_connections: u64,
    postgres_reserve: u64,
    postgres_reservations: Vec<(String, u64)>,
    redis_max_connections: u64,
    redis_reserved_clients: u64,
    redis_servers: Vec<RedisServerBudget>,
}

impl Budgets {
    fn values(&self) -> Value {
        let reservations: Map<String, Value> = self
            .postgres_reservations
            .iter()
            .map(|(n, c)| (n.clone(), json!(c)))
            .collect();
        let servers: Map<String, Value> = self
            .redis_servers
            .iter()
            .map(|s| {
                let server = json!({
                    "maxClients": s.max_clients.unwrap_or(0),
                    "reservedClients": s.reserved_clients,
                });
                (s.name.clone(), server)
            })
            .collect();
        json!({
            "retiringGenerations": self.retiring_generations,
            "postgres": {
                "maxConnections": self.postgres_max_connections,
                "reserve": self.postgres_reserve,
                "reservations": reservations,
            },
            "redis": {
                "maxConnections": self.redis_max_connections,
                "reservedClients": self.redis_reserved_clients,
                "servers": servers,
            },
        })
    }
}

fn fixture_exprs(loads: &[WorkloadLoad], budgets: &Budgets) -> CapacityExprs {
    CapacityExprs::new(
        loads.iter().map(workload).collect(),
        budgets
            .postgres_reservations
            .iter()
            .map(|(n, _)| n.as_str()),
        budgets.redis_servers.iter().map(|s| s.name.as_str()),
    )
}

fn fixture_values(loads: &[WorkloadLoad], budgets: &Budgets) -> Value {
    let workloads: Map<String, Value> =
        loads.iter().map(|l| (l.name.clone(), l.values())).collect();
    json!({"workloads": workloads, "dependencyCapacity": budgets.values()})
}

fn ctx(values: &Value) -> EvalContext<'_> {
    EvalContext {
        values,
        item: None,
        release_name: "",
        release_namespace: "",
        chart_name: "",
        chart_version: "",
        chart_app_version: "",
        named: None,
        base: None,
    }
}

/// The report of the test workloads and budgets, through the formula's expressions.
fn compute_capacity(loads: &[WorkloadLoad], budgets: &Budgets) -> CapacityReport {
    let values = fixture_values(loads, budgets);
    Capacity::new(fixture_exprs(loads, budgets), ctx(&values))
        .report()
        .unwrap()
}

/// The findings of `report`, which comes from `compute_capacity(loads, budgets)`.
fn capacity_findings(
    report: &CapacityReport,
    loads: &[WorkloadLoad],
    budgets: &Budgets,
) -> Vec<CapacityFinding> {
    let values = fixture_values(loads, budgets);
    let capacity = Capacity::new(fixture_exprs(loads, budgets), ctx(&values));
    assert_eq!(&capacity.report().unwrap(), report);
    capacity.findings(report).unwrap()
}

/// The largest fitting max pods of a test workload's PostgreSQL connections.
fn largest_fitting(
    load: &WorkloadLoad,
    gens: u64,
    per_process: u64,
    others: u64,
    budget: u64,
    current: u64,
) -> Option<u64> {
    let loads = [load.clone()];
    let budgets = Budgets {
        retiring_generations: gens,
        ..Budgets::default()
    };
    let values = fixture_values(&loads, &budgets);
    let capacity = Capacity::new(fixture_exprs(&loads, &budgets), ctx(&values));
    let w = &capacity.exprs.workloads[0];
    assert_eq!(
        capacity.number(&w.postgres_per_process()).unwrap(),
        per_process
    );
    capacity
        .largest_fitting(w, Resource::Postgres, others, budget, current)
        .unwrap()
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
    assert!(f
        .hint
        .contains("largest `maxReplicas` for `api` that fits with everything else unchanged: 11"));
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
    assert!(findings[0]
        .hint
        .contains("largest `maxReplicas` for `core` that fits with everything else unchanged: 3"));
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
        budgets.redis_servers = vec![server("critical", critical, 50), server("cache", cache, 0)];
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
    assert!(findings[0]
        .hint
        .contains("largest `maxReplicas` for `api` that fits with everything else unchanged: 4"));
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
    // The largest values each input can hold: int64 counts and sizes (Helm's integers),
    // the largest percentage `maxSurge` accepts, a u32 of retiring generations.
    let huge = i64::MAX as u64;
    let loads = [load("api", "api")
        .hpa(huge)
        .surge(Surge::Percent(999))
        .ppp(huge)
        .pg(&[("pool", huge)])];
    let budgets = Budgets {
        retiring_generations: u64::from(u32::MAX),
        postgres_max_connections: 10,
        ..Budgets::default()
    };
    let report = compute_capacity(&loads, &budgets);
    // Saturated at the largest int64, where Helm's arithmetic would wrap.
    assert_eq!(report.postgres.peak, huge);
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
    assert!(md.contains("| postgresql | 1672 | 102 | 1774 | 5000 | 20 | 4980 | ok, 3206 spare |"));
    assert!(md.contains("| redis total | 4224 | 128 | 4352 | 10000 | 0 | 10000 | ok, 5648 spare |"));
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

// The inputs a spec's workloads read, on the examples' specs and values.

/// Each example's name and spec, for the tests of `capacity`'s files.
pub(super) fn example_specs() -> Vec<(&'static str, crate::spec::Spec)> {
    ["agent-platform", "llm-gateway", "web-shop"]
        .into_iter()
        .map(|name| (name, example(name).0))
        .collect()
}

fn example(name: &str) -> (crate::spec::Spec, Value) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
        .join("shipshape.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let spec = crate::spec::load_spec(&text, name).unwrap();
    let values = crate::capacity::fit::preset_values(&spec, None).unwrap();
    (spec, values)
}

fn set(values: &mut Value, path: &str, value: Value) {
    let keys: Vec<&str> = path.split('.').collect();
    let mut node = values;
    for k in &keys[..keys.len() - 1] {
        node = node.get_mut(*k).unwrap_or_else(|| panic!("{path}"));
    }
    node[keys[keys.len() - 1]] = value;
}

/// `(autoscaled, max pods, surge pods, retiring, peak processes)` of one workload.
fn shape(spec: &crate::spec::Spec, values: &Value, name: &str) -> (bool, u64, u64, u64, u64) {
    let capacity = Capacity::of(spec, values);
    let w = capacity
        .exprs
        .workloads
        .iter()
        .find(|w| w.name == name)
        .unwrap();
    let n = |e: &Expr| capacity.number(e).unwrap();
    (
        capacity.truth(&w.autoscaled).unwrap(),
        n(&w.max_pods),
        n(&w.surge_pods),
        n(&w.retiring()),
        n(&w.peak_processes()),
    )
}

#[test]
fn api_max_pods_follow_the_autoscaler_flags() {
    let (spec, mut values) = example("llm-gateway");
    set(
        &mut values,
        "dependencyCapacity.retiringGenerations",
        json!(2),
    );
    set(&mut values, "workloads.api.replicaCount", json!(2));
    set(
        &mut values,
        "workloads.api.autoscaling.maxReplicas",
        json!(9),
    );
    set(&mut values, "workloads.api.keda.maxReplicas", json!(7));
    set(
        &mut values,
        "workloads.api.rollingUpdate.maxSurge",
        json!("50%"),
    );
    set(&mut values, "workloads.api.processesPerPod", json!(3));
    // (hpa, keda, autoscaled, max pods, surge: 50% rounded up)
    for (hpa, keda, autoscaled, max, surge) in [
        (false, false, false, 2, 1),
        (true, false, true, 9, 5),
        (false, true, true, 7, 4),
        (true, true, true, 9, 5),
    ] {
        set(&mut values, "workloads.api.autoscaling.enabled", json!(hpa));
        set(&mut values, "workloads.api.keda.enabled", json!(keda));
        let peak = (max + surge + 2 * max) * 3;
        assert_eq!(
            shape(&spec, &values, "api"),
            (autoscaled, max, surge, 2 * max, peak),
            "hpa {hpa} keda {keda}"
        );
    }
    set(&mut values, "workloads.api.enabled", json!(false));
    assert_eq!(shape(&spec, &values, "api"), (true, 0, 0, 0, 0));
    let row = capacity_report(&spec, &values).unwrap().workloads[0].clone();
    assert_eq!((row.name.as_str(), row.processes_per_pod), ("api", 0));
}

#[test]
fn other_workloads_count_their_replicas_and_the_hook_job_one_pod() {
    let (spec, mut values) = example("agent-platform");
    set(
        &mut values,
        "dependencyCapacity.retiringGenerations",
        json!(1),
    );
    set(&mut values, "workloads.jobs.replicaCount", json!(3));
    set(
        &mut values,
        "workloads.jobs.rollingUpdate.maxSurge",
        json!(0),
    );
    set(&mut values, "workloads.temporal.replicaCount", json!(4));
    set(
        &mut values,
        "workloads.temporal.rollingUpdate.maxSurge",
        json!(2),
    );
    assert_eq!(shape(&spec, &values, "jobs"), (false, 3, 0, 3, 6));
    assert_eq!(shape(&spec, &values, "temporal"), (false, 4, 2, 4, 10));
    // The hook Job: one pod, no surge, no retiring generation.
    assert_eq!(shape(&spec, &values, "migrate"), (false, 1, 0, 0, 1));
    let capacity = Capacity::of(&spec, &values);
    let migrate = capacity
        .exprs
        .workloads
        .iter()
        .find(|w| w.name == "migrate")
        .unwrap();
    assert!(migrate.max_surge.is_none());
    assert!(capacity.exprs.workloads.iter().all(|w| w.name == "migrate"
        || w.max_surge
            == Some(val(&ValuePath::new([
                "workloads",
                &w.name,
                "rollingUpdate",
                "maxSurge"
            ])))));
    set(&mut values, "workloads.migrate.enabled", json!(false));
    set(&mut values, "workloads.jobs.enabled", json!(false));
    assert_eq!(shape(&spec, &values, "migrate"), (false, 0, 0, 0, 0));
    assert_eq!(shape(&spec, &values, "jobs"), (false, 0, 0, 0, 0));
}

#[test]
fn allocations_follow_features_part_of_and_the_stated_sizes() {
    let (spec, mut values) = example("llm-gateway");
    set(&mut values, "workloads.batch-worker.enabled", json!(true));
    let per_process = |values: &Value, name: &str| {
        let capacity = Capacity::of(&spec, values);
        let w = capacity
            .exprs
            .workloads
            .iter()
            .find(|w| w.name == name)
            .unwrap()
            .clone();
        let names: Vec<&str> = w.postgres.iter().map(|(n, _)| n.as_str()).collect();
        // `telemetry_settlement` is part of `telemetry`: counted there, not twice.
        assert_eq!(
            names,
            ["control", "foreground", "telemetry", "telemetry_worker"]
        );
        (
            capacity.number(&w.postgres_per_process()).unwrap(),
            capacity.number(&w.redis_per_process(None)).unwrap(),
            capacity
                .number(&w.redis_per_process(Some("cache")))
                .unwrap(),
        )
    };
    assert_eq!(per_process(&values, "api"), (38, 96, 32));
    set(&mut values, "features.durableTelemetry", json!(false));
    assert_eq!(per_process(&values, "api"), (28, 96, 32));
    // Stated sizes are the `sizesFrom` workload's in every workload: the batch worker
    // counts the api's control pool, never its own (fixed) size.
    set(
        &mut values,
        "workloads.api.postgres.control.size",
        json!(30),
    );
    set(
        &mut values,
        "workloads.batch-worker.postgres.control.size",
        json!(1),
    );
    set(&mut values, "workloads.api.redis.critical.size", json!(10));
    assert_eq!(per_process(&values, "api"), (38, 42, 32));
    assert_eq!(per_process(&values, "batch-worker"), (38, 42, 32));
}

#[test]
fn a_size_without_another_workload_applies_while_it_is_disabled() {
    let (spec, mut values) = example("agent-platform");
    let api_per_process = |values: &Value| {
        let capacity = Capacity::of(&spec, values);
        capacity
            .number(&capacity.exprs.workloads[0].postgres_per_process())
            .unwrap()
    };
    assert_eq!(
        capacity_report(&spec, &values).unwrap().workloads[0].name,
        "api"
    );
    assert_eq!(api_per_process(&values), 12);
    set(&mut values, "workloads.jobs.enabled", json!(false));
    assert_eq!(api_per_process(&values), 15);
}

#[test]
fn the_spec_declares_the_reservations_and_servers() {
    let (spec, _) = example("llm-gateway");
    let exprs = crate::capacity::capacity_exprs(&spec);
    let reservations: Vec<&str> = exprs
        .postgres_reservations
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(reservations, ["migrations", "operators"]);
    let servers: Vec<&str> = exprs
        .redis_servers
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(servers, ["cache", "critical"]);
    let names: Vec<&str> = exprs.workloads.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["api", "batch-worker"]);
}

#[test]
fn inputs_the_formula_would_read_as_zero_are_refused() {
    let (spec, values) = example("llm-gateway");
    assert!(capacity_report(&spec, &values).is_ok());
    for (path, bad) in [
        ("workloads.api.rollingUpdate.maxSurge", json!("abc")),
        ("workloads.api.rollingUpdate.maxSurge", json!("1000%")),
        ("workloads.batch-worker.rollingUpdate.maxSurge", json!(-1)),
        ("workloads.api.rollingUpdate.maxSurge", json!(1.5)),
    ] {
        let mut v = values.clone();
        set(&mut v, path, bad.clone());
        let e = capacity_report(&spec, &v).unwrap_err();
        assert_eq!(e.expression, format!(".Values.{path}"));
        assert!(
            e.reason
                .starts_with(&format!("`{path}` is {}, not a whole number", bad)),
            "{e}"
        );
    }
    let mut v = values.clone();
    set(
        &mut v,
        "dependencyCapacity.postgres.maxConnections",
        json!(-1),
    );
    let e = capacity_report(&spec, &v).unwrap_err();
    assert!(e
        .reason
        .starts_with("`dependencyCapacity` does not fit its type"));
}

/// Every figure the ConfigMap prints, with the name it prints it under.
fn printed_figures(exprs: &CapacityExprs) -> Vec<(String, Expr)> {
    let mut out = vec![(
        "retiringGenerations".to_string(),
        super::formula::retiring_generations(),
    )];
    for w in &exprs.workloads {
        out.push((format!("{}.maxPods", w.name), w.max_pods.clone()));
        out.push((format!("{}.surgePods", w.name), w.surge_pods.clone()));
        out.push((format!("{}.peakProcesses", w.name), w.peak_processes()));
        out.push((format!("{}.postgres", w.name), w.postgres_connections()));
        out.push((format!("{}.redis", w.name), w.redis_connections(None)));
    }
    out.push(("postgres.peak".into(), exprs.postgres_peak()));
    out.push(("postgres.budget".into(), exprs.postgres_budget()));
    out.push(("redis.peak".into(), exprs.redis_peak()));
    for s in &exprs.redis_servers {
        out.push((format!("redis.{}.peak", s.name), exprs.redis_server_peak(s)));
    }
    out
}

/// Helm's figure: `toString (int x)` of the wrapping int64 arithmetic.
fn helm_figure(e: &Expr, ctx: &EvalContext<'_>) -> i64 {
    crate::expr::sprig_int(&e.evaluate(ctx).unwrap())
}

#[test]
fn the_report_is_helms_arithmetic_whenever_it_does_not_overflow() {
    let mut rng: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |below: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % below
    };
    for name in ["agent-platform", "llm-gateway"] {
        let (spec, defaults) = example(name);
        for _ in 0..40 {
            let mut values = defaults.clone();
            set(
                &mut values,
                "dependencyCapacity.retiringGenerations",
                json!(next(4)),
            );
            for w in crate::capacity::workload_exprs(&spec) {
                let path = format!("workloads.{}", w.name);
                set(&mut values, &format!("{path}.enabled"), json!(next(4) > 0));
                set(
                    &mut values,
                    &format!("{path}.processesPerPod"),
                    json!(next(5)),
                );
                if w.max_surge.is_some() {
                    set(&mut values, &format!("{path}.replicaCount"), json!(next(6)));
                    let surge = if next(2) == 0 {
                        json!(next(3))
                    } else {
                        json!(format!("{}%", next(150)))
                    };
                    set(
                        &mut values,
                        &format!("{path}.rollingUpdate.maxSurge"),
                        surge,
                    );
                }
            }
            let capacity = Capacity::of(&spec, &values);
            let report = capacity.report().unwrap();
            let figures: std::collections::BTreeMap<String, i64> = printed_figures(&capacity.exprs)
                .into_iter()
                .map(|(k, e)| (k, helm_figure(&e, &capacity.ctx)))
                .collect();
            assert_eq!(figures["postgres.peak"], report.postgres.peak as i64);
            assert_eq!(figures["redis.peak"], report.redis_total.peak as i64);
            assert_eq!(
                figures["postgres.budget"],
                report.postgres.budget.unwrap() as i64
            );
            for row in &report.workloads {
                for (key, figure) in [
                    ("maxPods", row.max_pods),
                    ("surgePods", row.surge_pods),
                    ("peakProcesses", row.peak_processes),
                    ("postgres", row.postgres),
                    ("redis", row.redis),
                ] {
                    assert_eq!(
                        figures[&format!("{}.{key}", row.name)],
                        figure as i64,
                        "{values}"
                    );
                }
            }
            for (server, total) in &report.redis_servers {
                assert_eq!(figures[&format!("redis.{server}.peak")], total.peak as i64);
            }
        }
    }
}

#[test]
fn the_largest_values_the_schema_accepts_saturate_where_helm_would_wrap() {
    // Every count at 2147483647 (the schema's bound), the largest surge percentage:
    // (max pods + surge + max pods x retiring) x processes x size overflows int64.
    let (spec, mut values) = example("agent-platform");
    let int_max = json!(crate::model::INT_MAX);
    set(
        &mut values,
        "dependencyCapacity.retiringGenerations",
        int_max.clone(),
    );
    set(
        &mut values,
        "workloads.temporal.replicaCount",
        int_max.clone(),
    );
    set(
        &mut values,
        "workloads.temporal.processesPerPod",
        int_max.clone(),
    );
    set(
        &mut values,
        "workloads.temporal.rollingUpdate.maxSurge",
        json!("999%"),
    );
    let capacity = Capacity::of(&spec, &values);
    let report = capacity.report().unwrap();
    let temporal = report
        .workloads
        .iter()
        .find(|r| r.name == "temporal")
        .unwrap();
    assert_eq!(temporal.max_pods, 2_147_483_647);
    assert_eq!(temporal.surge_pods, 21_453_361_634);
    assert_eq!(temporal.retiring, 2_147_483_647 * 2_147_483_647);
    assert_eq!(temporal.peak_processes, i64::MAX as u64);
    assert_eq!(temporal.postgres, i64::MAX as u64);
    assert_eq!(report.postgres.peak, i64::MAX as u64);
    // Helm's arithmetic wraps to a meaningless figure; the report refuses the values.
    let w = capacity
        .exprs
        .workloads
        .iter()
        .find(|w| w.name == "temporal")
        .unwrap();
    assert_ne!(helm_figure(&w.peak_processes(), &capacity.ctx), i64::MAX);
    let findings = capacity.findings(&report).unwrap();
    assert_eq!(findings.len(), 1);
    // Even one pod exceeds the budget with that many retiring generations: lowering
    // `replicas` is no fix, so it is not suggested.
    assert!(
        !findings[0].hint.contains("`temporal`"),
        "{}",
        findings[0].hint
    );
    assert!(findings[0]
        .message
        .starts_with(&format!("peak postgresql connections {} exceed", i64::MAX)));
}

#[test]
fn a_stated_size_comes_from_the_sizes_from_workload_only() {
    // Only `web` (the `sizesFrom` workload) states `main`; `bulk` declares it without a
    // setting, and still counts `web`'s size, because every process reads that one file.
    let text = r#"
chart: {name: t, version: 1.0.0, appVersion: "1", description: t}
image: {repository: example/t}
startupSettings:
  section: s
  sizesFrom: web
  foreground:
    lock: {key: fl, seconds: 1}
    statement: {key: fs, seconds: 2}
    transaction: {key: ft, seconds: 3}
  background:
    lock: {key: bl, seconds: 1}
    statement: {key: bs, seconds: 2}
    transaction: {key: bt, seconds: 3}
workloads:
  api:
    web:
      postgres:
        main: {size: 20, setting: main_pool}
        own: {size: 3}
  worker:
    bulk:
      postgres:
        main: {size: 5}
        own: {size: 4}
"#;
    let spec = crate::spec::load_spec(text, "t").unwrap();
    let values = crate::capacity::fit::preset_values(&spec, None).unwrap();
    let capacity = Capacity::of(&spec, &values);
    let per_process: Vec<(String, u64)> = capacity
        .exprs
        .workloads
        .iter()
        .map(|w| {
            let n = capacity.number(&w.postgres_per_process()).unwrap();
            (w.name.clone(), n)
        })
        .collect();
    assert_eq!(
        per_process,
        [("bulk".to_string(), 24), ("web".to_string(), 23)]
    );
}

#[test]
fn a_finding_with_one_term_and_no_reservations() {
    let (loads, budgets) = evaluation(17);
    let report = compute_capacity(&loads, &budgets);
    let findings = capacity_findings(&report, &loads, &budgets);
    assert_eq!(
        findings[0].arithmetic,
        "`api` (api): max pods 1 (replicas), surge 1, retiring 1 x 1 = 1, processes per pod 1: \
         (1 + 1 + 1) x 1 = 3 peak processes; 3 x 28 per process (control 20 + foreground 8) \
         = 84 connections\n\
         reservations: none\n\
         peak: 84 connections\n\
         budget: `max_connections` 100 - reserve 17 = 83\n\
         exceeded by 1"
    );
}

#[test]
fn largest_fitting_boundaries() {
    // (m + 1 + m) x 10 connections for m pods, one retiring generation.
    let api = load("api", "api")
        .hpa(8)
        .surge(Surge::Pods(1))
        .pg(&[("pool", 10)]);
    // (budget, current max pods, largest fitting)
    for (budget, current, fit) in [
        (100, 1, Some(1)),
        (100, 2, Some(2)),
        (100, 3, Some(3)),
        (100, 5, Some(4)),
        // exactly met: 4 pods use 90
        (90, 8, Some(4)),
        (89, 8, Some(3)),
        (30, 8, Some(1)),
        (29, 8, None),
        (100, 0, None),
    ] {
        assert_eq!(
            largest_fitting(&api, 1, 10, 0, budget, current),
            fit,
            "budget {budget}, current {current}"
        );
    }
    // Others' connections count against the same budget.
    assert_eq!(largest_fitting(&api, 1, 10, 20, 90, 8), Some(3));
    // The search spans the largest integer without overflowing or walking it:
    // (2m + 1) x 10 <= 4294967295 for m = 214748364.
    let huge = i64::MAX as u64;
    assert_eq!(
        largest_fitting(&api, 1, 10, 0, u64::from(u32::MAX), huge),
        Some(214_748_364)
    );
}

/// Every figure [`WorkloadExprs::terms`] combines from its inputs equals its own
/// expression evaluated, for every example and preset and for values at the edges:
/// counts so large that the products saturate, negative ones, zero replicas, a
/// disabled workload; and for the capacity ConfigMap's named form.
#[test]
fn workload_terms_equal_their_expressions() {
    let mut checked = 0;
    for name in ["agent-platform", "llm-gateway", "web-shop"] {
        let (spec, _) = example(name);
        let all = crate::capacity::fit::presets(&spec);
        let mut cases = Vec::new();
        let mut names: Vec<Option<&str>> = vec![None];
        names.extend(all.keys().map(|k| Some(k.as_str())));
        for preset in names {
            let values = crate::capacity::fit::preset_values(&spec, preset).unwrap();
            for (workload, _) in spec.workloads.all() {
                for (key, value) in [
                    ("replicaCount", json!(i64::MAX)),
                    ("replicaCount", json!(-3)),
                    ("replicaCount", json!(0)),
                    ("enabled", json!(false)),
                    ("processesPerPod", json!(i64::MAX)),
                    ("processesPerPod", json!(-2)),
                ] {
                    let mut v = values.clone();
                    if v["workloads"][workload].get(key).is_some() {
                        v["workloads"][workload][key] = value;
                        cases.push(v);
                    }
                }
            }
            let mut huge = values.clone();
            huge["dependencyCapacity"]["retiringGenerations"] = json!(i64::MAX);
            cases.push(huge);
            cases.push(values);
        }
        for values in &cases {
            let capacity = Capacity::of(&spec, values);
            let raw = |e: &Expr| e.evaluate_saturating_int(&capacity.ctx);
            for plain in &capacity.exprs.workloads {
                let named = plain.with_named_pods(|term| format!("{}.{term}", plain.name));
                for w in [plain, &named] {
                    let terms = w.terms(raw).unwrap();
                    let expected = |e: &Expr| raw(e).unwrap();
                    let at = format!("{name} {}", w.name);
                    assert_eq!(terms.max_pods, expected(&w.max_pods), "{at}");
                    assert_eq!(terms.surge_pods, expected(&w.surge_pods), "{at}");
                    assert_eq!(terms.retiring, expected(&w.retiring()), "{at}");
                    assert_eq!(
                        terms.processes_of_pods,
                        expected(&w.processes_of_pods()),
                        "{at}"
                    );
                    assert_eq!(terms.peak_processes, expected(&w.peak_processes()), "{at}");
                    assert_eq!(
                        terms.postgres_per_process,
                        expected(&w.postgres_per_process()),
                        "{at}"
                    );
                    assert_eq!(
                        terms.redis_per_process,
                        expected(&w.redis_per_process(None)),
                        "{at}"
                    );
                    for server in &capacity.exprs.redis_servers {
                        assert_eq!(
                            terms.redis_on(&server.name),
                            expected(&w.redis_per_process(Some(&server.name))),
                            "{at} {}",
                            server.name
                        );
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 1000, "only {checked} workloads checked");
}
