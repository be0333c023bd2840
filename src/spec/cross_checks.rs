//! The spec checks that look across sections: the bundled evaluation servers and the
//! feature switches, and a `takeover` block's templates and selectors.

use super::*;

/// Feature switches name declared features and every flag an allocation depends on
/// reaches the application; the store Redis server and the bundled servers name
/// declared Redis servers; workload names leave room for the bundled servers' objects.
pub(super) fn check_bundled(spec: &Spec, file: &str) -> Result<(), SpecError> {
    let invalid = |path: String, message: String, hint: String| SpecError::Invalid {
        file: file.to_string(),
        path,
        message,
        hint,
    };
    let features: Vec<&str> = spec.features.keys().map(String::as_str).collect();
    for (name, switch) in &spec.feature_switches {
        if !spec.features.contains_key(name) {
            return Err(invalid(
                format!("featureSwitches.{name}"),
                format!("`{name}` is not a declared feature"),
                closest(name, &features)
                    .map(|c| format!("did you mean `{c}`?"))
                    .unwrap_or_else(|| "declare it under `features`".into()),
            ));
        }
        if !switch.setting.is_empty() && spec.startup_settings.is_none() {
            return Err(invalid(
                format!("featureSwitches.{name}.setting"),
                format!("`{name}` names a settings key but the spec declares no `startupSettings`"),
                "declare `startupSettings`, or reach the application through `env` only".into(),
            ));
        }
        if switch.env.is_empty() && switch.setting.is_empty() {
            return Err(invalid(
                format!("featureSwitches.{name}"),
                format!("the switch of `{name}` names neither an `env` nor a `setting`"),
                "name the variable or the settings key the application reads the flag from".into(),
            ));
        }
    }
    for (name, workload) in spec.workloads.all() {
        for (alloc, a) in workload.allocations().0 {
            let feature = a.feature.as_str();
            if !feature.is_empty() && !spec.feature_switches.contains_key(feature) {
                return Err(invalid(
                    format!("featureSwitches.{feature}"),
                    format!("the allocation `{alloc}` of `{name}` opens only with the feature `{feature}`, but nothing tells the application whether `{feature}` is on"),
                    format!("add `featureSwitches.{feature}` with the `env` and/or `setting` the application reads it from"),
                ));
            }
        }
        if name.starts_with("bundled-") {
            return Err(invalid(
                format!("workloads.{}.{name}", workload.class().name()),
                format!(
                    "`{name}` starts with `bundled-`, the prefix of the bundled servers' objects"
                ),
                "rename the workload".into(),
            ));
        }
    }
    let servers: Vec<&str> = spec
        .dependency_capacity
        .redis
        .servers
        .keys()
        .map(String::as_str)
        .collect();
    let unknown_server = |path: String, server: &str| {
        invalid(
            path,
            format!("`{server}` is not a declared Redis server"),
            closest(server, &servers)
                .map(|c| format!("did you mean `{c}`?"))
                .unwrap_or_else(|| "declare it under `dependencyCapacity.redis.servers`".into()),
        )
    };
    let store_server = &spec.store_redis.server;
    if !store_server.is_empty() && !servers.contains(&store_server.as_str()) {
        return Err(unknown_server("storeRedis.server".into(), store_server));
    }
    for server in spec.bundled.redis.keys() {
        let path = format!("bundled.redis.{server}");
        if !servers.contains(&server.as_str()) {
            return Err(unknown_server(path, server));
        }
        if !crate::model::bundleable_server_name(server) {
            return Err(invalid(
                path,
                format!("the Redis server `{server}` cannot be bundled: its name becomes part of object names"),
                "rename the server with lowercase letters, digits and `-`, at most 40 characters".into(),
            ));
        }
    }
    Ok(())
}

/// The `takeover` block names existing workloads, its templates parse, and no
/// workload's selector matches another workload's pods.
pub(super) fn check_takeover(spec: &Spec, file: &str) -> Result<(), SpecError> {
    use crate::model::naming::{
        is_label_key, parse_template, pod_label_templates, selector_templates,
    };
    let invalid = |path: String, message: String, hint: &str| SpecError::Invalid {
        file: file.to_string(),
        path,
        message,
        hint: hint.to_string(),
    };
    let workloads = spec.workloads.all();
    let names: Vec<&str> = workloads.iter().map(|(n, _)| *n).collect();
    for (workload, takeover) in &spec.takeover {
        let path = format!("takeover.{workload}");
        if !names.contains(&workload.as_str()) {
            let hint = match closest(workload, &names) {
                Some(c) => format!("did you mean `{c}`? the workloads are {}", names.join(", ")),
                None => format!("the workloads are {}", names.join(", ")),
            };
            return Err(invalid(
                path,
                format!("there is no workload `{workload}`"),
                &hint,
            ));
        }
        if let Some(name) = &takeover.name {
            parse_template(name, false).map_err(|m| {
                invalid(format!("{path}.name"), m, "write the old chart's object name with `{release}`, `{name}`, `{fullname}` and `a-z`, `0-9`, `-`, `.`")
            })?;
        }
        for (key, value) in &takeover.selector_labels {
            let at = format!("{path}.selectorLabels.{key}");
            if !is_label_key(key) {
                return Err(invalid(
                    at,
                    format!("`{key}` is not a Kubernetes label key"),
                    "write `[prefix/]name`, e.g. `app.kubernetes.io/name`",
                ));
            }
            parse_template(value, true).map_err(|m| {
                invalid(at.clone(), m, "write the old chart's label value with `{release}`, `{name}`, `{fullname}` and letters, digits, `-`, `_`, `.`")
            })?;
        }
    }
    // A selector that matches another workload's pods would adopt them (a Deployment)
    // or send them traffic (a Service).
    let pod_labels: Vec<_> = workloads
        .iter()
        .map(|(b, _)| pod_label_templates(spec.takeover.get(*b), b))
        .collect();
    // The workloads whose pods carry each label, in the spec's order: a selector can
    // only match pods that carry its rarest label, so only those are compared (every
    // pair was compared before, quadratic in workloads).
    let mut carrying: std::collections::HashMap<(&str, &[_]), Vec<usize>> = Default::default();
    for (i, labels) in pod_labels.iter().enumerate() {
        for (key, value) in labels {
            carrying.entry((key, value)).or_default().push(i);
        }
    }
    // An empty selector (never made) would match every workload's pods.
    let every: Vec<usize> = (0..workloads.len()).collect();
    for (a, _) in &workloads {
        let selector = selector_templates(spec.takeover.get(*a), a);
        let candidates = selector
            .iter()
            .map(|(k, v)| {
                carrying
                    .get(&(k.as_str(), v.as_slice()))
                    .map_or(&[][..], Vec::as_slice)
            })
            .min_by_key(|c| c.len())
            .unwrap_or(&every);
        for &i in candidates {
            let ((b, _), labels) = (&workloads[i], &pod_labels[i]);
            if a == b {
                continue;
            }
            if selector.iter().all(|(k, v)| labels.get(k) == Some(v)) {
                return Err(invalid(
                    format!("takeover.{a}.selectorLabels"),
                    format!("the selector of `{a}` also matches the pods of `{b}`"),
                    &format!("give `{b}` selector labels of its own under `takeover.{b}.selectorLabels` (e.g. a different `app.kubernetes.io/name`), or add a label to `takeover.{a}.selectorLabels` that `{b}`'s pods do not carry"),
                ));
            }
        }
    }
    Ok(())
}
