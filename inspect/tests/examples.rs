//! The example modules, built for wasm32 in release (legacy and v0 symbol mangling) and debug,
//! inspected: the quickstart keeps the dispatch contract, the control breaks it and is caught.

mod support;

use support::{inspect, modules, Build, Modules, QUICKSTART_REDUCERS};
use wasmod_inspect::{Evidence, IndirectKind, Shape, DISPATCH_EXPORTS};

/// The quickstart's entry points, per dispatch export, in id order, with the thunk each arm
/// must call.
const QUICKSTART: [(&str, &str, &[&str]); 5] = [
    (
        "__call_reducer__",
        "wasmod::rt::thunks::run_reducer",
        &QUICKSTART_REDUCERS,
    ),
    (
        "__call_procedure__",
        "wasmod::rt::thunks::run_procedure",
        &["fetch_motd"],
    ),
    (
        "__call_view__",
        "wasmod::rt::thunks::run_view",
        &["my_messages"],
    ),
    (
        "__call_view_anon__",
        "wasmod::rt::thunks::run_anonymous_view",
        &["recent"],
    ),
    (
        "__call_http_handler__",
        "wasmod::rt::thunks::run_http_handler",
        &["stats", "post_message", "message_text"],
    ),
];

#[test]
fn quickstart_dispatches_through_a_table_of_direct_calls() {
    for build in Build::ALL {
        let report = inspect(&modules(build).quickstart);
        for (export, thunk, entries) in QUICKSTART {
            let context = format!("{build:?} {export}");
            let dispatch = report.export(export).and_then(|e| e.dispatch.as_ref());
            let dispatch = dispatch.unwrap_or_else(|| panic!("{context}: missing"));
            assert!(
                matches!(
                    dispatch.shape,
                    Shape::BrTable { .. } | Shape::CompareChain { .. }
                ),
                "{context}: {:?}",
                dispatch.shape
            );
            assert_eq!(
                dispatch.shape.arms().len(),
                entries.len(),
                "{context}: arms"
            );
            assert_eq!(
                dispatch.entries.len(),
                entries.len(),
                "{context}: entry points"
            );
            for ((id, entry), name) in (0u32..).zip(&dispatch.entries).zip(entries) {
                let path = format!("quickstart::chat::{name}");
                assert_eq!(entry.id, id, "{context}");
                assert!(
                    entry.thunk.name.starts_with(thunk),
                    "{context} arm {id}: {}",
                    entry.thunk.name
                );
                assert_eq!(
                    entry.entry.as_deref(),
                    Some(path.as_str()),
                    "{context} arm {id}"
                );
                let author = entry.author.as_ref().map(|author| author.name.as_str());
                assert_eq!(author, Some(path.as_str()), "{context} arm {id}");
                if build == Build::ReleaseV0 {
                    assert_eq!(
                        entry.evidence,
                        Evidence::ThunkGenericArgument,
                        "{context} arm {id}"
                    );
                    assert_eq!(
                        entry.thunk.name,
                        format!("{thunk}::<{path}>"),
                        "{context} arm {id}"
                    );
                }
            }
        }
    }
}

#[test]
fn quickstart_has_no_indirect_call_on_its_dispatch_paths() {
    for build in Build::ALL {
        let report = inspect(&modules(build).quickstart);
        let violations: Vec<String> = report
            .violations()
            .map(|v| {
                let path: Vec<&str> = v.path.iter().map(|step| step.name.as_str()).collect();
                format!("{} in {}: {}", v.kind, v.function.name, path.join(" -> "))
            })
            .collect();
        assert!(
            violations.is_empty(),
            "{build:?}:\n{}",
            violations.join("\n")
        );
        assert_eq!(report.exports.len(), DISPATCH_EXPORTS.len(), "{build:?}");
    }
}

#[test]
fn the_table_dispatch_control_is_flagged() {
    for build in Build::ALL {
        let report = inspect(&modules(build).control);
        assert!(!report.is_clean(), "{build:?}");
        for export in DISPATCH_EXPORTS {
            let found = report
                .export(export)
                .unwrap_or_else(|| panic!("{build:?} {export}: missing"));
            let violation = found.violations.first();
            let violation = violation.unwrap_or_else(|| panic!("{build:?} {export}: not flagged"));
            assert_eq!(
                violation.kind,
                IndirectKind::CallIndirect,
                "{build:?} {export}"
            );
            assert!(
                violation
                    .function
                    .name
                    .starts_with("control_table_dispatch::dispatch"),
                "{build:?} {export}: flagged {}",
                violation.function.name
            );
            let path: Vec<u32> = violation.path.iter().map(|step| step.index).collect();
            assert_eq!(
                path,
                [found.function.index, violation.function.index],
                "{build:?} {export}"
            );
        }
    }
}

/// A size budget: an example's release binary, and the most bytes it may take.
struct Budget {
    /// The example's crate.
    name: &'static str,
    /// Its binary among the built modules.
    module: fn(&Modules) -> &[u8],
    /// The budget in bytes.
    bytes: usize,
}

/// Release sizes in bytes, measured when the budgets were set, plus about 25%: a binary that
/// grows past its budget fails here, so that bloat is a decision, not an accident. When growth
/// is wanted, re-measure and set the budget again at the new size plus 25%.
const SIZE_BUDGETS: [Budget; 3] = [
    // 117_341 bytes measured (name section included) + 25%.
    Budget {
        name: "quickstart",
        module: |modules| &modules.quickstart,
        bytes: 146_700,
    },
    // 161_416 bytes measured + 25%.
    Budget {
        name: "benchmarks",
        module: |modules| &modules.benchmarks,
        bytes: 201_800,
    },
    // 1_651 bytes measured + 25%.
    Budget {
        name: "control-table-dispatch",
        module: |modules| &modules.control,
        bytes: 2_065,
    },
];

#[test]
fn release_binaries_stay_within_their_size_budgets() {
    for Budget {
        name,
        module,
        bytes: budget,
    } in SIZE_BUDGETS
    {
        let wasm = module(modules(Build::Release));
        let report = inspect(wasm);
        assert_eq!(report.total_size, wasm.len(), "{name}");
        let contents: usize = report.sections.iter().map(|section| section.size).sum();
        assert!(
            contents < wasm.len(),
            "{name}: section contents exceed the file"
        );
        assert!(
            report.section_size("custom:name").is_some(),
            "{name}: no name section"
        );
        assert!(
            wasm.len() <= budget,
            "{name}: {} bytes, over its budget of {budget} (code {:?}, data {:?})",
            wasm.len(),
            report.section_size("code"),
            report.section_size("data"),
        );
    }
}
