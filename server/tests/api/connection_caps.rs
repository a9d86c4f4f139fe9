//! The connection caps and timeouts (`wasmod_server::admission`), over real loopback sockets
//! with small caps: connections past an address's share or the server's cap are closed at
//! once while `/health` answers from elsewhere, slow headers and idle keep-alive connections
//! are closed at the header timeout, a client that stops reading is cut at the write timeout,
//! and one identity holds a bounded number of WebSockets.

use crate::live::Live;
use crate::support::{identity, router};
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Error as WsError;
use wasmod_server::ServerConfig;

/// How long a test waits for what should come at once.
const PATIENCE: Duration = Duration::from_secs(10);

/// A connection to `server` from the loopback address `from` (127.0.0.x: every one of them
/// is this host's).
async fn connect_from(from: &str, server: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("a socket");
    let from: IpAddr = from.parse().expect("an address");
    socket.bind(SocketAddr::new(from, 0)).expect("bound");
    socket.connect(server).await.expect("connected")
}

/// What the server sends on `stream` until it closes it (within [`PATIENCE`]); a reset counts
/// as closed.
async fn until_closed(stream: &mut TcpStream) -> String {
    let mut answer = Vec::new();
    let read = tokio::time::timeout(PATIENCE, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the server did not close the connection");
    String::from_utf8_lossy(&answer).into_owned()
}

/// `GET /health` on `stream` (kept alive): the answer's status line and body.
async fn health(stream: &mut TcpStream) -> String {
    stream
        .write_all(b"GET /health HTTP/1.1\r\nhost: test\r\n\r\n")
        .await
        .expect("sent");
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    tokio::time::timeout(PATIENCE, async {
        while !String::from_utf8_lossy(&answer).contains("\"status\"") {
            let n = stream.read(&mut buf).await.expect("read");
            assert!(n > 0, "closed before the answer");
            answer.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("an answer to /health");
    String::from_utf8_lossy(&answer).into_owned()
}

/// `GET path` on a new connection from `from`, which asks the server to close it: the whole
/// answer.
async fn once(from: &str, server: SocketAddr, path: &str) -> String {
    let mut stream = connect_from(from, server).await;
    let request = format!("GET {path} HTTP/1.1\r\nhost: test\r\nconnection: close\r\n\r\n");
    let _ = stream.write_all(request.as_bytes()).await;
    until_closed(&mut stream).await
}

fn caps(all: usize, per_address: usize) -> ServerConfig {
    let mut config = ServerConfig::default();
    config.max_connections = all;
    config.max_connections_per_address = per_address;
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_cap_per_address_and_in_all_closes_the_extra_ones_and_health_answers() {
    let live = Live::start(caps(6, 4)).await;
    // One address holds its share with idle connections.
    let mut held = Vec::new();
    for _ in 0..4 {
        let mut stream = connect_from("127.0.0.1", live.addr).await;
        assert!(health(&mut stream).await.starts_with("HTTP/1.1 200"));
        held.push(stream);
    }
    // Its next ones are closed at once, told why.
    for _ in 0..3 {
        let mut extra = connect_from("127.0.0.1", live.addr).await;
        let answer = until_closed(&mut extra).await;
        assert!(
            answer.is_empty() || answer.starts_with("HTTP/1.1 429"),
            "{answer}"
        );
        if !answer.is_empty() {
            assert!(answer.contains("\"too_many_calls\""), "{answer}");
        }
    }
    // Another address is served, and the held connections still are.
    let mut other = connect_from("127.0.0.2", live.addr).await;
    assert!(health(&mut other).await.starts_with("HTTP/1.1 200"));
    assert!(health(&mut held[0]).await.starts_with("HTTP/1.1 200"));
    // Six in all: the server is full. Past the cap a few connections are kept for health
    // checks: from a new address `/health` still answers, and anything else is `busy`...
    let _sixth = connect_from("127.0.0.2", live.addr).await;
    assert!(once("127.0.0.3", live.addr, "/health")
        .await
        .starts_with("HTTP/1.1 200"));
    let busy = once("127.0.0.3", live.addr, "/v1/tables/message").await;
    assert!(
        busy.starts_with("HTTP/1.1 503") && busy.contains("\"busy\""),
        "{busy}"
    );
    // ... until a place is freed.
    drop(held.pop());
    let deadline = Instant::now() + PATIENCE;
    while !once("127.0.0.3", live.addr, "/v1/tables/message")
        .await
        .starts_with("HTTP/1.1 200")
    {
        assert!(Instant::now() < deadline, "the place was never freed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    live.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_headers_and_idle_keep_alive_connections_are_closed_at_the_header_timeout() {
    let mut config = ServerConfig::default();
    config.header_read_timeout = Duration::from_millis(500);
    let live = Live::start(config).await;
    // Headers a byte at a time, never ending.
    let mut trickle = connect_from("127.0.0.1", live.addr).await;
    trickle
        .write_all(b"GET /health HTTP/1.1\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    let closed = tokio::time::timeout(PATIENCE, async {
        let mut buf = [0u8; 1024];
        loop {
            if trickle.write_all(b"x").await.is_err() {
                return;
            }
            let read = tokio::time::timeout(Duration::from_millis(100), trickle.read(&mut buf));
            if let Ok(Ok(0) | Err(_)) = read.await {
                return;
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "the trickled request was never cut");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // A connection that sends nothing, and one idle after an answer.
    let mut silent = connect_from("127.0.0.1", live.addr).await;
    let mut kept = connect_from("127.0.0.1", live.addr).await;
    assert!(health(&mut kept).await.starts_with("HTTP/1.1 200"));
    let started = Instant::now();
    until_closed(&mut silent).await;
    until_closed(&mut kept).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    live.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_is_cut_at_the_write_timeout() {
    let mut config = ServerConfig::default();
    config.write_timeout = Duration::from_millis(500);
    let live = Live::start(config).await;
    // The description, asked for again and again on one connection never read, fills the
    // socket's buffers; the server's write then waits for the client.
    let socket = TcpSocket::new_v4().expect("a socket");
    socket.set_recv_buffer_size(4096).expect("a small buffer");
    let mut stream = socket.connect(live.addr).await.expect("connected");
    let requests = b"GET /v1/module HTTP/1.1\r\nhost: test\r\n\r\n".repeat(2000);
    let started = Instant::now();
    let cut = tokio::time::timeout(PATIENCE, async {
        // The server stops reading requests while its answers wait, so the writes stop too:
        // wait for the connection to be cut.
        let _ = stream.write_all(&requests).await;
        let mut probe = [0u8; 1];
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if stream.write_all(b"\r\n").await.is_err() {
                return;
            }
            if let Ok(Ok(0)) = tokio::time::timeout(Duration::ZERO, stream.peek(&mut probe)).await {
                return;
            }
        }
    })
    .await;
    assert!(
        cut.is_ok(),
        "the connection of a client that does not read was kept"
    );
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    live.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_identity_holds_at_most_its_websockets() {
    let mut config = ServerConfig::default();
    config.max_websockets_per_identity = 2;
    let live = Live::start(config).await;
    let (_, token) = identity(&router()).await;
    let open = || async {
        let mut request = live.url("").into_client_request().expect("a request");
        let headers = request.headers_mut();
        headers.insert("authorization", format!("Bearer {token}").parse().unwrap());
        headers.insert("sec-websocket-protocol", "v1.json.wasmod".parse().unwrap());
        tokio_tungstenite::connect_async(request).await
    };
    let first = open().await.expect("one");
    let _second = open().await.expect("two");
    match open().await {
        Err(WsError::Http(response)) => {
            assert_eq!(response.status(), 429);
            let body = String::from_utf8_lossy(response.body().as_deref().unwrap_or_default())
                .into_owned();
            assert!(body.contains("2 WebSocket connections"), "{body}");
        }
        other => panic!("a third socket: {:?}", other.map(|_| ())),
    }
    drop(first);
    let deadline = Instant::now() + PATIENCE;
    while open().await.is_err() {
        assert!(
            Instant::now() < deadline,
            "the closed socket's place was never freed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    live.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_over_the_address_cap_reads_its_refusal_whatever_it_sends() {
    let live = Live::start(caps(6, 1)).await;
    let mut held = connect_from("127.0.0.1", live.addr).await;
    assert!(health(&mut held).await.starts_with("HTTP/1.1 200"));
    // A client that sends its whole request before it reads the answer, with a body up to the
    // limit: it reads the refusal, not a reset.
    for size in [0, 100_000, ServerConfig::default().max_body_bytes] {
        let url = format!("http://{}/v1/reducers/send", live.addr);
        let answer = tokio::task::spawn_blocking(move || {
            let agent: ureq::Agent = ureq::Agent::config_builder()
                .timeout_global(Some(PATIENCE))
                .http_status_as_error(false)
                .build()
                .into();
            let mut answer = agent
                .post(&url)
                .content_type("application/json")
                .send(vec![b' '; size])
                .map_err(|error| format!("{size} bytes sent: {error}"))?;
            let body = answer.body_mut().read_to_string();
            Ok::<_, String>((
                answer.status().as_u16(),
                body.map_err(|error| error.to_string()),
            ))
        })
        .await
        .expect("joined")
        .unwrap_or_else(|error| panic!("{error}"));
        let (status, body) = answer;
        assert_eq!(status, 429, "{size} bytes sent: {body:?}");
        let body = body.unwrap_or_else(|error| panic!("{size} bytes sent: {error}"));
        assert!(body.contains("\"too_many_calls\""), "{body}");
    }
    live.stop().await;
}
