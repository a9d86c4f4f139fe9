//! The native side: tokio-tungstenite's WebSocket on the tokio runtime the client was
//! connected on, over TLS for `wss://` (rustls, trusting what [`Tls`] says: `tls.rs`).
//!
//! The socket is configured like the server's (`node/src/realtime/limits.rs`): its read and
//! write buffers start at [`BUFFER`] and grow only while a large message goes through, and a
//! message may be at most the subprotocol's largest. Nagle's algorithm is off, so that a call
//! written behind another is sent at once rather than when the first is acknowledged. The
//! token goes in the `Authorization` header.

use super::{Incoming, NORMAL_CLOSE};
use crate::error::Error;
pub(crate) use crate::tls::Tls;
use crate::transport::{Closed, OpenError, Payload};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::header::{AUTHORIZATION, SEC_WEBSOCKET_PROTOCOL};
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};
use wasmod_protocol::ws::Compression;

/// The read and write buffers the socket starts with, as the server's (tungstenite's default
/// is 128 KiB each): most messages are a transaction's few rows, and ten thousand idle
/// clients (the load generator's) should not cost more memory than the server they talk to.
const BUFFER: usize = 4 * 1024;

/// The socket's stream.
type Stream = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// The sending half of a socket.
pub(crate) struct Writer {
    sink: SplitSink<Stream, Message>,
}

/// The reading half of a socket.
pub(crate) struct Reader {
    stream: SplitStream<Stream>,
}

/// Opens a WebSocket at `url` speaking `subprotocol`, as `token`'s identity (a new one
/// without), reading messages of at most `max_message` bytes; a `wss://` one trusting `tls`.
pub(crate) async fn connect(
    url: &str,
    token: Option<&str>,
    subprotocol: &'static str,
    max_message: usize,
    tls: &Tls,
) -> Result<(Writer, Reader), OpenError> {
    let mut request = url
        .into_client_request()
        .map_err(|error| OpenError::Request(error.to_string()))?;
    let headers = request.headers_mut();
    headers.insert(
        SEC_WEBSOCKET_PROTOCOL,
        HeaderValue::from_static(subprotocol),
    );
    if let Some(token) = token {
        let bearer =
            HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| OpenError::Token)?;
        headers.insert(AUTHORIZATION, bearer);
    }
    let config = WebSocketConfig::default()
        .read_buffer_size(BUFFER)
        .write_buffer_size(BUFFER)
        .max_message_size(Some(max_message))
        .max_frame_size(Some(max_message));
    let connector = if request.uri().scheme_str() == Some("wss") {
        Some(Connector::Rustls(tls.rustls()?))
    } else {
        None
    };
    let (stream, response) =
        tokio_tungstenite::connect_async_tls_with_config(request, Some(config), true, connector)
            .await
            .map_err(handshake_error)?;
    let agreed = response.headers().get(SEC_WEBSOCKET_PROTOCOL);
    if agreed.map(HeaderValue::as_bytes) != Some(subprotocol.as_bytes()) {
        return Err(OpenError::Failed(format!(
            "the server did not agree to `{subprotocol}` (it answered {agreed:?})"
        )));
    }
    let (sink, stream) = stream.split();
    Ok((Writer { sink }, Reader { stream }))
}

/// Why the handshake failed: a refused upgrade with the server's own error (its JSON error
/// body, else the body's text: what of it came with the headers, which is all of a small
/// one), a URL tungstenite cannot open, a TLS handshake that failed, or how the connection
/// failed.
fn handshake_error(error: tungstenite::Error) -> OpenError {
    match error {
        tungstenite::Error::Http(response) => OpenError::refused(
            response.status().as_u16(),
            response.status().canonical_reason(),
            response.body().as_deref().unwrap_or_default(),
        ),
        tungstenite::Error::Url(error) => OpenError::Request(error.to_string()),
        tungstenite::Error::Tls(error) => OpenError::Tls(error.to_string()),
        tungstenite::Error::Io(error) => {
            let inner = error.get_ref().and_then(|inner| inner.downcast_ref());
            match inner {
                Some(refused) => OpenError::Tls(tls_error(refused)),
                None => OpenError::Failed(tungstenite::Error::Io(error).to_string()),
            }
        }
        other => OpenError::Failed(other.to_string()),
    }
}

/// A TLS handshake that failed (rustls's error, in the I/O error of the handshake), said so
/// that the fix shows: a refused certificate names the roots the client trusts.
fn tls_error(error: &rustls::Error) -> String {
    match error {
        rustls::Error::InvalidCertificate(why) => format!(
            "the server's certificate was refused ({why:?}): this client trusts the \
             platform's root certificates and those given with `root_certificate`"
        ),
        other => other.to_string(),
    }
}

impl Writer {
    /// Sends one frame.
    pub(crate) async fn send(&mut self, payload: Payload) -> Result<(), Error> {
        let message = match payload {
            Payload::Binary(bytes) => Message::Binary(bytes),
            Payload::Text(text) => Message::text(text),
        };
        self.sink
            .send(message)
            .await
            .map_err(|_| Error::Disconnected)
    }

    /// Sends a normal close frame (`1000`); the server's answer is read as frames are.
    pub(crate) async fn close(&mut self) {
        let frame = CloseFrame {
            code: NORMAL_CLOSE.into(),
            reason: "".into(),
        };
        let _ = self.sink.send(Message::Close(Some(frame))).await;
    }
}

impl Reader {
    /// The next frame; [`Incoming::Closed`] once the socket is closed, failed or ended.
    pub(crate) async fn next(&mut self) -> Incoming {
        let message = match self.stream.next().await {
            Some(Ok(message)) => message,
            Some(Err(error)) => {
                return Incoming::Closed(Closed::Ended(format!("reading failed: {error}")))
            }
            None => {
                return Incoming::Closed(Closed::Ended(
                    "the connection ended without a close frame".into(),
                ))
            }
        };
        match message {
            Message::Binary(bytes) => Incoming::Data(Payload::Binary(bytes)),
            Message::Text(text) => Incoming::Data(Payload::Text(text.as_str().to_owned())),
            Message::Close(frame) => Incoming::Closed(match frame {
                Some(frame) => Closed::ByServer {
                    code: Some(frame.code.into()),
                    reason: frame.reason.as_str().to_owned(),
                },
                None => Closed::ByServer {
                    code: None,
                    reason: String::new(),
                },
            }),
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => Incoming::Control,
        }
    }
}

/// Runs `task` on the current tokio runtime.
pub(crate) fn spawn(task: impl Future<Output = ()> + Send + 'static) {
    tokio::spawn(task);
}

/// Whether the transport inflates frames of `compression` itself: never natively (the
/// decoder does, with the crate's features).
pub(crate) fn decompresses(_compression: Compression) -> bool {
    false
}

/// How long [`http_get`] may take.
const HTTP_TIMEOUT: Duration = Duration::from_secs(30);

/// The body of `GET url`, or why there is none (the request failed, or the server answered
/// another status than 200); an `https://` one trusting `tls`, as the socket does. The
/// request blocks a thread of tokio's blocking pool.
pub(crate) async fn http_get(url: &str, tls: &Tls) -> Result<String, String> {
    let address = url.to_owned();
    let tls = tls.clone();
    let request = tokio::task::spawn_blocking(move || {
        let mut config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(HTTP_TIMEOUT));
        // Over plain HTTP the platform's store is not read.
        if address.starts_with("https://") {
            let roots: Vec<_> = tls
                .roots()
                .iter()
                .map(|root| ureq::tls::Certificate::from_der(root).to_owned())
                .collect();
            let tls = ureq::tls::TlsConfig::builder()
                .root_certs(ureq::tls::RootCerts::Specific(Arc::new(roots)))
                .build();
            config = config.tls_config(tls);
        }
        let agent: ureq::Agent = config.build().into();
        let mut response = agent
            .get(&address)
            .call()
            .map_err(|error| format!("could not fetch {address}: {error}"))?;
        let status = response.status();
        let body = response
            .body_mut()
            .read_to_string()
            .map_err(|error| format!("could not read {address}: {error}"))?;
        if status == 200 {
            Ok(body)
        } else {
            Err(format!("{address} answered {status}: {body}"))
        }
    });
    request
        .await
        .unwrap_or_else(|error| Err(format!("fetching {url} failed: {error}")))
}

/// Waits `duration`.
pub(crate) async fn sleep(duration: Duration) {
    tokio::time::sleep(duration).await;
}

/// `future`'s output, or `None` if it takes longer than `duration`.
pub(crate) async fn timeout<F: Future>(duration: Duration, future: F) -> Option<F::Output> {
    tokio::time::timeout(duration, future).await.ok()
}
