//! Golden files: the committed output of every example equals what generation
//! produces now; the committed spec schema equals `shipshape schema`.

use crate::support::*;
use shipshape::commands::{output_drift, read_tree, write_tree_atomically};
use shipshape::contract::schema::spec_schema;
use shipshape::generate::generate_outputs;
use shipshape::spec::load_spec;

#[test]
fn golden_outputs_are_current() {
    let update = update_golden();
    for (name, spec_path) in examples() {
        let spec = load_spec(&std::fs::read_to_string(&spec_path).unwrap(), &name).unwrap();
        let fresh = generate_outputs(&spec).unwrap().files;
        let dir = repo_root().join("golden").join(&name);
        if update {
            write_tree_atomically(&dir, &fresh).unwrap();
            continue;
        }
        let committed = read_tree(&dir).unwrap();
        let drift = output_drift(&committed, &fresh);
        assert!(
            drift.is_empty(),
            "golden/{name} is stale (UPDATE_GOLDEN=1 cargo test to accept):\n{drift}"
        );
    }
}

#[test]
fn committed_spec_schema_is_current() {
    let path = repo_root().join("schemas/shipshape.schema.json");
    let fresh = shipshape::backends::helm::pretty_json(&spec_schema());
    if update_golden() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(committed == fresh, "schemas/shipshape.schema.json is stale: run `shipshape schema > schemas/shipshape.schema.json`");
}

#[test]
fn generation_is_deterministic() {
    for (name, spec_path) in examples() {
        let text = std::fs::read_to_string(&spec_path).unwrap();
        let a = generate_outputs(&load_spec(&text, &name).unwrap()).unwrap();
        let b = generate_outputs(&load_spec(&text, &name).unwrap()).unwrap();
        assert_eq!(a, b);
    }
}

#[test]
fn example_specs_validate_against_the_committed_spec_schema() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("schemas/shipshape.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::draft7::new(&schema).expect("spec schema compiles");
    for (name, spec_path) in examples() {
        let doc: serde_json::Value =
            serde_saphyr::from_str(&std::fs::read_to_string(&spec_path).unwrap()).unwrap();
        let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
}

#[test]
fn generated_templates_are_readable() {
    for (name, spec_path) in examples() {
        let spec = load_spec(&std::fs::read_to_string(&spec_path).unwrap(), &name).unwrap();
        let files = generate_outputs(&spec).unwrap().files;
        let templates: Vec<(&String, &String)> = files
            .iter()
            .filter(|(path, _)| path.starts_with("chart/templates/"))
            .collect();
        assert!(
            templates.len() > 10,
            "{name}: {} templates",
            templates.len()
        );
        for (path, text) in &templates {
            for (n, line) in text.lines().enumerate() {
                assert!(
                    line.chars().count() <= shipshape::backends::wrap::MAX_LINE,
                    "{name}/{path}:{}: {} characters",
                    n + 1,
                    line.chars().count()
                );
                assert!(
                    !line.trim_start().starts_with("kind: \""),
                    "{name}/{path}:{}: static text is quoted: {line}",
                    n + 1
                );
            }
        }
        let helpers = &files["chart/templates/_helpers.tpl"];
        let chart = &spec.chart.name;
        for template in ["labels", "selectorLabels", "config"] {
            let define = format!("{{{{- define \"{chart}.{template}\" -}}}}");
            assert!(helpers.contains(&define), "{name}: no {define}");
            let include = format!("include \"{chart}.{template}\" $");
            let uses = templates
                .iter()
                .filter(|(_, t)| t.contains(&include))
                .count();
            // The release's configuration is the ConfigMap's; each workload reads its
            // own `config.<workload>` (the same text while its overlay is empty).
            let least = if template == "config" { 1 } else { 2 };
            assert!(uses >= least, "{name}: {include} used {uses} times");
        }
        for (workload, _) in spec.workloads.all() {
            let include = format!("include \"{chart}.config.{workload}\" $");
            assert!(
                templates.iter().any(|(_, t)| t.contains(&include)),
                "{name}: no template reads {include}"
            );
        }
    }
}

/// The rule list in README.md, between its markers, is what the registry generates.
#[test]
fn readme_rule_list_is_current() {
    const START: &str = "<!-- rules:start -->\n";
    const END: &str = "<!-- rules:end -->";
    let path = repo_root().join("README.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text
        .find(START)
        .expect("README.md has `<!-- rules:start -->`")
        + START.len();
    let end = start
        + text[start..]
            .find(END)
            .expect("README.md has `<!-- rules:end -->` after `<!-- rules:start -->`");
    let fresh = shipshape::guards::registry::readme_rule_list();
    if update_golden() {
        let updated = format!("{}{fresh}{}", &text[..start], &text[end..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    assert!(
        text[start..end] == fresh,
        "README.md's rule list is stale (UPDATE_GOLDEN=1 cargo test to accept):\n--- README.md\n{}\n+++ registry\n{fresh}",
        &text[start..end]
    );
}
