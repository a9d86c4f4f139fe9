//! Tiny modules written in the text format, one property each: what a clean dispatch looks
//! like, what must be reported and with which path, and what must not be.

use wasmod_inspect::{inspect, Evidence, IndirectKind, InspectError, Report, Shape};

/// Parses and inspects a module written in the text format.
fn inspect_wat(wat: &str) -> Report {
    let wasm = wat::parse_str(wat).expect("valid text format");
    inspect(&wasm).expect("the module can be inspected")
}

/// The names along a violation's path.
fn path_names(report: &Report, export: &str) -> Vec<Vec<String>> {
    let export = report.export(export).expect("the export");
    export
        .violations
        .iter()
        .map(|v| v.path.iter().map(|step| step.name.clone()).collect())
        .collect()
}

/// A two-entry `__call_http_handler__` as LLVM emits it: a `br_table` on the id whose targets
/// lead to direct calls of the thunks. `$EXTRA` is replaced by functions a test adds, and each
/// thunk calls `$before_a` / `$before_b` before the author's function.
const DISPATCH: &str = r#"
(module
  (type $entry (func (param i32) (result i32)))
  (table 2 funcref)
  (elem (i32.const 0) func $demo::a $demo::b)
  (func $demo::a (type $entry)
    ;; the author's code may do what it likes: beyond the boundary
    (call_indirect (type $entry) (local.get 0) (i32.const 1)))
  (func $demo::b (type $entry) (local.get 0))
  (func $wasmod::rt::thunks::run_http_handler::<demo::a> (type $entry)
    (drop (call $before_a (local.get 0)))
    (call $demo::a (local.get 0)))
  (func $wasmod::rt::thunks::run_http_handler::<demo::b> (type $entry)
    (drop (call $before_b (local.get 0)))
    (call $demo::b (local.get 0)))
  (func $wasmod::rt::thunks::no_such_entry (type $entry) (i32.const 17))
  (func $__call_http_handler__ (export "__call_http_handler__")
    (param i32 i64 i32 i32) (result i32)
    block
      block
        block
          local.get 0
          br_table 1 2 0
        end
        local.get 3
        call $wasmod::rt::thunks::no_such_entry
        return
      end
      local.get 2
      call $wasmod::rt::thunks::run_http_handler::<demo::a>
      return
    end
    local.get 2
    call $wasmod::rt::thunks::run_http_handler::<demo::b>)
  $EXTRA
)"#;

/// [`DISPATCH`] with `extra` functions, which must define `$before_a` and `$before_b`.
fn dispatch_with(extra: &str) -> Report {
    inspect_wat(&DISPATCH.replace("$EXTRA", extra))
}

/// Helpers that do nothing indirect.
const PLAIN_HELPERS: &str = r#"
  (func $before_a (param i32) (result i32) (local.get 0))
  (func $before_b (param i32) (result i32) (local.get 0))
"#;

#[test]
fn a_br_table_of_direct_calls_is_clean() {
    let report = dispatch_with(PLAIN_HELPERS);
    assert!(report.is_clean(), "{report}");
    let export = report.export("__call_http_handler__").expect("the export");
    let dispatch = export.dispatch.as_ref().expect("a dispatch");
    let Shape::BrTable { arms, default } = &dispatch.shape else {
        panic!("not a br_table: {:?}", dispatch.shape);
    };
    let thunks: Vec<&str> = arms
        .iter()
        .map(|arm| arm.callees[0].name.as_str())
        .collect();
    assert_eq!(
        thunks,
        [
            "wasmod::rt::thunks::run_http_handler::<demo::a>",
            "wasmod::rt::thunks::run_http_handler::<demo::b>"
        ]
    );
    assert_eq!(default[0].name, "wasmod::rt::thunks::no_such_entry");
    let authors: Vec<_> = dispatch
        .entries
        .iter()
        .map(|e| (e.author.as_ref().map(|a| a.name.as_str()), e.evidence))
        .collect();
    assert_eq!(
        authors,
        [
            (Some("demo::a"), Evidence::ThunkGenericArgument),
            (Some("demo::b"), Evidence::ThunkGenericArgument)
        ]
    );
}

#[test]
fn an_indirect_call_behind_a_direct_call_is_reported_with_its_path() {
    let report = dispatch_with(
        r#"
        (func $before_a (param i32) (result i32) (local.get 0))
        (func $before_b (param i32) (result i32) (call $wasmod::rt::decode (local.get 0)))
        (func $wasmod::rt::decode (param i32) (result i32)
          (call_indirect (type $entry) (local.get 0) (i32.const 0)))
        "#,
    );
    let violations: Vec<_> = report.violations().collect();
    assert_eq!(violations.len(), 1, "{report}");
    assert_eq!(violations[0].kind, IndirectKind::CallIndirect);
    assert_eq!(violations[0].function.name, "wasmod::rt::decode");
    assert_eq!(
        path_names(&report, "__call_http_handler__"),
        [[
            "__call_http_handler__",
            "wasmod::rt::thunks::run_http_handler::<demo::b>",
            "before_b",
            "wasmod::rt::decode"
        ]]
    );
    assert!(report.to_string().contains("call_indirect"), "{report}");
}

#[test]
fn an_indirect_call_beyond_the_authors_function_is_not_reported() {
    // `demo::a` itself does a `call_indirect` (see DISPATCH): the walk stops at it.
    let report = dispatch_with(PLAIN_HELPERS);
    assert!(report.is_clean(), "{report}");
    let export = report.export("__call_http_handler__").expect("the export");
    assert_eq!(export.indirect_calls_behind_exclusions, 0);
}

#[test]
fn panic_machinery_is_excluded_and_listed_but_the_same_code_elsewhere_is_not() {
    let report = dispatch_with(
        r#"
        (func $before_a (param i32) (result i32)
          (if (local.get 0) (then (call $core::panicking::panic_fmt (local.get 0))))
          (local.get 0))
        (func $before_b (param i32) (result i32) (call $core::fmt::write (local.get 0)))
        (func $core::panicking::panic_fmt (param i32)
          (drop (call $core::fmt::write (local.get 0)))
          unreachable)
        (func $core::fmt::write (param i32) (result i32)
          (call_indirect (type $entry) (local.get 0) (i32.const 0)))
        "#,
    );
    let export = report.export("__call_http_handler__").expect("the export");
    assert_eq!(export.excluded.len(), 1, "{report}");
    assert_eq!(
        export.excluded[0].function.name,
        "core::panicking::panic_fmt"
    );
    assert_eq!(export.excluded[0].rule, "core::panicking");
    assert_eq!(export.excluded[0].reached_from.name, "before_a");
    // `core::fmt::write` reached outside a panic is reported, through `before_b`.
    assert_eq!(
        path_names(&report, "__call_http_handler__"),
        [[
            "__call_http_handler__",
            "wasmod::rt::thunks::run_http_handler::<demo::b>",
            "before_b",
            "core::fmt::write"
        ]]
    );
}

#[test]
fn a_panic_only_path_is_clean_and_counted() {
    let report = dispatch_with(
        r#"
        (func $before_a (param i32) (result i32)
          (if (local.get 0) (then (call $core::panicking::panic_fmt (local.get 0))))
          (local.get 0))
        (func $before_b (param i32) (result i32) (local.get 0))
        (func $core::panicking::panic_fmt (param i32)
          (call_indirect (type $entry) (local.get 0) (i32.const 0))
          unreachable)
        "#,
    );
    assert!(report.is_clean(), "{report}");
    let export = report.export("__call_http_handler__").expect("the export");
    assert_eq!(export.indirect_calls_behind_exclusions, 1);
}

#[test]
fn a_single_entry_is_a_compare_chain() {
    let report = inspect_wat(
        r#"
        (module
          (func $quick::recent (param i32) (result i32) (local.get 0))
          (func $wasmod::rt::thunks::run_anonymous_view (param i32) (result i32)
            (call $quick::recent (local.get 0)))
          (func $wasmod::rt::thunks::no_such_entry (param i32) (result i32) (i32.const 17))
          (func $__call_view_anon__ (export "__call_view_anon__")
            (param i32 i64 i32 i32) (result i32)
            block
              local.get 0
              br_if 0
              local.get 2
              call $wasmod::rt::thunks::run_anonymous_view
              return
            end
            local.get 3
            call $wasmod::rt::thunks::no_such_entry))
        "#,
    );
    let dispatch = report
        .export("__call_view_anon__")
        .and_then(|e| e.dispatch.as_ref())
        .expect("a dispatch");
    let Shape::CompareChain { arms, default } = &dispatch.shape else {
        panic!("not a compare chain: {:?}", dispatch.shape);
    };
    assert_eq!(arms.len(), 1);
    assert_eq!(
        arms[0].callees[0].name,
        "wasmod::rt::thunks::run_anonymous_view"
    );
    assert_eq!(default[0].name, "wasmod::rt::thunks::no_such_entry");
    // Legacy-style names: the author's function is the thunk's only module callee.
    let entry = &dispatch.entries[0];
    assert_eq!(
        entry.author.as_ref().map(|a| a.name.as_str()),
        Some("quick::recent")
    );
    assert_eq!(entry.evidence, Evidence::ModuleCallee);
}

#[test]
fn an_outlined_match_is_found_and_entry_impls_name_the_entry() {
    let report = inspect_wat(
        r#"
        (module
          (func $quick::send (param i32) (result i32) (local.get 0))
          (func $"quick::_::<impl wasmod::rt::entry::Reducer for quick::send>::invoke"
            (param i32) (result i32)
            (call $quick::send (local.get 0)))
          (func $wasmod::rt::thunks::run_reducer (param i32) (result i32)
            (call $"quick::_::<impl wasmod::rt::entry::Reducer for quick::send>::invoke"
              (local.get 0)))
          (func $wasmod::rt::thunks::no_such_entry (param i32) (result i32) (i32.const 17))
          (func $quick::__wasmod_call_reducer (param i32 i32) (result i32)
            block
              local.get 0
              i32.const 0
              i32.ne
              br_if 0
              local.get 1
              call $wasmod::rt::thunks::run_reducer
              return
            end
            local.get 1
            call $wasmod::rt::thunks::no_such_entry)
          (func $__call_reducer__ (export "__call_reducer__") (param i32 i32) (result i32)
            (call $quick::__wasmod_call_reducer (local.get 0) (local.get 1))))
        "#,
    );
    let dispatch = report
        .export("__call_reducer__")
        .and_then(|e| e.dispatch.as_ref())
        .expect("a dispatch");
    assert_eq!(dispatch.function.name, "quick::__wasmod_call_reducer");
    assert!(
        matches!(dispatch.shape, Shape::CompareChain { .. }),
        "{:?}",
        dispatch.shape
    );
    let entry = &dispatch.entries[0];
    assert_eq!(entry.entry.as_deref(), Some("quick::send"));
    assert_eq!(entry.evidence, Evidence::EntryTraitImpl);
}

#[test]
fn a_table_of_function_pointers_is_not_a_dispatch() {
    let report = inspect_wat(
        r#"
        (module
          (type $entry (func (param i32) (result i32)))
          (table 1 funcref)
          (elem (i32.const 0) func $demo::a)
          (func $demo::a (type $entry) (local.get 0))
          (func $__call_reducer__ (export "__call_reducer__") (param i32) (result i32)
            (call_indirect (type $entry) (local.get 0) (local.get 0))))
        "#,
    );
    let export = report.export("__call_reducer__").expect("the export");
    assert_eq!(
        export.dispatch.as_ref().map(|d| &d.shape),
        Some(&Shape::Unrecognised)
    );
    assert_eq!(
        path_names(&report, "__call_reducer__"),
        [["__call_reducer__"]]
    );
    assert!(report.to_json().contains("\"call_indirect\""));
}

#[test]
fn a_module_without_names_is_refused() {
    let wasm =
        wat::parse_str(r#"(module (func (export "__call_reducer__") (result i32) i32.const 0))"#)
            .expect("valid text format");
    assert!(matches!(inspect(&wasm), Err(InspectError::NoNames)));
}
