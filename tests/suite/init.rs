//! `shipshape init`: the starter spec loads, validates against the spec schema the
//! modeline names, generates, passes the official Kubernetes schemas and renders equal
//! under Helm 3, Helm 4 and shipshape; it never overwrites a file.

use crate::support::*;
use shipshape::generate::generate_outputs;
use shipshape::spec::starter::{starter_spec, StarterError};
use shipshape::spec::{load_spec, WorkloadClass};
use std::path::Path;

fn shipshape(args: &[&str]) -> (i32, String, String) {
    run(Path::new(env!("CARGO_BIN_EXE_shipshape")), args, &[])
}

#[test]
fn init_writes_a_spec_that_generates_validates_and_renders_equal_under_both_helms() {
    let scratch = Scratch::new("init");
    let dir = scratch.path().join("My Shop");
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("shipshape.yaml");
    let spec_arg = spec.to_str().unwrap();
    let (code, out, err) = shipshape(&[
        "--spec",
        spec_arg,
        "init",
        "--classes",
        "api,worker,migrate",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("wrote") && out.contains("shipshape.schema.json"),
        "{out}"
    );
    let text = std::fs::read_to_string(&spec).unwrap();
    assert!(text.starts_with("# yaml-language-server: $schema=./shipshape.schema.json\n"));
    // The name comes from the folder.
    assert!(text.contains("\n  name: my-shop\n"), "{text}");

    // The schema the modeline names is the spec schema, and the spec validates against it.
    let schema_text = std::fs::read_to_string(dir.join("shipshape.schema.json")).unwrap();
    let (_, printed, _) = shipshape(&["schema"]);
    assert_eq!(schema_text, printed);
    let schema: serde_json::Value = serde_json::from_str(&schema_text).unwrap();
    let doc: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let errors: Vec<String> = jsonschema::draft7::new(&schema)
        .unwrap()
        .iter_errors(&doc)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");

    // It generates: the defaults and the autoscaling preset, whose maximum fits the
    // 100-connection server: (m + 1 + m) x 5 + 15 + 2 + 5 <= 90 -> m = 6.
    let out_dir = dir.join("generated");
    let (code, _, err) = shipshape(&["--spec", spec_arg, "generate"]);
    assert_eq!(code, 0, "{err}");
    let capacity = std::fs::read_to_string(out_dir.join("capacity/autoscaling.txt")).unwrap();
    assert!(
        capacity.contains("`web`      api             6"),
        "{capacity}"
    );
    assert!(capacity.contains("ok, 3 spare"), "{capacity}");
    let (code, out, err) = shipshape(&["--spec", spec_arg, "check"]);
    assert_eq!(code, 0, "{out}{err}");

    // The renders pass the official schemas of Kubernetes 1.28 and 1.31, strictly.
    let rendered: Vec<String> = ["default", "autoscaling"]
        .iter()
        .map(|p| {
            out_dir
                .join(format!("rendered/{p}.yaml"))
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    for version in ["1.28.0", "1.31.0"] {
        let mut args = vec!["--strict", "-k", version];
        args.extend(rendered.iter().map(String::as_str));
        let (code, out, err) = run(&kubernetes_validate(), &args, &[]);
        assert_eq!(code, 0, "Kubernetes {version}:\n{out}\n{err}");
        assert!(!out.contains("ERROR"), "{out}");
    }

    // Helm 3 and Helm 4 render every preset as shipshape does, and lint it clean.
    let chart = out_dir.join("chart");
    let chart_arg = chart.to_str().unwrap();
    for helm_bin in [helm3(), helm4()] {
        for preset in ["default", "autoscaling"] {
            let values = chart.join(format!("values-{preset}.yaml"));
            let mut args = vec!["template", chart_arg];
            if preset != "default" {
                args.extend(["-f", values.to_str().unwrap()]);
            }
            let (code, out, err) = helm(&helm_bin, &args, scratch.path());
            assert_eq!(code, 0, "{} {preset}: {err}", helm_bin.display());
            let native =
                std::fs::read_to_string(out_dir.join(format!("rendered/{preset}.yaml"))).unwrap();
            assert_eq!(
                parse_objects(&out),
                parse_objects(&native),
                "{preset}: {} and shipshape differ",
                helm_bin.display()
            );
        }
        let (code, out, err) = helm(&helm_bin, &["lint", "--strict", chart_arg], scratch.path());
        assert_eq!(code, 0, "lint under {}: {out}{err}", helm_bin.display());
    }
}

#[test]
fn init_never_overwrites_a_file() {
    let scratch = Scratch::new("init-exists");
    let spec = scratch.path().join("shipshape.yaml");
    std::fs::write(&spec, "mine\n").unwrap();
    let (code, out, err) = shipshape(&["--spec", spec.to_str().unwrap(), "init", "--name", "shop"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        err.contains("already exists, and `shipshape init` never overwrites a file"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&spec).unwrap(), "mine\n");
    assert!(!scratch.path().join("shipshape.schema.json").exists());

    // An existing schema file is kept; the spec is still written.
    let other = scratch.path().join("other.yaml");
    std::fs::write(scratch.path().join("shipshape.schema.json"), "{}\n").unwrap();
    let (code, _, err) = shipshape(&["--spec", other.to_str().unwrap(), "init", "--name", "shop"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("kept the existing"), "{err}");
    assert_eq!(
        std::fs::read_to_string(scratch.path().join("shipshape.schema.json")).unwrap(),
        "{}\n"
    );
    assert!(std::fs::read_to_string(&other)
        .unwrap()
        .contains("name: shop"));
}

#[test]
fn init_refuses_bad_names_and_classes_with_a_hint() {
    let scratch = Scratch::new("init-bad");
    let spec = scratch.path().join("shipshape.yaml");
    let spec = spec.to_str().unwrap();
    for (args, message) in [
        (
            vec!["--name", "My_App"],
            "--name `My_App` is not a valid chart name",
        ),
        (vec!["--classes", "api,wrker"], "did you mean `worker`?"),
        (vec!["--classes", "api,pool"], "`pool` needs `jobs`"),
    ] {
        let mut all = vec!["--spec", spec, "init"];
        all.extend(args);
        let (code, _, err) = shipshape(&all);
        assert_eq!(code, 2, "{all:?}");
        assert!(
            err.contains(message) && err.contains("hint:"),
            "{all:?}: {err}"
        );
        assert!(!Path::new(spec).exists());
    }
}

#[test]
fn every_combination_of_classes_generates() {
    let all = [
        WorkloadClass::Api,
        WorkloadClass::Jobs,
        WorkloadClass::Pool,
        WorkloadClass::Worker,
        WorkloadClass::Migrate,
    ];
    let mut generated = 0;
    for mask in 1u32..32 {
        let classes: Vec<WorkloadClass> = (0..5)
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| all[i])
            .collect();
        let text = match starter_spec("shop", &classes) {
            Err(StarterError::PoolWithoutJobs) => {
                assert!(
                    classes.contains(&WorkloadClass::Pool)
                        && !classes.contains(&WorkloadClass::Jobs)
                );
                continue;
            }
            other => other.unwrap(),
        };
        let spec = load_spec(&text, "starter").unwrap_or_else(|e| panic!("{classes:?}: {e}"));
        let files = generate_outputs(&spec)
            .unwrap_or_else(|e| panic!("{classes:?}: {e}"))
            .files;
        let presets: Vec<&String> = files
            .keys()
            .filter(|k| k.starts_with("rendered/"))
            .collect();
        assert_eq!(
            presets.len(),
            2,
            "{classes:?}: one preset besides the defaults"
        );
        for class in &classes {
            assert!(
                spec.workloads
                    .all()
                    .iter()
                    .any(|(_, w)| w.class() == *class),
                "{classes:?}: no {class:?} workload"
            );
        }
        generated += 1;
    }
    assert_eq!(
        generated, 23,
        "31 combinations less the 8 with a pool and no jobs"
    );
}

/// The README's "First chart in five minutes" shows what the commands print: run them
/// again and find each output in it.
#[test]
fn the_readme_walkthrough_shows_real_output() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let start = readme
        .find("## First chart in five minutes")
        .expect("section");
    let end = start + readme[start..].find("\n## Commands").expect("next section");
    let section = &readme[start..end];
    let scratch = Scratch::new("init-walkthrough");
    let dir = scratch.path().join("shop");
    std::fs::create_dir_all(&dir).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_shipshape"));
    let in_shop = |args: &[&str]| {
        let out = std::process::Command::new(bin)
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
    };
    let (code, init) = in_shop(&["init", "--name", "shop"]);
    assert_eq!(code, Some(0));
    let (code, generate) = in_shop(&["generate"]);
    assert_eq!(code, Some(0));
    let capacity = std::fs::read_to_string(dir.join("generated/capacity/autoscaling.txt")).unwrap();
    let spec = dir.join("shipshape.yaml");
    let text = std::fs::read_to_string(&spec).unwrap();
    let edited = text.replacen(
        "      processesPerPod: 1\n",
        "      processesPerPod: 2\n",
        1,
    );
    assert_ne!(text, edited);
    std::fs::write(&spec, edited).unwrap();
    let (code, diff) = in_shop(&["diff", "--format", "markdown"]);
    assert_eq!(code, Some(1));
    for (what, output) in [
        ("init", init),
        ("generate", generate),
        ("capacity", capacity),
        ("diff", diff),
    ] {
        assert!(
            section.contains(output.trim_end()),
            "README's walkthrough is stale: the {what} output is not in it:\n{output}"
        );
    }
}
