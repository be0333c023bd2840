//! The application's startup settings: timeouts and deadlines written into its
//! configuration file from typed values.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One timeout setting of the application's startup configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TimeoutSetting {
    /// Its key in the startup settings section (e.g. `db_lock_timeout_seconds`).
    #[schemars(regex(pattern = r"^[A-Za-z_][A-Za-z0-9_]*$"))]
    pub key: String,
    /// Seconds; positive and finite.
    #[schemars(range(max = 86400.0), extend("exclusiveMinimum" = 0))]
    pub seconds: f64,
}

/// Lock, statement and transaction deadlines of one budget: lock <= statement <=
/// transaction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TimeoutBudget {
    /// How long a statement waits for a lock.
    pub lock: TimeoutSetting,
    /// How long one statement may run.
    pub statement: TimeoutSetting,
    /// How long one transaction may stay open.
    pub transaction: TimeoutSetting,
}

/// The application's startup settings, written into one section of its configuration
/// file from typed values (the gateway's `general_settings`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StartupSettings {
    /// The section of the configuration file the chart writes (`config.<section>` is
    /// then managed: values may not set it directly).
    #[schemars(regex(pattern = r"^[A-Za-z_][A-Za-z0-9_]*$"))]
    pub section: String,
    /// Foreground and telemetry acceptance deadlines.
    pub foreground: TimeoutBudget,
    /// Control and telemetry-worker deadlines.
    pub background: TimeoutBudget,
    /// Other positive, finite deadlines (acquisition, Redis socket and connect).
    #[serde(default)]
    pub deadlines: BTreeMap<String, TimeoutSetting>,
    /// The workload whose allocation sizes the file states (every workload with the same
    /// setting must agree; a guard checks it).
    pub sizes_from: String,
    /// The key of the separate cache server's URL in the section, written as
    /// `os.environ/<urlEnv>` (the value itself comes from the Secret).
    #[serde(default)]
    pub cache_url_key: String,
}
