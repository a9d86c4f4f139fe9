//! `GET /v1/subscribe` over real loopback sockets: the handshake, subscriptions and their
//! updates in both encodings, calls, bad input, slow clients, disconnects and shutdown.

use crate::live::{
    call, call_reducer, has_text, one_off, subscribe, Client, Connect, Encoding, Live,
};
use serde_json::{json, Value};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;
use wasmod_server::ServerConfig;

/// How long a test waits to be sure a message does not come.
const QUIET: Duration = Duration::from_millis(300);

async fn live() -> Live {
    Live::start(ServerConfig::default()).await
}

#[tokio::test]
async fn an_identity_is_issued_without_a_token_and_kept_with_one() {
    let live = live().await;
    let mut first = Client::connect(&live, Encoding::Json, Connect::default()).await;
    let (identity, token, connection) = first.hello().await;
    assert_eq!(identity.len(), 64);
    assert_eq!(connection.len(), 32);
    let query = format!("?token={token}");
    let by_query = Connect {
        query: &query,
        ..Connect::default()
    };
    let mut again = Client::connect(&live, Encoding::Binary, by_query).await;
    let (same, _, other_connection) = again.hello().await;
    assert_eq!(same, identity);
    assert_ne!(
        other_connection, connection,
        "each connection has its own id"
    );
    let by_header = Connect {
        bearer: Some(&token),
        ..Connect::default()
    };
    let mut third = Client::connect(&live, Encoding::Json, by_header).await;
    assert_eq!(third.hello().await.0, identity);
    live.stop().await;
}

#[tokio::test]
async fn an_unknown_subprotocol_or_a_bad_token_is_refused_before_the_upgrade() {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let live = live().await;
    let mut request = live.url("").into_client_request().expect("a request");
    let headers = request.headers_mut();
    headers.insert(
        "Sec-WebSocket-Protocol",
        "v2.xml.wasmod".parse().expect("header"),
    );
    let refused = tokio_tungstenite::connect_async(request)
        .await
        .expect_err("refused");
    assert!(refused.to_string().contains("400"), "{refused}");
    let mut request = live
        .url("?token=nonsense")
        .into_client_request()
        .expect("a request");
    let headers = request.headers_mut();
    headers.insert(
        "Sec-WebSocket-Protocol",
        "v1.json.wasmod".parse().expect("header"),
    );
    let refused = tokio_tungstenite::connect_async(request)
        .await
        .expect_err("refused");
    assert!(refused.to_string().contains("401"), "{refused}");
    live.stop().await;
}

/// A subscriber sees another client's message; the sender sees its own update once, with its
/// request id.
async fn updates_reach_subscribers(encoding: Encoding) {
    let live = live().await;
    let mut reader = Client::connect(&live, encoding, Connect::default()).await;
    reader.hello().await;
    reader.send(subscribe(7, &["SELECT * FROM message"])).await;
    let applied = reader.recv_kind("SubscribeApplied").await;
    assert_eq!(applied["query_set_id"], 7);
    assert_eq!(applied["tables"][0]["table"], "message");
    assert_eq!(applied["tables"][0]["rows"], json!([]));

    let mut writer = Client::connect(&live, encoding, Connect::default()).await;
    writer.hello().await;
    writer.send(subscribe(1, &["SELECT * FROM message"])).await;
    writer.recv_kind("SubscribeApplied").await;
    writer.send(call_reducer(42, "send", &["hello"])).await;

    let update = reader.recv_kind("TransactionUpdate").await;
    assert_eq!(update["request_id"], Value::Null, "{update}");
    assert_eq!(update["entry_point"]["name"], "send");
    let table = &update["changes"][0]["tables"][0];
    assert_eq!(update["changes"][0]["query_set_id"], 7);
    assert_eq!(table["table"], "message");
    assert!(has_text(&table["inserts"], "hello"), "{update}");

    let own = writer.recv_kind("TransactionUpdate").await;
    assert_eq!(own["request_id"], 42, "{own}");
    assert_eq!(own["status"], "Committed");
    assert_eq!(own["offset"], update["offset"]);
    assert!(has_text(
        &own["changes"][0]["tables"][0]["inserts"],
        "hello"
    ));
    assert!(
        writer.next(QUIET).await.is_none(),
        "the caller sees its update once"
    );
    live.stop().await;
}

#[tokio::test]
async fn updates_reach_subscribers_in_json() {
    updates_reach_subscribers(Encoding::Json).await;
}

#[tokio::test]
async fn updates_reach_subscribers_in_binary() {
    updates_reach_subscribers(Encoding::Binary).await;
}

#[tokio::test]
async fn sender_queries_select_the_subscribers_own_rows_and_one_off_queries_too() {
    let live = live().await;
    let mut alice = Client::connect(&live, Encoding::Json, Connect::default()).await;
    let (identity, ..) = alice.hello().await;
    let mut bob = Client::connect(&live, Encoding::Json, Connect::default()).await;
    bob.hello().await;
    alice
        .send(subscribe(
            1,
            &["SELECT * FROM user WHERE identity = :sender"],
        ))
        .await;
    let applied = alice.recv_kind("SubscribeApplied").await;
    let rows = applied["tables"][0]["rows"]
        .as_array()
        .expect("rows")
        .clone();
    assert_eq!(rows.len(), 1, "{applied}");
    assert_eq!(rows[0]["identity"], identity.as_str());
    assert_eq!(rows[0]["online"], true);

    let one_off = |request_id: u32, query: &str| json!({"OneOffQuery": {"request_id": request_id, "query": query}});
    alice
        .send(one_off(4, "SELECT * FROM user WHERE identity = :sender"))
        .await;
    let answer = alice.recv_kind("OneOffQueryResult").await;
    assert_eq!(answer["request_id"], 4);
    assert_eq!(answer["result"]["ok"][0]["table"], "user", "{answer}");
    assert_eq!(
        answer["result"]["ok"][0]["rows"][0]["identity"],
        identity.as_str()
    );
    alice.send(one_off(5, "SELECT * FROM config")).await;
    let refused = alice.recv_kind("OneOffQueryResult").await;
    let message = refused["result"]["err"].as_str().expect("an error");
    assert!(message.contains("private"), "{refused}");
    live.stop().await;
}

#[tokio::test]
async fn bad_queries_and_private_tables_are_subscription_errors() {
    let live = live().await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    for (query, says) in [
        ("SELECT * FROM config", "private"),
        ("SELECT * FROM nowhere", "no table"),
        ("DELETE FROM message", "not supported"),
    ] {
        client
            .send(subscribe(3, &["SELECT * FROM message", query]))
            .await;
        let error = client.recv_kind("SubscriptionError").await;
        assert_eq!(error["query_set_id"], 3);
        let message = error["message"].as_str().expect("a message");
        assert!(message.contains(says), "{query}: {message}");
    }
    // Nothing was subscribed: the id is still free.
    client.send(subscribe(3, &["SELECT * FROM message"])).await;
    client.recv_kind("SubscribeApplied").await;
    live.stop().await;
}

/// One query text with a chain of 3,000 `+` (about 6 KB) aborted the whole server with a stack
/// overflow, sent as a subscription, a one-off query or a `DELETE`, by a client without a
/// token; so did a 64 KiB one in any position. Each is now that client's error, and the server
/// goes on serving it and the others.
#[tokio::test]
async fn deep_expressions_are_the_clients_error_and_the_server_keeps_serving() {
    let live = live().await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    let chain = |terms: usize| format!("1{}", "+1".repeat(terms));
    let texts = [
        format!("SELECT * FROM message WHERE id = {}", chain(3_000)),
        format!("SELECT * FROM message WHERE {} = id", chain(3_000)),
        format!("DELETE FROM message WHERE id = {}", chain(3_000)),
        format!("SELECT * FROM message WHERE id = {}", chain(30_000)),
        format!(
            "SELECT * FROM message WHERE sender IS NULL{}",
            " IS NULL".repeat(6_000)
        ),
    ];
    for (n, text) in texts.iter().enumerate() {
        client.send(subscribe(7, &[text])).await;
        let error = client.recv_kind("SubscriptionError").await;
        let message = error["message"].as_str().expect("a message");
        assert!(message.contains("not supported"), "{message}");
        client.send(one_off(n as u32, text)).await;
        let answer = client.recv_kind("OneOffQueryResult").await;
        assert!(answer["result"]["err"].is_string(), "{answer}");
    }
    client.send(subscribe(7, &["SELECT * FROM message"])).await;
    client.recv_kind("SubscribeApplied").await;
    let mut other = Client::connect(&live, Encoding::Binary, Connect::default()).await;
    other.hello().await;
    live.stop().await;
}

#[tokio::test]
async fn unsubscribing_stops_the_updates() {
    let live = live().await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    let mut other = Client::connect(&live, Encoding::Json, Connect::default()).await;
    other.hello().await;
    client.send(subscribe(5, &["SELECT * FROM message"])).await;
    client.recv_kind("SubscribeApplied").await;
    other.send(call_reducer(1, "send", &["one"])).await;
    client.recv_kind("TransactionUpdate").await;
    client
        .send(json!({"Unsubscribe": {"query_set_id": 5}}))
        .await;
    // The unsubscribe is handled before the next commit is evaluated: wait until the
    // evaluation task has seen it by subscribing to something else and waiting for its rows
    // (the task handles a connection's requests in order). A query refused as it is parsed
    // would not do: the socket's reader refuses it without asking the task.
    client.send(subscribe(6, &["SELECT * FROM user"])).await;
    client.recv_kind("SubscribeApplied").await;
    other.send(call_reducer(2, "send", &["two"])).await;
    other.recv_kind("TransactionUpdate").await;
    assert!(
        client.next(QUIET).await.is_none(),
        "no update after unsubscribing"
    );
    live.stop().await;
}

#[tokio::test]
async fn calls_to_lifecycle_reducers_are_refused() {
    let live = live().await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    client.send(call_reducer(9, "init", &[])).await;
    let answer = client.recv_kind("CallResult").await;
    assert_eq!(answer["request_id"], 9);
    assert_eq!(
        answer["result"]["err"]["code"], "lifecycle_reducer",
        "{answer}"
    );
    live.stop().await;
}

#[tokio::test]
async fn a_malformed_frame_closes_that_socket_only() {
    let live = live().await;
    let mut bad = Client::connect(&live, Encoding::Json, Connect::default()).await;
    bad.hello().await;
    let mut good = Client::connect(&live, Encoding::Binary, Connect::default()).await;
    good.hello().await;
    bad.send_frame(Message::text("{\"CallReducer\": 12")).await;
    let (code, reason) = bad.closed().await;
    assert_eq!(code, 1007, "{reason}");
    assert!(reason.contains("JSON"), "{reason}");
    good.send_frame(Message::binary(vec![0xff, 0xff])).await;
    let (code, _) = good.closed().await;
    assert_eq!(code, 1007);
    let mut fine = Client::connect(&live, Encoding::Binary, Connect::default()).await;
    fine.hello().await;
    fine.send(call_reducer(1, "send", &["still here"])).await;
    assert_eq!(
        fine.recv_kind("TransactionUpdate").await["status"],
        "Committed"
    );
    live.stop().await;
}

#[tokio::test]
async fn pings_are_answered() {
    let live = live().await;
    let mut client = Client::connect(&live, Encoding::Binary, Connect::default()).await;
    client.hello().await;
    client.ping(b"are you there").await;
    client
        .send(call_reducer(1, "send", &["after the ping"]))
        .await;
    assert_eq!(client.recv_kind("TransactionUpdate").await["request_id"], 1);
    live.stop().await;
}

#[tokio::test]
async fn a_message_over_the_size_limit_closes_the_socket() {
    let live = live().await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    let huge = call_reducer(1, "send", &[&"x".repeat(2 << 20)]);
    client.send(huge).await;
    let (code, reason) = client.closed().await;
    assert_eq!(code, 1009, "{reason}");
    live.stop().await;
}

#[tokio::test]
async fn pipelined_calls_are_answered_in_order() {
    // Twelve in progress at once, all of one identity (the default bound is 8).
    let mut config = ServerConfig::default();
    config.node.max_calls_per_identity = 12;
    let live = Live::start(config).await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    let calls = 12;
    for request_id in 0..calls {
        let call = if request_id % 3 == 2 {
            call_reducer(request_id, "send", &[""]) // refused by the module: empty
        } else {
            call_reducer(request_id, "send", &["pipelined"])
        };
        client.send(call).await;
    }
    for request_id in 0..calls {
        let answer = client.recv_kind("TransactionUpdate").await;
        assert_eq!(answer["request_id"], request_id, "{answer}");
        let committed = answer["status"] == "Committed";
        assert_eq!(committed, request_id % 3 != 2, "{answer}");
    }
    live.stop().await;
}

#[tokio::test]
async fn a_client_that_stops_reading_is_closed_while_others_get_every_update() {
    let mut config = ServerConfig::default();
    config.node.outbound_messages = 128;
    config.node.outbound_bytes = 1 << 20;
    let live = Live::start(config).await;
    let small = Connect {
        small_buffer: true,
        ..Connect::default()
    };
    let mut slow = Client::connect(&live, Encoding::Json, small).await;
    slow.hello().await;
    // Many query sets of one query: each update to the slow client is large, so that it
    // passes what the kernel's buffers hold in a few commits.
    let sets = 64;
    for query_set_id in 0..sets {
        slow.send(subscribe(query_set_id, &["SELECT * FROM message"]))
            .await;
    }
    for _ in 0..sets {
        slow.recv_kind("SubscribeApplied").await;
    }
    let mut fast = Client::connect(&live, Encoding::Json, Connect::default()).await;
    fast.hello().await;
    fast.send(subscribe(1, &["SELECT * FROM message"])).await;
    fast.recv_kind("SubscribeApplied").await;

    let text = "x".repeat(1000);
    let messages = 200;
    for request_id in 0..messages {
        fast.send(call_reducer(request_id, "send", &[&text])).await;
        // The fast client reads everything: its own updates, one per call.
        let update = fast.recv_kind("TransactionUpdate").await;
        assert_eq!(update["request_id"], request_id);
        assert!(has_text(
            &update["changes"][0]["tables"][0]["inserts"],
            &text
        ));
    }
    let (code, reason) = slow.closed().await;
    assert_eq!(code, 4001, "{reason}");
    assert!(reason.contains("too slow"), "{reason}");
    live.stop().await;
}

#[tokio::test]
async fn closing_the_socket_runs_client_disconnected() {
    let live = live().await;
    let mut watcher = Client::connect(&live, Encoding::Json, Connect::default()).await;
    watcher.hello().await;
    let mut leaving = Client::connect(&live, Encoding::Json, Connect::default()).await;
    let (identity, ..) = leaving.hello().await;
    let query = format!("SELECT * FROM user WHERE identity = 0x{identity}");
    watcher.send(subscribe(1, &[&query])).await;
    let applied = watcher.recv_kind("SubscribeApplied").await;
    assert_eq!(applied["tables"][0]["rows"][0]["online"], true, "{applied}");
    leaving.close().await;
    let update = watcher.recv_kind("TransactionUpdate").await;
    assert_eq!(update["entry_point"]["name"], "disconnected", "{update}");
    let row = &update["changes"][0]["tables"][0]["inserts"][0];
    assert_eq!(row["online"], false, "{update}");
    live.stop().await;
}

#[tokio::test]
async fn shutdown_closes_every_socket_and_disconnects_its_connection() {
    let live = live().await;
    let mut feed = live.database.feed().subscribe();
    let mut clients = Vec::new();
    for encoding in [Encoding::Json, Encoding::Binary] {
        let mut client = Client::connect(&live, encoding, Connect::default()).await;
        client.hello().await;
        clients.push(client);
    }
    live.stop().await;
    for mut client in clients {
        let (code, reason) = client.closed().await;
        assert_eq!(code, 1001, "{reason}");
    }
    let mut disconnected = 0;
    while let Ok(commit) = feed.try_recv() {
        let entry = commit.meta.entry.as_ref();
        disconnected += usize::from(entry.is_some_and(|entry| &*entry.name == "disconnected"));
    }
    assert_eq!(disconnected, 2, "every connection was disconnected");
}

#[tokio::test]
async fn a_silent_client_is_pinged_then_closed() {
    let mut config = ServerConfig::default();
    config.node.ping_interval = Duration::from_millis(200);
    let live = Live::start(config).await;
    let mut silent = Client::connect(&live, Encoding::Json, Connect::default()).await;
    silent.hello().await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let (code, reason) = silent.closed().await;
    assert_eq!(code, 4003, "{reason}");
    assert!(reason.contains("not even a pong"), "{reason}");
    live.stop().await;
}

#[tokio::test]
async fn a_client_that_answers_pings_stays_connected() {
    let mut config = ServerConfig::default();
    config.node.ping_interval = Duration::from_millis(200);
    let live = Live::start(config).await;
    let mut quiet = Client::connect(&live, Encoding::Json, Connect::default()).await;
    quiet.hello().await;
    // Reading answers the server's pings (the client library does), so it is never idle.
    for _ in 0..10 {
        assert!(
            quiet.next(Duration::from_millis(100)).await.is_none(),
            "nothing to read"
        );
    }
    quiet.send(call_reducer(1, "send", &["still here"])).await;
    assert_eq!(
        quiet.recv_kind("TransactionUpdate").await["status"],
        "Committed"
    );
    live.stop().await;
}

/// Whether a call's returned value holds `text`: in its JSON, or in its encoding's bytes.
fn value_has_text(value: &Value, text: &str) -> bool {
    match value.as_array() {
        Some(bytes) if bytes.iter().all(Value::is_u64) => {
            let bytes: Vec<u8> = bytes
                .iter()
                .filter_map(Value::as_u64)
                .map(|b| b as u8)
                .collect();
            bytes
                .windows(text.len())
                .any(|window| window == text.as_bytes())
        }
        _ => value.to_string().contains(text),
    }
}

async fn procedures_and_views_are_answered(encoding: Encoding) {
    let live = live().await;
    let mut client = Client::connect(&live, encoding, Connect::default()).await;
    client.hello().await;
    client
        .send(call_reducer(1, "send", &["for the views"]))
        .await;
    client.recv_kind("TransactionUpdate").await;

    client.send(call("CallView", 2, "my_messages", &[])).await;
    let mine = client.recv_kind("CallResult").await;
    assert_eq!(mine["request_id"], 2, "{mine}");
    assert!(
        value_has_text(&mine["result"]["ok"], "for the views"),
        "{mine}"
    );

    client.send(call("CallView", 3, "recent", &[])).await;
    let recent = client.recv_kind("CallResult").await;
    assert_eq!(recent["request_id"], 3, "{recent}");
    assert!(
        value_has_text(&recent["result"]["ok"], "for the views"),
        "{recent}"
    );

    // No outbound HTTP is allowed: the procedure runs and returns its own error.
    client
        .send(call(
            "CallProcedure",
            4,
            "fetch_motd",
            &["http://127.0.0.1:9/"],
        ))
        .await;
    let motd = client.recv_kind("CallResult").await;
    assert_eq!(motd["request_id"], 4, "{motd}");
    assert!(
        motd["result"].get("ok").is_some(),
        "the procedure ran: {motd}"
    );

    for (request_id, kind, name) in [(5, "CallView", "nope"), (6, "CallProcedure", "send")] {
        client.send(call(kind, request_id, name, &[])).await;
        let refused = client.recv_kind("CallResult").await;
        assert_eq!(refused["request_id"], request_id, "{refused}");
        assert_eq!(
            refused["result"]["err"]["code"], "no_such_entry",
            "{refused}"
        );
    }
    live.stop().await;
}

#[tokio::test]
async fn procedures_and_views_are_answered_in_json() {
    procedures_and_views_are_answered(Encoding::Json).await;
}

#[tokio::test]
async fn procedures_and_views_are_answered_in_binary() {
    procedures_and_views_are_answered(Encoding::Binary).await;
}

/// The database's writer's lock, held on a thread of its own until released: the module's
/// thread stops at the first call's transaction, and the calls after it stay queued.
struct WriterHeld {
    release: std::sync::mpsc::Sender<()>,
    holder: std::thread::JoinHandle<()>,
}

impl WriterHeld {
    /// Takes the lock, and returns once it is held.
    fn new(live: &Live) -> Self {
        let (release, released) = std::sync::mpsc::channel::<()>();
        let database = live.database.clone();
        let (held, holding) = std::sync::mpsc::channel();
        let holder = std::thread::spawn(move || {
            let tx = database.begin_mut();
            held.send(()).expect("the test waits");
            let _ = released.recv();
            drop(tx);
        });
        holding.recv().expect("the lock is held");
        Self { release, holder }
    }

    /// Lets the module's thread go on.
    fn release(self) {
        self.release.send(()).expect("the holder waits");
        self.holder.join().expect("the holder");
    }
}

#[tokio::test]
async fn calls_past_sixteen_in_flight_are_answered_busy_and_the_rest_run() {
    // The identity may have as many calls in progress as one connection: the connection's
    // bound is the one under test (the identity's is `identity_calls`').
    let mut config = ServerConfig::default();
    config.node.max_calls_per_identity = 16;
    let live = Live::start(config).await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    let held = WriterHeld::new(&live);
    let calls = 24;
    for request_id in 0..calls {
        client
            .send(call_reducer(request_id, "send", &["crowded"]))
            .await;
    }
    let mut busy = Vec::new();
    for _ in 0..calls - 16 {
        let answer = client.recv_kind("CallResult").await;
        assert_eq!(answer["result"]["err"]["code"], "busy", "{answer}");
        busy.push(answer["request_id"].as_u64().expect("a request id"));
    }
    assert_eq!(busy, (16..u64::from(calls)).collect::<Vec<_>>());
    held.release();
    for request_id in 0..16 {
        let answer = client.recv_kind("TransactionUpdate").await;
        assert_eq!(answer["request_id"], request_id, "{answer}");
        assert_eq!(answer["status"], "Committed", "{answer}");
    }
    live.stop().await;
}

#[tokio::test]
async fn calls_wait_for_room_in_a_full_module_queue_instead_of_being_refused() {
    // Room for two calls waiting: three connections with eight calls each fill it many times.
    let mut config = ServerConfig::default();
    config.node.queue = 2;
    let live = Live::start(config).await;
    let mut clients = Vec::new();
    for _ in 0..3 {
        let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
        client.hello().await;
        clients.push(client);
    }
    let held = WriterHeld::new(&live);
    for client in &mut clients {
        for request_id in 0..8 {
            client
                .send(call_reducer(request_id, "send", &["waiting"]))
                .await;
        }
    }
    held.release();
    for client in &mut clients {
        for request_id in 0..8 {
            let answer = client.recv_kind("TransactionUpdate").await;
            assert_eq!(answer["request_id"], request_id, "{answer}");
            assert_eq!(answer["status"], "Committed", "{answer}");
        }
    }
    live.stop().await;
}

/// The value of the series `series` (name and labels) in the metrics `text`.
fn series(text: &str, series: &str) -> u64 {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| panic!("no `{series}` in:\n{text}"))
}

#[tokio::test]
async fn the_real_time_side_is_counted_in_the_metrics() {
    let mut config = ServerConfig::default();
    config.node.ping_interval = Duration::from_millis(200);
    let live = Live::start(config).await;
    let mut clients = Vec::new();
    for _ in 0..2 {
        let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
        client.hello().await;
        client.send(subscribe(1, &["SELECT * FROM message"])).await;
        client.recv_kind("SubscribeApplied").await;
        clients.push(client);
    }
    clients[0].send(subscribe(2, &["SELECT * FROM user"])).await;
    clients[0].recv_kind("SubscribeApplied").await;
    clients[1].send(call_reducer(1, "send", &["counted"])).await;
    for client in &mut clients {
        client.recv_kind("TransactionUpdate").await;
    }
    let text = live.metrics().await;
    assert_eq!(series(&text, "wasmod_ws_connections"), 2, "{text}");
    assert_eq!(series(&text, "wasmod_ws_query_sets"), 3, "{text}");
    assert_eq!(series(&text, "wasmod_ws_queries{kind=\"subscribed\"}"), 3);
    assert_eq!(series(&text, "wasmod_ws_queries{kind=\"distinct\"}"), 2);
    assert!(series(&text, "wasmod_ws_updates_total") >= 2, "{text}");
    assert!(
        series(&text, "wasmod_ws_sent_messages_total") >= 7,
        "{text}"
    );
    assert!(series(&text, "wasmod_ws_sent_bytes_total") > 500, "{text}");
    assert!(
        series(&text, "wasmod_ws_queue_high_water_messages") >= 1,
        "{text}"
    );
    assert!(
        series(&text, "wasmod_ws_evaluation_seconds_count") >= 1,
        "{text}"
    );
    assert_eq!(series(&text, "wasmod_ws_dropped_total{reason=\"idle\"}"), 0);

    // The clients go silent (reading would answer the server's pings): closed as idle, and
    // counted.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let (code, _) = clients[0].closed().await;
    assert_eq!(code, 4003);
    drop(clients);
    tokio::time::sleep(QUIET).await;
    let text = live.metrics().await;
    assert!(
        series(&text, "wasmod_ws_dropped_total{reason=\"idle\"}") >= 1,
        "{text}"
    );
    live.stop().await;
}

/// A writer into a shared buffer, to read what was logged.
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .expect("not poisoned")
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_clients_token_in_the_uri_is_not_logged() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _logging = tracing::subscriber::set_default(subscriber);
    let router = crate::support::router();
    let (_, token) = crate::support::identity(&router).await;
    // Not an upgrade, so refused; its request span is logged all the same.
    crate::support::get(&router, &format!("/v1/subscribe?token={token}&x=1")).await;
    let logged = String::from_utf8(captured.0.lock().expect("not poisoned").clone()).unwrap();
    assert!(
        logged.contains("uri=/v1/subscribe?token=REDACTED&x=1"),
        "{logged}"
    );
    assert!(!logged.contains(&token), "the token was logged: {logged}");
}
