//! The native side: tokio-tungstenite's WebSocket on the tokio runtime the client was
//! connected on.
//!
//! The socket is configured like the server's (`server/src/realtime/limits.rs`): its read
//! buffer starts at [`READ_BUFFER`] and grows only while a large message is read, and a
//! message may be at most [`MAX_MESSAGE`] bytes. The token goes in the `Authorization`
//! header.

use super::Incoming;
use crate::error::Error;
use crate::socket::MAX_MESSAGE;
use futures_util::{SinkExt, StreamExt};
use std::future::Future;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::header::{AUTHORIZATION, SEC_WEBSOCKET_PROTOCOL};
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use wasmod_protocol::ws::BIN_PROTOCOL;

/// The read buffer the socket starts with, as the server's (tungstenite's default is 128
/// KiB): most messages are a transaction's few rows.
const READ_BUFFER: usize = 4 * 1024;

/// The client's WebSocket.
pub(crate) struct Socket {
    stream: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Socket {
    /// Opens the binary protocol's WebSocket at `url` as `token`'s identity (a new one
    /// without).
    pub(crate) async fn connect(url: &str, token: Option<&str>) -> Result<Self, Error> {
        let connect_error = |error: &dyn std::fmt::Display| Error::Connect(error.to_string());
        let mut request = url
            .into_client_request()
            .map_err(|error| connect_error(&error))?;
        let headers = request.headers_mut();
        headers.insert(
            SEC_WEBSOCKET_PROTOCOL,
            HeaderValue::from_static(BIN_PROTOCOL),
        );
        if let Some(token) = token {
            let bearer = HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|_| Error::Connect("the token is not a valid header value".into()))?;
            headers.insert(AUTHORIZATION, bearer);
        }
        let config = WebSocketConfig::default()
            .read_buffer_size(READ_BUFFER)
            .max_message_size(Some(MAX_MESSAGE))
            .max_frame_size(Some(MAX_MESSAGE));
        let (stream, response) =
            tokio_tungstenite::connect_async_with_config(request, Some(config), false)
                .await
                .map_err(|error| connect_error(&error))?;
        let protocol = response.headers().get(SEC_WEBSOCKET_PROTOCOL);
        if protocol.map(HeaderValue::as_bytes) != Some(BIN_PROTOCOL.as_bytes()) {
            return Err(Error::Connect(format!(
                "the server did not agree to `{BIN_PROTOCOL}` (it answered {protocol:?})"
            )));
        }
        Ok(Self { stream })
    }

    /// Sends one binary frame.
    pub(crate) async fn send(&mut self, bytes: Vec<u8>) -> Result<(), Error> {
        self.stream
            .send(Message::binary(bytes))
            .await
            .map_err(|_| Error::Disconnected)
    }

    /// The next frame; `None` once the socket failed or ended.
    pub(crate) async fn next(&mut self) -> Option<Incoming> {
        Some(match self.stream.next().await?.ok()? {
            Message::Binary(bytes) => Incoming::Binary(bytes),
            Message::Text(_) => Incoming::Text,
            Message::Close(close) => Incoming::Closed(close.map_or_else(
                || "no reason".to_owned(),
                |close| format!("{} {}", u16::from(close.code), close.reason),
            )),
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => Incoming::Control,
        })
    }

    /// Closes the socket with a normal close frame.
    pub(crate) async fn close(&mut self) {
        let _ = self.stream.close(None).await;
    }
}

/// Runs `task` on the current tokio runtime.
pub(crate) fn spawn(task: impl Future<Output = ()> + Send + 'static) {
    tokio::spawn(task);
}

/// Waits `duration`.
pub(crate) async fn sleep(duration: Duration) {
    tokio::time::sleep(duration).await;
}

/// `future`'s output, or `None` if it takes longer than `duration`.
pub(crate) async fn timeout<F: Future>(duration: Duration, future: F) -> Option<F::Output> {
    tokio::time::timeout(duration, future).await.ok()
}
