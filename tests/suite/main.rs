//! The one integration test binary. Modules by concern; shared helpers in `support`.

mod bench;
mod capacity;
mod cli;
mod concurrency;
mod contract;
mod equivalence;
mod fake_registry;
mod figures;
mod fixtures;
mod golden;
mod hostile;
mod init;
mod layout;
mod presets;
mod props;
mod registry;
mod replicas;
mod settings;
mod support;
mod surface;
