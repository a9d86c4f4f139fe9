//! A subscription's rows in parts: more rows than `subscription_part_bytes` come as
//! `SubscribeRows` messages, then a `SubscribeApplied` with the last part, all as of one
//! offset, and the query set's updates only after them.

use crate::live::{
    call_reducer, has_text, resubscribe, subscribe, Client, Connect, Encoding, Live,
};
use crate::support::durable_server;
use serde_json::Value;
use wasmod_server::ServerConfig;

const MESSAGES: &str = "SELECT * FROM message";
const ONLINE: &str = "SELECT * FROM user WHERE online = true";

/// A part holds about three of the test's message rows (each ~70 bytes in binary).
const PART_BYTES: usize = 256;

fn config() -> ServerConfig {
    let mut config = ServerConfig::default();
    config.node.subscription_part_bytes = PART_BYTES;
    config
}

/// Sends `texts` as messages over `client`, each answered before the next.
async fn send_all(client: &mut Client, texts: &[String]) -> u64 {
    let mut offset = 0;
    for (request_id, text) in (100..).zip(texts) {
        client.send(call_reducer(request_id, "send", &[text])).await;
        offset = client.recv_kind("TransactionUpdate").await["offset"]
            .as_u64()
            .expect("an offset");
    }
    offset
}

/// A query set's answer, gathered: its `SubscribeRows` parts, then its `SubscribeApplied`.
struct Answer {
    parts: Vec<Value>,
    applied: Value,
}

impl Answer {
    async fn receive(client: &mut Client, query_set_id: u32) -> Self {
        let mut parts = Vec::new();
        loop {
            let message = client.recv().await;
            if let Some(part) = message.get("SubscribeRows") {
                assert_eq!(part["query_set_id"], query_set_id, "{part}");
                parts.push(part.clone());
            } else if let Some(applied) = message.get("SubscribeApplied") {
                assert_eq!(applied["query_set_id"], query_set_id, "{applied}");
                return Self {
                    parts,
                    applied: applied.clone(),
                };
            } else {
                panic!("a message between the parts: {message}");
            }
        }
    }

    /// Every row of `field` (`tables` or `deletes`) of table `table`, over all parts.
    fn rows(&self, field: &str, table: &str) -> Vec<Value> {
        self.parts
            .iter()
            .chain([&self.applied])
            .flat_map(|message| message[field].as_array().cloned().unwrap_or_default())
            .filter(|entry| entry["table"] == table)
            .flat_map(|entry| entry["rows"].as_array().cloned().unwrap_or_default())
            .collect()
    }
}

/// Thirty messages, about three a part: the subscriber gets every one of them once, over
/// several parts, then the next commit's update.
async fn large_rows_come_in_parts(encoding: Encoding) {
    let live = Live::start(config()).await;
    let mut writer = Client::connect(&live, encoding, Connect::default()).await;
    writer.hello().await;
    let texts: Vec<String> = (0..30).map(|n| format!("message number {n:02}")).collect();
    let offset = send_all(&mut writer, &texts).await;

    let mut reader = Client::connect(&live, encoding, Connect::default()).await;
    reader.hello().await;
    reader.send(subscribe(4, &[MESSAGES, ONLINE])).await;
    let answer = Answer::receive(&mut reader, 4).await;
    assert!(
        answer.parts.len() >= 5,
        "30 rows of ~70 bytes in parts of {PART_BYTES} bytes: {} parts",
        answer.parts.len()
    );
    assert!(answer.applied["offset"].as_u64() >= Some(offset));
    assert_eq!(answer.applied["resumed"], false);
    let messages = Value::Array(answer.rows("tables", "message"));
    assert_eq!(messages.as_array().map(Vec::len), Some(30), "{messages}");
    for text in &texts {
        assert!(has_text(&messages, text), "{text} is missing");
    }
    assert_eq!(
        answer.rows("tables", "user").len(),
        2,
        "both clients online"
    );
    assert!(answer.rows("deletes", "message").is_empty());

    writer
        .send(call_reducer(1, "send", &["after the parts"]))
        .await;
    let update = reader.recv_kind("TransactionUpdate").await;
    assert!(
        has_text(
            &update["changes"][0]["tables"][0]["inserts"],
            "after the parts"
        ),
        "{update}"
    );
    live.stop().await;
}

#[tokio::test]
async fn a_subscription_larger_than_a_part_comes_in_parts_in_json() {
    large_rows_come_in_parts(Encoding::Json).await;
}

#[tokio::test]
async fn a_subscription_larger_than_a_part_comes_in_parts_in_binary() {
    large_rows_come_in_parts(Encoding::Binary).await;
}

#[tokio::test]
async fn a_subscription_that_fits_in_a_part_is_one_subscribe_applied() {
    let live = Live::start(config()).await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    send_all(&mut client, &["only one".to_owned()]).await;
    client.send(subscribe(1, &[MESSAGES])).await;
    let answer = Answer::receive(&mut client, 1).await;
    assert!(answer.parts.is_empty(), "{:?}", answer.parts);
    assert_eq!(answer.rows("tables", "message").len(), 1);
    live.stop().await;
}

/// A client that resumes after many commits gets the changes since its offset in parts too,
/// deletes included: twelve new messages, and the other user gone offline.
#[tokio::test]
async fn resumed_changes_come_in_parts_too() {
    let dir = tempfile::tempdir().expect("a directory");
    let live = Live::serve(durable_server(config(), dir.path())).await;
    let mut other = Client::connect(&live, Encoding::Binary, Connect::default()).await;
    other.hello().await;
    let mut client = Client::connect(&live, Encoding::Binary, Connect::default()).await;
    client.hello().await;
    client.send(subscribe(1, &[MESSAGES, ONLINE])).await;
    let applied = Answer::receive(&mut client, 1).await.applied["offset"]
        .as_u64()
        .expect("an offset");
    let texts: Vec<String> = (0..12).map(|n| format!("while resuming {n:02}")).collect();
    send_all(&mut other, &texts).await;
    other.close().await;
    // The other client's departure is a commit of its own: wait until it is in.
    loop {
        let update = client.recv_kind("TransactionUpdate").await;
        if update["entry_point"]["name"] == "disconnected" {
            break;
        }
    }

    client
        .send(resubscribe(2, &[MESSAGES, ONLINE], applied))
        .await;
    let answer = Answer::receive(&mut client, 2).await;
    assert_eq!(answer.applied["resumed"], true, "{}", answer.applied);
    assert!(answer.parts.len() >= 3, "{} parts", answer.parts.len());
    let messages = Value::Array(answer.rows("tables", "message"));
    assert_eq!(messages.as_array().map(Vec::len), Some(12), "{messages}");
    for text in &texts {
        assert!(has_text(&messages, text), "{text} is missing");
    }
    assert!(answer.rows("tables", "user").is_empty());
    assert_eq!(
        answer.rows("deletes", "user").len(),
        1,
        "the other user went offline"
    );
    live.stop().await;
}

/// A subscription whose rows' pointers alone are more than the connection may have queued is
/// refused with a `SubscriptionError` naming the sizes, and the connection goes on serving.
#[tokio::test]
async fn a_subscription_with_more_rows_than_the_queue_holds_is_refused() {
    let mut config = config();
    config.node.outbound_bytes = 100; // 16 bytes a row: six rows fit, seven do not
    let live = Live::start(config).await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    let texts: Vec<String> = (0..7).map(|n| format!("row {n}")).collect();
    send_all(&mut client, &texts[..6]).await;
    client.send(subscribe(1, &[MESSAGES])).await;
    assert_eq!(
        Answer::receive(&mut client, 1)
            .await
            .rows("tables", "message")
            .len(),
        6
    );
    send_all(&mut client, &texts[6..]).await;
    client.send(subscribe(2, &[MESSAGES])).await;
    let refused = client.recv_kind("SubscriptionError").await;
    assert_eq!(refused["query_set_id"], 2);
    let message = refused["message"].as_str().expect("a message");
    assert!(
        message.contains("more than 6") && message.contains("100 bytes"),
        "{message}"
    );
    client
        .send(call_reducer(9, "send", &["still served"]))
        .await;
    let update = client.recv_kind("TransactionUpdate").await;
    assert_eq!(update["request_id"], 9, "{update}");
    live.stop().await;
}
