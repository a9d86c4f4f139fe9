//! The workspace's module crates, built for `wasm32-unknown-unknown` once per process.
//!
//! Tests and benchmarks that load or inspect real wasm binaries call [`built`]: the first call
//! in a process runs one `cargo build` of every module crate for the profile asked, and later
//! calls reuse it. Builds go to their own target directory (`target/wasm-tests` under the
//! workspace root), because the `cargo test` or `cargo bench` running the caller holds the lock
//! of its own target directory, and a nested build there would wait for it forever.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The crates that are wasm modules, built together.
pub const MODULE_CRATES: [&str; 10] = [
    "quickstart",
    "bank",
    "transfer",
    "benchmarks",
    "dispatch64",
    "control-table-dispatch",
    "hostile",
    "scheduled",
    "notes",
    "signin",
];

/// How the modules are built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Profile {
    /// `--release`: LTO, one codegen unit, `panic = "abort"` (see the root `Cargo.toml`).
    Release,
    /// The `dev` profile: unoptimised.
    Debug,
    /// `--release` with `-C symbol-mangling-version=v0`, whose symbol names carry generic
    /// arguments.
    ReleaseV0,
}

impl Profile {
    /// Every profile.
    pub const ALL: [Profile; 3] = [Profile::Release, Profile::Debug, Profile::ReleaseV0];

    fn target_dir(self) -> PathBuf {
        let dir = workspace_root().join("target").join("wasm-tests");
        match self {
            Profile::ReleaseV0 => dir.join("v0"),
            Profile::Release | Profile::Debug => dir,
        }
    }

    fn dir_name(self) -> &'static str {
        match self {
            Profile::Release | Profile::ReleaseV0 => "release",
            Profile::Debug => "debug",
        }
    }
}

/// The module crates, built with one profile.
#[derive(Debug)]
pub struct Built {
    dir: PathBuf,
}

/// The module crates built with `profile`, building them on the first call in this process.
///
/// # Panics
///
/// If cargo fails (for example when the `wasm32-unknown-unknown` target is not installed: run
/// `rustup target add wasm32-unknown-unknown`).
pub fn built(profile: Profile) -> &'static Built {
    static RELEASE: OnceLock<Built> = OnceLock::new();
    static DEBUG: OnceLock<Built> = OnceLock::new();
    static RELEASE_V0: OnceLock<Built> = OnceLock::new();
    let cell = match profile {
        Profile::Release => &RELEASE,
        Profile::Debug => &DEBUG,
        Profile::ReleaseV0 => &RELEASE_V0,
    };
    cell.get_or_init(|| Built::build(profile))
}

impl Built {
    fn build(profile: Profile) -> Self {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let target_dir = profile.target_dir();
        let mut command = Command::new(cargo);
        command
            .current_dir(workspace_root())
            .env("CARGO_TARGET_DIR", &target_dir)
            .args([
                "build",
                "--quiet",
                "--target",
                "wasm32-unknown-unknown",
                "--lib",
                "--examples",
            ]);
        for name in MODULE_CRATES {
            command.args(["-p", name]);
        }
        if profile != Profile::Debug {
            command.arg("--release");
        }
        if profile == Profile::ReleaseV0 {
            let flags = std::env::var("RUSTFLAGS").unwrap_or_default();
            command.env(
                "RUSTFLAGS",
                format!("{flags} -C symbol-mangling-version=v0"),
            );
        }
        let status = command.status().expect("cargo runs");
        assert!(
            status.success(),
            "building the module crates for wasm32 ({profile:?}) failed; is the target installed? \
             (rustup target add wasm32-unknown-unknown)"
        );
        Self {
            dir: target_dir
                .join("wasm32-unknown-unknown")
                .join(profile.dir_name()),
        }
    }

    /// The path of the library module of crate `name` (dashes written as underscores).
    pub fn library_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{}.wasm", name.replace('-', "_")))
    }

    /// The library module of crate `name`.
    pub fn library(&self, name: &str) -> Vec<u8> {
        read(&self.library_path(name))
    }

    /// The module built from the cargo example `name` of a module crate.
    pub fn example(&self, name: &str) -> Vec<u8> {
        read(&self.dir.join("examples").join(format!("{name}.wasm")))
    }
}

/// The workspace root: the parent of this crate's directory.
pub fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the crate is in the workspace")
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}
