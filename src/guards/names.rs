//! `names.unique`: refuses two rendered objects of one kind with the same name, for
//! any release name Helm accepts (1 to 53 characters) and any `nameOverride` and
//! `fullnameOverride` the values schema accepts. Kubernetes would keep one object
//! for both; a hook with `before-hook-creation` would even delete the release's own
//! object on upgrade (a migrate workload named `config` against the chart's
//! configuration ConfigMap).
//!
//! Names are `<fullname>-<suffix>` with the full name cut so the suffix always fits
//! ([`NamePattern::Suffixed`]); two of them are equal for some full name exactly when
//! one `-<suffix>` ends the other (proved below, not sampled). A name the spec's
//! `takeover` block writes is cut to 63 characters as a whole, so it is evaluated for
//! every release name length from 1 to 53 and every full name length from 1 to 63.
//! At install time `values.schema.json` allows only empty or DNS-label overrides of
//! at most 63 characters, so every name the chart can render is one checked here. The
//! finding does not depend on values: it is the spec's.

use super::{Finding, Severity};
use crate::model::naming::{NameInputs, NamePattern, MAX_NAME, MAX_RELEASE_NAME};
use crate::spec::{Spec, WorkloadClass};

/// One object the chart renders, by kind and whose it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedObject {
    pub kind: &'static str,
    /// The workload it belongs to, or `None` for the chart's own.
    pub workload: Option<String>,
    /// What it is, for messages: "the Deployment of `api`".
    pub what: String,
    pub pattern: NamePattern,
}

/// The kinds each workload class renders (`objects::build_objects` builds them; a
/// suite test compares the two lists).
pub fn class_kinds(class: WorkloadClass) -> &'static [&'static str] {
    match class {
        WorkloadClass::Api => &[
            "Deployment",
            "Service",
            "Ingress",
            "ServiceMonitor",
            "PodDisruptionBudget",
            "NetworkPolicy",
            "HorizontalPodAutoscaler",
            "ScaledObject",
        ],
        WorkloadClass::Pool | WorkloadClass::Worker => &[
            "Deployment",
            "Service",
            "ServiceMonitor",
            "PodDisruptionBudget",
            "NetworkPolicy",
            "HorizontalPodAutoscaler",
        ],
        WorkloadClass::Jobs => &["Deployment", "NetworkPolicy"],
        WorkloadClass::Migrate => &["ConfigMap", "Job"],
    }
}

/// Every object whose name the spec decides (the ServiceAccount is the only one of
/// its kind and named by values).
pub fn named_objects(spec: &Spec) -> Vec<NamedObject> {
    let chart = |kind, suffix: &str, what: &str| NamedObject {
        kind,
        workload: None,
        what: what.to_string(),
        pattern: spec.object_name_pattern(suffix),
    };
    let mut out = vec![
        chart("ConfigMap", "config", "the chart's configuration ConfigMap"),
        chart(
            "ConfigMap",
            "dependency-capacity",
            "the chart's dependency-capacity ConfigMap",
        ),
    ];
    if !spec.secrets.keys.is_empty() {
        out.push(chart("Secret", "secrets", "the chart's Secret"));
    }
    for (name, workload) in spec.workloads.all() {
        let class = workload.class();
        for kind in class_kinds(class) {
            let what = if class == WorkloadClass::Migrate && *kind == "ConfigMap" {
                format!(
                    "the hook ConfigMap of the {} workload `{name}`",
                    class.name()
                )
            } else {
                format!("the {kind} of the {} workload `{name}`", class.name())
            };
            out.push(NamedObject {
                kind,
                workload: Some(name.to_string()),
                what,
                pattern: spec.object_name_pattern(name),
            });
        }
        if class == WorkloadClass::Migrate {
            out.push(NamedObject {
                kind: "NetworkPolicy",
                workload: Some(name.to_string()),
                what: format!("the hook NetworkPolicy of the migrate workload `{name}`"),
                pattern: spec.object_name_pattern(&format!("{name}-hook")),
            });
        } else {
            out.push(NamedObject {
                kind: "ConfigMap",
                workload: Some(name.to_string()),
                what: format!(
                    "the configuration overlay ConfigMap of the {} workload `{name}`",
                    class.name()
                ),
                pattern: spec.object_name_pattern(&format!("config-{name}")),
            });
        }
    }
    // The bundled evaluation servers' objects.
    out.push(chart("Secret", "bundled", "the bundled servers' Secret"));
    out.push(chart(
        "ConfigMap",
        "bundled-postgres-init",
        "the bundled PostgreSQL's first-start ConfigMap",
    ));
    // The suffixes `objects::stateful_set` gives them (the suite checks these lists
    // against what `build_objects` renders).
    let mut servers = vec!["bundled-postgres".to_string()];
    servers.extend(
        crate::values::bundled_redis_servers(spec)
            .into_iter()
            .map(|s| format!("bundled-valkey-{s}")),
    );
    for component in servers {
        for kind in ["StatefulSet", "Service", "NetworkPolicy"] {
            out.push(chart(
                kind,
                &component,
                &format!("the {kind} of `{component}`"),
            ));
        }
    }
    out
}

/// The pairs `(i, j)`, `i < j` and in that order, of objects of one kind whose names
/// can be equal: every pair with a `takeover` template, and the suffixed pairs where
/// one `-<suffix>` ends the other or the suffixes are equal ([`suffixed_collision`]).
/// Each suffixed name is looked up by its own suffix and by each tail of it that
/// follows a `-`, so the work grows with the objects, not with their pairs.
fn candidate_pairs(objects: &[NamedObject]) -> std::collections::BTreeSet<(usize, usize)> {
    use std::collections::{BTreeSet, HashMap};
    let mut by_suffix: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    let mut templates = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        match &o.pattern {
            NamePattern::Suffixed(s) => by_suffix.entry((o.kind, s.as_str())).or_default().push(i),
            NamePattern::Template(_) => templates.push(i),
        }
    }
    let mut pairs = BTreeSet::new();
    let mut pair = |i: usize, j: usize| {
        if i != j {
            pairs.insert((i.min(j), i.max(j)));
        }
    };
    for (i, o) in objects.iter().enumerate() {
        let NamePattern::Suffixed(s) = &o.pattern else {
            continue;
        };
        let tails =
            std::iter::once(s.as_str()).chain(s.match_indices('-').map(|(at, _)| &s[at + 1..]));
        for tail in tails {
            for &j in by_suffix.get(&(o.kind, tail)).into_iter().flatten() {
                pair(i, j);
            }
        }
    }
    for &t in &templates {
        for (j, o) in objects.iter().enumerate() {
            if o.kind == objects[t].kind {
                pair(t, j);
            }
        }
    }
    pairs
}

/// How two names come to be equal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Collision {
    /// Equal for every release.
    Always(String),
    /// Equal for this release name and full name override (empty: the default).
    When {
        release: String,
        fullname_override: String,
        name: String,
    },
}

/// Whether `a` and `b` can be the same name, with an example. Release names are
/// tried up to `max_release` characters.
pub fn collision(
    spec: &Spec,
    a: &NamePattern,
    b: &NamePattern,
    max_release: usize,
) -> Option<Collision> {
    if let (NamePattern::Suffixed(x), NamePattern::Suffixed(y)) = (a, b) {
        return suffixed_collision(x, y);
    }
    for inputs in worst_cases(&spec.chart.name, max_release) {
        let i = NameInputs {
            release: &inputs.0,
            chart: &spec.chart.name,
            name_override: &inputs.1,
            fullname_override: &inputs.2,
        };
        let (x, y) = (a.evaluate(&i), b.evaluate(&i));
        if x == y {
            if inputs.0.len() == 1 && inputs.2.is_empty() {
                // The shortest release name already: the names are equal for every one.
                let same = (2..=max_release).all(|n| {
                    let r = "r".repeat(n);
                    let i = NameInputs {
                        release: &r,
                        ..i.clone()
                    };
                    a.evaluate(&i) == b.evaluate(&i)
                });
                if same {
                    return Some(Collision::Always(a.describe()));
                }
            }
            return Some(Collision::When {
                release: inputs.0,
                fullname_override: inputs.2,
                name: x,
            });
        }
    }
    None
}

/// Two suffixed names `<fullname cut>-x` and `<fullname cut>-y` are equal for some
/// full name iff `-y` ends `-x` (or the reverse): the longer suffix's cut is shorter,
/// by the extra text and its `-`, which a full name can hold.
fn suffixed_collision(x: &str, y: &str) -> Option<Collision> {
    if x == y {
        return Some(Collision::Always(format!("{{fullname}}-{x}")));
    }
    let (long, short) = if x.len() > y.len() { (x, y) } else { (y, x) };
    let extra = long.strip_suffix(short)?.strip_suffix('-')?;
    // A full name that makes them equal: the longer name's kept part, then `-<extra>`.
    let kept = MAX_NAME.saturating_sub(long.len() + 1);
    let fullname = format!("{}-{extra}", "f".repeat(kept));
    let name = format!("{fullname}-{short}");
    Some(Collision::When {
        release: "any".into(),
        fullname_override: fullname,
        name,
    })
}

/// Release names of every length (and ones holding the chart's name), with no
/// override, a 63-character `nameOverride`, and full name overrides of every length.
fn worst_cases(chart: &str, max_release: usize) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let long_name = "n".repeat(MAX_NAME);
    for len in 1..=max_release {
        let release = "r".repeat(len);
        out.push((release.clone(), String::new(), String::new()));
        out.push((release.clone(), long_name.clone(), String::new()));
        if len >= chart.len() {
            let holding = format!("{chart}{}", "r".repeat(len - chart.len()));
            out.push((holding, String::new(), String::new()));
        }
    }
    for len in 1..=MAX_NAME {
        for release in ["r".to_string(), "r".repeat(max_release)] {
            out.push((release, String::new(), "f".repeat(len)));
        }
    }
    out
}

/// `names.unique`: no two objects of one kind share a name.
pub fn check(spec: &Spec) -> Vec<Finding> {
    check_up_to(spec, MAX_RELEASE_NAME)
}

/// The guard for release names up to `max_release` characters.
pub fn check_up_to(spec: &Spec, max_release: usize) -> Vec<Finding> {
    let objects = named_objects(spec);
    let mut out = Vec::new();
    for (i, j) in candidate_pairs(&objects) {
        let (a, b) = (&objects[i], &objects[j]);
        let Some(found) = collision(spec, &a.pattern, &b.pattern, max_release) else {
            continue;
        };
        let when = match &found {
                Collision::Always(name) => format!("are both named `{name}` for every release"),
                Collision::When {
                    release,
                    fullname_override,
                    name,
                } if fullname_override.is_empty() => format!(
                    "are both named `{name}` for a release name of {} characters (Helm accepts up to {MAX_RELEASE_NAME}; names are cut to {MAX_NAME})",
                    release.len()
                ),
                Collision::When {
                    fullname_override,
                    name,
                    ..
                } => format!(
                    "are both named `{name}` when the full name is `{fullname_override}` ({} characters; names are cut to {MAX_NAME})",
                    fullname_override.len()
                ),
            };
        let hook = if [a, b].iter().any(|o| o.what.starts_with("the hook")) {
            ": the hook's `before-hook-creation` policy would delete the other on every upgrade"
        } else {
            ""
        };
        let owners: Vec<&str> = [a, b]
            .iter()
            .filter_map(|o| o.workload.as_deref())
            .collect();
        let taken = owners.iter().any(|w| spec.takeover.contains_key(*w));
        let named: Vec<String> = owners.iter().map(|w| format!("`{w}`")).collect();
        let hint = if taken {
            "shorten the `takeover` name templates or make them differ within their first 63 characters (a release name takes up to 53)".to_string()
        } else if owners.len() < 2 {
            format!(
                    "rename {}: `config`, `dependency-capacity` and `secrets` name the chart's own objects",
                    named.join(" or ")
                )
        } else {
            format!(
                    "rename {}: a name that ends with `-` and another workload's name equals it once the full name is cut to fit (long release names, or a `fullnameOverride`)",
                    named.join(" or ")
                )
        };
        let path = match owners.last() {
            Some(w) if taken => format!("takeover.{w}.name"),
            Some(w) => format!("workloads.{w}"),
            None => "workloads".to_string(),
        };
        out.push(Finding {
            rule: "names.unique",
            severity: Severity::Error,
            path,
            message: format!("{} and {} {when}{hook}", a.what, b.what),
            arithmetic: None,
            hint,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::example;
    use crate::model::naming::parse_template;

    fn spec(extra: &str) -> Spec {
        let text = format!(
            "chart: {{name: shop, version: 1.0.0, appVersion: '1', description: d}}\nimage: {{repository: example/shop}}\n{extra}"
        );
        crate::spec::load_spec(&text, "test.yaml").unwrap()
    }

    fn template(text: &str) -> NamePattern {
        NamePattern::Template(parse_template(text, false).unwrap())
    }

    #[test]
    fn the_examples_have_unique_names() {
        for name in ["agent-platform", "llm-gateway", "web-shop"] {
            assert_eq!(check_up_to(&example(name), MAX_RELEASE_NAME), [], "{name}");
        }
    }

    #[test]
    fn a_migrate_workload_named_config_is_refused() {
        let s = spec("workloads:\n  api: {web: {}}\n  migrate: {config: {}}\n");
        let findings = check(&s);
        assert_eq!(findings.len(), 1, "{findings:#?}");
        let f = &findings[0];
        assert_eq!(
            (f.rule, f.path.as_str()),
            ("names.unique", "workloads.config")
        );
        assert!(
            f.message.contains("the chart's configuration ConfigMap and the hook ConfigMap of the migrate workload `config` are both named `{fullname}-config` for every release")
                && f.message.contains("`before-hook-creation`"),
            "{f}"
        );
        assert!(
            f.hint.starts_with(
                "rename `config`: `config`, `dependency-capacity` and `secrets` name the chart's own objects"
            ),
            "{f}"
        );
    }

    #[test]
    fn suffixed_names_keep_workloads_apart_at_53_characters() {
        // The issue's case: `temporal-a1` and `temporal-a2` collided at 53 characters
        // when the whole name was cut; the suffix now always survives.
        let s =
            spec("workloads:\n  api: {web: {}}\n  worker: {temporal-a1: {}, temporal-a2: {}}\n");
        assert_eq!(check_up_to(&s, MAX_RELEASE_NAME), []);
    }

    #[test]
    fn a_suffix_ending_another_name_is_refused_with_the_full_name_that_breaks_it() {
        let s = spec("workloads:\n  api: {api: {}}\n  worker: {a-api: {}}\n");
        let findings = check(&s);
        // Every kind both classes have: Deployment, Service, ServiceMonitor,
        // PodDisruptionBudget, NetworkPolicy, HorizontalPodAutoscaler.
        assert_eq!(findings.len(), 6, "{findings:#?}");
        let expected = format!("{}-a-api", "f".repeat(57));
        assert!(findings[0].message.contains(&expected), "{}", findings[0]);
        // Named by the full name that breaks them, and both workloads are to rename.
        let f = &findings[0];
        assert!(
            f.message.contains(&format!(
                "when the full name is `{}-a` (59 characters",
                "f".repeat(57)
            )),
            "{f}"
        );
        assert!(
            f.hint
                .starts_with("rename `a-api` or `api`: a name that ends with `-`"),
            "{f}"
        );
        assert_eq!(f.path, "workloads.api");
        // The example really collides.
        let i = NameInputs {
            release: "r",
            chart: "shop",
            name_override: "",
            fullname_override: &format!("{}-a", "f".repeat(57)),
        };
        assert_eq!(
            NamePattern::Suffixed("api".into()).evaluate(&i),
            NamePattern::Suffixed("a-api".into()).evaluate(&i)
        );
        assert_eq!(NamePattern::Suffixed("a-api".into()).evaluate(&i), expected);
    }

    #[test]
    fn names_equal_only_under_a_full_name_override_collide_only_then() {
        let s = spec("workloads:\n  api: {web: {}}\n");
        // `{fullname}-x` is `f-x` for the full name override `f`, whatever the release;
        // without an override it holds the release name, never `f`.
        let found = collision(
            &s,
            &template("{fullname}-x"),
            &template("f-x"),
            MAX_RELEASE_NAME,
        );
        let Some(Collision::When {
            release,
            fullname_override,
            name,
        }) = found
        else {
            panic!("not a collision under one full name only: {found:?}");
        };
        assert_eq!(
            (release.as_str(), fullname_override.as_str(), name.as_str()),
            ("r", "f", "f-x")
        );
    }

    #[test]
    fn names_equal_for_a_short_release_but_not_a_long_one_collide_only_then() {
        let s = spec("workloads:\n  api: {web: {}}\n");
        // `r-shop-api-long-suffix` both ways for the release `r`; at 53 characters the
        // suffixed name cuts its full name and the template cuts its end.
        let suffixed = NamePattern::Suffixed("api-long-suffix".into());
        let taken = template("{release}-shop-api-long-suffix");
        let found = collision(&s, &suffixed, &taken, MAX_RELEASE_NAME);
        let Some(Collision::When { release, name, .. }) = found else {
            panic!("not a collision for one release only: {found:?}");
        };
        assert_eq!(
            (release.as_str(), name.as_str()),
            ("r", "r-shop-api-long-suffix")
        );
    }

    #[test]
    fn taken_over_names_collide_from_the_release_length_that_cuts_them() {
        let s = spec("workloads:\n  api: {web: {}}\n");
        let a1 = template("{release}-temporal-a1");
        let a2 = template("{release}-temporal-a2");
        // `-temporal-aN` is 12 characters: a 51-character release name fits, 52 cuts
        // the last character.
        assert_eq!(collision(&s, &a1, &a2, 51), None);
        let Some(Collision::When { release, name, .. }) = collision(&s, &a1, &a2, 52) else {
            panic!("no collision at 52");
        };
        assert_eq!(release.len(), 52);
        assert_eq!(name, format!("{}-temporal-a", "r".repeat(52)));
        assert!(collision(&s, &a1, &a2, MAX_RELEASE_NAME).is_some());
        // A suffix exactly at the cut: 53 + `-x` is 55, far from 63; 53 + 11 = 64.
        let b1 = template("{release}-0123456789");
        let b2 = template("{release}-0123456788");
        assert_eq!(collision(&s, &b1, &b2, 52), None);
        assert!(collision(&s, &b1, &b2, 53).is_some());
    }

    #[test]
    fn the_issue_case_with_taken_over_names_is_refused_naming_both_workloads() {
        let s = spec(
            "workloads:\n  api: {web: {}}\n  worker: {temporal-a1: {}, temporal-a2: {}}\ntakeover:\n  temporal-a1: {name: '{release}-temporal-a1'}\n  temporal-a2: {name: '{release}-temporal-a2'}\n",
        );
        let findings = check(&s);
        // One per kind a worker renders.
        assert_eq!(findings.len(), 6, "{findings:#?}");
        let f = &findings[0];
        assert_eq!(f.path, "takeover.temporal-a2.name");
        assert!(
            f.message.contains("the Deployment of the worker workload `temporal-a1` and the Deployment of the worker workload `temporal-a2` are both named")
                && f.message.contains("for a release name of 52 characters"),
            "{f}"
        );
        assert!(
            f.hint.contains("shorten the `takeover` name templates"),
            "{f}"
        );
        assert_eq!(check_up_to(&s, 51), []);
    }

    #[test]
    fn candidate_pairs_are_exactly_the_pairs_that_can_collide() {
        let suffixes = [
            "a",
            "b-a",
            "c-b-a",
            "-a",
            "a-",
            "x-a-",
            "b--a",
            "-",
            "--",
            "ab",
            "b-ab",
            "a",
            "config",
            "api-config",
            "config-api",
            "b-a",
        ];
        let object = |kind, pattern| NamedObject {
            kind,
            workload: None,
            what: String::new(),
            pattern,
        };
        let mut objects = Vec::new();
        for kind in ["ConfigMap", "Service"] {
            for s in suffixes {
                objects.push(object(kind, NamePattern::Suffixed(s.to_string())));
            }
        }
        objects.insert(5, object("Service", template("{fullname}-x")));
        objects.push(object("ConfigMap", template("{release}")));
        let mut expected = std::collections::BTreeSet::new();
        for (i, a) in objects.iter().enumerate() {
            for (j, b) in objects.iter().enumerate().skip(i + 1) {
                let can = match (&a.pattern, &b.pattern) {
                    (NamePattern::Suffixed(x), NamePattern::Suffixed(y)) => {
                        suffixed_collision(x, y).is_some()
                    }
                    _ => true,
                };
                if a.kind == b.kind && can {
                    expected.insert((i, j));
                }
            }
        }
        // Suffixes that end one another, equal ones, and the templates' pairs.
        assert!(expected.len() > 40, "{}", expected.len());
        assert_eq!(candidate_pairs(&objects), expected);
    }

    #[test]
    fn a_taken_over_name_equal_to_a_suffixed_one_is_refused() {
        let s = spec(
            "workloads:\n  api: {web: {}, api: {}}\ntakeover:\n  web: {name: '{fullname}-api'}\n",
        );
        let findings = check(&s);
        assert_eq!(findings.len(), 8, "{findings:#?}");
        assert!(
            findings[0]
                .message
                .contains("are both named `{fullname}-api` for every release"),
            "{}",
            findings[0]
        );
        // `{fullname}` alone for one workload is fine.
        let s =
            spec("workloads:\n  api: {web: {}, api: {}}\ntakeover:\n  web: {name: '{fullname}'}\n");
        assert_eq!(check(&s), []);
    }

    #[test]
    fn every_class_kind_is_a_kind_of_the_registry_of_objects() {
        assert!(class_kinds(WorkloadClass::Migrate).contains(&"ConfigMap"));
        assert!(class_kinds(WorkloadClass::Api).contains(&"Deployment"));
    }
}
