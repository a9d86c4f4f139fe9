//! `wasmod generate`: the quickstart client's committed bindings are exactly what the command
//! writes for the quickstart today (so they cannot go stale unnoticed), and bad arguments are
//! refused.

mod support;

use support::{text, wasmod};
use wasmod_wasm_tests::{built, workspace_root, Profile};

#[test]
fn the_quickstart_clients_committed_bindings_are_not_stale() {
    assert_not_stale("rust", "mod.rs", "examples/quickstart-client/src/bindings");
}

#[test]
fn the_quickstart_pages_committed_typescript_bindings_are_not_stale() {
    assert_not_stale(
        "typescript",
        "module_bindings.ts",
        "examples/quickstart/web",
    );
}

/// Fails unless `file` in `dir` (from the workspace root) is exactly what `wasmod generate
/// --lang <lang>` writes for the quickstart today.
fn assert_not_stale(lang: &str, file: &str, dir: &str) {
    let wasm = built(Profile::Release).library_path("quickstart");
    let out = tempfile::tempdir().expect("a temporary directory");
    let output = wasmod(
        &[
            "generate",
            "--lang",
            lang,
            &wasm.to_string_lossy(),
            "--out",
            &out.path().to_string_lossy(),
        ],
        workspace_root(),
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let fresh = std::fs::read_to_string(out.path().join(file)).expect("written");
    let committed_path = format!("{dir}/{file}");
    let committed = std::fs::read_to_string(workspace_root().join(&committed_path))
        .expect("the committed bindings");
    if fresh != committed {
        let line = fresh
            .lines()
            .zip(committed.lines())
            .position(|(fresh, committed)| fresh != committed)
            .map_or_else(
                || "their lengths".to_owned(),
                |index| format!("line {}", index + 1),
            );
        panic!(
            "{committed_path} is stale (it differs at {line}): run `wasmod generate --lang \
             {lang} examples/quickstart --out {dir}`"
        );
    }
}

#[test]
fn an_unknown_language_or_a_missing_module_is_a_usage_error() {
    let out = tempfile::tempdir().expect("a temporary directory");
    let out = out.path().to_string_lossy();
    let output = wasmod(
        &["generate", "--lang", "cobol", "m.wasm", "--out", &out],
        workspace_root(),
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("cobol"),
        "{}",
        text(&output.stderr)
    );

    let output = wasmod(
        &[
            "generate",
            "--lang",
            "rust",
            "no/such/module.wasm",
            "--out",
            &out,
        ],
        workspace_root(),
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("no such .wasm file or crate directory"),
        "{}",
        text(&output.stderr)
    );
}
