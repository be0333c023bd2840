//! The one integration test binary. Modules by concern; shared helpers in `support`.

mod capacity;
mod cli;
mod contract;
mod equivalence;
mod fixtures;
mod golden;
mod layout;
mod presets;
mod registry;
mod replicas;
mod settings;
mod support;
mod surface;
