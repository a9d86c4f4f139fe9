//! The dispatch exports of the example modules checked against their descriptions, as the host
//! reads them: every category's `match` has exactly one arm per entry point the description
//! lists, arm `i` reaches the author's function of entry `i`, and no indirect call lies on any
//! path, in release and in debug.

mod support;

use support::{inspect, Build};
use wasmod_abi::{EntryKind, ModuleDef};
use wasmod_host::WasmModule;
use wasmod_inspect::Report;

/// The module crates checked, with the Rust path their entry points live under.
const MODULES: [&str; 4] = ["quickstart", "benchmarks", "bank", "signin"];

/// The names of each dispatch export's entry points, in description order.
fn categories(def: &ModuleDef) -> Vec<(&'static str, Vec<&str>)> {
    EntryKind::ALL
        .into_iter()
        .map(|kind| {
            let names = def.entry_points_of(kind).map(|entry| entry.name);
            (kind.export(), names.collect())
        })
        .collect()
}

fn check(module: &str, build: Build, wasm: &[u8], report: &Report) {
    let loaded =
        WasmModule::new(wasm).unwrap_or_else(|error| panic!("{module} {build:?} loads: {error}"));
    for (export, names) in categories(loaded.module()) {
        let context = format!("{module} {build:?} {export}");
        let found = report
            .export(export)
            .unwrap_or_else(|| panic!("{context}: missing"));
        assert!(
            found.violations.is_empty(),
            "{context}: {:?}",
            found.violations
        );
        let dispatch = found
            .dispatch
            .as_ref()
            .unwrap_or_else(|| panic!("{context}: no dispatch"));
        if names.is_empty() {
            assert!(
                dispatch.entries.is_empty(),
                "{context}: arms without entry points"
            );
            continue;
        }
        assert_eq!(
            dispatch.entries.len(),
            names.len(),
            "{context}: one arm per entry point of the description"
        );
        for (entry, name) in dispatch.entries.iter().zip(&names) {
            // An author's function the compiler removed (an empty body) cannot be named; every
            // other arm must reach the function the description lists at its position.
            if let Some(author) = &entry.author {
                let last = author.name.rsplit("::").next().unwrap_or_default();
                assert_eq!(
                    last, *name,
                    "{context} arm {}: reaches {}",
                    entry.id, author.name
                );
            }
        }
    }
}

#[test]
fn every_arm_matches_the_description_in_release_and_debug() {
    for build in [Build::Release, Build::Debug] {
        for module in MODULES {
            let wasm = wasmod_wasm_tests::built(build).library(module);
            check(module, build, &wasm, &inspect(&wasm));
        }
    }
}
