//! The modules the wasm tests load, built once per test run in release (the profile a module
//! ships with: `panic = "abort"`, LTO) by `wasmod-wasm-tests`, and helpers to look at them.

#![allow(dead_code)] // Each test file uses the part it needs.

use std::sync::{mpsc, OnceLock};
use std::time::Duration;
use wasmod_host::datastore::Row;
use wasmod_host::{CompiledModule, WasmEngine, WasmModule};
use wasmod_wasm_tests::{Built, Profile};

/// The test modules, built for wasm32 in release once per test run (`wasmod-wasm-tests`).
pub fn binaries() -> &'static Built {
    wasmod_wasm_tests::built(Profile::Release)
}

pub fn compiled(name: &'static str) -> &'static CompiledModule {
    static QUICKSTART: OnceLock<CompiledModule> = OnceLock::new();
    static HOSTILE: OnceLock<CompiledModule> = OnceLock::new();
    static SCHEDULED: OnceLock<CompiledModule> = OnceLock::new();
    let cell = match name {
        "quickstart" => &QUICKSTART,
        "hostile" => &HOSTILE,
        "scheduled" => &SCHEDULED,
        other => panic!("no library module {other}"),
    };
    cell.get_or_init(|| {
        let engine = WasmEngine::shared().expect("the shared engine");
        engine
            .compile(&binaries().library(name))
            .unwrap_or_else(|error| panic!("{name} compiles: {error}"))
    })
}

/// The rows of table `table`, sorted.
pub fn rows(module: &WasmModule, table: u32) -> Vec<Row> {
    let mut rows = module.read(|tables| tables.scan(table).expect("the table exists"));
    rows.sort();
    rows
}

/// Runs `f` on another thread and waits at most `limit` for it: a call the host fails to stop
/// fails the test instead of hanging it.
pub fn within<R: Send + 'static>(
    limit: Duration,
    what: &str,
    f: impl FnOnce() -> R + Send + 'static,
) -> R {
    let (done, result) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(f());
    });
    match result.recv_timeout(limit) {
        Ok(value) => value,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what} did not return within {limit:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
    }
}
