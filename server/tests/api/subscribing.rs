//! What one client may make the server subscribe, evaluate and hold (issue 27, "Repeated
//! queries amplify memory and stall commits"): repeated queries are subscribed once, and the
//! caps on queries per set, sets per connection, distinct queries per identity and rows read
//! each refuse with a `SubscriptionError` that names the limit.

use crate::live::{call_reducer, one_off, subscribe, Client, Connect, Encoding, Live};
use serde_json::json;
use wasmod_server::ServerConfig;

const MESSAGES: &str = "SELECT * FROM message";

/// A server with `config`, `messages` messages sent, and a client connected to it.
async fn with_messages(config: ServerConfig, messages: u32) -> (Live, Client) {
    let live = Live::start(config).await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    for n in 0..messages {
        client
            .send(call_reducer(n, "send", &[&format!("m{n}")]))
            .await;
        client.recv_kind("TransactionUpdate").await;
    }
    (live, client)
}

/// The message of the `SubscriptionError` `client` receives next for query set `id`.
async fn refusal(client: &mut Client, id: u32) -> String {
    let error = client.recv_kind("SubscriptionError").await;
    assert_eq!(error["query_set_id"], id, "{error}");
    error["message"].as_str().expect("a message").to_owned()
}

#[tokio::test]
async fn a_query_repeated_in_a_set_is_subscribed_once() {
    let (live, mut client) = with_messages(ServerConfig::default(), 2).await;
    // The same query in other words: with the table's name, and with the literal first.
    let same = "SELECT message.* FROM message";
    let recent = "SELECT * FROM message WHERE id >= 1";
    let also_recent = "SELECT * FROM message WHERE 1 <= id";
    client
        .send(subscribe(
            1,
            &[
                MESSAGES,
                same,
                "SELECT * FROM user",
                MESSAGES,
                recent,
                also_recent,
            ],
        ))
        .await;
    let applied = client.recv_kind("SubscribeApplied").await;
    let tables = applied["tables"].as_array().expect("tables");
    let names: Vec<_> = tables.iter().map(|table| &table["table"]).collect();
    assert_eq!(names, ["message", "user", "message"], "{applied}");
    assert_eq!(tables[0]["rows"].as_array().map(Vec::len), Some(2));
    assert_eq!(tables[2]["rows"].as_array().map(Vec::len), Some(2));
    // The client holds each row once per query, and updates agree with the rows sent.
    client.send(call_reducer(9, "send", &["again"])).await;
    let update = client.recv_kind("TransactionUpdate").await;
    let changed = update["changes"][0]["tables"].as_array().expect("tables");
    assert_eq!(changed.len(), 2, "{update}");
    live.stop().await;
}

#[tokio::test]
async fn a_subscribe_with_more_queries_than_a_set_may_hold_is_refused() {
    let mut config = ServerConfig::default();
    config.node.max_queries_per_set = 3;
    let (live, mut client) = with_messages(config, 0).await;
    client.send(subscribe(1, &[MESSAGES; 4])).await;
    let message = refusal(&mut client, 1).await;
    assert!(message.contains("--max-queries-per-set"), "{message}");
    assert!(message.contains("4 queries"), "{message}");
    client.send(subscribe(1, &[MESSAGES; 3])).await;
    client.recv_kind("SubscribeApplied").await;
    live.stop().await;
}

#[tokio::test]
async fn a_connection_holds_at_most_its_query_sets() {
    let mut config = ServerConfig::default();
    config.node.max_query_sets_per_connection = 2;
    let (live, mut client) = with_messages(config, 0).await;
    for id in [1, 2] {
        client.send(subscribe(id, &[MESSAGES])).await;
        client.recv_kind("SubscribeApplied").await;
    }
    client.send(subscribe(3, &[MESSAGES])).await;
    let message = refusal(&mut client, 3).await;
    assert!(
        message.contains("--max-query-sets-per-connection"),
        "{message}"
    );
    // Another connection has sets of its own; this one may subscribe again once it ends one.
    let mut other = Client::connect(&live, Encoding::Json, Connect::default()).await;
    other.hello().await;
    other.send(subscribe(3, &[MESSAGES])).await;
    other.recv_kind("SubscribeApplied").await;
    client
        .send(json!({"Unsubscribe": {"query_set_id": 1}}))
        .await;
    client.send(subscribe(3, &[MESSAGES])).await;
    client.recv_kind("SubscribeApplied").await;
    live.stop().await;
}

#[tokio::test]
async fn an_identity_holds_at_most_its_distinct_queries_over_all_its_connections() {
    let mut config = ServerConfig::default();
    config.node.max_queries_per_identity = 2;
    let (live, mut first) = with_messages(config, 0).await;
    let (_, token, _) = {
        let mut again = Client::connect(&live, Encoding::Json, Connect::default()).await;
        again.hello().await
    };
    let query = format!("?token={token}");
    let as_one = || Connect {
        query: &query,
        ..Connect::default()
    };
    let mut one = Client::connect(&live, Encoding::Json, as_one()).await;
    one.hello().await;
    let mut two = Client::connect(&live, Encoding::Json, as_one()).await;
    two.hello().await;
    let users = "SELECT * FROM user";
    let mine = "SELECT * FROM message WHERE id = 1";
    one.send(subscribe(1, &[MESSAGES, users])).await;
    one.recv_kind("SubscribeApplied").await;
    // The same queries again, in another set and on another connection, add none.
    two.send(subscribe(1, &[users])).await;
    two.recv_kind("SubscribeApplied").await;
    two.send(subscribe(2, &[mine, users])).await;
    let message = refusal(&mut two, 2).await;
    assert!(message.contains("--max-queries-per-identity"), "{message}");
    // Other identities are not concerned; once a query is no longer held, there is room.
    first.send(subscribe(1, &[mine, users])).await;
    first.recv_kind("SubscribeApplied").await;
    one.send(json!({"Unsubscribe": {"query_set_id": 1}})).await;
    // The unsubscribe has been handled once a later request of the connection is answered.
    one.send(subscribe(2, &[users])).await;
    one.recv_kind("SubscribeApplied").await;
    two.send(subscribe(2, &[mine, users])).await;
    two.recv_kind("SubscribeApplied").await;
    live.stop().await;
}

/// Twenty messages of fifteen distinct queries of 2,500 `OR` terms each made 200 commits take
/// 29 times as long: what an identity's queries cost each commit is bounded, counted once per
/// distinct query over all its connections.
#[tokio::test]
async fn an_identity_holds_queries_costing_at_most_its_limit() {
    let mut config = ServerConfig::default();
    config.node.max_query_cost_per_identity = 30;
    let (live, mut client) = with_messages(config, 0).await;
    let mut other = Client::connect(&live, Encoding::Json, Connect::default()).await;
    other.hello().await;
    // Each costs 21 reads a row: the row, and 20 comparisons.
    let terms = |first: u32| {
        let terms: Vec<String> = (first..first + 20).map(|id| format!("id = {id}")).collect();
        format!("SELECT * FROM message WHERE {}", terms.join(" OR "))
    };
    let (low, high) = (terms(0), terms(100));
    client.send(subscribe(1, &[&low])).await;
    client.recv_kind("SubscribeApplied").await;
    client.send(subscribe(2, &[&high])).await;
    let message = refusal(&mut client, 2).await;
    assert!(
        message.contains("--max-query-cost-per-identity") && message.contains("cost 21"),
        "{message}"
    );
    // A query it holds already costs nothing more; another identity has its own room.
    client.send(subscribe(3, &[&low, MESSAGES])).await;
    client.recv_kind("SubscribeApplied").await;
    other.send(subscribe(1, &[&high])).await;
    other.recv_kind("SubscribeApplied").await;
    // Once its costly query is no longer held, there is room again.
    client
        .send(json!({"Unsubscribe": {"query_set_id": 1}}))
        .await;
    client
        .send(json!({"Unsubscribe": {"query_set_id": 3}}))
        .await;
    client.send(subscribe(4, &[&high])).await;
    client.recv_kind("SubscribeApplied").await;
    live.stop().await;
}

#[tokio::test]
async fn a_query_set_that_reads_more_rows_than_it_may_is_refused() {
    let mut config = ServerConfig::default();
    config.node.max_subscription_reads = 5;
    let (live, mut client) = with_messages(config, 8).await;
    client.send(subscribe(1, &[MESSAGES])).await;
    let message = refusal(&mut client, 1).await;
    assert!(message.contains("--max-subscription-reads"), "{message}");
    // Through the primary key's index, it reads only the row it returns.
    client
        .send(subscribe(2, &["SELECT * FROM message WHERE id = 3"]))
        .await;
    let applied = client.recv_kind("SubscribeApplied").await;
    assert_eq!(
        applied["tables"][0]["rows"].as_array().map(Vec::len),
        Some(1)
    );
    live.stop().await;
}

#[tokio::test]
async fn a_one_off_query_that_reads_more_rows_than_it_may_is_refused() {
    let mut config = ServerConfig::default();
    config.node.max_subscription_reads = 5;
    let (live, mut client) = with_messages(config, 8).await;
    client.send(one_off(1, MESSAGES)).await;
    let refused = client.recv_kind("OneOffQueryResult").await;
    let message = refused["result"]["err"].as_str().expect("an error");
    assert!(message.contains("--max-subscription-reads"), "{refused}");
    client
        .send(one_off(2, "SELECT * FROM message WHERE id = 3"))
        .await;
    let answered = client.recv_kind("OneOffQueryResult").await;
    let rows = &answered["result"]["ok"][0]["rows"];
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{answered}");
    live.stop().await;
}
