//! The test vectors shared by the Rust and the JavaScript clients (`client/vectors/`, see
//! its README): the committed files are what the generator writes from the encoders today,
//! and the Rust client makes of every frame what the vectors expect. (The JavaScript check
//! of the same files runs in Chromium: `cli/tests/browser/package.rs`.)
//!
//! `WASMOD_WRITE_VECTORS=1 cargo test -p wasmod-client --test vectors committed` writes the files
//! afresh, after a deliberate change of the session or of the encoders.

mod check;
mod rows;
mod scenario;

use std::path::PathBuf;
use wasmod_wasm_tests::workspace_root;

fn vectors_dir() -> PathBuf {
    workspace_root().join("client/vectors")
}

#[test]
fn the_committed_vectors_are_what_the_encoders_write_now() {
    let dir = vectors_dir();
    let fresh = scenario::files();
    if std::env::var_os("WASMOD_WRITE_VECTORS").is_some() {
        for entry in std::fs::read_dir(&dir).expect("client/vectors") {
            let path = entry.expect("an entry").path();
            if path.extension().is_some_and(|extension| extension == "bin") {
                std::fs::remove_file(&path).expect("an old frame removed");
            }
        }
        for (name, bytes) in &fresh {
            std::fs::write(dir.join(name), bytes).expect("a vector written");
        }
    }
    let mut stale = Vec::new();
    for (name, bytes) in &fresh {
        if std::fs::read(dir.join(name)).ok().as_ref() != Some(bytes) {
            stale.push(name.clone());
        }
    }
    for entry in std::fs::read_dir(&dir).expect("client/vectors") {
        let name = entry
            .expect("an entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if name != "README.md" && !fresh.contains_key(&name) {
            stale.push(format!("{name} (no step writes it)"));
        }
    }
    assert!(
        stale.is_empty(),
        "client/vectors is stale: {stale:?} differ from what the encoders write now; run \
         `WASMOD_WRITE_VECTORS=1 cargo test -p wasmod-client --test vectors committed` and review the diff"
    );
}

#[test]
fn the_rust_client_decodes_and_applies_every_vector_as_expected() {
    let failures = check::failures(&vectors_dir());
    assert!(
        failures.is_empty(),
        "{} difference(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
