//! The layering between crates, as their dependency graph shows it: the checks of
//! docs/architecture.md ("Checks of the layering") that a `cargo tree` answers. Each test names
//! a crate and what it must not depend on, directly or not, through normal dependencies (dev
//! and build dependencies are free: a test may start a server).

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

/// Fails, saying `why`, if `package` depends on any of `forbidden`; `known` is one package it
/// does depend on, to be sure the tree was read.
fn depends_on_none(package: &str, known: &str, forbidden: &[&str], why: &str) {
    let dependencies = normal_dependencies(package);
    assert!(
        dependencies.iter().any(|name| name == known),
        "the tree of {package} was read (it depends on {known}): {dependencies:?}"
    );
    let found: Vec<&str> = forbidden
        .iter()
        .copied()
        .filter(|name| dependencies.iter().any(|dependency| dependency == name))
        .collect();
    assert!(
        found.is_empty(),
        "{package} depends on {found:?}: {why} (docs/architecture.md, \"Checks of the \
         layering\")"
    );
}

#[test]
fn the_module_side_crate_depends_on_no_host() {
    depends_on_none(
        "wasmod",
        "wasmod-abi",
        &["wasmod-host", "wasmod-datastore", "wasmtime"],
        "a module's build would compile the host (the tests' host is wasmod-testing's)",
    );
}

#[test]
fn the_node_serves_no_http_and_owns_no_socket() {
    depends_on_none(
        "wasmod-node",
        "wasmod-host",
        &[
            "wasmod-server",
            "axum",
            "tower-http",
            "tungstenite",
            "tokio-tungstenite",
        ],
        "the node takes calls and frames from a transport (wasmod-server) and serves no HTTP \
         and no WebSocket of its own",
    );
}

#[test]
fn the_engine_knows_no_wire_and_no_transport() {
    for package in ["wasmod-host", "wasmod-subscription"] {
        depends_on_none(
            package,
            "wasmod-datastore",
            &[
                "wasmod-protocol",
                "wasmod-node",
                "wasmod-server",
                "axum",
                "hyper",
                "tungstenite",
                "redis",
            ],
            "the engine runs modules and live queries over bytes; the wire, sockets and \
             servers are the node's and the transport's",
        );
    }
}

#[test]
fn the_data_and_the_wire_know_no_wasm() {
    depends_on_none(
        "wasmod-datastore",
        "wasmod-abi",
        &["wasmod-host", "wasmtime"],
        "the datastore holds tables and their log, whoever runs the code that writes them",
    );
    depends_on_none(
        "wasmod-protocol",
        "wasmod-abi",
        &["wasmod-datastore", "wasmod-host", "wasmtime", "tokio"],
        "the protocol is messages and their encodings, shared with clients: no host, no I/O",
    );
}

#[test]
fn the_client_knows_no_host_node_or_server() {
    depends_on_none(
        "wasmod-client",
        "wasmod-protocol",
        &[
            "wasmod-datastore",
            "wasmod-host",
            "wasmod-node",
            "wasmod-server",
            "wasmtime",
        ],
        "the client SDK speaks the protocol to a server and builds for browsers",
    );
}
