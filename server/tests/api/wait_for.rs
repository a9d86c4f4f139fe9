//! Reading your own writes (`WaitFor` / `CaughtUp`, and the offsets of call answers) and the
//! rows of overlapping queries in one query set, over real sockets (`docs/protocol.md`,
//! "Reading your writes" and `TransactionUpdate`).

use crate::live::{call, has_text, subscribe, wait_for, Client, Connect, Encoding, Live};
use serde_json::{json, Value};
use std::time::Duration;
use wasmod_server::ServerConfig;

/// How long a test waits to be sure a message does not come.
const QUIET: Duration = Duration::from_millis(300);

/// The messages `client` receives up to its `CaughtUp` for `request_id` (which must say
/// `offset`), that one excluded.
async fn until_caught_up(client: &mut Client, request_id: u32, offset: u64) -> Vec<Value> {
    let mut before = Vec::new();
    loop {
        let message = client.recv().await;
        if let Some(caught_up) = message.get("CaughtUp") {
            assert_eq!(
                caught_up,
                &json!({"request_id": request_id, "offset": offset})
            );
            return before;
        }
        before.push(message);
    }
}

/// Whether `messages` hold the update of commit `offset` that inserts a message `text`.
fn has_update(messages: &[Value], offset: u64, text: &str) -> bool {
    messages.iter().any(|message| {
        let update = &message["TransactionUpdate"];
        update["offset"] == offset
            && update["changes"][0]["tables"]
                .as_array()
                .is_some_and(|tables| tables.iter().any(|t| has_text(&t["inserts"], text)))
    })
}

/// A write over HTTP (a reducer, then a handler) answers with its offset; a subscriber that
/// waits for it has the write's update before `CaughtUp`; an offset still to come is waited
/// for, and answered after its commit's update.
async fn writes_over_http_are_read_after_waiting_for_their_offset(encoding: Encoding) {
    let live = Live::start(ServerConfig::default()).await;
    let mut reader = Client::connect(&live, encoding, Connect::default()).await;
    let (_, token, _) = reader.hello().await;
    reader.send(subscribe(1, &["SELECT * FROM message"])).await;
    reader.recv_kind("SubscribeApplied").await;

    let (status, _, answer) = live
        .post("/v1/reducers/send", Some(&token), r#"["over http"]"#)
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["status"], "committed");
    let offset = answer["offset"].as_u64().expect("the commit's offset");
    reader.send(wait_for(7, offset)).await;
    let before = until_caught_up(&mut reader, 7, offset).await;
    assert!(has_update(&before, offset, "over http"), "{before:?}");

    let (status, header, _) = live.post("/v1/http/messages", None, "from a handler").await;
    assert_eq!(status, 201);
    let offset = header.expect("the handler's answer carries X-Wasmod-Offset");
    reader.send(wait_for(8, offset)).await;
    let before = until_caught_up(&mut reader, 8, offset).await;
    assert!(has_update(&before, offset, "from a handler"), "{before:?}");

    reader.send(wait_for(9, offset + 2)).await;
    assert!(
        reader.next(QUIET).await.is_none(),
        "offset {} is not committed yet",
        offset + 2
    );
    for text in ["one", "two"] {
        let body = format!("[\"{text}\"]");
        let (status, _, answer) = live.post("/v1/reducers/send", Some(&token), &body).await;
        assert_eq!(status, 200, "{answer}");
    }
    let before = until_caught_up(&mut reader, 9, offset + 2).await;
    assert!(has_update(&before, offset + 1, "one"), "{before:?}");
    assert!(has_update(&before, offset + 2, "two"), "{before:?}");

    // A view's answer over the socket carries the last commit too.
    reader.send(call("CallView", 10, "recent", &[])).await;
    let result = reader.recv_kind("CallResult").await;
    assert_eq!(result["request_id"], 10);
    assert_eq!(result["offset"], offset + 2, "{result}");
    live.stop().await;
}

#[tokio::test]
async fn writes_over_http_are_read_after_waiting_for_their_offset_json() {
    writes_over_http_are_read_after_waiting_for_their_offset(Encoding::Json).await;
}

#[tokio::test]
async fn writes_over_http_are_read_after_waiting_for_their_offset_binary() {
    writes_over_http_are_read_after_waiting_for_their_offset(Encoding::Binary).await;
}

/// A connection may have 16 waits for commits to come; the 17th is refused `busy`, while a
/// wait for a commit already evaluated is answered at once whatever waits.
#[tokio::test]
async fn waits_for_commits_to_come_are_bounded_per_connection() {
    let live = Live::start(ServerConfig::default()).await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    for request_id in 0..=16 {
        client.send(wait_for(request_id, u64::MAX)).await;
    }
    let refused = client.recv_kind("CallResult").await;
    assert_eq!(refused["request_id"], 16, "{refused}");
    assert_eq!(refused["result"]["err"]["code"], "busy", "{refused}");
    client.send(wait_for(17, 0)).await;
    assert_eq!(
        client.recv_kind("CaughtUp").await,
        json!({"request_id": 17, "offset": 0})
    );
    live.stop().await;
}

/// The rows of the user table in `entry` (`inserts` or `deletes`) whose identity is
/// `identity`.
fn rows_of(entry: &Value, side: &str, identity: &str) -> Vec<Value> {
    entry[side]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|row| row["identity"] == identity)
        .cloned()
        .collect()
}

/// Two queries of one set that select the same rows: each query has its entry, so a row
/// both select comes twice (the union with multiplicity), and a change that takes a row out
/// of one query only is a delete in that query's entry and an update in the other's.
#[tokio::test]
async fn overlapping_queries_in_one_set_each_carry_their_rows() {
    let live = Live::start(ServerConfig::default()).await;
    let mut watcher = Client::connect(&live, Encoding::Json, Connect::default()).await;
    let (me, _, _) = watcher.hello().await;
    let online = "SELECT * FROM user WHERE online = true";
    let everyone = "SELECT * FROM user";
    watcher.send(subscribe(1, &[online, everyone])).await;
    let applied = watcher.recv_kind("SubscribeApplied").await;
    let tables = applied["tables"].as_array().expect("tables");
    let holding_me = tables
        .iter()
        .filter(|entry| {
            entry["table"] == "user"
                && entry["rows"]
                    .as_array()
                    .is_some_and(|rows| rows.iter().any(|row| row["identity"] == me))
        })
        .count();
    assert_eq!(holding_me, 2, "one entry per query: {applied}");

    let mut other = Client::connect(&live, Encoding::Json, Connect::default()).await;
    let (them, _, _) = other.hello().await;
    let arrived = watcher.recv_kind("TransactionUpdate").await;
    let entries = arrived["changes"][0]["tables"].as_array().expect("entries");
    assert_eq!(entries.len(), 2, "each query's change: {arrived}");
    for entry in entries {
        assert_eq!(rows_of(entry, "inserts", &them).len(), 1, "{arrived}");
    }

    other.close().await;
    let left = watcher.recv_kind("TransactionUpdate").await;
    let entries = left["changes"][0]["tables"].as_array().expect("entries");
    assert_eq!(entries.len(), 2, "{left}");
    let deleted: usize = entries
        .iter()
        .map(|entry| rows_of(entry, "deletes", &them).len())
        .sum();
    let inserted: Vec<Value> = entries
        .iter()
        .flat_map(|entry| rows_of(entry, "inserts", &them))
        .collect();
    assert_eq!(deleted, 2, "the online row leaves both queries: {left}");
    assert_eq!(inserted.len(), 1, "the offline row enters one: {left}");
    assert_eq!(inserted[0]["online"], false);
    live.stop().await;
}
