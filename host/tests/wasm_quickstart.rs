//! The quickstart chat module, built to wasm32 and run by the wasmtime transport: the same
//! calls and the same results as its native tests (`examples/quickstart/tests/chat.rs`),
//! through every kind of entry point.

mod wasm_support;

use wasm_support::compiled;
use wasmod_abi::encoding::{from_slice, to_vec};
use wasmod_abi::http::{Method, Request, Response};
use wasmod_abi::{ConnectionId, Decode, Encode, Identity, Timestamp};
use wasmod_host::{InstanceEnv, LogLevel, Outcome, WasmConfig, WasmModule};

const ALICE: Identity = Identity::from_bytes([0xa1; 32]);
const BOB: Identity = Identity::from_bytes([0xb0; 32]);

/// A row of the quickstart's `message` table.
type Message = (u64, Identity, Timestamp, String);
/// A row of the quickstart's `user` table.
type User = (Identity, String, bool);

fn chat() -> WasmModule {
    WasmModule::load(
        compiled("quickstart"),
        WasmConfig::default(),
        InstanceEnv::unloaded(),
    )
    .expect("the quickstart loads")
}

#[test]
fn describing_without_loading_gives_the_loaded_description() {
    let described = compiled("quickstart")
        .describe(WasmConfig::default())
        .expect("the quickstart describes itself");
    assert_eq!(&described, chat().module());
    assert!(described
        .reducers
        .iter()
        .any(|reducer| reducer.name == "send"));
}

fn chat_with_alice_and_bob() -> WasmModule {
    let mut module = chat();
    for who in [ALICE, BOB] {
        let outcome = module.client_connected(who, ConnectionId::ZERO);
        assert!(
            outcome.as_ref().is_some_and(Outcome::is_success),
            "{outcome:?}"
        );
    }
    module
}

/// The rows of table `name`, decoded.
fn table<T: Decode>(module: &WasmModule, name: &str) -> Vec<T> {
    let table = module.datastore().table_id(name).expect("the table exists");
    let rows = module.read(|tables| tables.scan(table).expect("the table scans"));
    rows.iter()
        .map(|row| from_slice(row).expect("the row decodes"))
        .collect()
}

fn reducer(module: &mut WasmModule, sender: Identity, name: &str, args: impl Encode) -> Outcome {
    module.call_reducer(name, sender, ConnectionId::ZERO, &to_vec(&args))
}

/// What a returning call returned, decoded.
fn returned<T: Decode>(outcome: Outcome) -> T {
    match outcome {
        Outcome::Returned { bytes, .. } => from_slice(&bytes).expect("the result decodes"),
        other => panic!("expected a result, got {other}"),
    }
}

fn failure(outcome: Outcome) -> String {
    match outcome {
        Outcome::Failed { message, .. } => message,
        other => panic!("expected a failure, got {other}"),
    }
}

fn http(module: &mut WasmModule, request: Request) -> Response {
    returned(module.call_http(&request, None))
}

#[test]
fn init_writes_the_config_and_connecting_creates_users() {
    let mut module = chat_with_alice_and_bob();
    assert_eq!(table::<(String, String)>(&module, "config").len(), 1);
    let mut users: Vec<(String, bool)> = table::<User>(&module, "user")
        .into_iter()
        .map(|(_, name, online)| (name, online))
        .collect();
    users.sort();
    assert_eq!(
        users,
        [
            ("user-a1a1a1a1".to_string(), true),
            ("user-b0b0b0b0".to_string(), true)
        ]
    );
    let outcome = module.client_disconnected(BOB, ConnectionId::ZERO);
    assert!(
        outcome.as_ref().is_some_and(Outcome::is_success),
        "{outcome:?}"
    );
    let bob = table::<User>(&module, "user")
        .into_iter()
        .find(|(identity, _, _)| *identity == BOB);
    assert_eq!(bob.map(|(_, _, online)| online), Some(false));
}

#[test]
fn the_init_log_line_keeps_its_level_target_file_and_line() {
    let module = chat();
    let logs = module.logs();
    let line = logs
        .iter()
        .find(|record| record.message == "chat initialised")
        .expect("init logged");
    assert_eq!(line.level, LogLevel::Info);
    assert_eq!(&*line.target, "quickstart::chat");
    assert!(line.file.ends_with("src/lib.rs"), "{}", line.file);
    assert!(line.line > 0);
}

#[test]
fn names_are_validated_and_unique() {
    let mut module = chat_with_alice_and_bob();
    let outcome = reducer(&mut module, ALICE, "set_name", ("alice".to_string(),));
    assert!(outcome.is_success(), "{outcome}");
    assert_eq!(
        failure(reducer(
            &mut module,
            BOB,
            "set_name",
            ("alice".to_string(),)
        )),
        "the name `alice` is taken"
    );
    assert_eq!(
        failure(reducer(&mut module, BOB, "set_name", ("   ".to_string(),))),
        "a name cannot be empty"
    );
    let stranger = Identity::from_bytes([9; 32]);
    assert_eq!(
        failure(reducer(
            &mut module,
            stranger,
            "set_name",
            ("x".to_string(),)
        )),
        "connect before choosing a name"
    );
    let alice = table::<User>(&module, "user")
        .into_iter()
        .find(|(_, name, _)| name == "alice");
    assert_eq!(alice.map(|(identity, _, _)| identity), Some(ALICE));
}

#[test]
fn messages_are_sent_and_viewed() {
    let mut module = chat_with_alice_and_bob();
    for text in ["hi", "how are you?"] {
        let outcome = reducer(&mut module, ALICE, "send", (text.to_string(),));
        assert!(outcome.is_success(), "{outcome}");
    }
    let outcome = reducer(&mut module, BOB, "send", ("fine".to_string(),));
    assert!(outcome.is_success(), "{outcome}");
    assert_eq!(
        failure(reducer(&mut module, BOB, "send", (String::new(),))),
        "a message cannot be empty"
    );

    let mine: Vec<Message> = returned(module.call_view("my_messages", ALICE, &to_vec(&())));
    assert_eq!(
        mine.iter().map(|m| m.3.as_str()).collect::<Vec<_>>(),
        ["hi", "how are you?"]
    );
    let recent: Vec<Message> = returned(module.call_view("recent", Identity::ZERO, &to_vec(&())));
    assert_eq!(recent.iter().map(|m| m.0).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(recent[2].1, BOB);
}

#[test]
fn the_recent_view_keeps_the_last_fifty() {
    let mut module = chat_with_alice_and_bob();
    for n in 0..60 {
        let outcome = reducer(&mut module, ALICE, "send", (format!("message {n}"),));
        assert!(outcome.is_success(), "{outcome}");
    }
    let recent: Vec<Message> = returned(module.call_view("recent", Identity::ZERO, &to_vec(&())));
    assert_eq!(recent.len(), 50);
    assert_eq!(recent.first().map(|m| m.3.as_str()), Some("message 10"));
}

#[test]
fn http_handlers_report_and_post() {
    let mut module = chat_with_alice_and_bob();
    let mut post = Request::new(Method::Post, "/messages");
    post.body = b"from the web".to_vec();
    let created = http(&mut module, post);
    assert_eq!(
        (created.status, created.body),
        (201, br#"{"id":1}"#.to_vec())
    );
    let rejected = http(&mut module, Request::new(Method::Post, "/messages"));
    assert_eq!(rejected.status, 400);
    let stats = http(&mut module, Request::new(Method::Get, "/stats"));
    assert_eq!(stats.header("content-type"), Some("application/json"));
    assert_eq!(
        String::from_utf8(stats.body).unwrap(),
        r#"{"users":2,"online":2,"messages":1}"#
    );
}

#[test]
fn the_procedure_reports_refused_outbound_http() {
    let mut module = chat_with_alice_and_bob();
    let args = to_vec(&("http://127.0.0.1:9/motd".to_string(),));
    let answer: Result<String, String> =
        returned(module.call_procedure("fetch_motd", ALICE, ConnectionId::ZERO, &args));
    let error = answer.unwrap_err();
    assert!(error.contains("HTTP"), "{error}");
    assert!(table::<Message>(&module, "message").is_empty());
}

#[test]
fn lifecycle_reducers_cannot_be_called_by_clients() {
    let mut module = chat_with_alice_and_bob();
    let message = failure(reducer(&mut module, ALICE, "init", ()));
    assert!(message.contains("lifecycle"), "{message}");
}
