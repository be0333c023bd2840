//! `security.restricted`: every workload runs under the Pod Security "restricted"
//! profile unless the spec relaxes a part of it for that workload with a stated reason
//! (`security.relax.<workload>`). Values cannot set, in the application's container,
//! a sidecar or an init container: `privileged: true`, `allowPrivilegeEscalation:
//! true`, `runAsNonRoot: false` or a `runAsUser` below 1 (pod or container), a
//! `capabilities.add` beyond `NET_BIND_SERVICE`, `seccompProfile.type: Unconfined`
//! (pod or container), nor a `hostPath` volume in `extraVolumes`. `hostNetwork`,
//! `hostPID` and `hostIPC` are no values at all (a workload's values are closed).
//!
//! At install time `values.schema.json` says the same per workload ([`workload_schema`]:
//! `not`/`const`, `minimum`, `enum` and `not required`), so `helm install` refuses such
//! values too.

use super::{Finding, Severity};
use crate::model::Relaxable;
use crate::spec::Spec;
use serde_json::{json, Value};

/// The one capability "restricted" lets a container add.
pub const ALLOWED_CAPABILITY: &str = "NET_BIND_SERVICE";

/// What a workload's values may not do, as the chart README and the schema say it.
pub fn description(workload: &str, relaxed: &[Relaxable], reason: Option<&str>) -> String {
    let mut text = format!(
        "security.restricted: `workloads.{workload}` runs under Pod Security \"restricted\": no privileged container, privilege escalation, root user, added capability but `{ALLOWED_CAPABILITY}`, `hostPath` volume or unconfined seccomp profile"
    );
    if !relaxed.is_empty() {
        let names: Vec<&str> = relaxed.iter().map(|r| r.name()).collect();
        text.push_str(&format!(
            "; relaxed by the spec for {} (reason: {})",
            names.join(", "),
            reason.unwrap_or("")
        ));
    }
    text
}

/// The parts of "restricted" the spec relaxes for a workload.
pub fn relaxed(spec: &Spec, workload: &str) -> Vec<Relaxable> {
    let mut parts = spec
        .security
        .relax
        .get(workload)
        .map(|r| r.allow.clone())
        .unwrap_or_default();
    parts.sort();
    parts.dedup();
    parts
}

/// The draft-07 schema a workload's values must match: "restricted" without the
/// relaxed parts.
pub fn workload_schema(relaxed: &[Relaxable]) -> Value {
    let keep = |part: Relaxable| !relaxed.contains(&part);
    let mut pod = serde_json::Map::new();
    let mut container = serde_json::Map::new();
    if keep(Relaxable::Privileged) {
        container.insert("privileged".into(), json!({"not": {"const": true}}));
    }
    if keep(Relaxable::PrivilegeEscalation) {
        container.insert(
            "allowPrivilegeEscalation".into(),
            json!({"not": {"const": true}}),
        );
    }
    if keep(Relaxable::RunAsRoot) {
        for sc in [&mut pod, &mut container] {
            sc.insert("runAsNonRoot".into(), json!({"not": {"const": false}}));
            sc.insert("runAsUser".into(), json!({"minimum": 1}));
        }
    }
    if keep(Relaxable::Capabilities) {
        container.insert(
            "capabilities".into(),
            json!({"properties": {"add": {"items": {"enum": [ALLOWED_CAPABILITY]}}}}),
        );
    }
    if keep(Relaxable::SeccompUnconfined) {
        for sc in [&mut pod, &mut container] {
            sc.insert(
                "seccompProfile".into(),
                json!({"properties": {"type": {"not": {"const": "Unconfined"}}}}),
            );
        }
    }
    let container = json!({"properties": Value::Object(container)});
    let in_containers = json!({"items": {"properties": {"securityContext": container.clone()}}});
    let mut properties = json!({
        "securityContext": container,
        "podSecurityContext": {"properties": Value::Object(pod)},
        "sidecars": in_containers.clone(),
        "initContainers": in_containers,
    });
    if keep(Relaxable::HostPath) {
        properties["extraVolumes"] = json!({"items": {"not": {"required": ["hostPath"]}}});
    }
    json!({ "properties": properties })
}

/// One thing a security context or volume does beyond "restricted".
struct Breach {
    part: Relaxable,
    /// The values path below the workload (`securityContext.privileged`).
    path: String,
    what: String,
}

fn container_breaches(sc: &Value, at: &str, pod: bool, out: &mut Vec<Breach>) {
    let mut push = |part, key: &str, what: String| {
        out.push(Breach {
            part,
            path: format!("{at}.{key}"),
            what,
        })
    };
    if !pod && sc.get("privileged") == Some(&Value::Bool(true)) {
        push(
            Relaxable::Privileged,
            "privileged",
            "a privileged container has every capability of the node".into(),
        );
    }
    if !pod && sc.get("allowPrivilegeEscalation") == Some(&Value::Bool(true)) {
        push(
            Relaxable::PrivilegeEscalation,
            "allowPrivilegeEscalation",
            "a process could gain more privileges than its parent (setuid binaries)".into(),
        );
    }
    if sc.get("runAsNonRoot") == Some(&Value::Bool(false)) {
        push(
            Relaxable::RunAsRoot,
            "runAsNonRoot",
            "`runAsNonRoot: false` lets the container run as root".into(),
        );
    }
    if let Some(user) = sc.get("runAsUser").and_then(Value::as_f64) {
        if user < 1.0 {
            push(
                Relaxable::RunAsRoot,
                "runAsUser",
                format!("`runAsUser: {user}` runs the container as root"),
            );
        }
    }
    if !pod {
        let added: Vec<String> = sc
            .pointer("/capabilities/add")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter(|c| c.as_str() != Some(ALLOWED_CAPABILITY))
                    .map(|c| match c.as_str() {
                        Some(s) => s.escape_debug().to_string(),
                        None => c.to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        if !added.is_empty() {
            push(
                Relaxable::Capabilities,
                "capabilities.add",
                format!(
                    "adds {} (only `{ALLOWED_CAPABILITY}` may be added)",
                    added.join(", ")
                ),
            );
        }
    }
    if sc.pointer("/seccompProfile/type").and_then(Value::as_str) == Some("Unconfined") {
        push(
            Relaxable::SeccompUnconfined,
            "seccompProfile.type",
            "an unconfined seccomp profile lets the container make every system call".into(),
        );
    }
}

/// Everything a workload's values do beyond "restricted".
fn breaches(w: &Value) -> Vec<Breach> {
    let mut out = Vec::new();
    if let Some(sc) = w.get("podSecurityContext") {
        container_breaches(sc, "podSecurityContext", true, &mut out);
    }
    if let Some(sc) = w.get("securityContext") {
        container_breaches(sc, "securityContext", false, &mut out);
    }
    for list in ["initContainers", "sidecars"] {
        for (i, c) in w
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            if let Some(sc) = c.get("securityContext") {
                container_breaches(sc, &format!("{list}[{i}].securityContext"), false, &mut out);
            }
        }
    }
    for (i, volume) in w
        .get("extraVolumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if volume.get("hostPath").is_some() {
            out.push(Breach {
                part: Relaxable::HostPath,
                path: format!("extraVolumes[{i}].hostPath"),
                what: "a `hostPath` volume reads or writes the node's file system".into(),
            });
        }
    }
    out
}

/// `security.restricted`: every workload's values within Pod Security "restricted",
/// but for the parts the spec relaxes for it.
pub fn check(spec: &Spec, values: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    for (name, _) in spec.workloads.all() {
        let Some(w) = values.get("workloads").and_then(|w| w.get(name)) else {
            continue;
        };
        let relaxed = relaxed(spec, name);
        for breach in breaches(w) {
            if relaxed.contains(&breach.part) {
                continue;
            }
            out.push(Finding {
                rule: "security.restricted",
                severity: Severity::Error,
                path: format!("workloads.{name}.{}", breach.path),
                message: format!(
                    "{}; Pod Security \"restricted\" forbids it",
                    breach.what
                ),
                hint: format!(
                    "remove it; if the workload really needs it, relax it in `shipshape.yaml` with a reason: `security: {{relax: {{{name}: {{reason: \"...\", allow: [{}]}}}}}}`",
                    breach.part.name()
                ),
                arithmetic: None,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{places, values, with};
    use crate::model::Relaxation;

    fn spec() -> Spec {
        let text = "chart: {name: tiny, version: 1.0.0, appVersion: \"1\", description: d}\nimage: {repository: example/tiny}\nworkloads:\n  api:\n    web: {}\n  worker:\n    agent: {}\n";
        crate::spec::load_spec(text, "s.yaml").unwrap()
    }

    fn relax(mut spec: Spec, workload: &str, allow: &[Relaxable]) -> Spec {
        spec.security.relax.insert(
            workload.into(),
            Relaxation {
                reason: "it manages the node's network".into(),
                allow: allow.to_vec(),
            },
        );
        spec
    }

    /// Whether every workload's values match its install-time schema (the suite's
    /// `security` test runs the whole `values.schema.json` under Helm 3 and 4).
    fn schema_accepts(spec: &Spec, v: &Value) -> bool {
        spec.workloads.all().iter().all(|(name, _)| {
            let schema = workload_schema(&relaxed(spec, name));
            jsonschema::draft7::is_valid(&schema, &v["workloads"][*name])
        })
    }

    /// Each breach, the path it is reported at, and the part that relaxes it.
    fn cases() -> Vec<(&'static str, Value, &'static str, Relaxable)> {
        use Relaxable::*;
        vec![
            (
                "workloads.web.securityContext.privileged",
                json!(true),
                "workloads.web.securityContext.privileged",
                Privileged,
            ),
            (
                "workloads.web.securityContext.allowPrivilegeEscalation",
                json!(true),
                "workloads.web.securityContext.allowPrivilegeEscalation",
                PrivilegeEscalation,
            ),
            (
                "workloads.web.securityContext.runAsNonRoot",
                json!(false),
                "workloads.web.securityContext.runAsNonRoot",
                RunAsRoot,
            ),
            (
                "workloads.web.podSecurityContext.runAsNonRoot",
                json!(false),
                "workloads.web.podSecurityContext.runAsNonRoot",
                RunAsRoot,
            ),
            (
                "workloads.web.podSecurityContext.runAsUser",
                json!(0.0),
                "workloads.web.podSecurityContext.runAsUser",
                RunAsRoot,
            ),
            (
                "workloads.web.securityContext.runAsUser",
                json!(0.0),
                "workloads.web.securityContext.runAsUser",
                RunAsRoot,
            ),
            (
                "workloads.web.securityContext.capabilities",
                json!({"drop": ["ALL"], "add": ["NET_ADMIN"]}),
                "workloads.web.securityContext.capabilities.add",
                Capabilities,
            ),
            (
                "workloads.web.securityContext.seccompProfile",
                json!({"type": "Unconfined"}),
                "workloads.web.securityContext.seccompProfile.type",
                SeccompUnconfined,
            ),
            (
                "workloads.web.podSecurityContext.seccompProfile",
                json!({"type": "Unconfined"}),
                "workloads.web.podSecurityContext.seccompProfile.type",
                SeccompUnconfined,
            ),
            (
                "workloads.web.extraVolumes",
                json!([{"name": "host", "hostPath": {"path": "/"}}]),
                "workloads.web.extraVolumes[0].hostPath",
                HostPath,
            ),
            (
                "workloads.web.sidecars",
                json!([{"name": "s", "image": "x", "securityContext": {"privileged": true}}]),
                "workloads.web.sidecars[0].securityContext.privileged",
                Privileged,
            ),
            (
                "workloads.web.initContainers",
                json!([{"name": "i", "image": "x", "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}]),
                "workloads.web.initContainers[0].securityContext.capabilities.add",
                Capabilities,
            ),
        ]
    }

    #[test]
    fn the_defaults_are_restricted() {
        let spec = spec();
        assert!(check(&spec, &values(&spec, None)).is_empty());
    }

    #[test]
    fn every_breach_is_refused_by_the_guard_and_the_schema() {
        let spec = spec();
        for (path, value, at, _) in cases() {
            let v = with(values(&spec, None), &[(path, value)]);
            let found = check(&spec, &v);
            assert_eq!(
                places(&found),
                [("security.restricted", at.to_string())],
                "{path}"
            );
            assert!(!schema_accepts(&spec, &v), "the schema accepts {path}");
        }
    }

    #[test]
    fn a_relaxed_part_is_allowed_for_that_workload_only() {
        for (path, value, _, part) in cases() {
            let relaxed = relax(spec(), "web", &[part]);
            let v = with(values(&relaxed, None), &[(path, value.clone())]);
            assert!(check(&relaxed, &v).is_empty(), "{path}");
            assert!(schema_accepts(&relaxed, &v), "the schema refuses {path}");
            // Relaxing another part, or another workload, does not allow it.
            let other = Relaxable::ALL.into_iter().find(|p| *p != part).unwrap();
            for elsewhere in [
                relax(spec(), "web", &[other]),
                relax(spec(), "agent", &[part]),
            ] {
                let v = with(values(&elsewhere, None), &[(path, value.clone())]);
                assert_eq!(check(&elsewhere, &v).len(), 1, "{path}");
                assert!(!schema_accepts(&elsewhere, &v), "{path}");
            }
        }
    }

    #[test]
    fn what_restricted_allows_passes() {
        let spec = spec();
        let v = with(
            values(&spec, None),
            &[
                ("workloads.web.securityContext.privileged", json!(false)),
                ("workloads.web.securityContext.runAsUser", json!(1.0)),
                ("workloads.web.podSecurityContext.runAsUser", json!(1.0)),
                (
                    "workloads.web.securityContext.capabilities",
                    json!({"drop": ["ALL"], "add": [ALLOWED_CAPABILITY]}),
                ),
                (
                    "workloads.web.securityContext.seccompProfile",
                    json!({"type": "Localhost", "localhostProfile": "p.json"}),
                ),
                (
                    "workloads.web.extraVolumes",
                    json!([{"name": "cache", "emptyDir": {}}]),
                ),
                (
                    "workloads.web.sidecars",
                    json!([{"name": "s", "image": "x"}]),
                ),
            ],
        );
        assert!(check(&spec, &v).is_empty());
        assert!(schema_accepts(&spec, &v));
    }

    #[test]
    fn messages_name_the_part_and_the_way_to_relax_it() {
        let spec = spec();
        let v = with(
            values(&spec, None),
            &[(
                "workloads.agent.securityContext.capabilities",
                json!({"add": ["NET_BIND_SERVICE", "SYS\u{1b}ADMIN"]}),
            )],
        );
        let found = check(&spec, &v);
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].message,
            "adds SYS\\u{1b}ADMIN (only `NET_BIND_SERVICE` may be added); Pod Security \"restricted\" forbids it"
        );
        assert!(found[0]
            .hint
            .ends_with("`security: {relax: {agent: {reason: \"...\", allow: [capabilities]}}}`"));
    }

    #[test]
    fn the_description_shows_a_relaxation_and_its_reason() {
        let plain = description("web", &[], None);
        assert!(!plain.contains("relaxed"));
        let relaxed = description(
            "web",
            &[Relaxable::Privileged, Relaxable::HostPath],
            Some("a CNI agent"),
        );
        assert!(
            relaxed
                .ends_with("; relaxed by the spec for privileged, hostPath (reason: a CNI agent)"),
            "{relaxed}"
        );
    }
}
