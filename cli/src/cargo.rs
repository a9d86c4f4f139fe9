//! Building a module crate for `wasm32-unknown-unknown` with cargo.
//!
//! Cargo does the work; this file makes it say what a module author needs:
//!
//! - the target is checked first, in the crate's own toolchain (a `rust-toolchain` file
//!   applies): if `<sysroot>/lib/rustlib/wasm32-unknown-unknown` is missing, the error says
//!   to run `rustup target add wasm32-unknown-unknown` instead of cargo's "can't find crate for
//!   `core`";
//! - cargo's stderr is the user's, so its progress and diagnostics show as cargo prints them;
//! - its stdout carries JSON messages (`--message-format=json-render-diagnostics`), from
//!   which the path of the crate's `.wasm` is read, wherever the target directory is
//!   (`CARGO_TARGET_DIR`, a workspace's, a `.cargo/config.toml`'s).
//!
//! Modules are always built with `--release`: that is the profile they ship with (LTO,
//! `panic = "abort"`), and the one whose dispatch the inspection checks.

use crate::failure::{Context, Failure, Result};
use serde_json::Value;
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The target modules are built for.
pub const TARGET: &str = "wasm32-unknown-unknown";

/// Builds the crate in `dir` for wasm32 in release, and returns the path of its `.wasm`.
pub fn build(dir: &Path) -> Result<PathBuf> {
    let manifest = dir.join("Cargo.toml");
    if !manifest.is_file() {
        return Err(Failure::usage(format!(
            "{} is not a crate: it has no Cargo.toml",
            dir.display()
        )));
    }
    let manifest = manifest
        .canonicalize()
        .context(format!("{}", manifest.display()))?;
    check_target(dir)?;
    tracing::info!("building {} for {TARGET}", manifest.display());
    let mut child = Command::new(cargo())
        .current_dir(dir)
        .args(["build", "--release", "--target", TARGET])
        .arg("--message-format=json-render-diagnostics")
        .arg("--manifest-path")
        .arg(&manifest)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("running cargo")?;
    let mut wasm = None;
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line.context("reading cargo's output")?;
            if let Some(path) = wasm_artifact(&line, &manifest) {
                wasm = Some(path);
            }
        }
    }
    let status = child.wait().context("waiting for cargo")?;
    if !status.success() {
        return Err(Failure::usage(format!(
            "cargo could not build {} for {TARGET} (its errors are above)",
            dir.display()
        )));
    }
    wasm.ok_or_else(|| {
        Failure::usage(format!(
            "{} built no .wasm: a module crate needs `[lib] crate-type = [\"cdylib\", \"rlib\"]` in its Cargo.toml",
            dir.display()
        ))
    })
}

/// The `.wasm` of a `compiler-artifact` message about the crate of `manifest`'s cdylib.
fn wasm_artifact(line: &str, manifest: &Path) -> Option<PathBuf> {
    let message: Value = serde_json::from_str(line).ok()?;
    if message["reason"] != "compiler-artifact"
        || message["manifest_path"].as_str().map(Path::new) != Some(manifest)
    {
        return None;
    }
    let kinds = message["target"]["kind"].as_array()?;
    if !kinds.iter().any(|kind| kind == "cdylib") {
        return None;
    }
    message["filenames"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find(|name| name.ends_with(".wasm"))
        .map(PathBuf::from)
}

/// Fails with the command that installs the target if the crate's toolchain lacks it. If the
/// sysroot cannot be found (no `rustc` on the path), cargo's own error will say more.
fn check_target(dir: &Path) -> Result<()> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| OsString::from("rustc"));
    let output = Command::new(rustc)
        .current_dir(dir)
        .args(["--print", "sysroot"])
        .stdin(Stdio::null())
        .output();
    let Ok(output) = output else { return Ok(()) };
    if !output.status.success() {
        return Ok(());
    }
    let sysroot = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    if sysroot.join("lib").join("rustlib").join(TARGET).is_dir() {
        return Ok(());
    }
    Err(Failure::usage(format!(
        "the {TARGET} target is not installed for the toolchain at {}: run `rustup target add {TARGET}`",
        sysroot.display()
    )))
}

/// The cargo to run: the one running us (`CARGO`, under `cargo run` or a test), else `cargo`.
fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wasm_of_the_crates_cdylib_is_found_in_cargos_messages() {
        let manifest = Path::new("/m/Cargo.toml");
        let artifact = |manifest: &str, kind: &str, file: &str| {
            serde_json::json!({
                "reason": "compiler-artifact",
                "manifest_path": manifest,
                "target": {"kind": [kind]},
                "filenames": [file, "/t/libm.rlib"],
            })
            .to_string()
        };
        assert_eq!(
            wasm_artifact(&artifact("/m/Cargo.toml", "cdylib", "/t/m.wasm"), manifest),
            Some(PathBuf::from("/t/m.wasm"))
        );
        assert_eq!(
            wasm_artifact(
                &artifact("/dep/Cargo.toml", "cdylib", "/t/d.wasm"),
                manifest
            ),
            None
        );
        assert_eq!(
            wasm_artifact(&artifact("/m/Cargo.toml", "lib", "/t/m.rlib"), manifest),
            None
        );
        assert_eq!(wasm_artifact("not json", manifest), None);
        assert_eq!(
            wasm_artifact(r#"{"reason":"build-finished"}"#, manifest),
            None
        );
    }
}
