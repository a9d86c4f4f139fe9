//! Requests answered before their body was read: a small body is read and dropped first, so
//! the client gets the answer and can go on using the connection.

use crate::live::Live;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;
use wasmod_server::ServerConfig;

/// How long the test waits for any one answer.
const PATIENCE: Duration = Duration::from_secs(5);

/// How long the client pauses halfway through its body.
const PAUSE: Duration = Duration::from_millis(300);

/// One answer's status line, read whole (head and body) from `stream`, or `None` when the
/// server closed the connection instead of answering.
fn answer(stream: &mut TcpStream) -> Option<String> {
    let mut read = Vec::new();
    let mut buf = [0; 4096];
    let head_end = loop {
        if let Some(end) = read.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => read.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&read[..head_end]).into_owned();
    let length = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    while read.len() < head_end + length {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => read.extend_from_slice(&buf[..n]),
        }
    }
    head.lines().next().map(str::to_owned)
}

/// POSTs a 2,000-byte body to `path` on a kept-alive connection, pausing halfway through it,
/// then asks `GET /health` on the same connection. Returns the first answer's status line, and
/// whether it came before the body was all sent, and the second answer's status line.
fn refused_then_health(
    addr: SocketAddr,
    path: &'static str,
) -> (Option<String>, bool, Option<String>) {
    let mut stream = TcpStream::connect(addr).expect("a connection");
    stream.set_read_timeout(Some(PATIENCE)).expect("a timeout");
    let body = [b' '; 2_000];
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("sent");
    stream.write_all(&body[..1_000]).expect("sent");
    std::thread::sleep(PAUSE);
    stream.set_nonblocking(true).expect("non-blocking");
    let early = stream.peek(&mut [0; 1]).is_ok_and(|n| n > 0);
    stream.set_nonblocking(false).expect("blocking");
    // The rest of the body may meet a closed connection without the layer: that is the
    // failure the answers below show.
    let _ = stream.write_all(&body[1_000..]);
    let first = answer(&mut stream);
    let _ = stream.write_all(b"GET /health HTTP/1.1\r\nhost: test\r\n\r\n");
    (first, early, answer(&mut stream))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_answered_without_its_small_body_keeps_its_connection() {
    let live = Live::start(ServerConfig::default()).await;
    for (path, status) in [
        ("/v1/reducers/no_such_reducer", "404"),
        ("/v1/procedures/fetch_motd", "401"),
        ("/v1/http/no/such/route", "404"),
        ("/v1/no_such_route", "404"),
    ] {
        let addr = live.addr;
        let (first, early, second) =
            tokio::task::spawn_blocking(move || refused_then_health(addr, path))
                .await
                .expect("joined");
        let first = first.unwrap_or_else(|| panic!("{path}: the connection closed unanswered"));
        assert!(
            first.starts_with(&format!("HTTP/1.1 {status}")),
            "{path}: {first}"
        );
        assert!(!early, "{path}: answered before the body was all sent");
        let second =
            second.unwrap_or_else(|| panic!("{path}: the connection was closed after the answer"));
        assert!(second.starts_with("HTTP/1.1 200"), "{path}: {second}");
    }
    live.stop().await;
}
