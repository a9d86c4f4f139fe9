//! The limits under load: calls per identity (429), the queue bound (503), the request timeout
//! (504), and a graceful shutdown with a call in progress. A procedure that fetches from a slow
//! loopback server holds the module's thread.

use crate::support::{get, identity, post, server, Answer};
use axum::http::StatusCode;
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;
use wasmod_host::AllowList;
use wasmod_server::ServerConfig;

/// A loopback HTTP server that answers each of `connections` requests after `delay`, and
/// reports each accepted connection. Returns its URL and the reports.
pub(crate) fn slow_server(connections: usize, delay: Duration) -> (String, mpsc::Receiver<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!("http://{}/motd", listener.local_addr().expect("an address"));
    let (accepted, reports) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(connections) {
            let Ok(mut stream) = stream else { continue };
            let _ = accepted.send(());
            let mut request = Vec::new();
            let mut buf = [0; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            std::thread::sleep(delay);
            // `connection: close`, as it closes the connection: a client that pooled it would
            // otherwise send the next request down a socket this end has closed.
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 4\r\n\r\nmotd",
            );
        }
    });
    (url, reports)
}

pub(crate) fn allow(url: &str) -> AllowList {
    let host = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or_default();
    AllowList::from_rules([host]).expect("a rule")
}

pub(crate) async fn fetch(router: &axum::Router, token: &str, url: &str) -> Answer {
    post(
        router,
        "/v1/procedures/fetch_motd",
        Some(token),
        json!([url]),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_per_identity_and_the_queue_are_bounded() {
    let (url, accepted) = slow_server(2, Duration::from_millis(800));
    let mut config = ServerConfig::default();
    config.node.max_calls_per_identity = 1;
    config.node.queue = 1;
    let router = server(config, allow(&url)).router();
    let (_, alice) = identity(&router).await;
    let (_, bob) = identity(&router).await;
    let (_, carol) = identity(&router).await;

    let slow = tokio::spawn({
        let (router, alice, url) = (router.clone(), alice.clone(), url.clone());
        async move { fetch(&router, &alice, &url).await }
    });
    tokio::task::spawn_blocking(move || accepted.recv_timeout(Duration::from_secs(10)))
        .await
        .expect("joined")
        .expect("the procedure reached the slow server");

    // Alice's call is running: her next one is refused at once.
    let second = post(&router, "/v1/reducers/send", Some(&alice), json!(["again"])).await;
    assert_eq!(
        (second.status, second.code().as_str()),
        (StatusCode::TOO_MANY_REQUESTS, "too_many_calls")
    );

    // Bob's call fills the queue (room for one); Carol's is refused as busy.
    let queued = tokio::spawn({
        let (router, bob) = (router.clone(), bob.clone());
        async move { post(&router, "/v1/reducers/send", Some(&bob), json!(["queued"])).await }
    });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while get(&router, "/health").await.json()["queue_free"] != 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "bob's call was never queued"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let busy = post(&router, "/v1/reducers/send", Some(&carol), json!(["busy"])).await;
    assert_eq!(
        (busy.status, busy.code().as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, "busy")
    );

    let slow = slow.await.expect("joined");
    assert_eq!(slow.status, StatusCode::OK, "{:?}", slow.json());
    assert_eq!(slow.json()["result"], json!({"ok": "motd"}));
    assert_eq!(queued.await.expect("joined").status, StatusCode::OK);
    let again = post(&router, "/v1/reducers/send", Some(&alice), json!(["again"])).await;
    assert_eq!(again.status, StatusCode::OK, "alice's slot was freed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_over_the_timeout_is_answered_504_and_the_call_completes() {
    let (url, _accepted) = slow_server(1, Duration::from_millis(1500));
    let mut config = ServerConfig::default();
    config.request_timeout = Duration::from_millis(300);
    let router = server(config, allow(&url)).router();
    let (_, token) = identity(&router).await;
    let late = fetch(&router, &token, &url).await;
    assert_eq!(
        (late.status, late.code().as_str()),
        (StatusCode::GATEWAY_TIMEOUT, "timeout")
    );
    // The procedure still ran to completion: its message is posted.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let rows = get(&router, "/v1/tables/message").await.json()["rows"].clone();
        if rows[0]["text"] == "motd" {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the procedure never completed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_the_call_in_progress_finish() {
    let (url, accepted) = slow_server(1, Duration::from_millis(800));
    let server = server(ServerConfig::default(), allow(&url));
    let (_, token) = {
        let router = server.router();
        identity(&router).await
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("an address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve(listener, async {
        let _ = stopped.await;
    }));

    let call = tokio::task::spawn_blocking(move || {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let mut response = agent
            .post(format!("http://{address}/v1/procedures/fetch_motd"))
            .header("authorization", format!("Bearer {token}"))
            .send(json!([url]).to_string())
            .expect("an answer");
        let body = response.body_mut().read_to_string().expect("a body");
        (response.status().as_u16(), body)
    });
    tokio::task::spawn_blocking(move || accepted.recv_timeout(Duration::from_secs(10)))
        .await
        .expect("joined")
        .expect("the procedure reached the slow server");
    stop.send(()).expect("the server is running");

    let (status, body) = call.await.expect("joined");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("motd"), "{body}");
    tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("the server stopped")
        .expect("joined")
        .expect("served");
}

/// New identities are rate-limited per source address, over HTTP and over the WebSocket
/// endpoint alike (a connection without a token is given one); a client with a token is not
/// affected.
#[tokio::test]
async fn new_identities_are_limited_per_source_address() {
    use crate::live::{Client, Connect, Encoding, Live};
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut config = ServerConfig::default();
    config.identities_per_minute = 3;
    let live = Live::start(config).await;
    let url = format!("http://{}/v1/identity", live.addr);
    let issue = move || {
        ureq::post(&url)
            .send_empty()
            .map(|response| response.status().as_u16())
    };
    let first = tokio::task::spawn_blocking(issue.clone())
        .await
        .expect("ran");
    assert_eq!(first.expect("issued"), 200);
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    let (_, token, _) = client.hello().await;
    let third = tokio::task::spawn_blocking(issue.clone())
        .await
        .expect("ran");
    assert_eq!(third.expect("issued"), 200);

    let refused = tokio::task::spawn_blocking(issue).await.expect("ran");
    assert!(
        matches!(refused, Err(ureq::Error::StatusCode(429))),
        "{refused:?}"
    );
    let mut request = live.url("").into_client_request().expect("a request");
    request.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        "v1.json.wasmod".parse().expect("a header"),
    );
    let refused = tokio_tungstenite::connect_async(request)
        .await
        .expect_err("no new identity");
    assert!(refused.to_string().contains("429"), "{refused}");
    let query = format!("?token={token}");
    let with_token = Connect {
        query: &query,
        ..Connect::default()
    };
    let mut again = Client::connect(&live, Encoding::Json, with_token).await;
    again.hello().await;
    live.stop().await;
}
