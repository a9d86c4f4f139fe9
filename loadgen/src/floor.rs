//! The floor: a minimal broadcast server with no wasmod in it, run as its own process
//! (`wasmod-loadgen floor-server`), so that it shares the machine with the clients exactly as
//! `wasmod serve` does.
//!
//! It accepts WebSockets on `/v1/subscribe` with the binary subprotocol, sends each socket
//! one hello (wasmod's first message is also one), then broadcasts what it is told on stdin:
//! `broadcast RATE COUNT` sends COUNT updates at RATE per second to every socket, each
//! encoded once and shared (`Bytes`), the best case of "serialize once", then answers `done`
//! on stdout. Each socket has one writer task and a queue as deep as wasmod's default
//! outbound queue (1024 messages); a socket that falls further behind is closed with `4001`,
//! as wasmod closes a slow client. The read and write buffers are wasmod's (4 KiB).
//!
//! Two WebSocket libraries serve it: axum's `ws` (tokio-tungstenite, what the server uses)
//! and `tokio-websockets`, so that the library can be chosen by measurement.

use crate::pace::{Pace, TICK};
use crate::sample::{hello, transaction_update};
use anyhow::{anyhow, Context, Result};
use bytes::Bytes;
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::Instant;
use tokio::net::TcpListener;
use tokio::sync::{broadcast, mpsc};
use wasmod_abi::Timestamp;
use wasmod_protocol::ws::BIN_PROTOCOL;

/// The WebSocket library a floor server uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Library {
    /// axum's `ws`: tokio-tungstenite, the library `wasmod serve` uses.
    Tungstenite,
    /// `tokio-websockets`.
    TokioWebsockets,
}

impl Library {
    /// The library's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Tungstenite => "tokio-tungstenite (axum ws)",
            Self::TokioWebsockets => "tokio-websockets",
        }
    }

    /// The library's name as the `--library` argument.
    pub fn argument(self) -> &'static str {
        match self {
            Self::Tungstenite => "tungstenite",
            Self::TokioWebsockets => "tokio-websockets",
        }
    }
}

/// Messages queued per socket before it counts as too slow: wasmod's default.
const QUEUE: usize = 1024;

/// Read and write buffers to start with: wasmod's.
pub const BUFFER: usize = 4 * 1024;

/// The close code of a socket too slow for its queue: wasmod's.
const TOO_SLOW: u16 = 4001;

/// What every socket of a floor server shares.
struct Hub {
    updates: broadcast::Sender<Bytes>,
    hello: Bytes,
}

/// Runs `serve` on a new async runtime with a listener on a free loopback port, announced on
/// stdout first as `wasmod serve` announces its own (`listening on http://ADDR`): what every
/// floor process does before it serves.
pub fn on_loopback<F, S>(serve: S) -> Result<()>
where
    S: FnOnce(TcpListener) -> F,
    F: std::future::Future<Output = Result<()>>,
{
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .context("binding a loopback port")?;
        let address = listener.local_addr().context("the bound address")?;
        println!("listening on http://{address}");
        std::io::stdout().flush().context("writing to stdout")?;
        serve(listener).await
    })
}

/// Runs a floor server with `library` until its stdin ends.
pub fn serve(library: Library) -> Result<()> {
    on_loopback(|listener| async move {
        let (updates, _) = broadcast::channel(QUEUE);
        let hub = Arc::new(Hub {
            updates,
            hello: hello().to_bytes().into(),
        });
        match library {
            Library::Tungstenite => tokio::spawn(tungstenite::accept(listener, hub.clone())),
            Library::TokioWebsockets => tokio::spawn(websockets::accept(listener, hub.clone())),
        };
        obey(&hub).await
    })
}

/// Reads commands from stdin and carries them out, until stdin ends.
async fn obey(hub: &Hub) -> Result<()> {
    let (lines, mut commands) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut offset = 0;
    while let Some(line) = commands.recv().await {
        let (rate, count) = parse_broadcast(&line)?;
        let pace = Pace::new(rate, count);
        let mut sent = 0;
        while sent < pace.count() {
            let due = pace.due(Instant::now());
            while sent < due {
                offset += 1;
                let frame = transaction_update(offset, Timestamp::now()).to_bytes();
                // No receivers yet is not an error: the update is just not delivered.
                let _ = hub.updates.send(frame.into());
                sent += 1;
            }
            tokio::time::sleep(TICK).await;
        }
        println!("done {sent}");
        std::io::stdout().flush().context("writing to stdout")?;
    }
    Ok(())
}

/// `broadcast RATE COUNT`.
fn parse_broadcast(line: &str) -> Result<(f64, u64)> {
    let mut words = line.split_whitespace();
    let bad = || anyhow!("not `broadcast RATE COUNT`: {line:?}");
    if words.next() != Some("broadcast") {
        return Err(bad());
    }
    let rate = words.next().and_then(|w| w.parse().ok()).ok_or_else(bad)?;
    let count = words.next().and_then(|w| w.parse().ok()).ok_or_else(bad)?;
    Ok((rate, count))
}

/// One socket's life, whatever the library: the hello, then every broadcast update until the
/// client leaves or falls behind (closed with `close`). Incoming frames are read (and pings
/// answered by the library) by a second future.
async fn pump<M, S, R, E, F>(
    mut sink: S,
    incoming: R,
    hub: &Hub,
    frame: impl Fn(Bytes) -> M,
    close: F,
) where
    S: Sink<M> + Unpin,
    R: Stream<Item = Result<M, E>> + Unpin,
    F: FnOnce() -> M,
{
    let mut updates = hub.updates.subscribe();
    if sink.send(frame(hub.hello.clone())).await.is_err() {
        return;
    }
    let reading = incoming
        .take_while(|read| std::future::ready(read.is_ok()))
        .for_each(|_| async {});
    let writing = async {
        loop {
            match updates.recv().await {
                Ok(bytes) => {
                    if sink.send(frame(bytes)).await.is_err() {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let _ = sink.send(close()).await;
                    return;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    };
    tokio::select! {
        () = reading => {}
        () = writing => {}
    }
}

/// The floor on axum's `ws` (tokio-tungstenite), configured as `wasmod serve` configures it.
mod tungstenite {
    use super::{pump, Hub, BUFFER, TOO_SLOW};
    use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
    use axum::extract::State;
    use axum::response::Response;
    use axum::routing::get;
    use axum::Router;
    use futures_util::StreamExt;
    use std::sync::Arc;
    use tokio::net::TcpListener;
    use wasmod_protocol::ws::BIN_PROTOCOL;

    /// Serves sockets on `listener` until the process ends.
    pub async fn accept(listener: TcpListener, hub: Arc<Hub>) {
        let app = Router::new()
            .route("/v1/subscribe", get(upgrade))
            .with_state(hub);
        if let Err(error) = axum::serve(listener, app).await {
            eprintln!("the tungstenite floor stopped: {error}");
        }
    }

    async fn upgrade(upgrade: WebSocketUpgrade, State(hub): State<Arc<Hub>>) -> Response {
        upgrade
            .protocols([BIN_PROTOCOL])
            .read_buffer_size(BUFFER)
            .write_buffer_size(BUFFER)
            .max_write_buffer_size(BUFFER + (16 << 20))
            .on_upgrade(move |socket| serve(socket, hub))
    }

    async fn serve(socket: WebSocket, hub: Arc<Hub>) {
        let (sink, stream) = socket.split();
        let close = || {
            Message::Close(Some(CloseFrame {
                code: TOO_SLOW,
                reason: "too slow".into(),
            }))
        };
        pump(sink, stream, &hub, Message::Binary, close).await;
    }
}

/// The floor on `tokio-websockets`.
mod websockets {
    use super::{pump, Hub, BIN_PROTOCOL, BUFFER, TOO_SLOW};
    use futures_util::StreamExt;
    use http::{HeaderName, HeaderValue};
    use std::sync::Arc;
    use tokio::net::TcpListener;
    use tokio_websockets::{CloseCode, Config, Limits, Message, ServerBuilder};

    /// Serves sockets on `listener` until the process ends.
    pub async fn accept(listener: TcpListener, hub: Arc<Hub>) {
        let builder = ServerBuilder::new()
            .config(Config::default().flush_threshold(BUFFER))
            .limits(Limits::default().max_payload_len(Some(1 << 20)))
            .add_header(
                HeaderName::from_static("sec-websocket-protocol"),
                HeaderValue::from_static(BIN_PROTOCOL),
            );
        let builder = match builder {
            Ok(builder) => Arc::new(builder),
            Err(error) => {
                eprintln!("the tokio-websockets floor cannot start: {error}");
                return;
            }
        };
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(error) => {
                    eprintln!("the tokio-websockets floor stopped accepting: {error}");
                    return;
                }
            };
            let (builder, hub) = (builder.clone(), hub.clone());
            tokio::spawn(async move {
                let Ok((_, socket)) = builder.accept(stream).await else {
                    return;
                };
                let (sink, stream) = socket.split();
                let close = || {
                    let code = CloseCode::try_from(TOO_SLOW).unwrap_or(CloseCode::NORMAL_CLOSURE);
                    Message::close(Some(code), "too slow")
                };
                pump(sink, stream, &hub, Message::binary, close).await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcast_commands_parse_and_bad_ones_are_errors() {
        assert_eq!(
            parse_broadcast("broadcast 250.5 1000").unwrap(),
            (250.5, 1000)
        );
        assert!(parse_broadcast("broadcast 250").is_err());
        assert!(parse_broadcast("send 1 2").is_err());
        assert!(parse_broadcast("").is_err());
    }
}
