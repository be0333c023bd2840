//! What tests in every layer share about specs: the bundled examples, loaded. In the
//! spec layer, the lowest, so that the layers above it (values, capacity, contract,
//! guards) read the examples the same way without reaching up.

use super::Spec;

/// The bundled examples' names.
pub const EXAMPLES: [&str; 3] = ["agent-platform", "llm-gateway", "web-shop"];

/// The path of `examples/<name>/shipshape.yaml`.
pub fn example_path(name: &str) -> String {
    format!(
        "{}/examples/{name}/shipshape.yaml",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The spec of `examples/<name>/shipshape.yaml`, loaded.
pub fn example(name: &str) -> Spec {
    let path = example_path(name);
    super::load_spec(&std::fs::read_to_string(&path).unwrap(), &path).unwrap()
}
