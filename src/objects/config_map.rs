//! The application's configuration file: the release's ConfigMap, and a copy for a
//! pre-install hook Job (hooks run before the release's own objects exist).

use crate::capacity::allocations::{
    effective_postgres_size, postgres_allocation_on, stated_allocations,
};
use crate::expr::{lit, named, val, Expr, ValuePath};
use crate::manifest;
use crate::objects::common::{
    config_map_name, hook_annotations, metadata, release_name_with, template_name,
};
use crate::objects::tree::{dynamic_entry, Document, Node};
use crate::objects::Workload;
use crate::spec::{Spec, WorkloadClass};

/// The application's configuration as JSON text, the named template
/// `<chart>.config`: `config`, with the startup settings section written from typed
/// values (timeouts, and the allocation sizes the capacity report counts) when the
/// spec declares one. Its checksum rolls the pods that read it.
pub fn config_text(spec: &Spec) -> Expr {
    named(
        template_name(spec, "config"),
        Expr::JsonText(Box::new(config_content(
            spec,
            val(&ValuePath::new(["config"])),
        ))),
    )
}

/// One workload's configuration as JSON text, the named template
/// `<chart>.config.<workload>`: `config` with the workload's `configOverlay` merged
/// over it, then the chart's managed section, so an overlay changes only what the
/// operator may change. With an empty overlay it is the release's text.
pub fn workload_config_text(w: &Workload<'_>) -> Expr {
    let merged = Expr::MergeOver(
        Box::new(val(&ValuePath::new(["config"]))),
        Box::new(val(&w.value("configOverlay"))),
    );
    named(
        template_name(w.spec, &format!("config.{}", w.name)),
        Expr::JsonText(Box::new(config_content(w.spec, merged))),
    )
}

/// The workload's `checksum/config` annotation's value: the checksum of the
/// configuration it reads.
pub fn config_checksum(w: &Workload<'_>) -> Expr {
    Expr::Sha256(Box::new(workload_config_text(w)))
}

/// The name of the ConfigMap a workload's pods mount: its own when it has an overlay
/// (a hook Job always has its own), else the release's.
pub fn workload_config_map_name(w: &Workload<'_>) -> Expr {
    if w.class == WorkloadClass::Migrate {
        return w.object_name();
    }
    Expr::If(
        Box::new(val(&w.value("configOverlay"))),
        Box::new(own_config_map_name(w)),
        Box::new(config_map_name(w.spec)),
    )
}

/// `<full name>-config-<workload>` (a suffix no other object's suffix ends).
fn own_config_map_name(w: &Workload<'_>) -> Expr {
    release_name_with(w.spec, &format!("config-{}", w.name))
}

fn config_content(spec: &Spec, config: Expr) -> Expr {
    let Some(settings) = &spec.startup_settings else {
        return config;
    };
    let base = ValuePath::new(["startupSettings"]);
    let mut pairs: Vec<(Expr, Expr)> = Vec::new();
    for budget in ["foreground", "background"] {
        for step in ["lock", "statement", "transaction"] {
            let t = base.child(budget).child(step);
            pairs.push((val(&t.child("key")), val(&t.child("seconds"))));
        }
    }
    for name in settings.deadlines.keys() {
        let t = base.child("deadlines").child(name);
        pairs.push((val(&t.child("key")), val(&t.child("seconds"))));
    }
    for (dependency, alloc, declared) in stated_allocations(spec) {
        let a = ValuePath::new(["workloads", &settings.sizes_from, dependency, &alloc]);
        let size = if dependency == "postgres" {
            // An allocation whose feature is off is stated as 0, as the report counts it.
            Expr::If(
                Box::new(postgres_allocation_on(&declared)),
                Box::new(effective_postgres_size(
                    &settings.sizes_from,
                    &alloc,
                    &declared,
                )),
                Box::new(lit(0)),
            )
        } else {
            val(&a.child("size"))
        };
        pairs.push((val(&a.child("setting")), size));
    }
    for (feature, switch) in &spec.feature_switches {
        if !switch.setting.is_empty() {
            let path = ValuePath::new(["featureSwitches", feature, "setting"]);
            let on = val(&ValuePath::new(["features", feature]));
            pairs.push((
                val(&path),
                Expr::If(Box::new(on), Box::new(lit(true)), Box::new(lit(false))),
            ));
        }
    }
    if !settings.cache_url_key.is_empty() {
        if let Some((server, _)) = spec
            .dependency_capacity
            .redis
            .servers
            .iter()
            .find(|(_, s)| {
                s.url_secret.is_some() && s.role != Some(crate::model::RedisRole::Critical)
            })
        {
            let path = ValuePath::new(["dependencyCapacity", "redis", "servers", server]);
            // Only while the variable is set (from the Secret or the bundled server);
            // `null` otherwise, which the application reads as "no separate server".
            let mut set = vec![val(&path.child("urlSecret"))];
            if crate::model::bundleable_server_name(server) {
                set.push(val(&crate::objects::stateful_set::redis_value(
                    server, "enabled",
                )));
            }
            pairs.push((
                val(&base.child("cacheUrlKey")),
                Expr::If(
                    Box::new(Expr::Or(set)),
                    Box::new(Expr::Concat(vec![
                        lit("os.environ/"),
                        val(&path.child("urlEnv")),
                    ])),
                    Box::new(Expr::Lit(serde_json::Value::Null)),
                ),
            ));
        }
    }
    // The operator's own keys of the section stay; the managed keys are set over them
    // (values may not set those: `env.managed`).
    let section = &settings.section;
    let own = Expr::Default(
        Box::new(Expr::Dict(Vec::new())),
        Box::new(val(&ValuePath::new(["config", section]))),
    );
    let merged = pairs.into_iter().fold(own, |map, (k, v)| {
        Expr::WithKey(Box::new(map), Box::new(k), Box::new(v))
    });
    Expr::WithKey(
        Box::new(config),
        Box::new(val(&base.child("section"))),
        Box::new(merged),
    )
}

/// The configuration file, under `configFile.name`.
fn config_data(text: Expr) -> Node {
    let file_name = val(&ValuePath::new(["configFile", "name"]));
    manifest!({ ..(dynamic_entry(file_name, text)) })
}

pub fn config_map(spec: &Spec) -> Document {
    Document {
        file: "configmap.yaml".into(),
        when: None,
        root: manifest!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": (metadata(spec, config_map_name(spec), None, vec![])),
            "data": (config_data(config_text(spec))),
        }),
    }
}

/// A workload's own ConfigMap, when its `configOverlay` is not empty.
pub fn workload_config_map(w: &Workload<'_>) -> Document {
    Document {
        file: format!("{}-configmap.yaml", w.name),
        when: Some(Expr::And(vec![w.enabled(), val(&w.value("configOverlay"))])),
        root: manifest!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": (metadata(w.spec, own_config_map_name(w), Some(w.name), vec![])),
            "data": (config_data(workload_config_text(w))),
        }),
    }
}

/// A copy of the configuration for a hook Job: hooks run before the release's own
/// ConfigMap exists on first install.
pub fn hook_config_map(w: &Workload<'_>) -> Document {
    let annotations = manifest!(entries {
        "annotations": (hook_annotations(w, "-10", "before-hook-creation")),
    });
    Document {
        file: format!("{}-configmap.yaml", w.name),
        when: Some(w.enabled()),
        root: manifest!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": (metadata(w.spec, w.object_name(), Some(w.name), annotations)),
            "data": (config_data(workload_config_text(w))),
        }),
    }
}

/// The bundled PostgreSQL's first-start script: the application's role, not a
/// superuser (so `superuser_reserved_connections` holds for it), owning the database.
/// Names and the password come from the container's env, never from template text.
const POSTGRES_INIT: &str = r#"#!/bin/sh
# Runs once, when the bundled PostgreSQL initialises its volume: creates the
# application's role (not a superuser, so superuser_reserved_connections holds
# for it) and gives it the database.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  --set app_user="$SHIPSHAPE_APP_USER" --set app_password="$SHIPSHAPE_APP_PASSWORD" \
  --set app_db="$POSTGRES_DB" <<'SQL'
CREATE ROLE :"app_user" LOGIN PASSWORD :'app_password';
ALTER DATABASE :"app_db" OWNER TO :"app_user";
SQL
"#;

/// `<release>-bundled-postgres-init`: the bundled PostgreSQL's first-start script.
pub fn postgres_init_config_map(spec: &Spec) -> Document {
    let name = crate::objects::common::release_name_with(spec, "bundled-postgres-init");
    let component = crate::objects::stateful_set::POSTGRES;
    Document {
        file: "bundled-postgres-init-configmap.yaml".into(),
        when: Some(val(&crate::objects::stateful_set::postgres_value(
            "enabled",
        ))),
        root: manifest!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": (metadata(spec, name, Some(component), vec![])),
            "data": { "10-application-role.sh": (POSTGRES_INIT) },
        }),
    }
}
