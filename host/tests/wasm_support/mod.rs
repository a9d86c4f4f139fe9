//! Builds the modules the wasm tests load, once per test run, and helpers to look at them.
//!
//! The modules are built for `wasm32-unknown-unknown` in release (the profile a module ships
//! with: `panic = "abort"`, LTO) by one nested `cargo build`, with its own target directory
//! (`target/wasm-tests` under the workspace root, as the inspect tests do): the `cargo test`
//! running these tests holds the lock of its own target directory, and a nested build there
//! would wait for it forever.

#![allow(dead_code)] // Each test file uses the part it needs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{mpsc, OnceLock};
use std::time::Duration;
use wasmod_host::datastore::Row;
use wasmod_host::{CompiledModule, WasmEngine, WasmModule};

/// The compiled modules, by file name.
pub struct Binaries {
    dir: PathBuf,
}

impl Binaries {
    /// Builds every module the tests use (once per test binary) and returns where they are.
    pub fn get() -> &'static Binaries {
        static BINARIES: OnceLock<Binaries> = OnceLock::new();
        BINARIES.get_or_init(Binaries::build)
    }

    fn build() -> Self {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let target_dir = workspace_root().join("target").join("wasm-tests");
        let status = Command::new(cargo)
            .current_dir(workspace_root())
            .env("CARGO_TARGET_DIR", &target_dir)
            .args([
                "build",
                "--quiet",
                "--release",
                "--target",
                "wasm32-unknown-unknown",
            ])
            .args(["-p", "quickstart", "-p", "hostile", "--lib", "--examples"])
            .status()
            .expect("cargo runs");
        assert!(
            status.success(),
            "building the test modules for wasm32 failed"
        );
        Self {
            dir: target_dir.join("wasm32-unknown-unknown").join("release"),
        }
    }

    /// The bytes of library module `name` (`quickstart`, `hostile`).
    pub fn library(&self, name: &str) -> Vec<u8> {
        read(&self.dir.join(format!("{name}.wasm")))
    }

    /// The bytes of the hostile crate's raw example module `name`.
    pub fn example(&self, name: &str) -> Vec<u8> {
        read(&self.dir.join("examples").join(format!("{name}.wasm")))
    }
}

/// Compiles library module `name` with the shared engine, once per test binary per name.
pub fn compiled(name: &'static str) -> &'static CompiledModule {
    static QUICKSTART: OnceLock<CompiledModule> = OnceLock::new();
    static HOSTILE: OnceLock<CompiledModule> = OnceLock::new();
    let cell = match name {
        "quickstart" => &QUICKSTART,
        "hostile" => &HOSTILE,
        other => panic!("no library module {other}"),
    };
    cell.get_or_init(|| {
        let engine = WasmEngine::shared().expect("the shared engine");
        engine
            .compile(&Binaries::get().library(name))
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

/// The workspace root: the parent of this crate's directory.
fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate is in the workspace")
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}
