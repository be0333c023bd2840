//! Reading a spec on the machine's cores: its `workloads` cut into runs of whole
//! workloads, each read beside the rest of the spec, and joined. Most of a large spec
//! is its workloads, and reading the spec came before anything else in `render`. A
//! top-level `presets` block, often the largest section of a small spec, is a part of
//! its own when no anchor or alias crosses it.
//!
//! Only a layout this recognizes for certain is cut: top-level keys at column 0, the
//! workload classes one indentation under `workloads:`, each workload's name one more,
//! every key line of those three levels with no value on it, no anchor name given
//! twice, no tab or carriage return, and no quote on a top-level line nor a flow
//! collection there that does not close on it. A cut inside a quoted scalar or a flow
//! collection leaves its part unterminated, which cannot be read; a block or plain
//! scalar cannot hold a line that looks like a key at its own indentation. An alias
//! names the one anchor of its name: in its own part it means what it means in the
//! whole, and in another part it is unknown, which cannot be read. Any part that
//! cannot be read, a workload twice or anything else unexpected makes
//! [`read_in_parts`] give `None`, and the spec is read whole, as before, with its
//! messages.

use super::{Spec, Workloads};
use serde::Deserialize;

/// Texts of at most this many bytes are cut. serde-saphyr's default budget counts at
/// most 250,000 nodes and 1,000,000 events a read, and a node takes at least a byte
/// of text (an event at most half of one): such a text breaks no budget whole, so it
/// breaks none in parts either way.
const MAX_CUT_BYTES: usize = 250_000;

/// Fewer bytes of workloads than this are read whole: the parts' threads would cost
/// more than they save.
const MIN_CUT_BYTES: usize = 16 * 1024;

/// Fewer bytes of workloads than this are read with the rest even when a helper
/// thread is already running ([`read_spec_text_beside`]): the part's own read would
/// cost more than it saves.
const MIN_CUT_BYTES_BESIDE: usize = 1024;

/// The workload classes, as `workloads` names them.
const CLASSES: [&str; 5] = ["api", "jobs", "pool", "worker", "migrate"];

/// `workloads` alone, as a part of the spec is read.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadsPart {
    workloads: Workloads,
}

/// `presets` alone, as a part of the spec is read: the field as [`Spec`] has it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PresetsPart {
    #[serde(default)]
    presets: std::collections::BTreeMap<String, super::PresetSpec>,
}

/// The spec of `text`: read in parts on the machine's cores when its layout allows,
/// otherwise, and whenever a part cannot be read, whole (for its messages).
pub(super) fn read_spec_text(text: &str) -> Result<Spec, serde_saphyr::Error> {
    read_in_parts(text).map_or_else(|| read_whole(text), Ok)
}

/// [`read_spec_text`] for a caller whose helper thread is already running (`render`'s,
/// [`crate::parallel::with_early_helper`]): the workloads' parts are queued on `tasks`
/// while this thread reads the rest, then this thread runs what is still queued
/// ([`crate::parallel::Tasks::work`]: the parts the helper has not taken). No thread
/// is started, so workloads of [`MIN_CUT_BYTES_BESIDE`] are worth a part of their own.
/// Read whole as [`read_spec_text`] reads it otherwise.
pub(super) fn read_spec_text_beside(
    text: &str,
    tasks: &crate::parallel::Tasks<'_>,
) -> Result<Spec, serde_saphyr::Error> {
    read_beside(text, tasks).map_or_else(|| read_whole(text), Ok)
}

/// The spec of `text`, its workloads read on `tasks` (`None`: read it whole): in one
/// part, or in as many as [`read_in_parts`] cuts when the text holds at least
/// [`MIN_CUT_BYTES`], so both threads read runs of workloads.
fn read_beside(text: &str, tasks: &crate::parallel::Tasks<'_>) -> Option<Spec> {
    let Cut {
        rest,
        parts,
        presets,
    } = cut_spec(text, parts_beside(text), MIN_CUT_BYTES_BESIDE)?;
    let kinds = std::iter::repeat_n(PartKind::Workloads, parts.len());
    let parts: Vec<(PartKind, String)> = kinds
        .zip(parts)
        .chain(presets.map(|text| (PartKind::Presets, text)))
        .collect();
    let count = parts.len();
    let (sent, read) = std::sync::mpsc::channel();
    // Ahead of the tasks queued before: this thread waits for the parts.
    tasks.push_ahead(
        parts
            .into_iter()
            .enumerate()
            .map(|(index, (kind, part))| {
                let sent = sent.clone();
                Box::new(move || {
                    let _ = sent.send((index, read_part(&part, kind)));
                }) as crate::parallel::Task<'_>
            })
            .collect(),
    );
    drop(sent);
    let rest = read_part(&rest, PartKind::Rest);
    tasks.work();
    // Fewer than `count` when a part's task panicked (its sender dropped unsent).
    let mut workloads: Vec<(usize, Option<Part>)> = Vec::with_capacity(count);
    crate::parallel::spin_until(|| loop {
        match read.try_recv() {
            Ok(part) => workloads.push(part),
            Err(std::sync::mpsc::TryRecvError::Empty) => return false,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => return true,
        }
    });
    workloads.extend(read.iter());
    if workloads.len() != count {
        return None;
    }
    workloads.sort_by_key(|(index, _)| *index);
    join_parts(std::iter::once(rest).chain(workloads.into_iter().map(|(_, part)| part)))
}

/// How many parts [`read_beside`] cuts the workloads of `text` in at most: one, or as
/// many as [`read_in_parts`] when the text holds at least [`MIN_CUT_BYTES`].
fn parts_beside(text: &str) -> usize {
    match text.len() >= MIN_CUT_BYTES {
        true => parts_on_the_cores(),
        false => 1,
    }
}

/// How a spec is read. Its free-form values (`config`, presets) are read as Helm reads
/// a values file: YAML 1.1, so an unquoted `0755` is 493 in both.
fn spec_options() -> serde_saphyr::Options {
    let mut options = serde_saphyr::Options::default();
    options.legacy_octal_numbers = true;
    options
}

/// The spec of `text`, read in one pass.
fn read_whole(text: &str) -> Result<Spec, serde_saphyr::Error> {
    serde_saphyr::from_str_with_options(text, spec_options())
}

/// The spec of `text` read in parts on the machine's cores (`None`: read it whole).
fn read_in_parts(text: &str) -> Option<Spec> {
    let cores = crate::parallel::cores();
    if cores < 2 {
        return None;
    }
    read_cut(&cut_spec(text, parts_on_the_cores(), MIN_CUT_BYTES)?)
}

/// How many runs of workloads a large spec is cut in: two per core but one, so the
/// threads that finish first take the runs left.
fn parts_on_the_cores() -> usize {
    2 * crate::parallel::cores() - 1
}

/// The spec the parts of `cut` read as, joined; `None` when a part cannot be read or
/// a workload is in two parts.
fn read_cut(cut: &Cut) -> Option<Spec> {
    let parts: Vec<(PartKind, &String)> = std::iter::once((PartKind::Rest, &cut.rest))
        .chain(cut.parts.iter().map(|p| (PartKind::Workloads, p)))
        .chain(cut.presets.iter().map(|p| (PartKind::Presets, p)))
        .collect();
    join_parts(crate::parallel::map_in_parallel(&parts, |&(kind, text)| {
        read_part(text, kind)
    }))
}

/// What a part of a cut holds.
#[derive(Clone, Copy, Debug, PartialEq)]
enum PartKind {
    /// Everything but the workloads (and `presets`, when cut apart).
    Rest,
    /// A run of workloads.
    Workloads,
    /// `presets`.
    Presets,
}

/// What a part of a cut reads as; `None` when it cannot be read.
fn read_part(text: &str, kind: PartKind) -> Option<Part> {
    let options = spec_options();
    match kind {
        PartKind::Rest => serde_saphyr::from_str_with_options::<Spec>(text, options)
            .ok()
            .map(|spec| Part::Rest(Box::new(spec))),
        PartKind::Workloads => serde_saphyr::from_str_with_options::<WorkloadsPart>(text, options)
            .ok()
            .map(|w| Part::Workloads(w.workloads)),
        PartKind::Presets => serde_saphyr::from_str_with_options::<PresetsPart>(text, options)
            .ok()
            .map(|p| Part::Presets(p.presets)),
    }
}

/// The spec of the parts read, the rest first, joined; `None` when a part could not
/// be read or a workload is in two parts.
fn join_parts(read: impl IntoIterator<Item = Option<Part>>) -> Option<Spec> {
    let mut read = read.into_iter();
    let Some(Some(Part::Rest(mut spec))) = read.next() else {
        return None;
    };
    for part in read {
        match part? {
            Part::Workloads(w) => {
                join_into(&mut spec.workloads.api, w.api)?;
                join_into(&mut spec.workloads.jobs, w.jobs)?;
                join_into(&mut spec.workloads.pool, w.pool)?;
                join_into(&mut spec.workloads.worker, w.worker)?;
                join_into(&mut spec.workloads.migrate, w.migrate)?;
            }
            Part::Presets(presets) => join_into(&mut spec.presets, presets)?,
            Part::Rest(_) => return None,
        }
    }
    Some(*spec)
}

/// What one part of the text reads as.
enum Part {
    Rest(Box<Spec>),
    Workloads(Workloads),
    Presets(std::collections::BTreeMap<String, super::PresetSpec>),
}

/// Moves `more` into `all`; `None` when a name is in both.
fn join_into<V>(
    all: &mut std::collections::BTreeMap<String, V>,
    more: std::collections::BTreeMap<String, V>,
) -> Option<()> {
    for (name, value) in more {
        if all.insert(name, value).is_some() {
            return None;
        }
    }
    Some(())
}

/// A spec's text cut for [`read_in_parts`]. Every text has the lines of the whole,
/// each where it was, and blank lines for the others, so a line number is the same in
/// a part as in the whole.
#[derive(Debug, PartialEq)]
struct Cut {
    /// The spec with `workloads: {}`, without `presets` when that is cut apart.
    rest: String,
    /// `workloads:` and runs of whole workloads, each under its class's line.
    parts: Vec<String>,
    /// `presets` and its entries, when it is a block whose anchors and aliases stay in
    /// it (the presets often alias each other: `<<: *production`); then the rest does
    /// not hold it.
    presets: Option<String>,
}

/// Whether no anchor name is given twice in `lines`, and each alias of an anchor is in
/// the anchor's part (`part_of` a line). A name is what follows `&` or `*` up to a
/// space or one of `,[]{}`; every `&` counts, in a quoted scalar or a comment too, so
/// a real anchor is never missed, and a second one of its name refuses the cut: in the
/// whole, an alias after it means it, in a part without it the first. An alias left
/// in another part than its anchor would only make that part unreadable (its name is
/// unknown there); it is refused here so the spec is not read twice.
fn anchors_stay_in_their_parts(lines: &[Line<'_>], part_of: &[usize]) -> bool {
    let mut anchors = std::collections::HashMap::new();
    for (line, part) in lines.iter().zip(part_of) {
        for name in names_after(line.text, '&') {
            if anchors.insert(name, *part).is_some() {
                return false;
            }
        }
    }
    anchors.is_empty()
        || lines.iter().zip(part_of).all(|(line, part)| {
            names_after(line.text, '*').all(|name| anchors.get(name).is_none_or(|p| p == part))
        })
}

/// Whether every flow collection `value` opens is closed on its line, nested as
/// opened: then no line after it is inside it. `value` holds no quote (a plain scalar
/// in a flow collection cannot hold `,[]{}`), and a comment after it counts as part
/// of it, so a bracket there refuses the line.
fn flow_closes_on_its_line(value: &str) -> bool {
    let mut open = Vec::new();
    for c in value.chars() {
        match c {
            '{' | '[' => open.push(c),
            '}' if open.pop() != Some('{') => return false,
            ']' if open.pop() != Some('[') => return false,
            _ => {}
        }
    }
    open.is_empty()
}

/// The names after each `sigil` in `text` (an anchor's `&`, an alias's `*`): up to a
/// space or one of `,[]{}`.
fn names_after(text: &str, sigil: char) -> impl Iterator<Item = &str> {
    text.split(sigil).skip(1).map(|after| {
        let end = after
            .find(|c: char| c.is_whitespace() || ",[]{}".contains(c))
            .unwrap_or(after.len());
        &after[..end]
    })
}

/// One line of the text: its bytes (newline included) and indentation.
struct Line<'t> {
    text: &'t str,
    indent: usize,
    /// Blank, or only a comment.
    empty: bool,
}

/// `text` cut into the rest and at most `parts` runs of workloads of about equal
/// length; `None` when its layout is not certainly one this can cut, or its workloads
/// hold fewer than `min_bytes`.
fn cut_spec(text: &str, parts: usize, min_bytes: usize) -> Option<Cut> {
    if text.len() > MAX_CUT_BYTES || parts == 0 || text.bytes().any(|b| matches!(b, b'\t' | b'\r'))
    {
        return None;
    }
    let lines: Vec<Line<'_>> = text
        .split_inclusive('\n')
        .map(|l| {
            let content = l.trim_start_matches(' ');
            let trimmed = content.trim_end();
            Line {
                text: l,
                indent: l.len() - content.len(),
                empty: trimmed.is_empty() || trimmed.starts_with('#'),
            }
        })
        .collect();
    let all = &lines;
    let key_lines = move |indent: usize, range: std::ops::Range<usize>| {
        range.filter(move |&i| !all[i].empty && all[i].indent == indent)
    };
    // Top-level keys, each once, and the lines `workloads` holds.
    let mut keys = Vec::new();
    for i in key_lines(0, 0..lines.len()) {
        let (key, value) = key_line(lines[i].text)?;
        if keys.iter().any(|(k, _)| *k == key)
            || value.contains(['"', '\'', '|', '>'])
            || !flow_closes_on_its_line(value)
            || (key == "workloads" && !value.is_empty())
        {
            return None;
        }
        keys.push((key, i));
    }
    let at = keys.iter().position(|(k, _)| *k == "workloads")?;
    let start = keys[at].1;
    let end = keys.get(at + 1).map_or(lines.len(), |(_, i)| *i);
    // The classes, one indentation under `workloads:`, and their workloads, one more:
    // every line of the body at or above a workload's indentation is one of those.
    let class_indent = lines[start + 1..end].iter().find(|l| !l.empty)?.indent;
    let class_starts: Vec<usize> = key_lines(class_indent, start + 1..end).collect();
    let mut runs: Vec<(usize, (usize, usize))> = Vec::new();
    let mut classes = Vec::new();
    for (k, &class_line) in class_starts.iter().enumerate() {
        let (class, value) = key_line(&lines[class_line].text[class_indent..])?;
        if !value.is_empty() || !CLASSES.contains(&class) || classes.contains(&class) {
            return None;
        }
        classes.push(class);
        let class_end = class_starts.get(k + 1).copied().unwrap_or(end);
        let inner = class_line + 1..class_end;
        let Some(first) = inner.clone().find(|&i| !lines[i].empty) else {
            continue;
        };
        let indent = lines[first].indent;
        if indent <= class_indent
            || inner
                .clone()
                .any(|i| !lines[i].empty && lines[i].indent < indent)
        {
            return None;
        }
        let names: Vec<usize> = key_lines(indent, inner).collect();
        for (n, &name_line) in names.iter().enumerate() {
            if !key_line(&lines[name_line].text[indent..])?.1.is_empty() {
                return None;
            }
            let to = names.get(n + 1).copied().unwrap_or(class_end);
            runs.push((class_line, (name_line, to)));
        }
    }
    // A line less indented than the classes lies in a class (the first line of the
    // body is one), and is less indented than its workloads: refused above.
    let bytes_of = |(from, to): (usize, usize)| -> usize {
        lines[from..to].iter().map(|l| l.text.len()).sum()
    };
    let total: usize = runs.iter().map(|&(_, r)| bytes_of(r)).sum();
    if total < min_bytes || runs.is_empty() {
        return None;
    }
    // Runs of whole workloads, in order, cut once a part holds its share.
    let share = total.div_ceil(parts);
    let mut chosen: Vec<Vec<(usize, (usize, usize))>> = vec![Vec::new()];
    let mut held = 0;
    for &(class_line, run) in &runs {
        if held >= share {
            chosen.push(Vec::new());
            held = 0;
        }
        chosen.last_mut()?.push((class_line, run));
        held += bytes_of(run);
    }
    let mut part_of = vec![0; lines.len()];
    for (part, runs) in chosen.iter().enumerate() {
        for &(_, (from, to)) in runs {
            part_of[from..to].fill(part + 1);
        }
    }
    // `presets`, a block, in a part of its own: its lines up to the next top-level key.
    let mut presets = keys
        .iter()
        .position(|(k, _)| *k == "presets")
        .and_then(|p| {
            let from = keys[p].1;
            let to = keys.get(p + 1).map_or(lines.len(), |(_, i)| *i);
            key_line(lines[from].text)?
                .1
                .is_empty()
                .then_some((from, to))
        });
    if let Some((from, to)) = presets {
        part_of[from..to].fill(chosen.len() + 1);
        if !anchors_stay_in_their_parts(&lines, &part_of) {
            // An anchor or alias crosses it: `presets` stays in the rest.
            part_of[from..to].fill(0);
            presets = None;
        }
    }
    if presets.is_none() && !anchors_stay_in_their_parts(&lines, &part_of) {
        return None;
    }
    let blank = |from: usize, to: usize, out: &mut String| {
        out.extend(std::iter::repeat_n('\n', to.saturating_sub(from)));
    };
    let parts = chosen
        .iter()
        .map(|runs| {
            let mut out = String::with_capacity(total / parts + lines.len());
            blank(0, start, &mut out);
            out.push_str("workloads:\n");
            let mut at = start + 1;
            let mut class_now = None;
            for &(class_line, (from, to)) in runs {
                if class_now != Some(class_line) {
                    blank(at, class_line, &mut out);
                    out.push_str(lines[class_line].text);
                    at = class_line + 1;
                    class_now = Some(class_line);
                }
                blank(at, from, &mut out);
                for line in &lines[from..to] {
                    out.push_str(line.text);
                }
                at = to;
            }
            out
        })
        .collect();
    let apart = |i: usize| presets.is_some_and(|(from, to)| (from..to).contains(&i));
    let mut rest = String::with_capacity(text.len() - total + lines.len());
    for (i, line) in lines.iter().enumerate() {
        match i {
            _ if i == start => rest.push_str("workloads: {}\n"),
            _ if (start < i && i < end) || apart(i) => rest.push('\n'),
            _ => rest.push_str(line.text),
        }
    }
    let presets = presets.map(|(from, to)| {
        let mut out = String::with_capacity(bytes_of((from, to)) + from);
        blank(0, from, &mut out);
        for line in &lines[from..to] {
            out.push_str(line.text);
        }
        out
    });
    Some(Cut {
        rest,
        parts,
        presets,
    })
}

/// A key line with the indentation removed: its key (letters, digits, `_`, `-`, `.`,
/// a letter or digit first) and what follows the colon, without a comment; `None`
/// for any other line.
fn key_line(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once(':')?;
    let first = key.bytes().next()?;
    if !first.is_ascii_alphanumeric()
        || !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        return None;
    }
    if !(value.is_empty() || value.starts_with([' ', '\n'])) {
        return None;
    }
    let value = value.trim();
    let value = if value.starts_with('#') { "" } else { value };
    Some((key, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every spec-like text of the repository: the examples and every YAML fixture.
    fn texts() -> Vec<(String, String)> {
        let root = env!("CARGO_MANIFEST_DIR");
        let mut paths: Vec<std::path::PathBuf> = ["agent-platform", "llm-gateway", "web-shop"]
            .iter()
            .map(|e| format!("{root}/examples/{e}/shipshape.yaml").into())
            .collect();
        let mut dirs = vec![std::path::PathBuf::from(format!("{root}/tests/fixtures"))];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "yaml") {
                    paths.push(path);
                }
            }
        }
        paths.sort();
        paths
            .into_iter()
            .filter_map(|p| Some((p.display().to_string(), std::fs::read_to_string(&p).ok()?)))
            .collect()
    }

    /// A spec of 10 workloads of every class (`benches/synth.py 10`).
    fn synth() -> String {
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/cut/synth-10.yaml"
        ))
        .unwrap()
    }

    fn whole(text: &str) -> Option<Spec> {
        read_whole(text).ok()
    }

    /// The spec read in parts is the spec read whole, whenever the parts can be read:
    /// for every text of the repository cut in 1 to 5 parts, and for every spec that
    /// the whole read accepts and whose layout is the usual one, the parts are read.
    #[test]
    fn a_spec_read_in_parts_is_the_spec_read_whole() {
        let mut cut_and_read = 0;
        for (name, text) in texts() {
            let whole = whole(&text);
            for parts in 1..=5 {
                let Some(cut) = cut_spec(&text, parts, 0) else {
                    continue;
                };
                assert!(cut.parts.len() <= parts, "{name}");
                let read = read_cut(&cut);
                if let Some(spec) = &read {
                    assert_eq!(Some(spec), whole.as_ref(), "{name}: {parts} parts");
                    cut_and_read += 1;
                }
                if whole.is_some() {
                    assert!(read.is_some(), "{name}: {parts} parts");
                }
            }
        }
        assert!(cut_and_read >= 10, "{cut_and_read}");
    }

    /// Read beside a running helper, every text reads as it reads whole, error and
    /// all; the examples are cut (their workloads hold more than
    /// [`MIN_CUT_BYTES_BESIDE`]), and the workloads' part runs on the helper or, when
    /// the helper has not taken it, here.
    #[test]
    fn a_spec_read_beside_the_helper_is_the_spec_read_whole() {
        let mut cut = 0;
        for (name, text) in texts() {
            let beside =
                crate::parallel::with_early_helper(|tasks| read_spec_text_beside(&text, tasks));
            match (beside, read_whole(&text)) {
                (Ok(beside), Ok(whole)) => assert_eq!(beside, whole, "{name}"),
                (Err(beside), Err(whole)) => {
                    assert_eq!(beside.to_string(), whole.to_string(), "{name}")
                }
                (beside, whole) => panic!("{name}: {beside:?} against {whole:?}"),
            }
            if name.contains("/examples/") {
                assert!(cut_spec(&text, 1, MIN_CUT_BYTES_BESIDE).is_some(), "{name}");
                let parts = crate::parallel::with_early_helper(|tasks| read_beside(&text, tasks));
                assert_eq!(parts.as_ref(), read_whole(&text).ok().as_ref(), "{name}");
                assert!(parts.is_some(), "{name}: read in parts");
                cut += 1;
            }
        }
        assert_eq!(cut, 3);
    }

    /// An anchor given twice is not cut: in the whole, the alias after the second
    /// means the second; in the rest, which does not hold the second, it would mean
    /// the first. Nor is one whose alias is in another part. One given once, with its
    /// aliases in its part, is cut and read as the whole is.
    #[test]
    fn anchors_are_cut_only_with_their_aliases_and_once() {
        let shop = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/web-shop/shipshape.yaml"
        ))
        .unwrap();
        let with = |config: &str, port: &str| {
            shop.replacen("\n    currency: EUR", config, 1)
                .replacen("      port: 8080", port, 1)
        };
        let twice = with("\n    currency: &eur EUR", "      port: &eur 8080");
        assert_eq!(cut_spec(&twice, 1, 0), None);
        let once = with("\n    currency: &eur EUR", "      port: &port 8080");
        let cut = cut_spec(&once, 1, 0).expect("one name, once each");
        assert!(whole(&once).is_some());
        assert_eq!(read_cut(&cut).as_ref(), whole(&once).as_ref());
        let across = with(
            "\n    currency: EUR\n    port: &port 8080",
            "      port: *port",
        );
        assert!(whole(&across).is_some(), "the whole reads it");
        assert_eq!(
            cut_spec(&across, 1, 0),
            None,
            "the alias is in another part"
        );
        let mut within = with("\n    currency: EUR", "      port: &port 8080");
        within = within.replacen("\npresets:", "\nx-port: *port\npresets:", 1);
        assert_eq!(cut_spec(&within, 1, 0), None, "used in the rest");
        fn at(text: &str, part_of: &[usize]) -> bool {
            let lines: Vec<Line<'_>> = text
                .split_inclusive('\n')
                .map(|l| Line {
                    text: l,
                    indent: 0,
                    empty: false,
                })
                .collect();
            anchors_stay_in_their_parts(&lines, part_of)
        }
        assert!(at("a: &x 1\nb: *x\n", &[1, 1]));
        assert!(!at("a: &x 1\nb: *x\n", &[0, 1]));
        assert!(
            at("a: &x 1\nb: */5 * * * *\n", &[0, 1]),
            "not an alias of ours"
        );
        assert!(
            !at("a: &x 1\nb: '&x y'\n", &[0, 0]),
            "a quoted one counts too"
        );
        assert!(
            !at("a: &x{ 1\nb: &x, 2\n", &[0, 0]),
            "a flow indicator ends a name"
        );
        assert!(at("a: &x1 1\nb: &x2 2\n", &[0, 1]));
        assert!(at("a: 1\n", &[0]));
    }

    /// `presets` is read apart when it is a block whose anchors and aliases stay in it
    /// (llm-gateway's presets alias each other), and with the rest when an alias
    /// crosses it or it is written on its key's line; the workloads are cut all the
    /// same, and every cut reads as the whole does.
    #[test]
    fn presets_are_read_apart_when_their_anchors_stay_in_them() {
        let gateway = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/llm-gateway/shipshape.yaml"
        ))
        .unwrap();
        let read_as_whole = |text: &str, apart: bool| {
            let cut = cut_spec(text, 1, 0).expect("the workloads are cut");
            assert_eq!(cut.presets.is_some(), apart, "{:?}", cut.presets);
            assert!(whole(text).is_some());
            assert_eq!(read_cut(&cut), whole(text));
            let presets = cut.presets.unwrap_or_default();
            assert_eq!(cut.rest.contains("\npresets:"), !apart);
            assert_eq!(presets.contains("<<: *production"), apart);
            assert_eq!(cut.rest.lines().count(), text.lines().count());
        };
        assert!(gateway.contains("    values: &production\n"));
        read_as_whole(&gateway, true);
        // An anchor in `config` that a preset aliases.
        let crossing = gateway
            .replacen("  model_list: []\n", "  model_list: &models []\n", 1)
            .replacen(
                "      <<: *production\n",
                "      <<: *production\n      config: {model_list: *models}\n",
                1,
            );
        read_as_whole(&crossing, false);
        // An alias in `config` of an anchor in `presets`.
        let back = gateway.replacen(
            "  model_list: []\n",
            "  model_list: []\n  copy: *production\n",
            1,
        );
        assert!(whole(&back).is_none(), "an alias before its anchor");
        let cut = cut_spec(&back, 1, 0).expect("the workloads are cut");
        assert_eq!(cut.presets, None);
        // A preset's alias of an anchor in the workloads: `presets` is no part of its
        // own, nor of the workloads' (in the rest, the alias is not in its anchor's
        // part either), so nothing is cut.
        let into_workloads = gateway.replacen(
            "      <<: *production\n",
            "      <<: *production\n      copy: *postgres\n",
            1,
        );
        assert_ne!(into_workloads, gateway);
        assert_eq!(cut_spec(&into_workloads, 1, 0), None);
        // `presets` on its key's line.
        let start = gateway.find("\npresets:\n").unwrap() + 1;
        let flow = format!("{}presets: {{}}\n", &gateway[..start]);
        assert!(flow.ends_with("presets: {}\n"));
        read_as_whole(&flow, false);
    }

    /// A text of [`MIN_CUT_BYTES`] is cut in as many parts as [`read_in_parts`] cuts,
    /// one of a byte fewer in one.
    #[test]
    fn a_text_of_the_least_bytes_for_parts_is_cut_in_as_many_beside_the_helper() {
        let many = 2 * crate::parallel::cores() - 1;
        assert_eq!(parts_beside(&"x".repeat(MIN_CUT_BYTES)), many);
        assert_eq!(parts_beside(&"x".repeat(MIN_CUT_BYTES - 1)), 1);
    }

    /// Workloads of [`MIN_CUT_BYTES_BESIDE`] bytes are cut beside the helper, of one
    /// byte fewer read with the rest.
    #[test]
    fn workloads_of_the_least_bytes_beside_the_helper_are_cut() {
        let with_workload_bytes = |bytes: usize| {
            let name = "    web:\n";
            let comment = bytes - name.len() - "      # \n".len();
            format!(
                "workloads:\n  api:\n{name}      # {}\n",
                "x".repeat(comment)
            )
        };
        let at = with_workload_bytes(MIN_CUT_BYTES_BESIDE);
        let cut = cut_spec(&at, 1, MIN_CUT_BYTES_BESIDE).expect("cut at the least bytes");
        assert_eq!(cut.parts.len(), 1);
        let below = with_workload_bytes(MIN_CUT_BYTES_BESIDE - 1);
        assert_eq!(cut_spec(&below, 1, MIN_CUT_BYTES_BESIDE), None);
        assert!(
            cut_spec(&below, 1, 0).is_some(),
            "only its size keeps it whole"
        );
    }

    /// Each part holds each of its lines where the whole has it, blank lines for the
    /// rest; together the parts hold every workload line once, the presets' part every
    /// line of `presets`, and the rest every other line.
    #[test]
    fn every_line_is_in_one_part_at_its_own_number() {
        let text = synth();
        let cut = cut_spec(&text, 3, 0).expect("the synthetic spec is cut");
        assert_eq!(cut.parts.len(), 3);
        let original: Vec<&str> = text.lines().collect();
        let start = original.iter().position(|l| *l == "workloads:").unwrap();
        let mut held = vec![0; original.len()];
        let presets = cut.presets.as_ref().expect("its presets are cut apart");
        for part in std::iter::once(&cut.rest)
            .chain(&cut.parts)
            .chain([presets])
        {
            for (i, line) in part.lines().enumerate() {
                if i == start {
                    continue;
                }
                if !line.is_empty() {
                    assert_eq!(line, original[i], "line {}", i + 1);
                    held[i] += 1;
                }
            }
        }
        for (i, line) in original.iter().enumerate() {
            let class = line.len() > 2 && !line.starts_with("   ") && line.starts_with("  ");
            let expected = match () {
                _ if i == start || line.is_empty() => 0,
                // A class's line is in each part that holds some of its workloads.
                _ if i > start && class => held[i].max(1),
                _ => 1,
            };
            assert_eq!(held[i], expected, "line {}: {line}", i + 1);
        }
        assert!(cut.rest.lines().nth(start) == Some("workloads: {}"));
    }

    /// A spec is cut when its workloads hold at least the bytes asked for, and
    /// `read_in_parts` asks for 16 KiB: the 10-workload spec, about 4 KiB of them, is
    /// read whole.
    #[test]
    fn only_specs_with_enough_workloads_are_cut() {
        let text = synth();
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let start = lines.iter().position(|l| *l == "workloads:\n").unwrap();
        let end = lines.iter().position(|l| *l == "presets:\n").unwrap();
        let class = |l: &&&str| l.starts_with("  ") && !l.starts_with("   ");
        let total: usize = lines[start + 1..end]
            .iter()
            .filter(|l| !class(l))
            .map(|l| l.len())
            .sum();
        assert!(cut_spec(&text, 2, total).is_some());
        assert!(cut_spec(&text, 2, total + 1).is_none());
        assert!((2_000..MIN_CUT_BYTES).contains(&total), "{total}");
        assert!(read_in_parts(&text).is_none());
    }

    /// A spec with enough workloads is read in parts on a machine with two cores or
    /// more, and the parts' spec is the whole read's: the 10-workload spec with its
    /// pools written 12 more times, under new names.
    #[test]
    fn a_large_spec_is_read_in_parts() {
        let text = synth();
        let (pools, workers) = (
            text.find("\n  pool:\n").unwrap(),
            text.find("\n  worker:\n").unwrap(),
        );
        let block = &text[pools + "\n  pool:\n".len()..=workers];
        let mut large = text[..=workers].to_string();
        for copy in 0..12 {
            large.push_str(&block.replace("    pool-", &format!("    copy{copy}-pool-")));
        }
        large.push_str(&text[workers + 1..]);
        let whole = whole(&large).expect("the large spec reads");
        assert_eq!(whole.workloads.pool.len(), 13 * synth_pools(&text));
        // Beside the helper, in as many parts, on one core too.
        assert!(large.len() >= MIN_CUT_BYTES);
        let beside = crate::parallel::with_early_helper(|tasks| read_beside(&large, tasks));
        assert_eq!(beside.as_ref(), Some(&whole));
        let cores = crate::parallel::cores();
        let parts = read_in_parts(&large);
        assert_eq!(parts.is_some(), cores > 1);
        if let Some(spec) = parts {
            assert_eq!(spec, whole);
        }
    }

    fn synth_pools(text: &str) -> usize {
        whole(text).unwrap().workloads.pool.len()
    }

    /// A text is cut only in the layout this recognizes for certain.
    #[test]
    fn other_layouts_are_read_whole() {
        let base = "chart:\n  name: x\nworkloads:\n  api:\n    web:\n      port: 80\n    two:\n      port: 81\npresets:\n  small:\n    description: s\n";
        assert!(cut_spec(base, 2, 0).is_some());
        let changed = [
            ("port: 80", "port: &p 80\n      x: &p 1"),
            ("port: 81", "port: &p 81\npresets2: *p"),
            ("  name: x", "\tname: x"),
            ("\n", "\r\n"),
            ("chart:\n  name: x", "chart: {name: x,\n  version: y}"),
            ("chart:\n  name: x", "chart: {name: [x}]"),
            ("chart:\n  name: x", "chart: {name: x} # {"),
            ("chart:\n  name: x", "chart: \"x\""),
            (
                "workloads:\n  api:\n",
                "workloads: # the workloads\n  api:\n",
            ),
            ("  api:\n", "  api: {}\n  jobs:\n"),
            ("  api:\n", "  apis:\n"),
            ("    two:\n", "    two: {port: 81}\n"),
            ("    two:\n", "   two:\n"),
            ("      port: 81\n", "      port: 81\n jobs:\n"),
            ("chart:\n", "chart x:\n"),
            ("chart:\n", ": x\nchart:\n"),
            (
                "      port: 81\n",
                "      port: 81\n  api:\n    three:\n      port: 82\n",
            ),
            ("presets:\n", "chart:\npresets:\n"),
            ("presets:\n", "presets: # the presets\n  # {}\n---\n"),
        ];
        for (from, to) in changed {
            let text = base.replacen(from, to, 1);
            let cut = cut_spec(&text, 2, 0);
            // The comment after `workloads:` is the one change that still cuts.
            assert_eq!(cut.is_some(), to.contains("# the workloads"), "{to:?}");
        }
        // A flow collection closed on its top-level line is cut.
        let flow = base.replacen("chart:\n  name: x", "chart: {name: x, n: [1, {a: b}]}", 1);
        assert!(cut_spec(&flow, 2, 0).is_some());
        // A top-level key may have a plain value on its line; `workloads` may not.
        let plain = base.replacen("chart:\n", "replicaStrict: true\nchart:\n", 1);
        assert!(cut_spec(&plain, 2, 0).is_some());
        let inline = base.replacen("workloads:\n", "workloads: none\n", 1);
        assert!(cut_spec(&inline, 2, 0).is_none());
        // At most MAX_CUT_BYTES.
        let padded = |len: usize| format!("{base}#{}\n", "x".repeat(len - base.len() - 2));
        assert_eq!(padded(MAX_CUT_BYTES).len(), MAX_CUT_BYTES);
        assert!(cut_spec(&padded(MAX_CUT_BYTES), 2, 0).is_some());
        assert!(cut_spec(&padded(MAX_CUT_BYTES + 1), 2, 0).is_none());
        assert!(cut_spec(base, 2, base.len()).is_none());
        assert!(cut_spec(&format!("{base}{}", "#".repeat(MAX_CUT_BYTES)), 2, 0).is_none());
    }

    /// A cut where a quoted scalar or a flow collection spans lines leaves a part that
    /// cannot be read, and a workload in two parts is no spec: both are read whole.
    #[test]
    fn a_cut_that_breaks_a_scalar_or_repeats_a_workload_is_read_whole() {
        let text = synth();
        assert!(whole(&text).is_some());
        // A workload's key line, as a line of a quoted variable value that the previous
        // workload opens.
        let first_env = text.find("\n      env:\n").expect("a workload sets env");
        let mut broken = text.clone();
        broken.insert_str(
            first_env + 1,
            "      env:\n        - name: X\n          value: \"a\n",
        );
        let names: Vec<usize> = broken
            .match_indices("\n    ")
            .map(|(i, _)| i + 1)
            .filter(|&i| broken[i + 4..].starts_with(|c: char| c.is_ascii_lowercase()))
            .collect();
        let after = names
            .iter()
            .find(|&&i| i > first_env + 40)
            .copied()
            .unwrap();
        // The quote closes on the line after the key line, which stays a key line.
        let key_end = after + broken[after..].find('\n').unwrap();
        let line_end = key_end + 1 + broken[key_end + 1..].find('\n').unwrap();
        broken.insert(line_end, '"');
        let mut refused = 0;
        for parts in 1..=5 {
            let cut = cut_spec(&broken, parts, 0).expect("the layout is cut");
            let read = read_cut(&cut);
            assert!(read.is_none() || read == whole(&broken), "{parts} parts");
            refused += usize::from(read.is_none());
        }
        assert!(refused > 0);
        // One workload written twice in one class, cut apart.
        let twice = text.replacen(
            "\n  pool:\n",
            "\n  pool:\n    pool-1:\n      enabled: true\n",
            1,
        );
        assert!(text.contains("\n    pool-1:\n") && whole(&twice).is_none());
        for parts in 1..=5 {
            let cut = cut_spec(&twice, parts, 0).expect("the layout is cut");
            assert_eq!(read_cut(&cut), None, "{parts} parts");
        }
    }
}
