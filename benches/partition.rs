//! How the partition proof (`jobs.partition`: every scheduled job owned by exactly one
//! pod) grows with the jobs and the pools. Issue #15 asks that it stay linear in jobs
//! x pools; this prints, as a Markdown table, the time of one proof of all four cases
//! (the api and the jobs workload each on and off, as `generate` proves them) for
//! registries of growing size, each pool owning its share of the jobs.
//!
//!   cargo bench --bench partition            sizes up to 3,200 jobs and 1,600 pools
//!   cargo bench --bench partition -- --quick two small sizes, a few runs each
//!
//! It asserts nothing about time.

use shipshape::guards::partition::{prove_partition, Pool};
use shipshape::model::stores::ScheduledJob;
use std::hint::black_box;
use std::time::Instant;

/// `jobs` locked jobs (every third kept out of the api) and `pools` pools, pool `k`
/// owning the jobs whose number is `k` modulo `pools`.
fn registry(jobs: usize, pools: usize) -> (Vec<ScheduledJob>, Vec<Pool>) {
    let job = |i: usize| format!("job-{i}");
    let registry = (0..jobs)
        .map(|i| ScheduledJob {
            name: job(i),
            locked: true,
            unlocked_reason: None,
            api_excluded: i % 3 == 0,
        })
        .collect();
    let pools = (0..pools)
        .map(|k| Pool {
            name: format!("pool-{k}"),
            jobs: (k..jobs).step_by(pools).map(job).collect(),
            allowed: None,
        })
        .collect();
    (registry, pools)
}

/// The median time of one proof of the four cases, in microseconds, over `runs` runs.
fn proof_time(jobs: &[ScheduledJob], pools: &[Pool], runs: usize) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            for api in [true, false] {
                for jobs_workload in [true, false] {
                    black_box(prove_partition(jobs, pools, api, jobs_workload));
                }
            }
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let sizes: &[(usize, usize)] = if quick {
        &[(20, 10), (40, 20)]
    } else {
        &[
            (100, 50),
            (400, 200),
            (1_600, 800),
            (3_200, 1_600),
            (1_000, 10),
            (1_000, 100),
            (1_000, 1_000),
        ]
    };
    println!("| jobs | pools | proof of the four cases | per job | per job x pool |");
    println!("|---:|---:|---:|---:|---:|");
    for &(jobs, pools) in sizes {
        let (registry, pools_of) = registry(jobs, pools);
        let runs = if quick {
            3
        } else {
            (400_000 / jobs).clamp(11, 2_001)
        };
        let us = proof_time(&registry, &pools_of, runs);
        println!(
            "| {jobs} | {pools} | {us:.1} us | {:.0} ns | {:.3} ns |",
            us * 1e3 / jobs as f64,
            us * 1e3 / (jobs * pools) as f64
        );
    }
}
