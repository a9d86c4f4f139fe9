//! The check over the whole workspace: every library and binary target of every member (as
//! `cargo metadata` lists them), with no circle but those in `known-circles.txt`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use wasmod_layers::{check, Circle};

/// The kinds of targets whose source is a crate's own modules (tests, benches, examples and
/// build scripts are left out: each file of theirs is a crate of its own, or a script).
const KINDS: [&str; 6] = ["lib", "rlib", "cdylib", "dylib", "proc-macro", "bin"];

#[test]
fn no_circle_in_any_crate_of_the_workspace() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--manifest-path",
        ])
        .arg(workspace.join("Cargo.toml"))
        .output()
        .expect("cargo metadata runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "cargo metadata failed: {stderr}");
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");

    let mut found: BTreeMap<String, Circle> = BTreeMap::new();
    let mut targets = Vec::new();
    for package in metadata["packages"].as_array().expect("packages") {
        for target in package["targets"].as_array().expect("targets") {
            let kinds = target["kind"].as_array().expect("kinds");
            if !kinds
                .iter()
                .any(|k| KINDS.contains(&k.as_str().unwrap_or("")))
            {
                continue;
            }
            let kind = kinds[0].as_str().unwrap_or("");
            let target_name = target["name"].as_str().expect("name");
            let name = format!(
                "{} ({kind} {target_name})",
                package["name"].as_str().expect("name")
            );
            let root = Path::new(target["src_path"].as_str().expect("src_path"));
            let circles = check(root).unwrap_or_else(|error| panic!("{name}: {error}"));
            for circle in circles {
                let key = format!("{name}: {}: {}", circle.parent, circle.modules.join(", "));
                found.insert(key, circle);
            }
            targets.push(name);
        }
    }
    assert!(
        targets.iter().any(|t| t.starts_with("wasmod-layers ")),
        "the workspace's members were not all found: {targets:?}"
    );

    let known_file = Path::new(env!("CARGO_MANIFEST_DIR")).join("known-circles.txt");
    let known_text = std::fs::read_to_string(&known_file).expect("known-circles.txt");
    let known: Vec<&str> = known_text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect();

    let mut failures = String::new();
    for (key, circle) in &found {
        if !known.contains(&key.as_str()) {
            failures += &format!("{key}\n{circle}\n");
        }
    }
    for key in &known {
        if !found.contains_key(*key) {
            failures +=
                &format!("{key}\n  is in known-circles.txt but no longer found: remove it\n\n");
        }
    }
    assert!(
        failures.is_empty(),
        "import circles in {} targets checked:\n\n{failures}",
        targets.len()
    );
}
