//! Row visibility: the quickstart's `draft` table shows each client only the drafts it owns
//! (`owner = :sender`), over WebSocket subscriptions (initial rows and deltas), one-off
//! queries and `GET /v1/tables/draft`; a draft handed to another identity moves from one
//! reader to the other.

use crate::live::{call_reducer, one_off, subscribe, Client, Connect, Encoding, Live};
use crate::support::{get, identity, post, router, send};
use axum::body::Body;
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::Duration;
use wasmod_server::ServerConfig;

/// How long a test waits to be sure a message does not come.
const QUIET: Duration = Duration::from_millis(300);

/// The texts of `rows` (JSON rows of `draft`), sorted.
fn texts(rows: &Value) -> Vec<String> {
    let mut texts: Vec<String> = rows
        .as_array()
        .unwrap_or_else(|| panic!("rows: {rows}"))
        .iter()
        .map(|row| row["text"].as_str().expect("a text").to_owned())
        .collect();
    texts.sort();
    texts
}

/// The `draft` rows a transaction update inserts and deletes: `(inserts, deletes)`.
fn draft_changes(update: &Value) -> (Vec<String>, Vec<String>) {
    let table = &update["changes"][0]["tables"][0];
    assert_eq!(table["table"], "draft", "{update}");
    (texts(&table["inserts"]), texts(&table["deletes"]))
}

/// A JSON client of `live`, subscribed to every draft it may see, with its identity.
async fn subscribed_reader(live: &Live) -> (Client, String) {
    let mut client = Client::connect(live, Encoding::Json, Connect::default()).await;
    let (identity, _, _) = client.hello().await;
    client.send(subscribe(1, &["SELECT * FROM draft"])).await;
    let applied = client.recv_kind("SubscribeApplied").await;
    assert_eq!(texts(&applied["tables"][0]["rows"]), Vec::<String>::new());
    (client, identity)
}

/// The drafts `client` reads with a one-off query.
async fn one_off_drafts(client: &mut Client, request_id: u32) -> Vec<String> {
    client
        .send(one_off(request_id, "SELECT * FROM draft"))
        .await;
    let answer = client.recv_kind("OneOffQueryResult").await;
    texts(&answer["result"]["ok"][0]["rows"])
}

#[tokio::test]
async fn subscriptions_and_one_off_queries_show_each_identity_its_own_rows() {
    let live = Live::start(ServerConfig::default()).await;
    let (mut alice, _) = subscribed_reader(&live).await;
    let (mut bob, bob_identity) = subscribed_reader(&live).await;

    alice
        .send(call_reducer(1, "save_draft", &["alice's"]))
        .await;
    let own = alice.recv_kind("TransactionUpdate").await;
    assert_eq!(own["status"], "Committed", "{own}");
    assert_eq!(draft_changes(&own), (vec!["alice's".to_owned()], vec![]));
    bob.send(call_reducer(2, "save_draft", &["bob's"])).await;
    let own = bob.recv_kind("TransactionUpdate").await;
    assert_eq!(draft_changes(&own), (vec!["bob's".to_owned()], vec![]));
    assert!(
        alice.next(QUIET).await.is_none(),
        "bob's draft is not alice's to see"
    );

    assert_eq!(one_off_drafts(&mut alice, 3).await, ["alice's"]);
    assert_eq!(one_off_drafts(&mut bob, 4).await, ["bob's"]);

    // Alice's first draft goes to Bob: a delete for her, an insert for him.
    alice
        .send(json!({"CallReducer": {"request_id": 5, "name": "hand_draft", "args": [1, bob_identity]}}))
        .await;
    let gone = alice.recv_kind("TransactionUpdate").await;
    assert_eq!(gone["status"], "Committed", "{gone}");
    assert_eq!(draft_changes(&gone), (vec![], vec!["alice's".to_owned()]));
    let arrived = bob.recv_kind("TransactionUpdate").await;
    assert_eq!(
        draft_changes(&arrived),
        (vec!["alice's".to_owned()], vec![])
    );
    assert_eq!(one_off_drafts(&mut alice, 6).await, Vec::<String>::new());
    assert_eq!(one_off_drafts(&mut bob, 7).await, ["alice's", "bob's"]);

    // A query cannot widen what the table shows, nor probe it through a join.
    assert_eq!(
        one_off_drafts_of(&mut alice, 8, "SELECT * FROM draft WHERE id = 1").await,
        Vec::<String>::new()
    );
    bob.send(call_reducer(9, "send", &["bob here"])).await;
    bob.recv_kind("TransactionUpdate").await;
    let join = "SELECT message.* FROM message JOIN draft ON message.sender = draft.owner";
    assert_eq!(
        one_off_drafts_of(&mut alice, 10, join).await,
        Vec::<String>::new(),
        "bob's drafts are no partners for alice"
    );
    assert_eq!(one_off_drafts_of(&mut bob, 11, join).await, ["bob here"]);
    live.stop().await;
}

/// The texts of the rows `client` reads with the one-off query `query`.
async fn one_off_drafts_of(client: &mut Client, request_id: u32, query: &str) -> Vec<String> {
    client.send(one_off(request_id, query)).await;
    let answer = client.recv_kind("OneOffQueryResult").await;
    texts(&answer["result"]["ok"][0]["rows"])
}

#[tokio::test]
async fn a_later_subscription_of_the_owner_gets_its_rows_and_a_stranger_none() {
    let live = Live::start(ServerConfig::default()).await;
    let mut writer = Client::connect(&live, Encoding::Json, Connect::default()).await;
    let (_, token, _) = writer.hello().await;
    writer.send(call_reducer(1, "save_draft", &["kept"])).await;
    writer.recv_kind("TransactionUpdate").await;

    // The same identity on another connection subscribes after the fact: its initial rows.
    let again = Connect {
        bearer: Some(&token),
        ..Connect::default()
    };
    let mut same = Client::connect(&live, Encoding::Binary, again).await;
    same.hello().await;
    same.send(subscribe(1, &["SELECT * FROM draft"])).await;
    let applied = same.recv_kind("SubscribeApplied").await;
    assert_eq!(
        applied["tables"][0]["rows"].as_array().map(Vec::len),
        Some(1)
    );
    // A stranger with the same query text shares nothing with them.
    let (mut stranger, _) = subscribed_reader(&live).await;
    writer.send(call_reducer(2, "save_draft", &["more"])).await;
    same.recv_kind("TransactionUpdate").await;
    assert!(stranger.next(QUIET).await.is_none());
    live.stop().await;
}

/// `GET uri` as `token`.
async fn get_as(router: &axum::Router, uri: &str, token: &str) -> Value {
    let answer = send(router, Method::GET, uri, Some(token), Body::empty()).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
    answer.json()
}

#[tokio::test]
async fn table_reads_show_each_identity_its_own_rows_and_refuse_readers_without_one() {
    let router = router();
    let (_, alice) = identity(&router).await;
    let (bob_identity, bob) = identity(&router).await;
    for (token, text) in [(&alice, "alice's"), (&bob, "bob's"), (&alice, "alice's 2")] {
        let saved = post(
            &router,
            "/v1/reducers/save_draft",
            Some(token),
            json!([text]),
        )
        .await;
        assert_eq!(saved.status, StatusCode::OK, "{:?}", saved.json());
    }
    let drafts = |page: Value| texts(&page["rows"]);
    assert_eq!(
        drafts(get_as(&router, "/v1/tables/draft", &alice).await),
        ["alice's", "alice's 2"]
    );
    assert_eq!(
        drafts(get_as(&router, "/v1/tables/draft", &bob).await),
        ["bob's"]
    );
    // Pages count the rows the reader sees: alice's second page holds her second draft.
    let first = get_as(&router, "/v1/tables/draft?limit=1", &alice).await;
    assert_eq!(drafts(first.clone()), ["alice's"]);
    let cursor = first["next_cursor"].as_str().expect("a next page");
    let second = get_as(
        &router,
        &format!("/v1/tables/draft?limit=1&cursor={cursor}"),
        &alice,
    )
    .await;
    assert_eq!(drafts(second.clone()), ["alice's 2"]);
    assert_eq!(second["next_cursor"], Value::Null);

    let anonymous = get(&router, "/v1/tables/draft").await;
    assert_eq!(
        (anonymous.status, anonymous.code().as_str()),
        (StatusCode::UNAUTHORIZED, "unauthenticated")
    );
    assert!(
        anonymous.message().contains("draft"),
        "{}",
        anonymous.message()
    );

    let handed = post(
        &router,
        "/v1/reducers/hand_draft",
        Some(&alice),
        json!([1, bob_identity]),
    )
    .await;
    assert_eq!(handed.status, StatusCode::OK, "{:?}", handed.json());
    assert_eq!(
        drafts(get_as(&router, "/v1/tables/draft", &alice).await),
        ["alice's 2"]
    );
    assert_eq!(
        drafts(get_as(&router, "/v1/tables/draft", &bob).await),
        ["alice's", "bob's"]
    );
}
