//! Per-client limits that a client without a token cannot get around: the rate of calls
//! without a token per source address (429 with `Retry-After`), the call slots those calls take
//! like any other, and the token checked before the body is read.

use crate::limits::{allow, fetch, slow_server};
use crate::live::Live;
use crate::support::{get, identity, post, send, server};
use axum::http::{Method, StatusCode};
use serde_json::json;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;
use wasmod_server::ServerConfig;

/// How long a raw request waits for its answer.
const PATIENCE: Duration = Duration::from_secs(5);

/// Sends `head` (a request's line and headers, without the blank line that ends them) and
/// `body` over a new connection to `addr`, and returns the answer as text (all of it, or its
/// head if the server keeps the connection open); `body` may be shorter than the head
/// announces.
async fn raw(addr: SocketAddr, head: String, body: &'static [u8]) -> String {
    tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(addr).expect("a connection");
        stream.set_read_timeout(Some(PATIENCE)).expect("a timeout");
        let request = format!("{head}\r\nhost: test\r\nconnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).expect("sent");
        stream.write_all(body).expect("sent");
        let mut answer = Vec::new();
        let mut buf = [0; 4096];
        loop {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
                Err(_) if answer.windows(4).any(|w| w == b"\r\n\r\n") => break,
                Err(error) => panic!("no answer within {PATIENCE:?}: {error}"),
            }
        }
        String::from_utf8_lossy(&answer).into_owned()
    })
    .await
    .expect("joined")
}

/// A POST of a JSON body to `path` with `token`, if any.
fn post_head(path: &str, token: Option<&str>, body: &[u8]) -> String {
    let mut head = format!(
        "POST {path} HTTP/1.1\r\ncontent-type: application/json\r\ncontent-length: {}",
        body.len()
    );
    if let Some(token) = token {
        head.push_str(&format!("\r\nauthorization: Bearer {token}"));
    }
    head
}

#[tokio::test]
async fn calls_without_a_token_are_limited_per_source_address() {
    let mut config = ServerConfig::default();
    config.anonymous_calls_per_minute = 3;
    let live = Live::start(config).await;
    let ok = |answer: &str| answer.starts_with("HTTP/1.1 200");
    let view = post_head("/v1/views/recent", None, b"[]");
    for _ in 0..2 {
        let answer = raw(live.addr, view.clone(), b"[]").await;
        assert!(ok(&answer), "{answer}");
    }
    let stats = "GET /v1/http/stats HTTP/1.1".to_owned();
    let answer = raw(live.addr, stats.clone(), b"").await;
    assert!(ok(&answer), "the module's handlers count too: {answer}");

    for refused in [view.clone(), stats] {
        let answer = raw(live.addr, refused, b"[]").await;
        assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
        // Three a minute: the next is allowed within 20 s.
        let retry: u64 = answer
            .lines()
            .find_map(|line| line.strip_prefix("retry-after: "))
            .and_then(|seconds| seconds.trim().parse().ok())
            .unwrap_or_else(|| panic!("no retry-after: {answer}"));
        assert!((1..=20).contains(&retry), "{answer}");
    }

    // A token's calls are the token's identity's, not the address's.
    let issued = raw(live.addr, post_head("/v1/identity", None, b""), b"").await;
    assert!(ok(&issued), "{issued}");
    let body = issued.split("\r\n\r\n").nth(1).expect("a body");
    let json: serde_json::Value = serde_json::from_str(body).expect("JSON");
    let token = json["token"].as_str().expect("a token");
    let with_token = raw(
        live.addr,
        post_head("/v1/views/recent", Some(token), b"[]"),
        b"[]",
    )
    .await;
    assert!(ok(&with_token), "{with_token}");
    live.stop().await;
}

#[tokio::test]
async fn a_bad_token_or_a_missing_one_is_refused_before_the_body_is_read() {
    let live = Live::start(ServerConfig::default()).await;
    // The heads announce 900 kB that are never sent: only an answer given without reading
    // the body comes back before the client's patience ends.
    let announced = [0u8; 900_000];
    for (path, token, code) in [
        ("/v1/reducers/send", Some("wm1.forged"), "401"),
        ("/v1/http/messages", Some("wm1.forged"), "401"),
        ("/v1/reducers/send", None, "401"),
        ("/v1/reducers/no_such_reducer", None, "404"),
    ] {
        let head = post_head(path, token, &announced);
        let answer = raw(live.addr, head, b"[").await;
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {code}")),
            "{path} {token:?}: {answer}"
        );
    }
    live.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_without_a_token_take_call_slots() {
    let (url, accepted) = slow_server(1, Duration::from_millis(1500));
    let mut config = ServerConfig::default();
    config.node.max_calls_per_identity = 1;
    let router = server(config, allow(&url)).router();
    let (_, alice) = identity(&router).await;
    let slow = tokio::spawn({
        let (router, url) = (router.clone(), url.clone());
        async move { fetch(&router, &alice, &url).await }
    });
    tokio::task::spawn_blocking(move || accepted.recv_timeout(Duration::from_secs(10)))
        .await
        .expect("joined")
        .expect("the procedure reached the slow server");

    // The module is busy: an anonymous view waits in the queue, holding its requester's slot.
    let free = get(&router, "/health").await.json()["queue_free"].clone();
    let queued = tokio::spawn({
        let router = router.clone();
        async move { post(&router, "/v1/views/recent", None, json!([])).await }
    });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while get(&router, "/health").await.json()["queue_free"] == free {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the view was never queued"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let view = post(&router, "/v1/views/recent", None, json!([])).await;
    let handler = send(&router, Method::GET, "/v1/http/stats", None, "").await;
    for refused in [view, handler] {
        assert_eq!(
            (refused.status, refused.code().as_str()),
            (StatusCode::TOO_MANY_REQUESTS, "too_many_calls")
        );
        assert_eq!(refused.headers["retry-after"], "1");
    }

    assert_eq!(slow.await.expect("joined").status, StatusCode::OK);
    assert_eq!(queued.await.expect("joined").status, StatusCode::OK);
    let again = post(&router, "/v1/views/recent", None, json!([])).await;
    assert_eq!(again.status, StatusCode::OK, "the slot was freed");
}
