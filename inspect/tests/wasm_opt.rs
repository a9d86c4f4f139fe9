//! The dispatch property after binaryen's `wasm-opt -O3`, which CI installs (Debian package
//! `binaryen`).
//!
//! `wasm-opt` is run with `-g`, which keeps the name section the inspection reads, and with
//! `--one-caller-inline-max-function-size 0`: by default `-O3` inlines every function that has
//! one caller, whatever its size, which folds each author's function into its thunk and the
//! thunk into the export. The dispatch stays a `br_table` of direct calls, but the boundary
//! between generated code and the author's own is then gone from the binary, and the author's
//! formatting is counted as on the path. With that one flag the optimised module keeps the
//! boundary, passes the inspection, and still runs in the host.

mod support;

use std::process::Command;
use std::sync::OnceLock;
use support::{inspect, Build, QUICKSTART_REDUCERS};
use wasmod_abi::{ConnectionId, Identity};
use wasmod_host::WasmModule;

/// The quickstart, optimised by `wasm-opt -O3` with its boundary kept: once per test run,
/// shared by the tests (which run in parallel).
fn optimised_quickstart() -> &'static [u8] {
    static OPTIMISED: OnceLock<Vec<u8>> = OnceLock::new();
    OPTIMISED.get_or_init(run_wasm_opt)
}

fn run_wasm_opt() -> Vec<u8> {
    let input = wasmod_wasm_tests::built(Build::Release).library_path("quickstart");
    let output = std::env::temp_dir().join(format!("wasmod-wasm-opt-{}.wasm", std::process::id()));
    let run = Command::new("wasm-opt")
        .args(["-O3", "-g", "--one-caller-inline-max-function-size", "0"])
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .output()
        .expect("wasm-opt runs (CI installs it: apt-get install binaryen)");
    assert!(
        run.status.success(),
        "wasm-opt failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let bytes = std::fs::read(&output).expect("wasm-opt wrote its output");
    let _ = std::fs::remove_file(&output);
    bytes
}

#[test]
fn the_optimised_quickstart_keeps_the_dispatch_property() {
    let report = inspect(optimised_quickstart());
    assert!(report.is_clean(), "{report}");
    let reducers = report
        .export("__call_reducer__")
        .and_then(|export| export.dispatch.as_ref());
    let authors: Vec<Option<&str>> = reducers
        .expect("the reducer dispatch")
        .entries
        .iter()
        .map(|entry| entry.author.as_ref().map(|author| author.name.as_str()))
        .collect();
    assert_eq!(
        authors,
        QUICKSTART_REDUCERS
            .map(|name| Some(format!("quickstart::chat::{name}")))
            .iter()
            .map(Option::as_deref)
            .collect::<Vec<_>>()
    );
}

#[test]
fn the_optimised_quickstart_still_runs_in_the_host() {
    let mut module = WasmModule::new(optimised_quickstart()).expect("the optimised module loads");
    let alice = Identity::from_bytes([1; 32]);
    let connected = module
        .client_connected(alice, ConnectionId::ZERO)
        .expect("a connect reducer");
    assert!(connected.is_success(), "{connected}");
    let args = wasmod_abi::encoding::to_vec(&("hello".to_string(),));
    let sent = module.call_reducer("send", alice, ConnectionId::ZERO, &args);
    assert!(sent.is_success(), "{sent}");
    let empty = wasmod_abi::encoding::to_vec(&("  ".to_string(),));
    match module.call_reducer("send", alice, ConnectionId::ZERO, &empty) {
        wasmod_host::Outcome::Failed { message, .. } => {
            assert_eq!(message, "a message cannot be empty")
        }
        other => panic!("{other}"),
    }
}
