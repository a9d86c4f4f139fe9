//! The commands as a user runs them: `new` then `cargo test` and `build` on what it made;
//! `describe`, `inspect` and `call` on the quickstart; the errors of bad input.
//!
//! Nested cargo runs use `target/wasm-tests` under the workspace root, which the other tests'
//! wasm builds share: the `cargo test` running this holds the lock of its own target
//! directory, and the generated crate reuses what is already built there.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use wasmod_wasm_tests::{built, workspace_root, Profile};

fn wasmod(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wasmod"))
        .args(args)
        .current_dir(dir)
        .env(
            "CARGO_TARGET_DIR",
            workspace_root().join("target").join("wasm-tests"),
        )
        .output()
        .expect("wasmod runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_new_module_tests_builds_and_passes_its_checks() {
    let temp = tempfile::tempdir().expect("a temporary directory");
    let root = workspace_root().to_str().expect("a UTF-8 path");
    let created = wasmod(&["new", "todo", "--wasmod-path", root], temp.path());
    assert!(created.status.success(), "{}", text(&created.stderr));
    let dir = temp.path().join("todo");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("a manifest");
    assert!(
        manifest.contains(&format!("path = \"{root}/runtime\"")),
        "{manifest}"
    );
    // The workspace's lock file: same versions as the rest of the run, nothing to resolve.
    std::fs::copy(workspace_root().join("Cargo.lock"), dir.join("Cargo.lock")).expect("copied");

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let tested = Command::new(cargo)
        .args(["test", "--offline", "--quiet"])
        .current_dir(&dir)
        .env(
            "CARGO_TARGET_DIR",
            workspace_root().join("target").join("wasm-tests"),
        )
        .output()
        .expect("cargo runs");
    assert!(
        tested.status.success(),
        "{}{}",
        text(&tested.stdout),
        text(&tested.stderr)
    );
    assert!(
        text(&tested.stdout).contains("2 passed"),
        "{}",
        text(&tested.stdout)
    );

    let build = wasmod(&["build", "."], &dir);
    let out = text(&build.stdout);
    assert!(build.status.success(), "{out}{}", text(&build.stderr));
    for line in [
        "abi: ok",
        "description: ok",
        "dispatch: clean",
        "#0   add(title: String)",
        "#1   complete(id: u64)",
        "#0   my_tasks() -> Vec<Task>",
    ] {
        assert!(out.contains(line), "{line} in:\n{out}");
    }

    let again = wasmod(&["new", "todo"], temp.path());
    assert_eq!(again.status.code(), Some(2));
    assert!(
        text(&again.stderr).contains("not empty"),
        "{}",
        text(&again.stderr)
    );
}

#[test]
fn new_depends_on_the_enclosing_checkout_by_a_relative_path() {
    let temp = tempfile::tempdir().expect("a temporary directory");
    let checkout = temp.path().join("wasmod");
    std::fs::create_dir_all(checkout.join("runtime")).expect("made");
    std::fs::write(checkout.join("Cargo.toml"), "[workspace]\n").expect("written");
    std::fs::write(
        checkout.join("runtime").join("Cargo.toml"),
        "[package]\nname = \"wasmod\"\n",
    )
    .expect("written");
    let made = wasmod(&["new", "examples/mine"], &checkout);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let manifest =
        std::fs::read_to_string(checkout.join("examples/mine/Cargo.toml")).expect("read");
    assert!(
        manifest.contains("wasmod = { path = \"../../runtime\" }"),
        "{manifest}"
    );

    let outside = wasmod(&["new", "elsewhere"], temp.path());
    assert!(outside.status.success(), "{}", text(&outside.stderr));
    let manifest = std::fs::read_to_string(temp.path().join("elsewhere/Cargo.toml")).expect("read");
    assert!(manifest.contains("wasmod = \"0.1\""), "{manifest}");

    // A toolchain without the wasm32 target: the error says how to install it.
    let rustc = temp.path().join("rustc-without-wasm32");
    std::fs::write(&rustc, "#!/bin/sh\necho /nonexistent-sysroot\n").expect("written");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&rustc, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let build = Command::new(env!("CARGO_BIN_EXE_wasmod"))
            .args(["build", "elsewhere"])
            .current_dir(temp.path())
            .env("RUSTC", &rustc)
            .output()
            .expect("wasmod runs");
        assert_eq!(build.status.code(), Some(2));
        let stderr = text(&build.stderr);
        assert!(
            stderr.contains("rustup target add wasm32-unknown-unknown"),
            "{stderr}"
        );
    }

    let bad = wasmod(&["new", "2fast"], temp.path());
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("--name"),
        "{}",
        text(&bad.stderr)
    );
}

#[test]
fn describe_inspect_and_call_the_quickstart() {
    let wasm = built(Profile::Release).library_path("quickstart");
    let wasm = wasm.to_str().expect("a UTF-8 path");
    let here = workspace_root();

    let described = wasmod(&["describe", wasm, "--json"], here);
    assert!(described.status.success(), "{}", text(&described.stderr));
    let json: Value = serde_json::from_slice(&described.stdout).expect("JSON");
    assert_eq!(json["tables"][2]["name"], "config");
    assert_eq!(json["tables"][2]["public"], false);
    assert_eq!(json["reducers"][3]["name"], "set_name");
    assert_eq!(json["http_handlers"][1]["path"], "/messages");

    let inspected = wasmod(&["inspect", wasm], here);
    assert!(inspected.status.success(), "{}", text(&inspected.stderr));
    assert!(text(&inspected.stdout).contains("result: clean"));

    let sent = wasmod(&["call", wasm, "send", "\"hi\""], here);
    assert!(sent.status.success(), "{}", text(&sent.stderr));
    let answer: Value = serde_json::from_slice(&sent.stdout).expect("JSON");
    assert_eq!(answer["status"], "committed");

    let named = wasmod(
        &["call", wasm, "set_name", "--json", r#"{"name": "ann"}"#],
        here,
    );
    assert!(named.status.success(), "{}", text(&named.stdout));

    let refused = wasmod(&["call", wasm, "send", "42"], here);
    assert_eq!(refused.status.code(), Some(1));
    let error: Value = serde_json::from_slice(&refused.stdout).expect("JSON");
    assert_eq!(error["error"]["code"], "bad_arguments");

    let not_json = wasmod(&["call", wasm, "send", "hello"], here);
    assert_eq!(not_json.status.code(), Some(2));
    assert!(
        text(&not_json.stderr).contains("'\"hello\"'"),
        "{}",
        text(&not_json.stderr)
    );

    let missing = wasmod(&["describe", "no/such/module.wasm"], here);
    assert_eq!(missing.status.code(), Some(2));
    let garbage = tempfile::NamedTempFile::new().expect("a file");
    std::fs::write(garbage.path(), b"not wasm").expect("written");
    let garbage = garbage.path().to_str().expect("UTF-8");
    let invalid = wasmod(&["describe", garbage], here);
    assert_eq!(invalid.status.code(), Some(1));
    assert!(
        text(&invalid.stderr).contains("does not compile"),
        "{}",
        text(&invalid.stderr)
    );
}
