//! `shipshape render`: the manifests `helm template` prints, without Helm, once the
//! values schema and the guards accept the values.

use super::{
    check_release_name, left_to_exit, merge_values_over, read_text, CommandError, Exit,
    MergedValues, RenderOptions,
};
use crate::backends::native::{Manifests, Release};
use crate::spec::Spec;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// `shipshape render`: prints what `helm template` prints for these values, after the
/// values schema and the guards accept them (exit 1 with the findings otherwise).
pub fn render(spec_path: &Path, options: &RenderOptions) -> Result<Exit, CommandError> {
    render_parsed_by(Some(spec_path), || {
        Some((spec_path.to_path_buf(), options.clone()))
    })
    .expect("the arguments are given")
}

/// [`render`] with its arguments from `parse`, which runs on a helper thread (the
/// binary parses the command line with clap there) while this thread reads the spec
/// at `likely_spec`, the path the command line most likely names: its text is used
/// only when `parse` names exactly that path (the same bytes), and only a regular
/// file is read ahead. The arguments are checked as before, a bad release name
/// refused ahead of any error of the spec's. The helper also reads what needs no
/// argument: the built-in presets and the values model's schemas. `None` when `parse`
/// finds no `render` command.
pub fn render_parsed_by(
    likely_spec: Option<&Path>,
    parse: impl FnOnce() -> Option<(PathBuf, RenderOptions)> + Send,
) -> Option<Result<Exit, CommandError>> {
    use crate::backends::native::RenderedDocuments;
    use crate::capacity::fit::{presets_over, presets_over_fitting_only};
    use crate::contract::model_schemas::ModelSchemas;
    use crate::contract::PlanPods;
    use crate::parallel::Later;
    use crate::values::presets::Preset;
    use crate::values::{default_values, entries_of};
    use serde_json::Value;
    use std::collections::BTreeMap;
    use std::sync::{Mutex, OnceLock};
    // Independent tasks on the machine's cores: check the values against the schema
    // (its frame and its root rules apart), run the guards, render the manifests in
    // three parts; all read the same spec and values. The helper starts first and
    // parses the arguments while this thread reads the spec they most likely name,
    // then reads what needs no argument (the built-in presets, the model's schemas);
    // the spec's workloads, queued ahead of what it has not started, come first once
    // the spec file is read. What needs only the spec and the chart's
    // defaults (the schema's frame, the presets fitted to the budgets and every plan's
    // pod counts) is queued while the values are merged: the merge reads the preset it
    // names alone, fitted on this thread if it must be. Then the tasks that take
    // longest first (the root rules in two halves: those on the workloads' own values
    // at once, those that read the plans once the pod counts are read; the frame's
    // check, which waits for the frame), and the short ones last (the manifests'
    // parts, the guards), so that both cores end at about the same time; a thread
    // takes the next task instead of one that would wait (`Tasks::push_when`). What
    // the check decides comes first, as when they ran one after the other: refused
    // values print nothing but the violations, and the guards' findings and the
    // manifests computed meanwhile are dropped. Then the guards: the manifests print
    // only when no finding is an error.
    let arguments: Later<Option<(PathBuf, RenderOptions)>> = Later::default();
    // The model's schemas for the frame, read by whichever thread needs them first;
    // the frame's task takes them. Only the types' schemas, without annotations: the
    // frame is only walked, to check the values, and the walk parses each of the
    // model's definitions when the values reach it.
    let model: OnceLock<Mutex<Option<ModelSchemas>>> = OnceLock::new();
    let (spec_cell, defaults_cell, merging_cell) =
        (OnceLock::new(), OnceLock::new(), OnceLock::new());
    // Every preset fitted, for the pod counts, the rules and the check's words.
    let fitted: Later<BTreeMap<String, Preset>> = Later::default();
    let merged_cell = OnceLock::new();
    let (frame_schema, plan_pods) = (Later::default(), Later::default());
    // The root rules' definitions, and the verdicts of the rules on the workloads'
    // own values and of those that read the plans.
    let rule_root = Later::default();
    let (frame, workload_rules, contract_rules) =
        (OnceLock::new(), OnceLock::new(), OnceLock::new());
    let findings: [OnceLock<Vec<crate::guards::Finding>>; 2] = Default::default();
    let parts: [OnceLock<Result<RenderedDocuments, crate::expr::EvalError>>; RENDER_PARTS] =
        Default::default();
    let read_model = || model.get_or_init(|| Mutex::new(Some(ModelSchemas::without_definitions())));
    let ran = crate::parallel::with_early_helper(|tasks| -> Option<Result<(), CommandError>> {
        // The helper parses the arguments while this thread reads the spec they most
        // likely name (clap took about 0.15 ms before the spec's read began), then
        // reads what needs no argument. The chart's presets and the frame take them
        // read (or wait for them, or read them if no thread has started to).
        let arguments = &arguments;
        tasks.push(Box::new(move || arguments.compute(parse)));
        tasks.push(Box::new(|| {
            crate::values::presets::builtin_presets();
        }));
        tasks.push(Box::new(move || {
            read_model();
        }));
        // For the helper's idle time (while this thread reads the spec): the model's
        // definitions, which the frame's check would parse when the values reach them,
        // and their patterns, which both checks would compile.
        for name in crate::contract::model_schemas::model_definition_names_longest_first() {
            tasks.push_spare(Box::new(move || {
                if let Some(definition) = crate::contract::model_schemas::model_definition(name) {
                    crate::values::schema_verdict::compile_patterns_ahead(definition);
                }
            }));
        }
        let read_ahead = likely_spec
            .filter(|path| path.is_file())
            .map(|path| (path, read_spec_beside(path, tasks)));
        // With no helper, the arguments are parsed here.
        tasks.work();
        let (spec_path, options) = arguments.wait()?.as_ref()?;
        Some((|| {
            check_release_name(&options.release.name)?;
            let spec = match read_ahead {
                Some((path, spec)) if path.as_os_str() == spec_path.as_os_str() => spec?,
                _ => read_spec_beside(spec_path, tasks)?,
            };
            let spec: &Spec = spec_cell.get_or_init(move || spec);
            let (frame_schema, plan_pods) = (&frame_schema, &plan_pods);
            tasks.push(Box::new(move || {
                frame_schema.compute(|| {
                    let model = read_model().lock().ok().and_then(|mut m| m.take());
                    let model = model.unwrap_or_else(ModelSchemas::without_definitions);
                    crate::contract::schema::frame_schema_with(spec, model)
                });
            }));
            let defaults: &Value = defaults_cell.get_or_init(|| default_values(spec));
            let fitted = &fitted;
            tasks.push(Box::new(move || {
                // One task: a panic in either leaves neither waited for.
                plan_pods.compute(|| {
                    fitted.compute(|| presets_over(spec, entries_of(defaults)));
                    let presets = fitted.wait().expect("fitted just now");
                    PlanPods::of(spec, presets, defaults)
                });
            }));
            let merging = merging_cell.get_or_init(|| {
                presets_over_fitting_only(spec, entries_of(defaults), options.preset.as_deref())
            });
            let merged = merge_values_over(defaults, merging, options)?;
            let merged: &MergedValues = merged_cell.get_or_init(move || merged);
            let (frame, findings) = (&frame, &findings);
            let (rule_root, workload_rules, contract_rules) =
                (&rule_root, &workload_rules, &contract_rules);
            // The root rules in two tasks: those on the workloads' own values need no
            // pod count, and start at once; those that read the plans wait for them.
            tasks.push(Box::new(move || {
                rule_root.compute(|| crate::contract::rule_definitions_root(spec, defaults));
                let _ = workload_rules.set(rule_root.wait().and_then(|root| {
                    crate::contract::workload_rules_verdict(spec, defaults, root, &merged.values)
                }));
            }));
            tasks.push_when(
                move || plan_pods.is_ready() && rule_root.is_ready(),
                Box::new(move || {
                    let _ = contract_rules.set(merged.plan().and_then(|plan| {
                        crate::contract::contract_rules_verdict(
                            spec,
                            fitted.wait()?,
                            plan,
                            defaults,
                            rule_root.wait()?,
                            &merged.values,
                            plan_pods.wait()?,
                        )
                    }));
                }),
            );
            tasks.push_when(
                move || frame_schema.is_ready(),
                Box::new(move || {
                    let schema = frame_schema.wait();
                    let _ = frame.set(schema.and_then(|schema| {
                        crate::contract::walked_frame_verdict(schema, &merged.values)
                    }));
                }),
            );
            for (part, cell) in parts.iter().enumerate() {
                tasks.push(Box::new(move || {
                    let _ = cell.set(render_part(spec, &merged.values, &options.release, part));
                }));
            }
            tasks.push(Box::new(move || {
                let _ = findings[0].set({
                    let mut f = crate::guards::capacity::capacity_findings(spec, &merged.values);
                    f.extend(crate::guards::value_rule_findings(spec, &merged.values));
                    f
                });
            }));
            tasks.push(Box::new(move || {
                let _ = findings[1].set({
                    let mut f = crate::guards::whole_number_rule_findings(spec, &merged.values);
                    f.extend(crate::guards::spec_rule_findings(spec));
                    f
                });
            }));
            tasks.work();
            Ok(())
        })())
    });
    if let Err(error) = ran? {
        return Some(Err(error));
    }
    let (spec, mut merged) = (
        spec_cell.into_inner().expect("the spec was read"),
        merged_cell.into_inner().expect("the values were merged"),
    );
    // The check words a violation with every preset fitted, not those merged over.
    merged.presets = fitted.wait().expect("the presets were fitted");
    let verdict = crate::contract::both_verdicts(
        frame.into_inner().expect("the frame was checked"),
        crate::contract::both_rule_verdicts(
            workload_rules
                .into_inner()
                .expect("the workloads' rules were checked"),
            contract_rules
                .into_inner()
                .expect("the plans' rules were checked"),
        ),
    );
    if let Err(error) = merged.check_after(&spec, verdict) {
        return Some(Err(error));
    }
    let findings = crate::guards::sorted_findings(
        findings
            .into_iter()
            .map(|f| f.into_inner().expect("the guards ran"))
            .collect(),
    );
    for finding in &findings {
        eprintln!("{finding}");
    }
    if findings
        .iter()
        .any(|f| f.severity == crate::guards::Severity::Error)
    {
        return Some(Ok(Exit::Findings));
    }
    let parts = match parts
        .into_iter()
        .map(|p| p.into_inner().expect("every part rendered"))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(parts) => parts,
        Err(error) => return Some(Err(error.into())),
    };
    let text = crate::backends::native::print_manifests(&spec, &merged.values, parts);
    if let Err(error) = crate::backends::limits::check_object_limits(&text) {
        return Some(Err(error.into()));
    }
    let _ = io::stdout().lock().write_all(text.as_bytes());
    left_to_exit((spec, merged, frame_schema, plan_pods, rule_root, text));
    left_to_exit((defaults_cell, merging_cell, fitted));
    Some(Ok(Exit::Ok))
}

/// The spec at `path`, its workloads read on `tasks` beside this thread
/// ([`crate::spec::load_spec_beside`]).
fn read_spec_beside(path: &Path, tasks: &crate::parallel::Tasks<'_>) -> Result<Spec, CommandError> {
    let text = read_text(path)?;
    Ok(crate::spec::load_spec_beside(
        &text,
        &path.display().to_string(),
        tasks,
    )?)
}

/// The parts `render` renders its manifests in, side by side.
const RENDER_PARTS: usize = 3;

/// Part `part` of the manifests ([`crate::objects::each_object_in_part`]): renders
/// each document as it is built, and drops it.
fn render_part(
    spec: &Spec,
    values: &serde_json::Value,
    release: &Release,
    part: usize,
) -> Result<crate::backends::native::RenderedDocuments, crate::expr::EvalError> {
    let mut manifests = Manifests::new(spec, values, release);
    let mut failed = None;
    crate::objects::each_object_in_part(spec, part, RENDER_PARTS, &mut |doc, workload| {
        if failed.is_none() {
            failed = manifests.add_of(&doc, workload).err();
        }
    });
    match failed {
        Some(error) => Err(error),
        None => Ok(manifests.into_rendered()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without a `render` command line, nothing is read or printed, and the caller
    /// gets its command back (`None`).
    #[test]
    fn render_parsed_by_renders_nothing_without_a_render_command() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let asked = AtomicUsize::new(0);
        let rendered = render_parsed_by(None, || {
            asked.fetch_add(1, Ordering::Relaxed);
            None
        });
        assert!(rendered.is_none());
        assert_eq!(
            asked.load(Ordering::Relaxed),
            1,
            "the arguments are parsed once"
        );
    }

    /// The arguments parsed are the ones checked: a bad release name is refused before
    /// the spec is read, as `render` refuses it.
    #[test]
    fn render_parsed_by_checks_the_arguments_parsed() {
        let options = RenderOptions {
            preset: None,
            values_files: Vec::new(),
            set: Vec::new(),
            release: Release {
                name: "Not_A_Name".into(),
                namespace: "default".into(),
            },
        };
        let missing = Path::new("no-such-dir/shipshape.yaml");
        let parsed = render_parsed_by(None, || Some((missing.to_path_buf(), options.clone())));
        let direct = render(missing, &options);
        match (parsed, direct) {
            (Some(Err(a)), Err(b)) => {
                assert_eq!(a.to_string(), b.to_string());
                assert!(a.to_string().contains("Not_A_Name"), "{a}");
            }
            other => panic!("both refuse the release name: {other:?}"),
        }
    }

    /// `render`'s options with release name `name`.
    fn options_named(name: &str) -> RenderOptions {
        RenderOptions {
            preset: None,
            values_files: Vec::new(),
            set: Vec::new(),
            release: Release {
                name: name.into(),
                namespace: "default".into(),
            },
        }
    }

    /// The spec read ahead is used only for the path the arguments name: with another
    /// spec read ahead, a missing spec is refused as `render` refuses it. A path that
    /// is no regular file is not read ahead: a folder, or a named pipe no one writes
    /// to, whose read would never end.
    #[cfg(unix)]
    #[test]
    fn the_spec_read_ahead_is_used_only_for_the_path_parsed() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let options = options_named("release-name");
        let missing = Path::new("no-such-dir/shipshape.yaml");
        let expected = render(missing, &options).expect_err("no such spec");
        let dir = std::env::temp_dir().join(format!("shipshape-read-ahead-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pipe = dir.join("pipe.yaml");
        let _ = std::fs::remove_file(&pipe);
        let name = std::ffi::CString::new(pipe.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        for likely in [
            root.join("examples/web-shop/shipshape.yaml"),
            root.join("examples"),
            pipe.clone(),
        ] {
            let parsed = render_parsed_by(Some(&likely), || {
                Some((missing.to_path_buf(), options.clone()))
            });
            match parsed {
                Some(Err(error)) => assert_eq!(error.to_string(), expected.to_string()),
                other => panic!("{} read ahead: {other:?}", likely.display()),
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A spec refused when read ahead is refused as when it is read after the
    /// arguments, and a bad release name still comes first.
    #[test]
    fn a_spec_read_ahead_is_refused_as_one_read_after() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let refused = root.join("tests/fixtures/spec/err/duplicate-key.yaml");
        for name in ["release-name", "Not_A_Name"] {
            let options = options_named(name);
            let ahead =
                render_parsed_by(Some(&refused), || Some((refused.clone(), options.clone())));
            let after = render_parsed_by(None, || Some((refused.clone(), options.clone())));
            match (ahead, after) {
                (Some(Err(a)), Some(Err(b))) => {
                    assert_eq!(a.to_string(), b.to_string());
                    let part = if name == "release-name" {
                        "duplicate"
                    } else {
                        name
                    };
                    assert!(a.to_string().contains(part), "{a}");
                }
                other => panic!("both refuse `{name}`: {other:?}"),
            }
        }
    }

    /// A refusal is worded with every preset fitted, as the check of the other commands
    /// words it, for values that name the plan of a preset fitted beside the merge:
    /// web-shop's `autoscaling`, whose maximum of 12 is fitted to 4 by the budgets.
    #[test]
    fn a_refusal_is_worded_with_every_preset_fitted() {
        let name = "web-shop";
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("examples/{name}/shipshape.yaml"));
        let options = RenderOptions {
            preset: None,
            values_files: Vec::new(),
            set: vec![
                "capacityPlan=autoscaling".into(),
                "workloads.storefront.autoscaling.enabled=true".into(),
                "workloads.storefront.autoscaling.maxReplicas=8".into(),
            ],
            release: Release::default(),
        };
        let spec = crate::guards::testing::example(name);
        let expected = super::super::resolve_for(&spec, &options).expect_err("refused");
        let rendered = render(&path, &options).expect_err("refused");
        assert_eq!(rendered.to_string(), expected.to_string());
        assert!(
            expected
                .to_string()
                .contains("8 is greater than the maximum of 4"),
            "{expected}"
        );
    }
}
