//! The one integration test binary. Modules by concern; shared helpers in `support`.

mod bundled;
mod capacity;
mod checkov;
mod cli;
mod concurrency;
mod contract;
mod equivalence;
mod extra_objects;
mod fake_registry;
mod figures;
mod fixtures;
mod golden;
mod hostile;
mod init;
mod layout;
mod preflight;
mod presets;
mod props;
mod registry;
mod replicas;
mod security;
mod servers;
mod settings;
mod support;
mod surface;
mod takeover;
