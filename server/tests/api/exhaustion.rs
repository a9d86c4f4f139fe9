//! Issue 38 (Hardening III): every client bounded in bytes and in time. Each test is one of
//! the attacks made small enough to run in the suite, with the bound it must meet;
//! each failed before its fix. The measuring runs at the sizes are in
//! `exhaustion_measured.rs` (ignored by default, run by hand; `docs/security.md` quotes them).

use crate::live::{one_off, subscribe, Client, Connect, Encoding, Live, PATIENCE};
use crate::support::{identity, server};
use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use axum::response::Response;
use axum::Router;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower::ServiceExt;
use wasmod_abi::{Identity, Timestamp, Value};
use wasmod_host::datastore::{CommitMeta, Database};
use wasmod_host::AllowList;
use wasmod_node::ClientMemory;
use wasmod_server::{Server, ServerConfig};

/// Commits one message per text, directly, in one transaction, with ids from `first` on.
pub(crate) fn insert_messages(
    database: &Database,
    first: u64,
    texts: impl IntoIterator<Item = String>,
) {
    let table = database.datastore().table_id("message").expect("a table");
    let mut tx = database.begin_mut();
    for (id, text) in (first..).zip(texts) {
        let row = Value::Product(vec![
            Value::U64(id),
            Value::Identity(Identity::ZERO),
            Value::Timestamp(Timestamp::from_micros_since_unix_epoch(0)),
            Value::String(text),
        ]);
        tx.insert(table, &mut row.to_bytes()).expect("inserted");
    }
    let committed = database.commit(tx, CommitMeta::host()).expect("committed");
    committed.durable.wait().expect("durable");
}

/// A server with `config` whose clients may make it hold `ceiling` bytes, and its count of
/// what they hold.
fn server_holding(mut config: ServerConfig, ceiling: usize) -> (Server, Arc<ClientMemory>) {
    config.node.max_client_memory = ceiling;
    let server = server(config, AllowList::new());
    let memory = server.node().client_memory().clone();
    (server, memory)
}

/// Waits until `memory` holds nothing: what a client made the server hold is given back once
/// it has gone.
async fn given_back(memory: &ClientMemory) {
    let deadline = Instant::now() + PATIENCE;
    while memory.held() > 0 {
        assert!(
            Instant::now() < deadline,
            "{} bytes still held",
            memory.held()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Item 2: one identity subscribing the same 60 KB query in set after set. Each set's texts
/// are charged to it (and held once by the server): past its share of `--max-client-memory`
/// (an eighth: 1 MiB of 8 MiB here) a set is refused, naming the flag, and closing the socket
/// gives everything back. Before, 3,072 such sets held 2.97 GB.
#[tokio::test]
async fn query_set_texts_are_charged_to_their_identity_and_refused_past_its_share() {
    let (server, memory) = server_holding(ServerConfig::default(), 8 << 20);
    let live = Live::serve(server).await;
    let mut client = Client::connect(&live, Encoding::Binary, Connect::default()).await;
    client.hello().await;
    let query = format!(
        "SELECT * FROM message WHERE text = '{}'",
        "a".repeat(60_000)
    );
    let mut refused = None;
    for set in 1..=40 {
        client.send(subscribe(set, &[&query])).await;
        let answer = client.recv().await;
        if let Some(error) = answer.get("SubscriptionError") {
            refused = Some((set, error.to_string()));
            break;
        }
        assert!(answer.get("SubscribeApplied").is_some(), "{answer}");
    }
    let (set, error) = refused.expect("a set refused");
    assert_eq!(set, 18, "17 sets of 60 KB fit in 1 MiB");
    assert!(error.contains("--max-client-memory"), "{error}");
    assert!(memory.held() <= 1 << 20, "{}", memory.held());
    client.close().await;
    given_back(&memory).await;
}

/// Item 3: a one-off answer is queued at its size in the client's encoding. A row of 20,000
/// control characters is 20 KB in binary and 120 KB in JSON (`\u0001`): over a queue of
/// 64 KiB it is refused in JSON and sent in binary. Before, JSON answers were counted at
/// their binary size, and ten sockets that never read held 1.37 GB.
#[tokio::test]
async fn a_one_off_answer_is_counted_at_its_size_in_the_clients_encoding() {
    let mut config = ServerConfig::default();
    config.node.outbound_bytes = 64 << 10;
    let live = Live::start(config).await;
    insert_messages(&live.database, 1, ["\u{1}".repeat(20_000)]);
    let mut answers = Vec::new();
    for encoding in [Encoding::Binary, Encoding::Json] {
        let mut client = Client::connect(&live, encoding, Connect::default()).await;
        client.hello().await;
        client.send(one_off(1, "SELECT * FROM message")).await;
        answers.push(client.recv_kind("OneOffQueryResult").await["result"].clone());
    }
    assert!(answers[0].get("ok").is_some(), "binary: {}", answers[0]);
    let error = answers[1]["err"].as_str().expect("refused in JSON");
    assert!(
        error.contains("more than this connection may have queued"),
        "{error}"
    );
}

/// A page request for `uri` with `token`, its answer kept unread.
async fn page(router: &Router, uri: &str, token: &str) -> Response {
    let request = Request::get(uri)
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .body(Body::empty())
        .expect("a request");
    router.clone().oneshot(request).await.expect("infallible")
}

/// Item 6: a reader that asks for pages and does not read them holds each page's JSON until
/// it is sent: charged to it, so past its share (2 MiB of 16 MiB here) a page is refused with
/// `429` naming the flag, while another identity reads on. Before, 600 paced requests held
/// 2.72 GB.
#[tokio::test]
async fn pages_not_read_are_charged_to_their_reader_and_refused_past_its_share() {
    let (server, memory) = server_holding(ServerConfig::default(), 16 << 20);
    insert_messages(
        server.database(),
        1,
        (0..40).map(|n| format!("{n:05}{}", "x".repeat(10_000))),
    );
    let router = server.router();
    let (_, token) = identity(&router).await;
    let mut unread = Vec::new();
    let refused = loop {
        let answer = page(&router, "/v1/tables/message?limit=10", &token).await;
        if answer.status() != StatusCode::OK {
            break answer;
        }
        unread.push(answer);
        assert!(unread.len() < 100, "never refused");
    };
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let body = axum::body::to_bytes(refused.into_body(), usize::MAX)
        .await
        .expect("the body");
    let body = String::from_utf8_lossy(&body);
    assert!(body.contains("--max-client-memory"), "{body}");
    assert!(unread.len() >= 10, "{} pages of ~100 KB", unread.len());
    assert!(memory.held() <= 2 << 20, "{}", memory.held());
    let (_, bystander) = identity(&router).await;
    let read = page(&router, "/v1/tables/message?limit=10", &bystander).await;
    assert_eq!(read.status(), StatusCode::OK, "another identity reads on");
    drop((unread, read));
    given_back(&memory).await;
}

/// Item 7: a client that pings without reading made its pongs wait in the socket's buffer,
/// up to 16 MiB each (64 such sockets held 1.19 GB). Past a burst of 64 pings, then one
/// every 100 ms, the socket is closed with `1008`.
#[tokio::test]
async fn a_client_that_pings_past_its_allowance_is_closed() {
    let live = Live::start(ServerConfig::default()).await;
    let mut client = Client::connect(&live, Encoding::Binary, Connect::default()).await;
    client.hello().await;
    // One at a time, each answer read: nothing is left unread when the server closes (which
    // would reset the connection before the close frame is read).
    let mut closed = None;
    for _ in 0..1000 {
        if let Err(close) = client.ping_or_close(&[7; 125]).await {
            closed = Some(close);
            break;
        }
    }
    let (code, reason) = closed.expect("closed");
    assert_eq!(code, 1008, "{reason}");
    assert!(reason.contains("pings"), "{reason}");
}
