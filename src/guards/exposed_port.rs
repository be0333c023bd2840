//! `service.exposed-port`: refuses an Ingress or ServiceMonitor pointing at a port the
//! workload does not expose. An Ingress routes to the workload's Service and a
//! ServiceMonitor scrapes its `http` port, so both need the Service on; a Service needs
//! the container to listen (`port` set: the api always has one, a pool or worker only
//! when `port` is not 0). Without them the Ingress answers 503 and Prometheus scrapes
//! nothing, silently. At install time `values.schema.json` says, by `if`/`then` on
//! the workload: `ingress.enabled` or `serviceMonitor.enabled` requires
//! `service.enabled`, and `service.enabled` requires `port` >= 1.

use super::{Finding, Severity};
use crate::spec::Spec;
use serde_json::Value;

/// The rule on every enabled workload that can serve.
pub fn check(spec: &Spec, values: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    for (name, workload) in spec.workloads.all() {
        if !workload.class().can_serve() {
            continue;
        }
        let Some(w) = values.get("workloads").and_then(|w| w.get(name)) else {
            continue;
        };
        let on = |key: &str| w.get(key).and_then(|o| o.get("enabled")) == Some(&Value::Bool(true));
        if w.get("enabled") != Some(&Value::Bool(true)) {
            continue;
        }
        let port = w.get("port").and_then(Value::as_f64).unwrap_or(0.0);
        out.extend(exposed_port(
            name,
            port >= 1.0,
            on("service"),
            on("ingress"),
            on("serviceMonitor"),
        ));
    }
    out
}

/// `service.exposed-port`: what routes to or scrapes the workload has a Service, and the
/// Service a port to forward to.
fn exposed_port(
    name: &str,
    listens: bool,
    service: bool,
    ingress: bool,
    monitor: bool,
) -> Vec<Finding> {
    let base = format!("workloads.{name}");
    let mut out = Vec::new();
    let mut refuse = |path: String, message: String, hint: String| {
        out.push(Finding {
            rule: "service.exposed-port",
            severity: Severity::Error,
            path,
            message,
            arithmetic: None,
            hint,
        })
    };
    if service && !listens {
        refuse(
            format!("{base}.service.enabled"),
            format!("the Service of `{name}` forwards to the `http` port, but `{name}` listens on none"),
            format!("set `{base}.port` to the port the process listens on, or `{base}.service.enabled=false`"),
        );
    }
    for (key, what, on) in [
        ("ingress", "Ingress routes", ingress),
        ("serviceMonitor", "ServiceMonitor scrapes", monitor),
    ] {
        if on && !service {
            refuse(
                format!("{base}.{key}.enabled"),
                format!("the {what} to the Service of `{name}`, which is off"),
                format!("set `{base}.service.enabled=true` (and `{base}.port`), or `{base}.{key}.enabled=false`"),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, places, values, with};
    use serde_json::json;

    fn paths(findings: &[Finding]) -> Vec<String> {
        findings.iter().map(|f| f.path.clone()).collect()
    }

    #[test]
    fn a_service_with_a_port_behind_an_ingress_and_a_monitor_passes() {
        assert_eq!(exposed_port("web", true, true, true, true), []);
        assert_eq!(exposed_port("web", false, false, false, false), []);
        assert_eq!(exposed_port("web", true, false, false, false), []);
    }

    #[test]
    fn a_service_without_a_port_is_refused() {
        let findings = exposed_port("queue", false, true, false, false);
        assert_eq!(paths(&findings), ["workloads.queue.service.enabled"]);
        assert_eq!(findings[0].rule, "service.exposed-port");
        assert_eq!(findings[0].severity, Severity::Error);
    }

    #[test]
    fn an_ingress_or_monitor_without_the_service_is_refused() {
        assert_eq!(
            paths(&exposed_port("web", true, false, true, false)),
            ["workloads.web.ingress.enabled"]
        );
        assert_eq!(
            paths(&exposed_port("web", true, false, false, true)),
            ["workloads.web.serviceMonitor.enabled"]
        );
        assert_eq!(exposed_port("web", false, false, true, true).len(), 2);
    }

    #[test]
    fn check_reads_the_port_and_switches_of_every_serving_workload() {
        let spec = example("agent-platform");
        assert_eq!(check(&spec, &values(&spec, None)), []);
        let v = |pairs: &[(&str, Value)]| check(&spec, &with(values(&spec, None), pairs));
        // A worker's Service needs its port; port 1 is enough.
        let service = ("workloads.temporal.service.enabled", json!(true));
        assert_eq!(
            places(&v(std::slice::from_ref(&service))),
            [(
                "service.exposed-port",
                "workloads.temporal.service.enabled".to_string()
            )]
        );
        assert_eq!(v(&[service, ("workloads.temporal.port", json!(1.0))]), []);
        // The api's Service off under its Ingress.
        assert_eq!(
            places(&v(&[
                ("workloads.api.service.enabled", json!(false)),
                ("workloads.api.ingress.enabled", json!(true)),
            ])),
            [(
                "service.exposed-port",
                "workloads.api.ingress.enabled".to_string()
            )]
        );
        // A disabled workload is not checked.
        assert_eq!(
            v(&[
                ("workloads.temporal.enabled", json!(false)),
                ("workloads.temporal.service.enabled", json!(true)),
            ]),
            []
        );
    }
}
