//! The chat module, run natively against the real host.

use quickstart::chat::{self, DraftAccess, MessageAccess, UserAccess};
use wasmod::http::{Method, Request};
use wasmod::Identity;
use wasmod_testing::{Outcome, TestModule};

const ALICE: Identity = Identity::from_bytes([0xa1; 32]);
const BOB: Identity = Identity::from_bytes([0xb0; 32]);

fn chat_with_alice_and_bob() -> TestModule<chat::Module> {
    let module = TestModule::<chat::Module>::new();
    assert!(module.connect(ALICE).is_success());
    assert!(module.connect(BOB).is_success());
    module
}

fn failure(outcome: Outcome) -> String {
    match outcome {
        Outcome::Failed { message, .. } => message,
        other => panic!("expected a failure, got {other}"),
    }
}

#[test]
fn init_writes_the_config_and_connecting_creates_users() {
    let module = chat_with_alice_and_bob();
    let users = module.read(|db| {
        let mut users: Vec<(String, bool)> = db
            .user()
            .iter()
            .map(|user| (user.name, user.online))
            .collect();
        users.sort();
        users
    });
    assert_eq!(
        users,
        [
            ("user-a1a1a1a1".to_string(), true),
            ("user-b0b0b0b0".to_string(), true)
        ]
    );
    assert!(module.disconnect(BOB).is_success());
    assert_eq!(
        module.read(|db| db.user().identity().find(BOB).map(|user| user.online)),
        Some(false)
    );
}

#[test]
fn names_are_validated_and_unique() {
    let module = chat_with_alice_and_bob();
    assert!(module
        .call_reducer(ALICE, "set_name", ("alice".to_string(),))
        .is_success());
    assert_eq!(
        failure(module.call_reducer(BOB, "set_name", ("alice".to_string(),))),
        "the name `alice` is taken"
    );
    assert_eq!(
        failure(module.call_reducer(BOB, "set_name", ("   ".to_string(),))),
        "a name cannot be empty"
    );
    let stranger = Identity::from_bytes([9; 32]);
    assert_eq!(
        failure(module.call_reducer(stranger, "set_name", ("x".to_string(),))),
        "connect before choosing a name"
    );
    assert_eq!(
        module.read(|db| db.user().name().find("alice").map(|user| user.identity)),
        Some(ALICE)
    );
}

#[test]
fn messages_are_sent_and_viewed() {
    let module = chat_with_alice_and_bob();
    for text in ["hi", "how are you?"] {
        assert!(module
            .call_reducer(ALICE, "send", (text.to_string(),))
            .is_success());
    }
    assert!(module
        .call_reducer(BOB, "send", ("fine".to_string(),))
        .is_success());
    assert_eq!(
        failure(module.call_reducer(BOB, "send", (String::new(),))),
        "a message cannot be empty"
    );

    let mine: Vec<chat::Message> = module.call_view(ALICE, "my_messages", ()).unwrap();
    assert_eq!(
        mine.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
        ["hi", "how are you?"]
    );
    let recent: Vec<chat::Message> = module.call_anonymous_view("recent", ()).unwrap();
    assert_eq!(recent.iter().map(|m| m.id).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(recent[2].sender, BOB);
}

#[test]
fn the_recent_view_keeps_the_last_fifty() {
    let module = chat_with_alice_and_bob();
    for n in 0..60 {
        assert!(module
            .call_reducer(ALICE, "send", (format!("message {n}"),))
            .is_success());
    }
    let recent: Vec<chat::Message> = module.call_anonymous_view("recent", ()).unwrap();
    assert_eq!(recent.len(), quickstart::RECENT);
    assert_eq!(recent.first().map(|m| m.text.as_str()), Some("message 10"));
}

#[test]
fn http_handlers_report_and_post() {
    let module = chat_with_alice_and_bob();
    let mut post = Request::new(Method::Post, "/messages");
    post.body = b"from the web".to_vec();
    let created = module.call_http(post).unwrap();
    assert_eq!(
        (created.status, created.body),
        (201, br#"{"id":1}"#.to_vec())
    );
    let rejected = module
        .call_http(Request::new(Method::Post, "/messages"))
        .unwrap();
    assert_eq!(rejected.status, 400);
    let stats = module
        .call_http(Request::new(Method::Get, "/stats"))
        .unwrap();
    assert_eq!(stats.header("content-type"), Some("application/json"));
    assert_eq!(
        String::from_utf8(stats.body).unwrap(),
        r#"{"users":2,"online":2,"messages":1}"#
    );
}

#[test]
fn the_procedure_reports_refused_outbound_http() {
    let module = chat_with_alice_and_bob();
    let answer: Result<String, String> = module
        .call_procedure(
            ALICE,
            "fetch_motd",
            ("http://127.0.0.1:9/motd".to_string(),),
        )
        .unwrap();
    let error = answer.unwrap_err();
    assert!(error.contains("HTTP"), "{error}");
    assert_eq!(module.read(|db| db.message().count()), 0);
}

#[test]
fn lifecycle_reducers_cannot_be_called_by_clients() {
    let module = chat_with_alice_and_bob();
    let message = failure(module.call_reducer(ALICE, "init", ()));
    assert!(message.contains("lifecycle"), "{message}");
}

#[test]
fn drafts_are_shown_to_their_owner_and_handed_over_by_them_only() {
    let module = chat_with_alice_and_bob();
    let tables = &module.description().tables;
    let filter = |name: &str| {
        tables
            .iter()
            .find(|table| table.name == name)
            .map(|table| table.visibility.clone())
    };
    assert_eq!(filter("draft"), Some(Some("owner = :sender".to_owned())));
    assert_eq!(filter("message"), Some(None));
    assert!(module
        .call_reducer(ALICE, "save_draft", ("dear bob".to_string(),))
        .is_success());
    assert_eq!(
        failure(module.call_reducer(BOB, "hand_draft", (1u64, BOB))),
        "you have no draft 1"
    );
    assert!(module
        .call_reducer(ALICE, "hand_draft", (1u64, BOB))
        .is_success());
    assert_eq!(
        module.read(|db| db.draft().id().find(1).map(|draft| draft.owner)),
        Some(BOB)
    );
    assert_eq!(
        failure(module.call_reducer(ALICE, "hand_draft", (1u64, ALICE))),
        "you have no draft 1"
    );
}
