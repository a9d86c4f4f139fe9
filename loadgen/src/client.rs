//! One WebSocket client of the binary protocol (`v1.bin.wasmod`), as the SDKs will speak it:
//! messages are `wasmod_protocol::ws` types, encoded and decoded by the protocol crate.
//!
//! The client's buffers start at 4 KiB, like the server's, so that ten thousand idle clients
//! in the load generator do not cost more memory than the server they measure.

use anyhow::{anyhow, bail, Context, Result};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use wasmod_protocol::ws::{BinaryClientMessage, BinaryServerMessage, BIN_PROTOCOL};

/// The socket type of a client.
type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long connecting (TCP, upgrade and the first message) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// A client's buffers to start with, like the server's (`server/src/realtime/limits.rs`).
const BUFFER: usize = 4 * 1024;

/// What a client reads next.
#[derive(Debug)]
pub enum Received {
    /// A server message.
    Message(Box<BinaryServerMessage>),
    /// The server closed the socket: its close code (1005 when it gave none) and reason.
    Closed {
        /// The close code.
        code: u16,
        /// The reason.
        reason: String,
    },
}

/// The sending half of a client.
#[derive(Debug)]
pub struct Sender {
    sink: SplitSink<Socket, Message>,
}

/// The receiving half of a client.
#[derive(Debug)]
pub struct Receiver {
    stream: SplitStream<Socket>,
}

/// Opens a binary-protocol socket to `url` (`ws://…/v1/subscribe`) and returns both halves
/// and the first message the server sent (the `IdentityToken`, on a wasmod server).
pub async fn connect(url: &str) -> Result<(Sender, Receiver, BinaryServerMessage)> {
    let mut request = url.into_client_request().context("the URL")?;
    request.headers_mut().insert(
        "sec-websocket-protocol",
        HeaderValue::from_static(BIN_PROTOCOL),
    );
    let config = WebSocketConfig::default()
        .read_buffer_size(BUFFER)
        .write_buffer_size(BUFFER)
        .max_message_size(None)
        .max_frame_size(None);
    let connecting = tokio_tungstenite::connect_async_with_config(request, Some(config), true);
    let (socket, _) = tokio::time::timeout(CONNECT_TIMEOUT, connecting)
        .await
        .map_err(|_| anyhow!("connecting to {url} took more than {CONNECT_TIMEOUT:?}"))?
        .with_context(|| format!("connecting to {url}"))?;
    let (sink, stream) = socket.split();
    let mut receiver = Receiver { stream };
    let first = tokio::time::timeout(CONNECT_TIMEOUT, receiver.next())
        .await
        .map_err(|_| anyhow!("no first message from {url} within {CONNECT_TIMEOUT:?}"))??;
    match first {
        Received::Message(message) => Ok((Sender { sink }, receiver, *message)),
        Received::Closed { code, reason } => {
            bail!("{url} closed the socket at once: {code} {reason}")
        }
    }
}

impl Sender {
    /// Sends one message in one binary frame.
    pub async fn send(&mut self, message: &BinaryClientMessage) -> Result<()> {
        self.sink
            .send(Message::Binary(message.to_bytes().into()))
            .await
            .context("sending a message")
    }
}

impl Receiver {
    /// The next server message, or the close of the socket; pings are answered by the
    /// library as frames are read.
    pub async fn next(&mut self) -> Result<Received> {
        loop {
            let frame = match self.stream.next().await {
                None => {
                    return Ok(Received::Closed {
                        code: 1006,
                        reason: "the socket ended without a close frame".into(),
                    })
                }
                Some(frame) => frame.context("reading a frame")?,
            };
            match frame {
                Message::Binary(bytes) => {
                    let message = BinaryServerMessage::from_bytes(&bytes).map_err(|error| {
                        anyhow!("a server frame that is not a message: {error}")
                    })?;
                    return Ok(Received::Message(Box::new(message)));
                }
                Message::Close(frame) => {
                    return Ok(match frame {
                        Some(frame) => Received::Closed {
                            code: frame.code.into(),
                            reason: frame.reason.to_string(),
                        },
                        None => Received::Closed {
                            code: 1005,
                            reason: String::new(),
                        },
                    })
                }
                Message::Text(_) => bail!("a text frame on the binary protocol"),
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
            }
        }
    }
}
