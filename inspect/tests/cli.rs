//! The binary: report on stdout, exit status 0 (clean), 1 (violations) or 2 (error).

use std::path::PathBuf;
use std::process::{Command, Output};

/// Writes `wasm` to a fresh file and runs `wasmod-inspect` on it with `args`.
fn run(name: &str, wasm: &[u8], args: &[&str]) -> Output {
    let path =
        std::env::temp_dir().join(format!("wasmod-inspect-{}-{name}.wasm", std::process::id()));
    std::fs::write(&path, wasm).expect("the temporary file is writable");
    let output = Command::new(env!("CARGO_BIN_EXE_wasmod-inspect"))
        .arg(&path)
        .args(args)
        .output()
        .expect("the binary runs");
    let _ = std::fs::remove_file(&path);
    output
}

/// A dispatch export whose only arm calls through a table when `indirect`.
fn module(indirect: bool) -> Vec<u8> {
    let call = if indirect {
        "(call_indirect (type $t) (local.get 0) (local.get 0))"
    } else {
        "(call $demo::a (local.get 0))"
    };
    let wat = format!(
        r#"(module
          (type $t (func (param i32) (result i32)))
          (table 1 funcref)
          (elem (i32.const 0) func $demo::a)
          (func $demo::a (type $t) (local.get 0))
          (func $__call_reducer__ (export "__call_reducer__") (param i32) (result i32) {call}))"#
    );
    wat::parse_str(wat).expect("valid text format")
}

#[test]
fn a_clean_module_exits_zero_with_a_text_report() {
    let output = run("clean", &module(false), &[]);
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("__call_reducer__"), "{text}");
    assert!(text.contains("result: clean"), "{text}");
}

#[test]
fn a_violation_exits_one_and_json_is_json() {
    let output = run("indirect", &module(true), &["--json"]);
    assert_eq!(output.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
    let kind = &json["exports"][0]["violations"][0]["kind"];
    assert_eq!(kind, "call_indirect", "{json}");
}

#[test]
fn bad_input_exits_two_with_a_message() {
    let output = run("garbage", b"garbage", &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a valid WebAssembly module"));
    let missing = Command::new(env!("CARGO_BIN_EXE_wasmod-inspect"))
        .arg(PathBuf::from("/nonexistent/module.wasm"))
        .output()
        .expect("the binary runs");
    assert_eq!(missing.status.code(), Some(2));
}
