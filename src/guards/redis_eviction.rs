//! `redis.eviction`: refuses a critical Redis server declared with an evicting policy.
//! The critical server holds sessions, admission and coordination state; under memory
//! pressure an evicting policy would drop them. Caches belong on a `cache` server,
//! which may evict. At install time `values.schema.json` fixes a critical server's
//! `maxmemoryPolicy` to `noeviction` by `const`, with the roles and the other servers'
//! policies.

use super::{Finding, Severity};
use crate::spec::Spec;
use crate::values::WholeNumbers;
use serde_json::Value;

/// `redis.eviction`: the critical Redis server must be `noeviction`.
pub fn check(_spec: &Spec, values: &Value) -> Vec<Finding> {
    use serde::Deserialize;
    let servers: std::collections::BTreeMap<String, crate::model::RedisServer> = values
        .get("dependencyCapacity")
        .and_then(|d| d.get("redis"))
        .and_then(|r| r.get("servers"))
        .and_then(|s| std::collections::BTreeMap::deserialize(WholeNumbers(s)).ok())
        .unwrap_or_default();
    let mut out = Vec::new();
    for (name, server) in servers {
        if server.role == Some(crate::model::RedisRole::Critical)
            && server.maxmemory_policy != "noeviction"
        {
            out.push(Finding {
                rule: "redis.eviction",
                severity: Severity::Error,
                path: format!("dependencyCapacity.redis.servers.{name}.maxmemoryPolicy"),
                message: format!(
                    "the critical Redis server `{name}` holds sessions, admission and coordination state but is declared with `{}`: under memory pressure it would evict them",
                    if server.maxmemory_policy.is_empty() { "no policy" } else { &server.maxmemory_policy }
                ),
                arithmetic: None,
                hint: "provision it with `maxmemory-policy noeviction` and declare `maxmemoryPolicy: noeviction`; put caches on a `cache` server, which may use `allkeys-lru`".into(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guards::testing::{example, places, values, with};
    use serde_json::json;

    fn servers(servers: Value) -> Vec<Finding> {
        let spec = example("llm-gateway");
        let v = with(
            values(&spec, None),
            &[("dependencyCapacity.redis.servers", servers)],
        );
        check(&spec, &v)
    }

    #[test]
    fn a_critical_server_without_eviction_passes() {
        let spec = example("llm-gateway");
        assert_eq!(check(&spec, &values(&spec, None)), []);
    }

    #[test]
    fn a_critical_server_with_an_evicting_policy_is_refused() {
        let findings = servers(json!({
            "critical": {"maxClients": 1024.0, "role": "critical", "maxmemoryPolicy": "allkeys-lru"},
        }));
        assert_eq!(
            places(&findings),
            [(
                "redis.eviction",
                "dependencyCapacity.redis.servers.critical.maxmemoryPolicy".to_string()
            )]
        );
        assert_eq!(findings[0].severity, Severity::Error);
        assert!(findings[0].message.contains("declared with `allkeys-lru`"));
    }

    #[test]
    fn a_critical_server_without_a_policy_is_refused_and_says_so() {
        let findings = servers(json!({"main": {"role": "critical"}}));
        assert_eq!(findings.len(), 1);
        assert!(
            findings[0].message.contains("declared with `no policy`"),
            "{}",
            findings[0]
        );
    }

    #[test]
    fn cache_servers_and_servers_without_a_role_may_evict() {
        let findings = servers(json!({
            "cache": {"role": "cache", "maxmemoryPolicy": "allkeys-lru"},
            "other": {"maxmemoryPolicy": "volatile-lru"},
        }));
        assert_eq!(findings, []);
    }
}
