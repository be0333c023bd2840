//! The capacity section of `shipshape diff`: per preset and per budget (PostgreSQL,
//! each Redis server, the Redis total) the peak before and after, the budget and the
//! headroom, the changed rows marked; then the guard findings that appear or
//! disappear. "Before" is the committed output's `capacity/<preset>.json`, "after"
//! what generation produces now.

use crate::capacity::breakdown::BudgetUse;
use crate::generate::{FindingRecord, OutputFiles, PresetRecord};
use crate::values::presets::DEFAULT_PRESET;
use std::collections::{BTreeMap, BTreeSet};

/// A preset's record in the committed output: `None` when the output has the
/// preset's render but no record (written by a shipshape before records existed).
pub type Before = BTreeMap<String, Option<PresetRecord>>;

/// The records of the committed output folder `folder`, by preset; the presets are
/// those with a render (`rendered/<preset>.yaml`) or a record.
pub fn committed_records(committed: &OutputFiles, folder: &str) -> Result<Before, String> {
    let mut out = Before::new();
    for (path, text) in committed {
        if let Some(p) = path
            .strip_prefix("rendered/")
            .and_then(|p| p.strip_suffix(".yaml"))
        {
            out.entry(p.to_string()).or_insert(None);
        }
        if let Some(p) = path
            .strip_prefix("capacity/")
            .and_then(|p| p.strip_suffix(".json"))
        {
            let record: PresetRecord = serde_json::from_str(text).map_err(|e| {
                format!(
                    "`{folder}/{path}` is not a capacity record: {e}\n  hint: regenerate the \
                     committed output with `shipshape generate`"
                )
            })?;
            out.insert(p.to_string(), Some(record));
        }
    }
    Ok(out)
}

/// One side of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Side {
    peak: u64,
    budget: Option<u64>,
}

impl Side {
    fn of(b: &BudgetUse) -> Self {
        Side {
            peak: b.peak,
            budget: b.budget,
        }
    }

    fn headroom(self) -> Option<i128> {
        self.budget.map(|b| i128::from(b) - i128::from(self.peak))
    }
}

/// What a row's "before" is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Was {
    /// The committed output has no such preset or budget.
    Absent,
    /// The committed output has the preset but no record of it.
    Unknown,
    Known(Side),
}

/// One preset's budget, before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    preset: String,
    /// `PostgreSQL connections`, `Redis `cache` clients`, `Redis total clients`.
    what: String,
    was: Was,
    now: Option<Side>,
}

impl Row {
    fn changed(&self) -> bool {
        match (self.was, self.now) {
            (Was::Known(a), Some(b)) => a != b,
            (Was::Unknown, _) => false,
            _ => true,
        }
    }
}

/// Presets in review order: the defaults first, then by name.
fn preset_order(names: BTreeSet<&String>) -> Vec<&String> {
    let (default, rest): (Vec<&String>, Vec<&String>) =
        names.into_iter().partition(|n| *n == DEFAULT_PRESET);
    default.into_iter().chain(rest).collect()
}

fn rows(before: &Before, after: &BTreeMap<String, PresetRecord>) -> Vec<Row> {
    let mut out = Vec::new();
    for preset in preset_order(before.keys().chain(after.keys()).collect()) {
        let old = before.get(preset);
        let new = after.get(preset);
        let empty = Vec::new();
        let old_budgets = old.and_then(Option::as_ref).map_or(&empty, |r| &r.budgets);
        let new_budgets = new.map_or(&empty, |r| &r.budgets);
        // The order of the new record, then budgets only the old one has.
        let mut keys: Vec<&BudgetUse> = new_budgets.iter().collect();
        keys.extend(
            old_budgets
                .iter()
                .filter(|o| !new_budgets.iter().any(|n| n.key == o.key)),
        );
        for b in keys {
            let o = old_budgets.iter().find(|x| x.key == b.key);
            let n = new_budgets.iter().find(|x| x.key == b.key);
            if !o.is_some_and(BudgetUse::is_used) && !n.is_some_and(BudgetUse::is_used) {
                continue;
            }
            let was = match (old, o) {
                (Some(None), _) => Was::Unknown,
                (_, Some(o)) => Was::Known(Side::of(o)),
                _ => Was::Absent,
            };
            out.push(Row {
                preset: preset.clone(),
                what: format!("{} {}", b.label, b.unit),
                was,
                now: n.map(Side::of),
            });
        }
    }
    out
}

fn signed(d: i128) -> String {
    if d > 0 {
        format!("+{d}")
    } else {
        d.to_string()
    }
}

fn budget_text(b: Option<u64>) -> String {
    b.map_or_else(|| "not checked".to_string(), |b| b.to_string())
}

fn headroom_text(h: Option<i128>, markdown: bool) -> String {
    match h {
        None => "-".to_string(),
        Some(h) if h < 0 && markdown => format!("**exceeded by {}**", -h),
        Some(h) if h < 0 => format!("exceeded by {}", -h),
        Some(h) => h.to_string(),
    }
}

/// `old → new`, or the one value when they agree or only one exists.
fn before_after(old: Option<String>, new: Option<String>, arrow: &str) -> String {
    match (old, new) {
        (Some(a), Some(b)) if a == b => b,
        (Some(a), Some(b)) => format!("{a} {arrow} {b}"),
        (None, Some(b)) => b,
        (Some(a), None) => format!("{a} {arrow} -"),
        (None, None) => "-".to_string(),
    }
}

/// The cells of a row: peak, budget, headroom.
fn cells(row: &Row, markdown: bool) -> [String; 3] {
    let arrow = if markdown { "→" } else { "->" };
    let old = match row.was {
        Was::Known(s) => Some(s),
        _ => None,
    };
    let peak = match (old, row.now) {
        (Some(a), Some(b)) if a.peak != b.peak => format!(
            "{} {arrow} {} ({})",
            a.peak,
            b.peak,
            signed(i128::from(b.peak) - i128::from(a.peak))
        ),
        _ => before_after(
            old.map(|s| s.peak.to_string()),
            row.now.map(|s| s.peak.to_string()),
            arrow,
        ),
    };
    let budget = before_after(
        old.map(|s| budget_text(s.budget)),
        row.now.map(|s| budget_text(s.budget)),
        arrow,
    );
    let headroom = before_after(
        old.map(|s| headroom_text(s.headroom(), markdown)),
        row.now.map(|s| headroom_text(s.headroom(), markdown)),
        arrow,
    );
    [peak, budget, headroom]
}

fn mark(row: &Row) -> &'static str {
    match (row.was, row.now) {
        (Was::Unknown, _) => "unknown before",
        (Was::Absent, Some(_)) => "**new**",
        (_, None) => "**removed**",
        _ if row.changed() => "**changed**",
        _ => "",
    }
}

/// Findings that appear and disappear, as `(preset, finding)`.
type FindingChanges = (Vec<(String, FindingRecord)>, Vec<(String, FindingRecord)>);

fn finding_changes(before: &Before, after: &BTreeMap<String, PresetRecord>) -> FindingChanges {
    let flatten = |records: Vec<(&String, &PresetRecord)>| -> BTreeSet<(String, FindingRecord)> {
        records
            .into_iter()
            .flat_map(|(p, r)| r.findings.iter().map(move |f| (p.clone(), f.clone())))
            .collect()
    };
    let old = flatten(
        before
            .iter()
            .filter_map(|(p, r)| r.as_ref().map(|r| (p, r)))
            .collect(),
    );
    let new = flatten(after.iter().collect());
    (
        new.difference(&old).cloned().collect(),
        old.difference(&new).cloned().collect(),
    )
}

fn finding_line(preset: &str, f: &FindingRecord, markdown: bool) -> String {
    if markdown {
        format!(
            "- preset `{preset}`: **{}** `{}` at `{}`: {}",
            f.severity,
            f.rule,
            f.path,
            f.message.replace('\n', " ")
        )
    } else {
        format!(
            "  preset `{preset}`: {}[{}] `{}`: {}",
            f.severity, f.rule, f.path, f.message
        )
    }
}

/// The section, and whether anything in it changed.
pub struct Section {
    pub text: String,
    pub changed: bool,
}

fn unknown_note(before: &Before) -> Option<String> {
    let unknown: Vec<String> = before
        .iter()
        .filter(|(_, r)| r.is_none())
        .map(|(p, _)| format!("`{p}`"))
        .collect();
    (!unknown.is_empty()).then(|| {
        format!(
            "The committed output has no capacity record for {} (`capacity/<preset>.json`, \
             written by `generate` since the capacity figures): regenerate it once to compare.",
            unknown.join(", ")
        )
    })
}

/// The Markdown section: `### Capacity` with the table, then `#### Guard findings`.
pub fn capacity_markdown(before: &Before, after: &BTreeMap<String, PresetRecord>) -> Section {
    let rows = rows(before, after);
    let changed = rows.iter().filter(|r| r.changed()).count();
    let mut out = String::from("### Capacity\n\n");
    out.push_str(
        "Peak connections and clients across a rollout, before → after this change, against \
         each budget (limit - reserve); headroom is what is left. Changed rows are marked.\n\n",
    );
    if rows.is_empty() {
        out.push_str("No connection budget is declared.\n");
    } else {
        out.push_str("| | Preset | Dependency | Peak | Budget | Headroom |\n");
        out.push_str("|---|---|---|---:|---:|---:|\n");
        for row in &rows {
            let [peak, budget, headroom] = cells(row, true);
            out.push_str(&format!(
                "| {} | `{}` | {} | {peak} | {budget} | {headroom} |\n",
                mark(row),
                row.preset,
                row.what.replace('|', "\\|")
            ));
        }
        out.push('\n');
        out.push_str(&match changed {
            0 => "No capacity figure changes.\n".to_string(),
            n => format!("{n} of {} rows change.\n", rows.len()),
        });
    }
    if let Some(note) = unknown_note(before) {
        out.push_str(&format!("\n{note}\n"));
    }
    let (appear, disappear) = finding_changes(before, after);
    out.push_str("\n#### Guard findings\n\n");
    if appear.is_empty() && disappear.is_empty() {
        out.push_str("No guard finding appears or disappears.\n");
    }
    for (title, list) in [("Appear", &appear), ("Disappear", &disappear)] {
        if list.is_empty() {
            continue;
        }
        out.push_str(&format!("{title}:\n\n"));
        for (p, f) in list {
            out.push_str(&finding_line(p, f, true));
            out.push('\n');
        }
        out.push('\n');
    }
    if !out.ends_with("\n\n") {
        out.push('\n');
    }
    Section {
        text: out,
        changed: changed > 0 || !appear.is_empty() || !disappear.is_empty(),
    }
}

/// The plain-text section: only the rows that change, and the findings that appear or
/// disappear; empty when nothing does.
pub fn capacity_text(before: &Before, after: &BTreeMap<String, PresetRecord>) -> Section {
    let mut out = String::new();
    let changed: Vec<Row> = rows(before, after)
        .into_iter()
        .filter(Row::changed)
        .collect();
    if !changed.is_empty() {
        out.push_str("capacity changes:\n");
        for row in &changed {
            let [peak, budget, headroom] = cells(row, false);
            out.push_str(&format!(
                "  preset `{}`: {}: peak {peak}, budget {budget}, headroom {headroom}\n",
                row.preset, row.what
            ));
        }
    }
    let (appear, disappear) = finding_changes(before, after);
    for (title, list) in [
        ("guard findings that appear", &appear),
        ("guard findings that disappear", &disappear),
    ] {
        if !list.is_empty() {
            out.push_str(&format!("{title}:\n"));
            for (p, f) in list {
                out.push_str(&finding_line(p, f, false));
                out.push('\n');
            }
        }
    }
    if let Some(note) = unknown_note(before) {
        out.push_str(&format!("note: {note}\n"));
    }
    Section {
        changed: !changed.is_empty() || !appear.is_empty() || !disappear.is_empty(),
        text: out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::breakdown::Part;

    fn budget(key: &str, peak: u64, limit: Option<u64>, reserve: u64) -> BudgetUse {
        BudgetUse {
            key: key.into(),
            label: if key == "postgres" {
                "PostgreSQL".into()
            } else {
                "Redis total".into()
            },
            unit: if key == "postgres" {
                "connections".into()
            } else {
                "clients".into()
            },
            workloads: vec![Part {
                name: "api".into(),
                value: peak,
            }],
            reservations: vec![],
            peak,
            limit,
            reserve,
            budget: limit.map(|l| l - reserve),
        }
    }

    fn record(budgets: Vec<BudgetUse>, findings: &[(&str, &str)]) -> PresetRecord {
        PresetRecord {
            budgets,
            findings: findings
                .iter()
                .map(|(sev, msg)| FindingRecord {
                    severity: sev.to_string(),
                    rule: "capacity.postgres".into(),
                    path: "dependencyCapacity.postgres".into(),
                    message: msg.to_string(),
                })
                .collect(),
        }
    }

    #[test]
    fn changed_rows_are_marked_with_before_after_budget_and_headroom() {
        let before: Before = BTreeMap::from([
            (
                "default".to_string(),
                Some(record(
                    vec![
                        budget("postgres", 100, Some(200), 20),
                        budget("redis", 0, Some(0), 0),
                    ],
                    &[],
                )),
            ),
            (
                "gone".to_string(),
                Some(record(vec![budget("postgres", 10, Some(200), 20)], &[])),
            ),
        ]);
        let after = BTreeMap::from([
            (
                "default".to_string(),
                record(
                    vec![
                        budget("postgres", 124, Some(200), 20),
                        budget("redis", 0, Some(0), 0),
                    ],
                    &[],
                ),
            ),
            (
                "autoscaling".to_string(),
                record(
                    vec![budget("postgres", 220, Some(200), 20)],
                    &[("error", "peak 220 exceeds 180")],
                ),
            ),
        ]);
        let section = capacity_markdown(&before, &after);
        assert!(section.changed);
        let expected = "\
| | Preset | Dependency | Peak | Budget | Headroom |
|---|---|---|---:|---:|---:|
| **changed** | `default` | PostgreSQL connections | 100 → 124 (+24) | 180 | 80 → 56 |
| **new** | `autoscaling` | PostgreSQL connections | 220 | 180 | **exceeded by 40** |
| **removed** | `gone` | PostgreSQL connections | 10 → - | 180 → - | 170 → - |

3 of 3 rows change.
";
        assert!(section.text.contains(expected), "{}", section.text);
        // An unused Redis total (nothing declared, nothing counted) is no row.
        assert!(!section.text.contains("Redis total"));
        assert!(section.text.contains(
            "Appear:\n\n- preset `autoscaling`: **error** `capacity.postgres` at \
             `dependencyCapacity.postgres`: peak 220 exceeds 180\n"
        ));
        assert!(!section.text.contains("Disappear"));
        let text = capacity_text(&before, &after);
        assert!(text.text.contains(
            "  preset `default`: PostgreSQL connections: peak 100 -> 124 (+24), budget 180, \
             headroom 80 -> 56\n"
        ));
        assert!(text.text.contains(
            "guard findings that appear:\n  preset `autoscaling`: error[capacity.postgres]"
        ));
    }

    #[test]
    fn nothing_changes_when_records_agree() {
        let r = record(
            vec![budget("postgres", 100, Some(200), 20)],
            &[("warning", "w")],
        );
        let before: Before = BTreeMap::from([("default".to_string(), Some(r.clone()))]);
        let after = BTreeMap::from([("default".to_string(), r)]);
        let section = capacity_markdown(&before, &after);
        assert!(!section.changed);
        assert!(section
            .text
            .contains("|  | `default` | PostgreSQL connections | 100 | 180 | 80 |"));
        assert!(section.text.contains("No capacity figure changes."));
        assert!(section
            .text
            .contains("No guard finding appears or disappears."));
        assert!(capacity_text(&before, &after).text.is_empty());
    }

    #[test]
    fn a_finding_that_disappears_is_listed() {
        let budgets = vec![budget("postgres", 100, Some(200), 20)];
        let before: Before = BTreeMap::from([(
            "default".to_string(),
            Some(record(budgets.clone(), &[("warning", "scale-in is fast")])),
        )]);
        let after = BTreeMap::from([("default".to_string(), record(budgets, &[]))]);
        let section = capacity_markdown(&before, &after);
        assert!(section.changed);
        assert!(section
            .text
            .contains("Disappear:\n\n- preset `default`: **warning**"));
    }

    #[test]
    fn an_output_without_records_is_unknown_before() {
        let committed = OutputFiles::from([
            ("rendered/default.yaml".to_string(), String::new()),
            ("capacity/default.txt".to_string(), String::new()),
        ]);
        let before = committed_records(&committed, "out").unwrap();
        assert_eq!(before, BTreeMap::from([("default".to_string(), None)]));
        let after = BTreeMap::from([(
            "default".to_string(),
            record(vec![budget("postgres", 100, Some(200), 20)], &[]),
        )]);
        let section = capacity_markdown(&before, &after);
        assert!(!section.changed);
        assert!(section.text.contains("| unknown before | `default` |"));
        assert!(section
            .text
            .contains("has no capacity record for `default`"));
    }

    #[test]
    fn a_broken_record_names_its_file() {
        let committed = OutputFiles::from([("capacity/x.json".to_string(), "{".to_string())]);
        let err = committed_records(&committed, "out").unwrap_err();
        assert!(
            err.starts_with("`out/capacity/x.json` is not a capacity record:"),
            "{err}"
        );
        assert!(err.contains("hint: regenerate"));
    }
}
