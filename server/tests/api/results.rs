//! Values that calls return: within the bound they are answered (large ones converted off the
//! runtime's threads); past it, answered `result_too_large`, over HTTP and over the WebSocket
//! in both encodings, with the call's commits kept; one-off queries past what the
//! connection may queue are refused.

use crate::live::{call, call_reducer, one_off, Client, Connect, Encoding, Live};
use crate::support::{identity, post, server};
use axum::http::StatusCode;
use serde_json::json;
use wasmod_host::AllowList;
use wasmod_node::INLINE_RESULT_BYTES;
use wasmod_server::ServerConfig;

/// A bound that three of the quickstart's longest messages go past.
const SMALL_BOUND: usize = 2_000;

/// The longest message the quickstart takes.
fn long_message(n: usize) -> String {
    format!("{n:04}{}", "x".repeat(996))
}

/// Sends `count` long messages as the holder of `token`.
async fn send_long_messages(router: &axum::Router, token: &str, count: usize) {
    for n in 0..count {
        let text = json!([long_message(n)]);
        let sent = post(router, "/v1/reducers/send", Some(token), text).await;
        assert_eq!(sent.status, StatusCode::OK, "{:?}", sent.json());
    }
}

/// Sends `count` long messages over `client`'s socket, each answered by its commit.
async fn chat_long_messages(client: &mut Client, count: u32) {
    for n in 0..count {
        let text = long_message(n as usize);
        client.send(call_reducer(n + 1, "send", &[&text])).await;
        client.recv_kind("TransactionUpdate").await;
    }
}

#[tokio::test]
async fn a_value_past_the_bound_is_refused_over_http_and_the_commits_stay() {
    let mut config = ServerConfig::default();
    config.node.max_result_bytes = SMALL_BOUND;
    let router = server(config, AllowList::new()).router();
    let (_, token) = identity(&router).await;
    send_long_messages(&router, &token, 3).await;
    let recent = post(&router, "/v1/views/recent", None, json!([])).await;
    assert_eq!(recent.status, StatusCode::INTERNAL_SERVER_ERROR);
    let error = recent.json();
    assert_eq!(error["error"]["code"], "result_too_large", "{error}");
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`recent`") && message.contains(&SMALL_BOUND.to_string()),
        "{message}"
    );
    // The rows are there: the table, read in pages, has them all.
    let rows = crate::support::get(&router, "/v1/tables/message?limit=1").await;
    assert_eq!(rows.status, StatusCode::OK);
    assert!(rows.json()["next_cursor"].is_string(), "{:?}", rows.json());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_value_within_the_bound_is_answered_whole() {
    let router = server(ServerConfig::default(), AllowList::new()).router();
    let (_, token) = identity(&router).await;
    let count = INLINE_RESULT_BYTES / 1000 + 10;
    send_long_messages(&router, &token, count).await;
    let mine = post(&router, "/v1/views/my_messages", Some(&token), json!([])).await;
    assert_eq!(mine.status, StatusCode::OK, "{:?}", mine.json());
    let messages = mine.json()["result"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(messages.len(), count);
    let texts: Vec<String> = messages
        .iter()
        .map(|message| message["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    let expected: Vec<String> = (0..count).map(long_message).collect();
    assert_eq!(texts, expected);
}

async fn a_value_past_the_bound_is_refused_over_the_websocket(encoding: Encoding) {
    let mut config = ServerConfig::default();
    config.node.max_result_bytes = SMALL_BOUND;
    let live = Live::start(config).await;
    let mut client = Client::connect(&live, encoding, Connect::default()).await;
    client.hello().await;
    chat_long_messages(&mut client, 3).await;
    client.send(call("CallView", 9, "recent", &[])).await;
    let refused = client.recv_kind("CallResult").await;
    assert_eq!(refused["request_id"], 9, "{refused}");
    assert_eq!(
        refused["result"]["err"]["code"], "result_too_large",
        "{refused}"
    );
    // The connection goes on: a small value is answered.
    let nowhere = "http://127.0.0.1:9/";
    client
        .send(call("CallProcedure", 10, "fetch_motd", &[nowhere]))
        .await;
    let motd = client.recv_kind("CallResult").await;
    assert_eq!(motd["request_id"], 10, "{motd}");
    assert!(motd["result"].get("ok").is_some(), "{motd}");
    live.stop().await;
}

#[tokio::test]
async fn a_value_past_the_bound_is_refused_over_the_websocket_in_json() {
    a_value_past_the_bound_is_refused_over_the_websocket(Encoding::Json).await;
}

#[tokio::test]
async fn a_value_past_the_bound_is_refused_over_the_websocket_in_binary() {
    a_value_past_the_bound_is_refused_over_the_websocket(Encoding::Binary).await;
}

#[tokio::test]
async fn a_one_off_query_with_more_rows_than_the_connection_may_queue_is_refused() {
    let mut config = ServerConfig::default();
    config.node.outbound_bytes = 4_000;
    let live = Live::start(config).await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    chat_long_messages(&mut client, 6).await;
    client.send(one_off(7, "SELECT * FROM message")).await;
    let refused = client.recv_kind("OneOffQueryResult").await;
    let message = refused["result"]["err"].as_str().unwrap_or_default();
    assert!(message.contains("narrow the query"), "{refused}");
    client
        .send(one_off(8, "SELECT * FROM message WHERE id = 1"))
        .await;
    let one = client.recv_kind("OneOffQueryResult").await;
    let rows = &one["result"]["ok"][0]["rows"];
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{one}");
    live.stop().await;
}
