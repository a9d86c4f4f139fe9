//! The check over the workspace: the public surface of every published library (every member
//! that is not `publish = false`, as `cargo metadata` lists them) is the one in its committed
//! `api.txt`. A change to a public item fails here until `api.txt` changes with it, in the
//! same commit: `WASMOD_API_BLESS=1 cargo test -p wasmod-api --test workspace` rewrites the
//! files, and the diff is what a reviewer reads.

use std::path::Path;
use std::process::Command;

#[test]
fn every_published_library_matches_its_committed_surface() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .arg("--manifest-path")
        .arg(workspace.join("Cargo.toml"))
        .output()
        .expect("cargo metadata runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "cargo metadata failed: {stderr}");
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");

    let bless = std::env::var_os("WASMOD_API_BLESS").is_some();
    let mut checked = Vec::new();
    let mut failures = String::new();
    for package in metadata["packages"].as_array().expect("packages") {
        if package["publish"].as_array().is_some_and(Vec::is_empty) {
            continue; // `publish = false`
        }
        let name = package["name"].as_str().expect("name");
        let manifest = Path::new(package["manifest_path"].as_str().expect("manifest"));
        let snapshot = manifest.with_file_name("api.txt");
        let library = package["targets"]
            .as_array()
            .expect("targets")
            .iter()
            .find(|target| {
                target["kind"]
                    .as_array()
                    .expect("kinds")
                    .iter()
                    .any(|kind| kind == "lib" || kind == "proc-macro")
            });
        let Some(library) = library else {
            // A published binary only (the CLI): its interface is its command line, which
            // its own tests pin; it has no Rust API. A stale api.txt would mislead.
            assert!(!snapshot.exists(), "{name} has no library but an api.txt");
            continue;
        };
        let root = Path::new(library["src_path"].as_str().expect("src_path"));
        let crate_name = library["name"].as_str().expect("name").replace('-', "_");
        let lines = wasmod_api::surface(root, &crate_name)
            .unwrap_or_else(|error| panic!("{name}: {error}"));
        assert!(
            lines.len() > 1,
            "{name}: no public item found in {}",
            root.display()
        );
        checked.push(name.to_owned());
        if bless {
            std::fs::write(&snapshot, wasmod_api::snapshot_text(&lines)).expect("write api.txt");
            continue;
        }
        let committed = std::fs::read_to_string(&snapshot).unwrap_or_default();
        if let Err(mismatch) = wasmod_api::compare(&lines, &committed) {
            failures += &format!(
                "{name}: the public surface differs from {}:\n{mismatch}\n",
                snapshot.display()
            );
        }
    }
    for expected in ["wasmod", "wasmod-abi", "wasmod-client", "wasmod-macros"] {
        assert!(
            checked.iter().any(|name| name == expected),
            "{expected} was not checked: {checked:?}"
        );
    }
    assert!(
        failures.is_empty(),
        "{failures}If the change is deliberate, rewrite the snapshots with \
         `WASMOD_API_BLESS=1 cargo test -p wasmod-api --test workspace` and commit them with it; if it is not, \
         undo it (`#[non_exhaustive]` lets a type grow without breaking its users)."
    );
}
