//! The call orchestration over the native transport, with a hand-written module.

use std::panic::catch_unwind;
use wasmod_abi::description::{self, FORMAT_VERSION};
use wasmod_abi::encoding::{from_slice, to_vec};
use wasmod_abi::http::{Method, Request, Response};
use wasmod_abi::{
    AlgebraicType, ConnectionId, DescriptionError, Errno, HttpHandlerDef, Identity, IndexDef,
    Lifecycle, ModuleDef, ModuleExports, ParamDef, ProcedureDef, ReducerDef, TableDef, Typespace,
    ViewDef,
};
use wasmod_host::datastore::durability;
use wasmod_host::{with_env, InstanceEnv, LoadError, LogLevel, NativeModule, Outcome, Persistence};

/// A module written against the raw exports: table `note (id: u64 auto_inc pk, text: String)`.
struct Fake;

const NOTE: u32 = 0;

fn description() -> ModuleDef {
    let columns = [("id", AlgebraicType::U64), ("text", AlgebraicType::String)];
    let mut typespace = Typespace::default();
    let note = TableDef::of_columns(&mut typespace, "Note", "note", &columns);
    let reducer = |name: &str, lifecycle| ReducerDef {
        name: name.into(),
        params: if name == "add" {
            vec![ParamDef {
                name: "text".into(),
                ty: AlgebraicType::String,
            }]
        } else {
            vec![]
        },
        lifecycle,
    };
    let view = |name: &str| ViewDef {
        name: name.into(),
        params: vec![],
        returns: AlgebraicType::U64,
    };
    let procedure = |name: &str| ProcedureDef {
        name: name.into(),
        params: vec![],
        returns: AlgebraicType::U64,
    };
    let handler = |name: &str, path: &str| HttpHandlerDef {
        name: name.into(),
        method: Method::Get,
        path: path.into(),
    };
    ModuleDef {
        typespace,
        tables: vec![TableDef {
            primary_key: Some(0),
            indexes: vec![IndexDef {
                name: "note_id".into(),
                columns: vec![0],
                unique: true,
            }],
            auto_inc: vec![0],
            ..note
        }],
        reducers: vec![
            reducer("add", None),
            reducer("fail", None),
            reducer("explode", None),
            reducer("init", Some(Lifecycle::Init)),
            reducer("odd", None),
            reducer("connected", Some(Lifecycle::ClientConnected)),
            reducer("log", None),
            reducer("nest", None),
        ],
        procedures: vec![
            procedure("commit_one"),
            procedure("leave_open"),
            procedure("fetch"),
        ],
        views: vec![view("probe_write")],
        anonymous_views: vec![view("count")],
        http_handlers: vec![handler("hello", "/hello"), handler("garbage", "/garbage")],
    }
}

fn read_all(source: u32) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let mut buf = [0; 7];
        let (count, done) = with_env(|env| env.bytes_source_read(source, &mut buf)).unwrap();
        out.extend_from_slice(&buf[..count]);
        if done {
            return out;
        }
    }
}

fn write(sink: u32, bytes: &[u8]) {
    with_env(|env| env.bytes_sink_write(sink, bytes)).unwrap();
}

fn insert_note(text: &str) -> Result<(), Errno> {
    with_env(|env| env.insert(NOTE, &mut to_vec(&(0u64, text.to_owned()))))
}

fn code(errno: Errno) -> i16 {
    errno.code() as i16
}

impl ModuleExports for Fake {
    fn describe_module(sink: u32) -> i16 {
        write(sink, &description::encode(&description()));
        0
    }

    fn call_reducer(id: u32, sender: [u64; 4], _: [u64; 2], _: i64, args: u32, error: u32) -> i16 {
        match id {
            0 => match from_slice::<String>(&read_all(args)) {
                Ok(text) => {
                    insert_note(&text).unwrap();
                    0
                }
                Err(decode) => {
                    write(
                        error,
                        format!("bad arguments for `add`: {decode}").as_bytes(),
                    );
                    code(Errno::BAD_ARGUMENTS)
                }
            },
            1 => {
                insert_note("doomed").unwrap();
                write(error, b"nope");
                code(Errno::ENTRY_FAILED)
            }
            2 => {
                insert_note("doomed").unwrap();
                panic!("boom")
            }
            3 => {
                insert_note("init").unwrap();
                0
            }
            4 => code(Errno::NO_SUCH_ROW),
            5 => {
                log(&format!("hello {}", sender[0]));
                0
            }
            6 => {
                log("a line");
                0
            }
            7 => match NativeModule::<Fake>::new() {
                Err(LoadError::Describe(message)) if message.contains("do not nest") => 0,
                _ => code(Errno::ENTRY_FAILED),
            },
            _ => code(Errno::NO_SUCH_ENTRY),
        }
    }

    fn call_procedure(id: u32, _: [u64; 4], _: [u64; 2], _: i64, _: u32, result: u32) -> i16 {
        match id {
            0 => {
                with_env(|env| env.procedure_start_tx()).unwrap();
                insert_note("procedure").unwrap();
                with_env(|env| env.procedure_commit_tx()).unwrap();
                let count = with_env(|env| {
                    env.procedure_start_tx()?;
                    let count = env.table_row_count(NOTE);
                    env.procedure_abort_tx()?;
                    count
                });
                write(result, &to_vec(&count.unwrap()));
                0
            }
            1 => {
                with_env(|env| env.procedure_start_tx()).unwrap();
                insert_note("left open").unwrap();
                write(result, &to_vec(&0u64));
                0
            }
            2 => {
                let request = to_vec(&Request::new(Method::Get, "https://example.invalid/"));
                let errno = with_env(|env| env.procedure_http_request(&request)).unwrap_err();
                write(result, &to_vec(&u64::from(errno.code())));
                0
            }
            _ => code(Errno::NO_SUCH_ENTRY),
        }
    }

    fn call_view(id: u32, _: [u64; 4], _: [u64; 2], _: i64, _: u32, result: u32) -> i16 {
        if id != 0 {
            return code(Errno::NO_SUCH_ENTRY);
        }
        let errno = insert_note("from a view").unwrap_err();
        write(result, &to_vec(&u64::from(errno.code())));
        0
    }

    fn call_view_anon(id: u32, _: i64, _: u32, result: u32) -> i16 {
        if id != 0 {
            return code(Errno::NO_SUCH_ENTRY);
        }
        let count = with_env(|env| env.table_row_count(NOTE)).unwrap();
        write(result, &to_vec(&count));
        0
    }

    fn call_http_handler(id: u32, _: i64, request: u32, response: u32) -> i16 {
        let request: Request = from_slice(&read_all(request)).unwrap();
        match id {
            0 => write(
                response,
                &to_vec(&Response::text(format!("hi from {}", request.uri))),
            ),
            _ => write(response, &[1, 2]),
        }
        0
    }
}

fn log(message: &str) {
    with_env(|env| env.console_log(LogLevel::Info, b"fake", b"fake.rs", 42, message.as_bytes()));
}

fn module() -> NativeModule<Fake> {
    NativeModule::new().expect("the fake module loads")
}

fn notes(module: &NativeModule<Fake>) -> Vec<(u64, String)> {
    module.read(|tables| {
        tables
            .scan(NOTE)
            .unwrap()
            .iter()
            .map(|row| from_slice(row).unwrap())
            .collect()
    })
}

fn call(module: &mut NativeModule<Fake>, name: &str, args: &[u8]) -> Outcome {
    module.call_reducer(
        name,
        Identity::from_bytes([3; 32]),
        ConnectionId::from_bytes([1; 16]),
        args,
    )
}

fn failed(outcome: Outcome) -> (i16, String) {
    match outcome {
        Outcome::Failed { code, message } => (code, message),
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn returned(outcome: Outcome) -> Vec<u8> {
    match outcome {
        Outcome::Returned { bytes, .. } => bytes,
        other => panic!("expected a result, got {other:?}"),
    }
}

#[test]
fn loading_describes_creates_tables_and_runs_init() {
    let module = module();
    assert_eq!(module.module().reducers.len(), 8);
    assert_eq!(module.datastore().table_id("note"), Some(NOTE));
    assert_eq!(notes(&module), [(1, "init".to_owned())]);
}

#[test]
fn a_reducer_commits_and_reports_its_changes() {
    let mut module = module();
    let outcome = call(&mut module, "add", &to_vec(&"hello".to_owned()));
    let Outcome::Committed {
        commit: Some(commit),
        ..
    } = outcome
    else {
        panic!("{outcome:?}")
    };
    let changes = commit.changes.table(NOTE).unwrap();
    assert_eq!(
        changes.inserted[0].to_vec(),
        to_vec(&(2u64, "hello".to_owned()))
    );
    assert!(changes.deleted.is_empty());
    assert_eq!(notes(&module).len(), 2);
}

#[test]
fn failures_roll_back_and_carry_the_module_message() {
    let mut module = module();
    let (code, message) = failed(call(&mut module, "add", &[1, 2]));
    assert_eq!(code, Errno::BAD_ARGUMENTS.code() as i16);
    assert!(message.starts_with("bad arguments for `add`"), "{message}");

    let outcome = call(&mut module, "fail", &[]);
    assert_eq!(outcome.errno(), Some(Errno::ENTRY_FAILED));
    assert_eq!(failed(outcome).1, "nope");

    let (code, message) = failed(call(&mut module, "odd", &[]));
    assert_eq!(code, 11);
    assert!(
        message.contains("reducer `odd`") && message.contains("NO_SUCH_ROW"),
        "{message}"
    );
    assert_eq!(notes(&module).len(), 1, "nothing committed");
}

#[test]
fn a_panic_aborts_rolls_back_and_the_host_keeps_serving() {
    let mut module = module();
    let outcome = call(&mut module, "explode", &[]);
    assert_eq!(
        outcome,
        Outcome::Aborted {
            reason: "boom".into()
        }
    );
    assert_eq!(notes(&module).len(), 1);
    assert!(call(&mut module, "add", &to_vec(&"after".to_owned())).is_success());
    assert_eq!(notes(&module).len(), 2);
    let outside = catch_unwind(|| with_env(|_| ())).unwrap_err();
    let message = outside.downcast_ref::<&str>().copied().unwrap_or_default();
    assert!(
        message.contains("no wasmod host is running on this thread"),
        "{message}"
    );
}

#[test]
fn names_are_checked() {
    let mut module = module();
    let (code, message) = failed(call(&mut module, "missing", &[]));
    assert_eq!(code, Errno::NO_SUCH_ENTRY.code() as i16);
    assert!(message.contains("no reducer named `missing`"), "{message}");
    let (_, message) = failed(call(&mut module, "count", &[]));
    assert_eq!(
        message,
        "`count` is not a reducer: it is one of the module's anonymous views"
    );
    let (code, message) = failed(call(&mut module, "init", &[]));
    assert_eq!(code, Errno::NOT_ALLOWED.code() as i16);
    assert!(
        message.contains("lifecycle") && message.contains("only the host"),
        "{message}"
    );
    assert_eq!(
        failed(module.call_view("nope", Identity::ZERO, &[])).0,
        Errno::NO_SUCH_ENTRY.code() as i16
    );
    assert_eq!(
        failed(module.call_procedure("add", Identity::ZERO, ConnectionId::ZERO, &[])).0,
        17
    );
}

#[test]
fn lifecycle_reducers_run_for_the_host() {
    let mut module = module();
    let outcome = module.client_connected(Identity::from_words([7, 0, 0, 0]), ConnectionId::ZERO);
    assert!(outcome.unwrap().is_success());
    assert_eq!(module.logs()[0].message, "hello 7");
    assert!(module
        .client_disconnected(Identity::ZERO, ConnectionId::ZERO)
        .is_none());
}

#[test]
fn logs_of_the_last_call_are_kept() {
    let mut module = module();
    call(&mut module, "log", &[]);
    let logs = module.logs();
    assert_eq!(logs.len(), 1);
    assert_eq!(
        (&*logs[0].target, &*logs[0].file, logs[0].line),
        ("fake", "fake.rs", 42)
    );
    call(&mut module, "add", &to_vec(&"quiet".to_owned()));
    assert!(module.logs().is_empty());
}

#[test]
fn views_read_but_cannot_write() {
    let mut module = module();
    let bytes = returned(module.call_view("probe_write", Identity::ZERO, &[]));
    assert_eq!(
        from_slice::<u64>(&bytes).unwrap(),
        u64::from(Errno::NOT_ALLOWED.code())
    );
    let bytes = returned(module.call_view("count", Identity::ZERO, &[]));
    assert_eq!(from_slice::<u64>(&bytes).unwrap(), 1);
}

#[test]
fn procedures_commit_explicitly_and_lose_what_they_leave_open() {
    let mut module = module();
    let mut feed = module.database().feed().subscribe();
    let bytes =
        returned(module.call_procedure("commit_one", Identity::ZERO, ConnectionId::ZERO, &[]));
    assert_eq!(from_slice::<u64>(&bytes).unwrap(), 2);
    let commit = feed.try_recv().unwrap();
    let entry = commit.meta.entry.as_ref().unwrap();
    assert_eq!(&*entry.name, "commit_one");

    returned(module.call_procedure("leave_open", Identity::ZERO, ConnectionId::ZERO, &[]));
    assert_eq!(
        notes(&module).len(),
        2,
        "the open transaction was rolled back"
    );
    let warning = module.logs().pop().unwrap();
    assert_eq!(warning.level, LogLevel::Warn);
    assert!(
        warning
            .message
            .contains("procedure `leave_open` returned with a transaction open"),
        "{}",
        warning.message
    );

    let bytes = returned(module.call_procedure("fetch", Identity::ZERO, ConnectionId::ZERO, &[]));
    assert_eq!(
        from_slice::<u64>(&bytes).unwrap(),
        u64::from(Errno::HTTP_FAILED.code())
    );
    assert!(module
        .logs()
        .iter()
        .any(|record| record.message.contains("not configured")));
}

#[test]
fn http_requests_are_routed_by_method_and_path() {
    let mut module = module();
    let bytes = returned(module.call_http(&Request::new(Method::Get, "/hello"), None));
    let response: Response = from_slice(&bytes).unwrap();
    assert_eq!(response.body, b"hi from /hello");

    let (code, message) = failed(module.call_http(&Request::new(Method::Post, "/hello"), None));
    assert_eq!(code, Errno::NO_SUCH_ENTRY.code() as i16);
    assert!(message.contains("POST /hello"), "{message}");
    let (code, message) = failed(module.call_http(&Request::new(Method::Get, "/garbage"), None));
    assert_eq!(code, Errno::BAD_ENCODING.code() as i16);
    assert!(message.contains("`garbage`"), "{message}");
}

#[test]
fn nested_native_calls_are_refused() {
    let mut module = module();
    assert!(call(&mut module, "nest", &[]).is_success());
}

/// What a module that only describes itself writes: three bytes, which are not a description.
const GARBLED: u8 = 0;
/// What a module that only describes itself writes: a valid description behind a format
/// version one newer than the host's.
const NEWER: u8 = 1;

/// A module that only describes itself, writing what `WRITES` says.
struct OnlyDescribes<const WRITES: u8>;

impl<const WRITES: u8> ModuleExports for OnlyDescribes<WRITES> {
    fn describe_module(sink: u32) -> i16 {
        let bytes = match WRITES {
            NEWER => {
                let mut bytes = (FORMAT_VERSION + 1).to_le_bytes().to_vec();
                bytes.extend_from_slice(&to_vec(&description()));
                bytes
            }
            _ => vec![9, 9, 9],
        };
        write(sink, &bytes);
        0
    }
    fn call_reducer(_: u32, _: [u64; 4], _: [u64; 2], _: i64, _: u32, _: u32) -> i16 {
        unreachable!()
    }
    fn call_procedure(_: u32, _: [u64; 4], _: [u64; 2], _: i64, _: u32, _: u32) -> i16 {
        unreachable!()
    }
    fn call_view(_: u32, _: [u64; 4], _: [u64; 2], _: i64, _: u32, _: u32) -> i16 {
        unreachable!()
    }
    fn call_view_anon(_: u32, _: i64, _: u32, _: u32) -> i16 {
        unreachable!()
    }
    fn call_http_handler(_: u32, _: i64, _: u32, _: u32) -> i16 {
        unreachable!()
    }
}

#[test]
fn a_bad_description_is_a_load_error() {
    let error = NativeModule::<OnlyDescribes<GARBLED>>::new().expect_err("the module is refused");
    assert!(
        matches!(error, LoadError::Description(DescriptionError::Decode(_))),
        "{error}"
    );
    assert!(error.to_string().contains("does not decode"), "{error}");
}

#[test]
fn a_description_of_a_newer_format_version_is_refused_with_the_versions() {
    let error = NativeModule::<OnlyDescribes<NEWER>>::new().expect_err("the module is refused");
    let newer = FORMAT_VERSION + 1;
    assert!(
        matches!(error, LoadError::Description(DescriptionError::Version(version)) if version == newer),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        format!("the module's description is format version {newer}; this host reads version {FORMAT_VERSION}: upgrade the host")
    );
}

#[test]
fn durable_tables_are_recovered_and_init_runs_on_the_first_start_only() {
    let dir = tempfile::tempdir().unwrap();
    let open = || {
        let options = durability::Options::default().with_mode(durability::Mode::Fsync);
        let persistence = Persistence::new(dir.path().join("db"), options);
        NativeModule::<Fake>::with_env(InstanceEnv::unloaded().with_persistence(persistence))
            .expect("the fake module loads")
    };
    {
        let mut module = open();
        assert_eq!(module.env_mut().recovery().unwrap().transactions, 0);
        assert!(call(&mut module, "add", &to_vec(&"kept".to_owned())).is_success());
        assert!(!call(&mut module, "fail", &[]).is_success());
        returned(module.call_procedure("commit_one", Identity::ZERO, ConnectionId::ZERO, &[]));
    }
    let mut module = open();
    assert_eq!(module.env_mut().recovery().unwrap().transactions, 3);
    let expected =
        [(1, "init"), (2, "kept"), (3, "procedure")].map(|(id, text)| (id, text.to_owned()));
    assert_eq!(notes(&module), expected);
    assert!(call(&mut module, "add", &to_vec(&"next".to_owned())).is_success());
    assert_eq!(notes(&module).last(), Some(&(4, "next".to_owned())));
}

#[test]
fn deferred_durability_leaves_the_wait_to_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let persistence = Persistence::new(dir.path().join("db"), durability::Options::default());
    let env = InstanceEnv::unloaded()
        .with_persistence(persistence)
        .with_deferred_durability();
    let mut module = NativeModule::<Fake>::with_env(env).expect("the fake module loads");
    // `init` committed: its wait is pending until the host takes it.
    assert!(module.env_mut().take_durability().is_some());
    assert!(call(&mut module, "add", &to_vec(&"one".to_owned())).is_success());
    assert!(call(&mut module, "add", &to_vec(&"two".to_owned())).is_success());
    let wait = module.env_mut().take_durability().expect("a wait");
    assert!(module.env_mut().take_durability().is_none());
    wait.wait().expect("durable");
    // A call that commits nothing leaves nothing to wait for.
    assert!(!call(&mut module, "fail", &[]).is_success());
    assert!(module.env_mut().take_durability().is_none());
}
