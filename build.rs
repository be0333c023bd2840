//! How the `shipshape` executable is linked on Linux with the GNU C library.
//!
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

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    let gnu = std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    if linux && gnu {
        println!("cargo:rustc-link-arg-bins=-no-pie");
        // Placed before the standard library's `-lgcc_s`, so that the linker takes the
        // unwinder from here and, with `--as-needed`, drops `libgcc_s.so.1`.
        println!("cargo:rustc-link-lib=static:-bundle=gcc_eh");
    }
}
