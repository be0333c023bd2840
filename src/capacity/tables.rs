//! The report as text: a plain table for the terminal and `capacity/<preset>.txt`, and
//! Markdown for the chart README. Both print the workload table, then the budget table.

use crate::capacity::report::{CapacityReport, Total};

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
