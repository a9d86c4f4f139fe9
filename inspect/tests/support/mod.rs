//! The example modules built for wasm32 (once per test run, by `wasmod-wasm-tests`), and
//! inspected.

#![allow(dead_code)] // Each test file uses the part of the support it needs.

use std::sync::OnceLock;
use wasmod_inspect::Report;

/// The quickstart's reducers, in the order of its description (and of its reducer dispatch).
pub const QUICKSTART_REDUCERS: [&str; 7] = [
    "init",
    "connected",
    "disconnected",
    "set_name",
    "send",
    "save_draft",
    "hand_draft",
];

/// How a module is built: the shared builds of `wasmod-wasm-tests`.
pub use wasmod_wasm_tests::Profile as Build;

/// The example modules of one build.
pub struct Modules {
    /// `examples/quickstart`.
    pub quickstart: Vec<u8>,
    /// `examples/benchmarks`.
    pub benchmarks: Vec<u8>,
    /// `examples/control-table-dispatch`.
    pub control: Vec<u8>,
}

/// The example modules of `build`, read once per process.
pub fn modules(build: Build) -> &'static Modules {
    static RELEASE: OnceLock<Modules> = OnceLock::new();
    static DEBUG: OnceLock<Modules> = OnceLock::new();
    static RELEASE_V0: OnceLock<Modules> = OnceLock::new();
    let cell = match build {
        Build::Release => &RELEASE,
        Build::Debug => &DEBUG,
        Build::ReleaseV0 => &RELEASE_V0,
    };
    cell.get_or_init(|| {
        let built = wasmod_wasm_tests::built(build);
        Modules {
            quickstart: built.library("quickstart"),
            benchmarks: built.library("benchmarks"),
            control: built.library("control-table-dispatch"),
        }
    })
}

/// Inspects a module that must be inspectable.
pub fn inspect(wasm: &[u8]) -> Report {
    wasmod_inspect::inspect(wasm).expect("the module can be inspected")
}
