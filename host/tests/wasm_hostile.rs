//! Hostile modules, built to wasm32 and run by the wasmtime transport: each misbehaviour ends
//! in the right outcome, leaves the data exactly as it was, and the next well-behaved call of
//! the same module succeeds. Modules that break the ABI are refused at load, with errors that
//! name what is wrong.

mod wasm_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasm_support::{binaries, compiled, rows, within};
use wasmod_abi::description::FORMAT_VERSION;
use wasmod_abi::encoding::{from_slice, to_vec};
use wasmod_abi::http::{Request, Response};
use wasmod_abi::{ConnectionId, DescriptionError, Errno, Identity};
use wasmod_host::{
    Caller, Claims, HttpClient, InstanceEnv, LoadError, LogLevel, Outcome, WasmConfig, WasmEngine,
    WasmError, WasmModule,
};

const ALICE: Identity = Identity::from_bytes([0xa1; 32]);
/// The hostile module's one table.
const ITEMS: u32 = 0;
/// How long a test waits for a call the host should have stopped long before.
const TEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Tight budgets, so that the tests are quick.
fn config() -> WasmConfig {
    WasmConfig::default()
        .with_deadline(Duration::from_millis(200))
        .with_max_memory_bytes(32 << 20)
}

/// An HTTP client that answers every request, and counts them.
#[derive(Default)]
struct CountingHttp {
    sent: AtomicUsize,
}

impl HttpClient for CountingHttp {
    fn send(&self, _request: Request, _deadline: Option<Instant>) -> Result<Response, String> {
        self.sent.fetch_add(1, Ordering::SeqCst);
        Ok(Response::new(200).with_body("hello"))
    }
}

/// The hostile module with items 1, 2 and 3, and its HTTP client.
fn hostile() -> (WasmModule, Arc<CountingHttp>) {
    let http = Arc::new(CountingHttp::default());
    let env = InstanceEnv::unloaded().with_http_client(http.clone());
    let mut module = WasmModule::load(compiled("hostile"), config(), env).expect("it loads");
    for (id, name) in [(1, "one"), (2, "two"), (3, "three")] {
        let outcome = add(&mut module, id, name);
        assert!(outcome.is_success(), "{outcome}");
    }
    (module, http)
}

/// Calls the well-behaved reducer `add`.
fn add(module: &mut WasmModule, id: u32, name: &str) -> Outcome {
    let args = to_vec(&(id, name.to_owned()));
    module.call_reducer("add", ALICE, ConnectionId::ZERO, &args)
}

/// Calls hostile reducer `name` and checks that it aborts with a reason that contains
/// `expected`, that its write is rolled back, and that the next call succeeds. Returns the
/// reason.
fn assert_aborts(module: &mut WasmModule, name: &str, expected: &str) -> String {
    assert_aborts_with(module, name, &[], expected)
}

/// [`assert_aborts`] for a reducer called with the encoded arguments `args`.
fn assert_aborts_with(module: &mut WasmModule, name: &str, args: &[u8], expected: &str) -> String {
    let before = rows(module, ITEMS);
    let outcome = module.call_reducer(name, ALICE, ConnectionId::ZERO, args);
    let Outcome::Aborted { reason } = outcome else {
        panic!("`{name}` should abort, but {outcome}");
    };
    assert!(reason.contains(expected), "`{name}`: {reason}");
    assert_eq!(
        rows(module, ITEMS),
        before,
        "`{name}`: its write is rolled back"
    );
    let next = add(module, 100, "after");
    assert!(next.is_success(), "the call after `{name}`: {next}");
    reason
}

#[test]
fn an_infinite_loop_is_stopped_by_the_deadline() {
    within(TEST_TIMEOUT, "the looping reducer", || {
        let (mut module, _) = hostile();
        let start = Instant::now();
        assert_aborts(&mut module, "spin", "deadline exceeded");
        let elapsed = start.elapsed();
        assert!(
            elapsed >= config().deadline,
            "stopped after {elapsed:?}, before the deadline"
        );
    });
}

#[test]
fn the_deadline_is_per_module() {
    within(TEST_TIMEOUT, "the looping reducer", || {
        let config = config().with_deadline(Duration::from_millis(50));
        let mut module =
            WasmModule::load(compiled("hostile"), config, InstanceEnv::unloaded()).unwrap();
        let start = Instant::now();
        let reason = assert_aborts(&mut module, "spin", "deadline exceeded");
        assert!(reason.contains("50ms"), "{reason}");
        assert!(start.elapsed() < Duration::from_secs(5));
    });
}

#[test]
fn unbounded_memory_growth_is_stopped_by_the_cap() {
    within(TEST_TIMEOUT, "the hogging reducer", || {
        let (mut module, _) = hostile();
        let reason = assert_aborts(&mut module, "hog", "out of memory");
        assert!(reason.contains(&(32 << 20).to_string()), "{reason}");
    });
}

#[test]
fn unbounded_recursion_is_a_stack_overflow() {
    within(TEST_TIMEOUT, "the recursing reducer", || {
        let (mut module, _) = hostile();
        assert_aborts(&mut module, "recurse", "stack overflow");
    });
}

#[test]
fn a_panic_aborts_with_its_message_file_and_line() {
    let (mut module, _) = hostile();
    let reason = assert_aborts(&mut module, "panics", "panicked");
    assert!(
        reason.contains("the hostile module panicked on purpose"),
        "{reason}"
    );
    assert!(reason.contains("src/lib.rs:"), "{reason}");
}

#[test]
fn the_panic_line_is_in_the_trapped_calls_logs() {
    let (mut module, _) = hostile();
    let outcome = module.call_reducer("panics", ALICE, ConnectionId::ZERO, &[]);
    assert!(matches!(outcome, Outcome::Aborted { .. }), "{outcome}");
    let logs = module.logs();
    let panic = logs
        .iter()
        .find(|record| record.level == LogLevel::Panic)
        .expect("the panic was logged");
    assert_eq!(panic.message, "the hostile module panicked on purpose");
    assert!(panic.file.ends_with("src/lib.rs"), "{}", panic.file);
    assert!(panic.line > 0);
}

#[test]
fn integer_overflow_in_a_release_build_aborts_instead_of_committing_a_wrapped_value() {
    let (mut module, _) = hostile();
    let reason = assert_aborts_with(
        &mut module,
        "add_interest",
        &to_vec(&(u64::MAX - 10, 1u64)),
        "attempt to add with overflow",
    );
    assert!(reason.contains("src/lib.rs:"), "{reason}");
    let modest = module.call_reducer(
        "add_interest",
        ALICE,
        ConnectionId::ZERO,
        &to_vec(&(200u64, 5u64)),
    );
    assert!(modest.is_success(), "{modest}");
    assert!(
        view_items(&mut module).contains(&(667, "210".to_owned())),
        "the interest without overflow is committed"
    );
}

#[test]
fn an_abort_without_a_panic_is_reported() {
    let (mut module, _) = hostile();
    assert_aborts(&mut module, "abort", "unreachable");
}

#[test]
fn state_a_trap_leaves_behind_does_not_reach_the_next_call() {
    let (mut module, _) = hostile();
    assert_aborts(&mut module, "trap_while_borrowed", "unreachable");
    let next = add(&mut module, 101, "again");
    assert!(next.is_success(), "{next}");
}

#[test]
fn a_deadline_of_duration_max_is_no_deadline() {
    let config = config().with_deadline(Duration::MAX);
    let mut module =
        WasmModule::load(compiled("hostile"), config, InstanceEnv::unloaded()).unwrap();
    let outcome = add(&mut module, 1, "one");
    assert!(outcome.is_success(), "{outcome}");
}

#[test]
fn traps_in_a_row_each_get_a_fresh_instance() {
    within(TEST_TIMEOUT, "the hostile reducers", || {
        let (mut module, _) = hostile();
        for (name, expected) in [
            ("panics", "panicked"),
            ("spin", "deadline exceeded"),
            ("hog", "out of memory"),
            ("recurse", "stack overflow"),
            ("abort", "unreachable"),
            ("trap_while_borrowed", "unreachable"),
        ] {
            let outcome = module.call_reducer(name, ALICE, ConnectionId::ZERO, &[]);
            assert!(outcome.to_string().contains(expected), "{name}: {outcome}");
        }
        let items: Vec<(u32, String)> = view_items(&mut module);
        assert_eq!(items.len(), 3, "{items:?}");
    });
}

/// The `items` view, decoded.
fn view_items(module: &mut WasmModule) -> Vec<(u32, String)> {
    match module.call_view("items", ALICE, &[]) {
        Outcome::Returned { bytes, .. } => from_slice(&bytes).expect("the rows decode"),
        other => panic!("the view failed: {other}"),
    }
}

/// Every import that takes a pointer, the pointer arguments, and what the probe answers when
/// the argument is bad (see `host/tests/modules/hostile/src/probe.rs`): `OUT_OF_BOUNDS` (7)
/// for the bad call; the calls around it are the probe's own.
const PROBES: &[(&str, &[&str], &[u32])] = {
    const TX: &[u32] = &[0, 7, 0];
    const SOURCE: &[u32] = &[0, 7];
    &[
        ("table_row_count", &["out"], TX),
        ("table_scan", &["out"], TX),
        ("index_scan", &["scan", "out"], TX),
        ("row_iter_advance", &["buf", "buf_len"], TX),
        ("insert", &["row"], TX),
        ("update_by_unique", &["row"], TX),
        ("delete_by_index_scan", &["scan", "out"], TX),
        ("delete_rows", &["rows", "out"], TX),
        ("clear_table", &["out"], TX),
        ("procedure_start_tx", &["out"], &[7, 0, 0]),
        ("procedure_start_read_tx", &["out"], &[7, 0, 0]),
        ("procedure_http_request", &["request", "out"], &[7]),
        ("bytes_source_remaining", &["out"], SOURCE),
        ("bytes_source_read", &["buf", "buf_len"], SOURCE),
        ("bytes_sink_write", &["buf", "buf_len"], &[7]),
        ("caller_claims", &["out"], &[7, 0, 1]),
        ("console_log", &["target", "file", "message"], &[]),
    ]
};

/// The bad values of an argument: 4 for an out-pointer, 5 for a buffer.
fn cases(arg: &str) -> std::ops::Range<u32> {
    match arg {
        "out" | "buf_len" => 0..4,
        _ => 0..5,
    }
}

#[test]
fn every_import_refuses_every_bad_pointer() {
    let (mut module, http) = hostile();
    let before = rows(&module, ITEMS);
    // With claims, so that `caller_claims` has a source to make (or, given a bad pointer, not).
    let claims = Claims::from_verified_json(r#"{"iss":"https://id.example.com","sub":"a"}"#.into());
    let alice = Caller::new(ALICE, ConnectionId::ZERO).with_claims(Some(claims));
    let mut checked = 0;
    for (import, args, expected) in PROBES {
        for arg in *args {
            for case in cases(arg) {
                let what = format!("{import}({arg} bad, case {case})");
                let sent = http.sent.load(Ordering::SeqCst);
                let params = to_vec(&(import.to_string(), arg.to_string(), case));
                let outcome = module.call_procedure_as("probe", &alice, &params);
                let Outcome::Returned { bytes, .. } = outcome else {
                    panic!("{what}: {outcome}");
                };
                let codes: Vec<u32> = from_slice(&bytes).expect("the codes decode");
                assert_eq!(codes, *expected, "{what}");
                assert_eq!(rows(&module, ITEMS), before, "{what} changed the data");
                if *import == "procedure_http_request" {
                    let now = http.sent.load(Ordering::SeqCst);
                    assert_eq!(now, sent, "{what} sent a request");
                }
                if *import == "console_log" {
                    assert!(
                        module
                            .logs()
                            .iter()
                            .all(|r| !r.message.contains("bad pointer")),
                        "{what} logged a line"
                    );
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 116);
    let next = add(&mut module, 100, "after");
    assert!(next.is_success(), "{next}");
}

#[test]
fn garbage_codes_from_exports_are_failures_and_roll_back() {
    let engine = WasmEngine::shared().unwrap();
    let binary = engine
        .compile(&binaries().example("garbage_codes"))
        .expect("it compiles");
    let mut module = WasmModule::load(&binary, config(), InstanceEnv::unloaded()).unwrap();
    let mut call = |name: &str| module.call_reducer(name, ALICE, ConnectionId::ZERO, &[]);

    let outcome = call("unknown_code");
    assert!(
        matches!(&outcome, Outcome::Failed { code: 12345, message } if message.contains("not an error code")),
        "{outcome}"
    );
    let outcome = call("negative");
    assert!(
        matches!(&outcome, Outcome::Failed { code: -7, .. }),
        "{outcome}"
    );
    let outcome = call("no_such_entry");
    assert_eq!(outcome.errno(), Some(Errno::NO_SUCH_ENTRY), "{outcome}");
    let outcome = call("too_wide");
    assert!(
        matches!(&outcome, Outcome::Aborted { reason } if reason.contains("65536")),
        "{outcome}"
    );
    assert!(
        rows(&module, ITEMS).is_empty(),
        "every write was rolled back"
    );
    let outcome = module.call_reducer("well", ALICE, ConnectionId::ZERO, &[]);
    assert!(outcome.is_success(), "{outcome}");
    assert_eq!(rows(&module, ITEMS).len(), 1);
}

/// Loads raw example `name`; it must fail.
fn load_error(name: &str) -> WasmError {
    let engine = WasmEngine::shared().unwrap();
    let loaded = engine
        .compile(&binaries().example(name))
        .and_then(|binary| WasmModule::load(&binary, config(), InstanceEnv::unloaded()));
    match loaded {
        Ok(_) => panic!("{name} loaded"),
        Err(error) => error,
    }
}

#[test]
fn describing_without_loading_refuses_the_same_descriptions() {
    let engine = WasmEngine::shared().unwrap();
    for name in [
        "describe_garbage",
        "describe_newer",
        "describe_bad_index",
        "describe_bad_ref",
        "describe_zero_sized",
    ] {
        let binary = engine.compile(&binaries().example(name)).unwrap();
        let described = binary.describe(config());
        let loaded = load_error(name);
        match (&described, &loaded) {
            (
                Err(WasmError::Load(LoadError::Description(_))),
                WasmError::Load(LoadError::Description(_)),
            )
            | (Err(WasmError::Load(LoadError::Schema(_))), WasmError::Load(LoadError::Schema(_)))
            | (
                Err(WasmError::Load(LoadError::Elements(_))),
                WasmError::Load(LoadError::Elements(_)),
            ) => {}
            _ => panic!("{name}: described {described:?}, loaded {loaded}"),
        }
    }
}

#[test]
fn a_description_that_does_not_decode_is_refused() {
    let error = load_error("describe_garbage");
    assert!(
        matches!(
            error,
            WasmError::Load(LoadError::Description(DescriptionError::Decode(_)))
        ),
        "{error}"
    );
    assert!(error.to_string().contains("does not decode"), "{error}");
}

#[test]
fn a_description_of_a_newer_format_version_is_refused_with_the_versions() {
    let error = load_error("describe_newer");
    let newer = FORMAT_VERSION + 1;
    assert!(
        matches!(
            error,
            WasmError::Load(LoadError::Description(DescriptionError::Version(version))) if version == newer
        ),
        "{error}"
    );
    let message = error.to_string();
    assert!(
        message.contains(&format!("the module's description is format version {newer}; this host reads version {FORMAT_VERSION}: upgrade the host")),
        "{message}"
    );
}

#[test]
fn a_description_with_an_index_on_a_missing_column_is_refused() {
    let error = load_error("describe_bad_index");
    assert!(
        matches!(error, WasmError::Load(LoadError::Schema(_))),
        "{error}"
    );
    let message = error.to_string();
    assert!(message.contains("item"), "{message}");
    assert!(
        message.contains("item_missing") || message.contains('7'),
        "{message}"
    );
}

#[test]
fn a_description_with_an_unresolved_type_is_refused() {
    let error = load_error("describe_bad_ref");
    assert!(
        matches!(error, WasmError::Load(LoadError::Schema(_))),
        "{error}"
    );
    assert!(error.to_string().contains("42"), "{error}");
}

#[test]
fn a_description_whose_zero_sized_arrays_nest_past_the_bound_is_refused() {
    let error = within(TEST_TIMEOUT, "loading describe_zero_sized", || {
        load_error("describe_zero_sized")
    });
    assert!(
        matches!(error, WasmError::Load(LoadError::Elements(_))),
        "{error}"
    );
    let message = error.to_string();
    assert!(message.contains("type `Hostile`"), "{message}");
    assert!(
        message.contains(&format!("{} elements", 65_536u64 * 65_537)),
        "{message}"
    );
}

#[test]
fn unknown_and_mistyped_imports_are_refused_by_name() {
    let error = load_error("bad_imports");
    let WasmError::Abi(problems) = &error else {
        panic!("{error}");
    };
    assert_eq!(problems.len(), 3, "{error}");
    let message = error.to_string();
    for name in [
        "wasmod_v1::no_such_function",
        "env::host_time",
        "wasmod_v1::insert",
    ] {
        assert!(message.contains(name), "{message}");
    }
    assert!(message.contains("(i32, i32, i32) -> i32"), "{message}");
}

#[test]
fn missing_and_mistyped_exports_are_refused_by_name() {
    let error = load_error("missing_exports");
    let WasmError::Abi(problems) = &error else {
        panic!("{error}");
    };
    assert_eq!(problems.len(), 3, "{error}");
    let message = error.to_string();
    for expected in [
        "missing export `__call_view__`",
        "missing export `__call_http_handler__`",
        "export `__call_reducer__` is a function (i32) -> i32",
    ] {
        assert!(message.contains(expected), "{message}");
    }
}

#[test]
fn bytes_that_are_not_wasm_are_refused() {
    let error = WasmModule::new(b"\0asm but not really").unwrap_err();
    assert!(matches!(error, WasmError::Compile(_)), "{error}");
}

#[test]
fn a_memory_cap_below_the_initial_memory_refuses_instantiation() {
    let config = config().with_max_memory_bytes(64 << 10);
    let error = WasmModule::load(compiled("hostile"), config, InstanceEnv::unloaded()).unwrap_err();
    assert!(matches!(error, WasmError::Instantiate(_)), "{error}");
    assert!(error.to_string().contains("over the cap"), "{error}");
}
