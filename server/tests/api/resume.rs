//! Resuming (`resume_from`): a client that reconnects with the last offset it applied is sent
//! only what changed since, when the server still holds every commit after it, and all its
//! rows otherwise.

use crate::live::{
    call_reducer, has_text, one_off, resubscribe, subscribe, Client, Connect, Encoding, Live,
};
use crate::support::durable_server;
use serde_json::Value;
use std::path::Path;
use wasmod_server::ServerConfig;

const MESSAGES: &str = "SELECT * FROM message";
const ONLINE: &str = "SELECT * FROM user WHERE online = true";

async fn durable(config: ServerConfig, dir: &Path) -> Live {
    Live::serve(durable_server(config, dir)).await
}

/// Waits until exactly `count` users are online, as a one-off query over `client` sees it
/// (a connection's `client_disconnected` runs after its socket has closed).
async fn wait_online(client: &mut Client, count: usize) {
    for request_id in 1000.. {
        client.send(one_off(request_id, ONLINE)).await;
        let answer = client.recv_kind("OneOffQueryResult").await;
        let online = answer["result"]["ok"][0]["rows"]
            .as_array()
            .map_or(0, Vec::len);
        if online == count {
            return;
        }
        assert!(
            request_id < 1200,
            "{count} users online never came: {answer}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The offset of `client`'s next `TransactionUpdate`.
async fn next_offset(client: &mut Client) -> u64 {
    client.recv_kind("TransactionUpdate").await["offset"]
        .as_u64()
        .expect("an offset")
}

/// The rows of entry `index` of a `SubscribeApplied`'s `field` (`tables` or `deletes`).
fn rows<'a>(applied: &'a Value, field: &str, index: usize) -> &'a Value {
    &applied[field][index]["rows"]
}

/// A subscriber of the messages and the online users goes away; meanwhile one user sends a
/// message and leaves. Reconnecting with its last offset, it gets only that message and that
/// user's departure; its own return (offline, then online again) nets out to nothing.
async fn resumes_with_only_the_changes(encoding: Encoding) {
    let dir = tempfile::tempdir().expect("a directory");
    let live = durable(ServerConfig::default(), dir.path()).await;
    let mut away = Client::connect(&live, encoding, Connect::default()).await;
    let (_, token, _) = away.hello().await;
    away.send(call_reducer(1, "send", &["before"])).await;
    next_offset(&mut away).await;
    away.send(subscribe(1, &[MESSAGES, ONLINE])).await;
    away.recv_kind("SubscribeApplied").await;
    let mut other = Client::connect(&live, encoding, Connect::default()).await;
    other.hello().await;
    let applied = next_offset(&mut away).await; // the other user came online
    away.close().await;
    wait_online(&mut other, 1).await;
    other.send(call_reducer(1, "send", &["while away"])).await;
    next_offset(&mut other).await;
    other.close().await;

    let bearer = format!("Bearer {token}");
    let mut back = Client::connect(
        &live,
        encoding,
        Connect {
            bearer: Some(&token),
            ..Connect::default()
        },
    )
    .await;
    back.hello().await;
    wait_online(&mut back, 1).await;
    back.send(resubscribe(1, &[MESSAGES, ONLINE], applied))
        .await;
    let resumed = back.recv_kind("SubscribeApplied").await;
    assert_eq!(resumed["resumed"], true, "{resumed} ({bearer})");
    let messages = rows(&resumed, "tables", 0);
    assert_eq!(messages.as_array().map(Vec::len), Some(1), "{resumed}");
    assert!(has_text(messages, "while away"), "{resumed}");
    assert_eq!(
        rows(&resumed, "deletes", 0).as_array().map(Vec::len),
        Some(0)
    );
    assert_eq!(
        rows(&resumed, "tables", 1).as_array().map(Vec::len),
        Some(0),
        "{resumed}"
    );
    assert_eq!(
        rows(&resumed, "deletes", 1).as_array().map(Vec::len),
        Some(1),
        "the other user went offline: {resumed}"
    );
    assert!(resumed["offset"].as_u64() > Some(applied), "{resumed}");

    back.send(call_reducer(2, "send", &["after"])).await;
    let update = back.recv_kind("TransactionUpdate").await;
    assert!(
        has_text(&update["changes"][0]["tables"][0]["inserts"], "after"),
        "{update}"
    );
    live.stop().await;
}

#[tokio::test]
async fn a_client_that_reconnects_gets_only_the_changes_since_its_offset_in_json() {
    resumes_with_only_the_changes(Encoding::Json).await;
}

#[tokio::test]
async fn a_client_that_reconnects_gets_only_the_changes_since_its_offset_in_binary() {
    resumes_with_only_the_changes(Encoding::Binary).await;
}

/// The window's boundary, with `resume_commits` = 3: a client 4 commits behind gets all its
/// rows, one 3 behind resumes with those 3.
#[tokio::test]
async fn a_client_further_behind_than_the_window_gets_all_its_rows() {
    let dir = tempfile::tempdir().expect("a directory");
    let mut config = ServerConfig::default();
    config.node.resume_commits = 3;
    let live = durable(config, dir.path()).await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    client.send(subscribe(1, &[MESSAGES])).await;
    let applied = client.recv_kind("SubscribeApplied").await["offset"]
        .as_u64()
        .expect("an offset");
    for request_id in 0..4 {
        client
            .send(call_reducer(request_id, "send", &["one of four"]))
            .await;
        next_offset(&mut client).await;
    }
    client.send(resubscribe(2, &[MESSAGES], applied)).await;
    let full = client.recv_kind("SubscribeApplied").await;
    assert_eq!(full["resumed"], false, "{full}");
    assert_eq!(rows(&full, "tables", 0).as_array().map(Vec::len), Some(4));
    assert_eq!(full["deletes"], Value::Array(Vec::new()), "{full}");

    let last = full["offset"].as_u64().expect("an offset");
    assert_eq!(last, applied + 4, "four commits behind: {full}");
    client.send(resubscribe(3, &[MESSAGES], last - 3)).await;
    let resumed = client.recv_kind("SubscribeApplied").await;
    assert_eq!(resumed["resumed"], true, "three behind: {resumed}");
    assert_eq!(
        rows(&resumed, "tables", 0).as_array().map(Vec::len),
        Some(3)
    );
    live.stop().await;
}

#[tokio::test]
async fn an_offset_past_the_last_commit_gets_all_the_rows() {
    let dir = tempfile::tempdir().expect("a directory");
    let live = durable(ServerConfig::default(), dir.path()).await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    client.send(call_reducer(1, "send", &["here"])).await;
    let last = next_offset(&mut client).await;
    client.send(resubscribe(1, &[MESSAGES], last + 1)).await;
    let full = client.recv_kind("SubscribeApplied").await;
    assert_eq!(full["resumed"], false, "{full}");
    assert_eq!(rows(&full, "tables", 0).as_array().map(Vec::len), Some(1));
    live.stop().await;
}

#[tokio::test]
async fn a_server_without_a_commit_log_never_resumes() {
    let live = Live::start(ServerConfig::default()).await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    client.send(call_reducer(1, "send", &["here"])).await;
    let last = next_offset(&mut client).await;
    client.send(resubscribe(1, &[MESSAGES], last)).await;
    let full = client.recv_kind("SubscribeApplied").await;
    assert_eq!(full["resumed"], false, "{full}");
    assert_eq!(rows(&full, "tables", 0).as_array().map(Vec::len), Some(1));
    live.stop().await;
}

#[tokio::test]
async fn a_restarted_server_resumes_from_its_commit_log() {
    let dir = tempfile::tempdir().expect("a directory");
    let live = durable(ServerConfig::default(), dir.path()).await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    let (_, token, _) = client.hello().await;
    client
        .send(call_reducer(1, "send", &["before the restart"]))
        .await;
    let applied = next_offset(&mut client).await;
    client.close().await;
    live.stop_releasing().await;

    let live = durable(ServerConfig::default(), dir.path()).await;
    let mut other = Client::connect(&live, Encoding::Json, Connect::default()).await;
    other.hello().await;
    other
        .send(call_reducer(1, "send", &["after the restart"]))
        .await;
    next_offset(&mut other).await;
    let mut back = Client::connect(
        &live,
        Encoding::Json,
        Connect {
            bearer: Some(&token),
            ..Connect::default()
        },
    )
    .await;
    back.hello().await;
    back.send(resubscribe(1, &[MESSAGES], applied)).await;
    let resumed = back.recv_kind("SubscribeApplied").await;
    assert_eq!(resumed["resumed"], true, "{resumed}");
    let messages = rows(&resumed, "tables", 0);
    assert_eq!(messages.as_array().map(Vec::len), Some(1), "{resumed}");
    assert!(has_text(messages, "after the restart"), "{resumed}");
    live.stop().await;
}
