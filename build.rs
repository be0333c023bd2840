//! What the build writes besides the code (the model's schemas without their
//! annotations), and how the `shipshape` executable is linked on Linux with the GNU C
//! library.
//!
//! - `$OUT_DIR/model_constraints.rs`: the schemas of `schemas/values-model.json`
//!   without their annotations (`description`, `default`, ...:
//!   `src/contract/annotations.rs`, compiled here too), each definition as the text of
//!   its JSON. `render` only asks whether values pass those schemas, and parses a
//!   definition only when the values reach it: at most 30 KB of JSON at each run
//!   instead of the file's 116 KB, 20 KB for the smaller examples.
//! - `$OUT_DIR/presets/<name>.json`: each built-in preset, `presets/<name>.yaml`,
//!   as JSON. `render` reads the built-in presets at each run; JSON parses in a tenth
//!   of the instructions YAML takes, and a preset file that does not parse fails the
//!   build instead of reading as an empty preset.
//!
//! Linked:
//!
//! - With the C library linked in, at a fixed address, when `.cargo/config.toml`'s
//!   `+crt-static` reaches the build (x86_64 Linux with glibc, the host named as a target):
//!   no dynamic loader runs at start and no shared library is mapped or relocated. An
//!   example's `render` took 0.94 of the time of the dynamically linked build below
//!   (paired runs, BENCHMARKS.md). rustc then links GCC's unwinder and a fixed-address
//!   executable itself, so the next two items apply only to a build without it.
//! - At a fixed address (`-no-pie`). A position-independent executable makes the
//!   dynamic loader apply about 27,000 relocations at every start; a fixed-address one
//!   has them resolved by the linker. That is about half a millisecond of every run
//!   (measured with `perf stat` on `shipshape --version`: 253 page faults with PIE,
//!   129 without). The flag goes to the binaries' link only.
//! - With GCC's unwinder linked in (`libgcc_eh.a`, as `gcc -static-libgcc` does)
//!   instead of loading `libgcc_s.so.1`. That library's constructor asks the processor
//!   for its features with `cpuid`, which a virtual machine answers in the hypervisor
//!   (7 µs per instruction measured on the benchmarks' VM), about 0.15 ms of every run.
//!   Panics unwind as before; the test binaries are linked the same way, so the tests
//!   that catch panics cover it.
//! - With the functions the usual runs execute placed first and together
//!   (`link/hot-functions.txt`, written by `scripts/order-hot-functions.sh`, given to
//!   the linker as `--symbol-ordering-file`). The code is 14 MB; a run touches
//!   functions spread over all of it, and each first touch of a page of it is a page
//!   fault. Placed together they fill a few megabytes: an example's `render` took 682
//!   page faults instead of 765 and 3.90 ms instead of 4.47 (200 interleaved runs),
//!   `--version` 1.36 ms instead of 1.56. Only rust-lld, the linker Rust uses for
//!   x86_64 Linux since 1.90, is known to take the flag: it is passed only there,
//!   when no other linker is configured. A name the file lists that a build does not
//!   have is skipped (`--no-warn-symbol-ordering`): a stale file costs speed only.

#[path = "src/contract/annotations.rs"]
mod annotations;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    write_model_constraints();
    write_builtin_presets();
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    let gnu = std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    if !(linux && gnu) {
        return;
    }
    // Linked statically (`+crt-static`, which `.cargo/config.toml` asks for), rustc
    // itself links a fixed-address executable and GCC's unwinder; `-no-pie` would also
    // make a static position-independent one (`+crt-static` alone) crash at start.
    let crt_static = std::env::var("CARGO_CFG_TARGET_FEATURE")
        .is_ok_and(|features| features.split(',').any(|f| f == "crt-static"));
    if !crt_static {
        println!("cargo:rustc-link-arg-bins=-no-pie");
        // Placed before the standard library's `-lgcc_s`, so that the linker takes the
        // unwinder from here and, with `--as-needed`, drops `libgcc_s.so.1`.
        println!("cargo:rustc-link-lib=static:-bundle=gcc_eh");
    }
    let order = concat!(env!("CARGO_MANIFEST_DIR"), "/link/hot-functions.txt");
    println!("cargo:rerun-if-changed={order}");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    if linked_by_rust_lld() && std::path::Path::new(order).is_file() {
        println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={order}");
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// Writes `$OUT_DIR/model_constraints.rs`: the schemas of `schemas/values-model.json`
/// with their annotations removed ([`annotations::strip_model_annotations`]), each as
/// the text of its JSON on one line: `TYPE_SCHEMAS`, each model type's schema by the
/// type's name, and `DEFINITIONS`, each definition by its name, sorted by name (what
/// `src/contract/model_schemas.rs` includes).
fn write_model_constraints() {
    use std::fmt::Write;
    let model = "schemas/values-model.json";
    println!("cargo:rerun-if-changed={model}");
    println!("cargo:rerun-if-changed=src/contract/annotations.rs");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(model);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{model}: cannot read it: {e}"));
    let mut file: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!("{model}: not JSON ({e}); `UPDATE_GOLDEN=1 cargo test` writes it again")
    });
    annotations::strip_model_annotations(&mut file);
    let section = |key: &str| match file.get(key) {
        Some(serde_json::Value::Object(map)) => map.clone(),
        _ => panic!("{model}: no `{key}` object; `UPDATE_GOLDEN=1 cargo test` writes it again"),
    };
    let mut source = format!("// Written by build.rs from {model}, without annotations.\n\n");
    source.push_str("/// Each model type's schema, by the type's name.\n");
    source.push_str("const TYPE_SCHEMAS: &[(&str, &str)] = &[\n");
    for (name, entry) in section("types") {
        let schema = entry.get("schema").cloned().unwrap_or_default();
        let _ = writeln!(source, "    ({name:?}, {:?}),", schema.to_string());
    }
    source.push_str("];\n\n");
    let definitions = section("definitions");
    // A JSON object's keys come sorted (serde_json keeps them in a BTreeMap).
    source.push_str("/// Each definition, by its name, sorted by name.\n");
    source.push_str("const DEFINITIONS: &[(&str, &str)] = &[\n");
    for (name, definition) in definitions {
        let _ = writeln!(source, "    ({name:?}, {:?}),", definition.to_string());
    }
    source.push_str("];\n");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("model_constraints.rs");
    std::fs::write(&out, source)
        .unwrap_or_else(|e| panic!("{}: cannot write it: {e}", out.display()));
}

/// Writes `$OUT_DIR/presets/<name>.json` for each `presets/<name>.yaml`: the same
/// document, parsed as the library parses YAML (serde-saphyr), written as JSON.
fn write_builtin_presets() {
    println!("cargo:rerun-if-changed=presets");
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("presets");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("presets");
    std::fs::create_dir_all(&out)
        .unwrap_or_else(|e| panic!("{}: cannot create it: {e}", out.display()));
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("presets/: {e}"));
    for entry in entries {
        let path = entry.unwrap_or_else(|e| panic!("presets/: {e}")).path();
        let (Some(name), Some("yaml")) = (
            path.file_stem().and_then(|n| n.to_str()),
            path.extension().and_then(|e| e.to_str()),
        ) else {
            continue;
        };
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("presets/{name}.yaml: cannot read it: {e}"));
        let document: serde_json::Value = serde_saphyr::from_str(&text)
            .unwrap_or_else(|e| panic!("presets/{name}.yaml: not a YAML document: {e}"));
        let json = out.join(format!("{name}.json"));
        std::fs::write(&json, document.to_string())
            .unwrap_or_else(|e| panic!("{}: cannot write it: {e}", json.display()));
    }
}

/// Whether the binaries are linked by rust-lld: the target is x86_64 Linux with the GNU
/// C library, where Rust 1.90 and later link with it by default, and neither a linker
/// (`RUSTC_LINKER`, from `target.<triple>.linker`) nor linker flags (`-C linker=`,
/// `-C linker-flavor=`, `-C link-self-contained=`) were chosen.
fn linked_by_rust_lld() -> bool {
    let x86_64 = std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64");
    let linker_chosen = std::env::var_os("RUSTC_LINKER").is_some()
        || std::env::var("CARGO_ENCODED_RUSTFLAGS").is_ok_and(|flags| flags.contains("link"));
    x86_64 && !linker_chosen && rustc_minor_version().is_some_and(|minor| minor >= 90)
}

/// The minor version of the Rust compiler Cargo builds with (`rustc --version`:
/// `rustc 1.95.0 (...)` gives 95).
fn rustc_minor_version() -> Option<u32> {
    let rustc = std::env::var_os("RUSTC")?;
    let output = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let version = text.split_whitespace().nth(1)?;
    let mut parts = version.split('.');
    (parts.next()? == "1").then_some(())?;
    parts.next()?.parse().ok()
}
