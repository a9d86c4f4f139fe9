//! The layering between crates, as their dependency graph shows it: the checks of
//! docs/architecture.md ("Checks of the layering") that a `cargo tree` answers.

use std::path::Path;
use std::process::Command;

/// The packages `package` depends on through normal dependencies (no dev or build ones), for
/// this machine's target, by name.
fn normal_dependencies(package: &str) -> Vec<String> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args(["tree", "--locked", "-e", "normal", "--prefix", "none"])
        .args(["--format", "{p}", "-p", package, "--manifest-path"])
        .arg(workspace.join("Cargo.toml"))
        .output()
        .expect("cargo tree runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "cargo tree failed: {stderr}");
    let tree = String::from_utf8(output.stdout).expect("UTF-8");
    tree.lines()
        .filter_map(|line| line.split(' ').next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_module_side_crate_depends_on_no_host() {
    let dependencies = normal_dependencies("wasmod");
    assert!(
        dependencies.iter().any(|name| name == "wasmod-abi"),
        "the tree was read: {dependencies:?}"
    );
    assert!(
        !dependencies.iter().any(|name| name == "wasmod-host"),
        "wasmod depends on the host: a module's build would compile it (the tests' host is \
         wasmod-testing's): {dependencies:?}"
    );
}
