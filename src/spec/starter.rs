//! The starter spec `shipshape init` writes: a commented `shipshape.yaml` for a new
//! app, with a schema modeline for editors, budgets that fit, one workload per chosen
//! class and one preset. Pure: the command layer writes it.

use crate::spec::{closest, is_dns_label, WorkloadClass};

/// The classes `init` uses when `--classes` is not given.
pub const DEFAULT_CLASSES: &[WorkloadClass] = &[
    WorkloadClass::Api,
    WorkloadClass::Worker,
    WorkloadClass::Migrate,
];

/// The file the starter spec's modeline names, beside the spec.
pub const SCHEMA_FILE: &str = "shipshape.schema.json";

const ALL_CLASSES: [WorkloadClass; 5] = [
    WorkloadClass::Api,
    WorkloadClass::Jobs,
    WorkloadClass::Pool,
    WorkloadClass::Worker,
    WorkloadClass::Migrate,
];

/// Arguments of `init` that cannot make a spec.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StarterError {
    #[error("--name `{name}` is not a valid chart name\n  hint: use lowercase letters, digits and `-`, starting with a letter and ending with a letter or digit, at most 53 characters, e.g. `my-app`")]
    BadName { name: String },
    #[error("--classes: unknown class `{class}`\n  hint: {hint}")]
    UnknownClass { class: String, hint: String },
    #[error("--classes names no class\n  hint: list some of api, jobs, pool, worker, migrate, separated by `,`")]
    NoClass,
    #[error("--classes: `pool` needs `jobs`: a pool takes its jobs over from the `jobs` workload, which runs them while the pool is off\n  hint: add `jobs`, e.g. `--classes api,jobs,pool`")]
    PoolWithoutJobs,
    #[error("internal template `shipshape.yaml.j2` failed: {0}")]
    Template(String),
}

/// Parses `--classes api,worker,migrate` (in any order, repeats ignored) into the
/// classes in their canonical order.
pub fn parse_classes(arg: &str) -> Result<Vec<WorkloadClass>, StarterError> {
    let names: Vec<&str> = ALL_CLASSES.iter().map(|c| c.name()).collect();
    let mut chosen = Vec::new();
    for word in arg.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let Some(class) = ALL_CLASSES.iter().find(|c| c.name() == word) else {
            let hint = match closest(word, &names) {
                Some(c) => format!("did you mean `{c}`? the classes are {}", names.join(", ")),
                None => format!("the classes are {}", names.join(", ")),
            };
            return Err(StarterError::UnknownClass {
                class: word.to_string(),
                hint,
            });
        };
        chosen.push(*class);
    }
    if chosen.is_empty() {
        return Err(StarterError::NoClass);
    }
    chosen.sort();
    chosen.dedup();
    Ok(chosen)
}

/// A chart name made from a folder name: lowercase, runs of other characters as one
/// `-`, starting with a letter, at most 53 characters; `app` when nothing is left.
pub fn name_from_folder(folder: &str) -> String {
    let mut name = String::new();
    for c in folder.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            name.push(c);
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    let name = name.trim_start_matches(|c: char| c.is_ascii_digit() || c == '-');
    let mut name: String = name.chars().take(53).collect();
    while name.ends_with('-') {
        name.pop();
    }
    if is_dns_label(&name, 53) {
        name
    } else {
        "app".to_string()
    }
}

/// The text of a new `shipshape.yaml` for chart `name` with one workload per class.
pub fn starter_spec(name: &str, classes: &[WorkloadClass]) -> Result<String, StarterError> {
    if !is_dns_label(name, 53) {
        return Err(StarterError::BadName {
            name: name.to_string(),
        });
    }
    if classes.is_empty() {
        return Err(StarterError::NoClass);
    }
    let has = |c: WorkloadClass| classes.contains(&c);
    if has(WorkloadClass::Pool) && !has(WorkloadClass::Jobs) {
        return Err(StarterError::PoolWithoutJobs);
    }
    let names: Vec<&str> = classes.iter().map(|c| c.name()).collect();
    let class_list = match names.split_last() {
        Some((last, [])) => format!("an {last} workload").replace("an jobs", "a jobs"),
        Some((last, rest)) => format!("{} and {last} workloads", rest.join(", ")),
        None => String::new(),
    };
    let env = minijinja::Environment::new();
    let template = env
        .template_from_str(include_str!("../../templates/shipshape.yaml.j2"))
        .map_err(|e| StarterError::Template(e.to_string()))?;
    let mut text = template
        .render(minijinja::context! {
            name => name,
            class_list => class_list,
            api => has(WorkloadClass::Api),
            jobs => has(WorkloadClass::Jobs),
            pool => has(WorkloadClass::Pool),
            worker => has(WorkloadClass::Worker),
            migrate => has(WorkloadClass::Migrate),
            scheduling => has(WorkloadClass::Jobs),
        })
        .map_err(|e| StarterError::Template(e.to_string()))?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_parse_in_canonical_order_with_clear_errors() {
        assert_eq!(
            parse_classes("migrate, api,worker,api").unwrap(),
            [
                WorkloadClass::Api,
                WorkloadClass::Worker,
                WorkloadClass::Migrate
            ]
        );
        let err = parse_classes("api,wrker").unwrap_err();
        assert_eq!(
            err.to_string(),
            "--classes: unknown class `wrker`\n  hint: did you mean `worker`? the classes are api, jobs, pool, worker, migrate"
        );
        assert_eq!(parse_classes(" , ").unwrap_err(), StarterError::NoClass);
    }

    #[test]
    fn folder_names_become_chart_names() {
        assert_eq!(name_from_folder("My Shop_API"), "my-shop-api");
        assert_eq!(name_from_folder("2024-billing"), "billing");
        assert_eq!(name_from_folder("..."), "app");
        assert_eq!(name_from_folder(&"x".repeat(80)).len(), 53);
    }

    #[test]
    fn the_starter_starts_with_the_modeline_and_refuses_bad_input() {
        let text = starter_spec("shop", DEFAULT_CLASSES).unwrap();
        assert!(text.starts_with("# yaml-language-server: $schema=./shipshape.schema.json\n"));
        assert!(
            text.contains("description: shop, one image run as api, worker and migrate workloads")
        );
        assert_eq!(
            starter_spec("Shop", DEFAULT_CLASSES).unwrap_err(),
            StarterError::BadName {
                name: "Shop".into()
            }
        );
        assert_eq!(
            starter_spec("shop", &[WorkloadClass::Api, WorkloadClass::Pool]).unwrap_err(),
            StarterError::PoolWithoutJobs
        );
    }

    /// Every top-level section of the spec it writes is explained by a comment just
    /// above it, and most of the file is comments.
    #[test]
    fn every_section_is_taught() {
        let all = parse_classes("api,jobs,pool,worker,migrate").unwrap();
        let text = starter_spec("shop", &all).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let mut sections = 0;
        for (i, line) in lines.iter().enumerate() {
            if !line.is_empty() && !line.starts_with([' ', '#', '-']) {
                sections += 1;
                assert!(
                    i > 0 && lines[i - 1].starts_with('#'),
                    "line {}: `{line}` has no comment above it",
                    i + 1
                );
            }
        }
        assert_eq!(
            sections, 6,
            "chart, image, dependencyCapacity, scheduling, workloads, presets"
        );
        for class in ["api", "jobs", "pool", "worker", "migrate"] {
            let key = format!("  {class}:");
            let workloads = lines.iter().position(|l| *l == "workloads:").unwrap();
            let at = workloads
                + lines[workloads..]
                    .iter()
                    .position(|l| *l == key)
                    .unwrap_or_else(|| panic!("{key}"));
            let block: Vec<&str> = lines[..at]
                .iter()
                .rev()
                .take_while(|l| l.trim_start().starts_with('#'))
                .copied()
                .collect();
            assert!(
                block
                    .last()
                    .is_some_and(|l| l.contains(&format!("# `{class}`:"))),
                "{key}: {block:?}"
            );
        }
        let comments = lines
            .iter()
            .filter(|l| l.trim_start().starts_with('#'))
            .count();
        assert!(
            comments * 3 > lines.len(),
            "{comments} comment lines of {}",
            lines.len()
        );
    }
}
