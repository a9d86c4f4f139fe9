//! Builds the example modules for wasm32, once per test run, and inspects them.
//!
//! The builds use their own target directory (`target/wasm-tests` under the workspace root):
//! the `cargo test` that runs these tests holds the lock of its own target directory, and a
//! nested build there would wait for it forever.

#![allow(dead_code)] // Each test file uses the part of the support it needs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use wasmod_inspect::Report;

/// How a module is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Build {
    /// `--release`: LTO, one codegen unit, `panic = "abort"` (see the root `Cargo.toml`).
    Release,
    /// The `dev` profile: unoptimised.
    Debug,
    /// `--release` with `-C symbol-mangling-version=v0`, whose names carry generic arguments.
    ReleaseV0,
}

impl Build {
    /// Every build the tests look at.
    pub const ALL: [Build; 3] = [Build::Release, Build::Debug, Build::ReleaseV0];

    /// The compiled modules of this build.
    pub fn modules(self) -> &'static Modules {
        static RELEASE: OnceLock<Modules> = OnceLock::new();
        static DEBUG: OnceLock<Modules> = OnceLock::new();
        static RELEASE_V0: OnceLock<Modules> = OnceLock::new();
        let cell = match self {
            Build::Release => &RELEASE,
            Build::Debug => &DEBUG,
            Build::ReleaseV0 => &RELEASE_V0,
        };
        cell.get_or_init(|| Modules::build(self))
    }

    /// The target directory of this build.
    fn target_dir(self) -> PathBuf {
        let dir = workspace_root().join("target").join("wasm-tests");
        match self {
            Build::ReleaseV0 => dir.join("v0"),
            Build::Release | Build::Debug => dir,
        }
    }

    /// The profile's directory name under the target.
    fn profile_dir(self) -> &'static str {
        match self {
            Build::Release | Build::ReleaseV0 => "release",
            Build::Debug => "debug",
        }
    }
}

/// The example modules, compiled.
pub struct Modules {
    /// `examples/quickstart`.
    pub quickstart: Vec<u8>,
    /// `examples/control-table-dispatch`.
    pub control: Vec<u8>,
}

impl Modules {
    /// Builds both examples with one cargo invocation and reads the binaries.
    fn build(build: Build) -> Self {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let target_dir = build.target_dir();
        let mut command = Command::new(cargo);
        command
            .current_dir(workspace_root())
            .env("CARGO_TARGET_DIR", &target_dir)
            .args(["build", "--quiet", "--target", "wasm32-unknown-unknown"])
            .args(["-p", "quickstart", "-p", "control-table-dispatch"]);
        if build != Build::Debug {
            command.arg("--release");
        }
        if build == Build::ReleaseV0 {
            let flags = std::env::var("RUSTFLAGS").unwrap_or_default();
            command.env(
                "RUSTFLAGS",
                format!("{flags} -C symbol-mangling-version=v0"),
            );
        }
        let status = command.status().expect("cargo runs");
        assert!(
            status.success(),
            "building the examples for wasm32 ({build:?}) failed"
        );
        let dir = target_dir
            .join("wasm32-unknown-unknown")
            .join(build.profile_dir());
        Self {
            quickstart: read(&dir.join("quickstart.wasm")),
            control: read(&dir.join("control_table_dispatch.wasm")),
        }
    }
}

/// Inspects a module that must be inspectable.
pub fn inspect(wasm: &[u8]) -> Report {
    wasmod_inspect::inspect(wasm).expect("the module can be inspected")
}

/// The workspace root: the parent of this crate's directory.
fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate is in the workspace")
}

/// Reads a built binary.
fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}
