//! A connection to a server's `GET /v1/subscribe`, in the JSON subprotocol
//! (`v1.json.wasmod`, `docs/protocol.md`), for the commands that talk to a running server over
//! its WebSocket (`subscribe`, `sql`).
//!
//! The commands take the server's base URL, as `wasmod call` does: `http://host:port` (or
//! `ws://host:port`) becomes `ws://host:port/v1/subscribe`. Only plain connections are made:
//! this build has no TLS for WebSockets, so `https://` and `wss://` are refused by name rather
//! than failing in the handshake.
//!
//! [`Connection::connect`] does the handshake and reads the first message (`IdentityToken`),
//! so a command starts from a connection that the server has accepted (its `client_connected`
//! ran). [`Connection::next`] hands over the server's messages one at a time, with their text as
//! it came (for commands that print it) and parsed (for those that act on it); a close from the
//! server, or a socket that ends without one, is a [`Failure`] that says why.

use crate::failure::{Failure, Result};
use crate::output;
use futures_util::{SinkExt, StreamExt};
use std::future::Future;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use wasmod_abi::Identity;
use wasmod_protocol::ws::{JsonClientMessage, JsonServerMessage, JSON_PROTOCOL};
use wasmod_protocol::ErrorBody;

/// The endpoint's path under the server's base URL.
const ENDPOINT: &str = "/v1/subscribe";

/// The largest message (and frame) read from the server. The server bounds the rows it queues
/// for a client by their binary size (16 MiB by default); the same rows in JSON are a few
/// times larger, so the reader's bound is well above that rather than tungstenite's 16 MiB
/// frames.
const MAX_MESSAGE: usize = 256 << 20;

/// How long [`Connection::close`] waits for the server to answer the close frame.
const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether `target` names a server (rather than a module): a URL of one of the schemes the
/// commands know, including the ones they refuse with a reason.
pub fn is_server_url(target: &str) -> bool {
    ["http://", "https://", "ws://", "wss://"]
        .iter()
        .any(|scheme| target.starts_with(scheme))
}

/// The WebSocket endpoint of the server at `base`: `http://h:p` → `ws://h:p/v1/subscribe`.
pub fn endpoint(base: &str) -> Result<String> {
    Ok(format!("ws://{}{ENDPOINT}", server_address(base)?))
}

/// The HTTP base URL of the server at `base`: `ws://h:p/v1/subscribe` → `http://h:p`.
pub fn http_base(base: &str) -> Result<String> {
    Ok(format!("http://{}", server_address(base)?))
}

/// What names the server in `base`, between the scheme and the endpoint: `host:port`, and a
/// path prefix if the server is behind one.
fn server_address(base: &str) -> Result<&str> {
    let base = base.trim_end_matches('/');
    let rest = if let Some(rest) = base.strip_prefix("http://") {
        rest
    } else if let Some(rest) = base.strip_prefix("ws://") {
        rest
    } else if base.starts_with("https://") || base.starts_with("wss://") {
        return Err(Failure::usage(format!(
            "{base}: this build of wasmod connects to WebSockets without TLS only (http:// or ws://)"
        )));
    } else {
        return Err(Failure::usage(format!(
            "{base} is not a server's URL: write it http://host:port (or ws://host:port)"
        )));
    };
    let rest = rest.strip_suffix(ENDPOINT).unwrap_or(rest);
    if rest.is_empty() {
        return Err(Failure::usage(format!("{base} names no host")));
    }
    Ok(rest)
}

/// Runs `task` (a command's talk with a server) to its end on a runtime of its own.
pub fn run<T>(task: impl Future<Output = Result<T>>) -> Result<T> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure::usage(format!("starting the async runtime: {error}")))?
        .block_on(task)
}

/// The socket of a connection.
type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// An open connection, past its `IdentityToken`.
pub struct Connection {
    socket: Socket,
    url: String,
    /// The identity the connection runs as.
    pub identity: Identity,
    /// A token for that identity, freshly issued by the server.
    pub token: String,
    /// Whether the identity is new: the connection was made without a token.
    issued: bool,
}

/// A message from the server: its text as sent, and what it says.
pub struct Received {
    /// The text frame.
    pub text: String,
    /// The frame, parsed.
    pub message: JsonServerMessage,
}

impl Connection {
    /// Connects to the server at `base` as the identity of `token` (a new identity without
    /// one), and reads its `IdentityToken`.
    pub async fn connect(base: &str, token: Option<&str>) -> Result<Self> {
        let token_given = token;
        let url = endpoint(base)?;
        let mut request = url
            .as_str()
            .into_client_request()
            .map_err(|error| Failure::usage(format!("{url}: {error}")))?;
        let headers = request.headers_mut();
        headers.insert(
            "Sec-WebSocket-Protocol",
            HeaderValue::from_static(JSON_PROTOCOL),
        );
        if let Some(token) = token {
            let bearer = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                Failure::usage("--token is not a token: it has characters a header cannot carry")
            })?;
            headers.insert("Authorization", bearer);
        }
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE))
            .max_frame_size(Some(MAX_MESSAGE));
        let (mut socket, _) =
            tokio_tungstenite::connect_async_with_config(request, Some(config), true)
                .await
                .map_err(|error| handshake_failure(&url, error))?;
        match read(&mut socket, &url).await?.message {
            JsonServerMessage::IdentityToken {
                identity, token, ..
            } => Ok(Self {
                socket,
                url,
                identity,
                token,
                issued: token_given.is_none(),
            }),
            _ => Err(Failure::module(format!(
                "{url}: the server's first message is not its IdentityToken"
            ))),
        }
    }

    /// Says whom the connection runs as: a new identity with its token on stderr
    /// ([`output::new_identity`]), so that its rows are not orphaned; a given one in the log.
    pub fn announce(&self) {
        if self.issued {
            output::new_identity(&self.identity, &self.token);
        } else {
            tracing::info!(identity = %self.identity, "connected");
        }
    }

    /// Sends `message`.
    pub async fn send(&mut self, message: &JsonClientMessage) -> Result {
        self.socket
            .send(Message::text(message.to_json()))
            .await
            .map_err(|error| Failure::module(format!("sending to {}: {error}", self.url)))
    }

    /// The server's next message. Pings are answered as frames are read; a close from the
    /// server, or the end of the socket, is a failure that says which.
    pub async fn next(&mut self) -> Result<Received> {
        read(&mut self.socket, &self.url).await
    }

    /// Closes the connection with `1000` and waits (a little) for the server's close frame, so
    /// that the server sees a clean close and runs the connection's `client_disconnected`.
    pub async fn close(mut self) {
        let frame = CloseFrame {
            code: CloseCode::Normal,
            reason: "".into(),
        };
        if self.socket.close(Some(frame)).await.is_err() {
            return;
        }
        let drained = async { while let Some(Ok(_)) = self.socket.next().await {} };
        if tokio::time::timeout(CLOSE_GRACE, drained).await.is_err() {
            tracing::warn!(url = %self.url, "the server did not answer the close frame");
        }
    }
}

/// The next message from the server at `url` on `socket` (see [`Connection::next`]).
async fn read(socket: &mut Socket, url: &str) -> Result<Received> {
    loop {
        let frame = socket.next().await.ok_or_else(|| {
            Failure::module(format!("{url}: the connection ended without a close frame"))
        })?;
        match frame {
            Ok(Message::Text(text)) => {
                let message = JsonServerMessage::from_json(text.as_str()).map_err(|error| {
                    Failure::module(format!("{url}: {error}: {}", text.as_str()))
                })?;
                return Ok(Received {
                    text: text.as_str().to_owned(),
                    message,
                });
            }
            Ok(Message::Binary(_)) => {
                return Err(Failure::module(format!(
                    "{url}: a binary frame on the JSON protocol"
                )))
            }
            Ok(Message::Close(frame)) => return Err(closed(url, frame)),
            Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_)) => {}
            Err(error) => return Err(Failure::module(format!("reading from {url}: {error}"))),
        }
    }
}

/// The failure for the close `frame` of the server at `url`.
fn closed(url: &str, frame: Option<CloseFrame>) -> Failure {
    match frame {
        Some(frame) if frame.reason.is_empty() => Failure::module(format!(
            "{url}: the server closed the connection ({})",
            u16::from(frame.code)
        )),
        Some(frame) => Failure::module(format!(
            "{url}: the server closed the connection ({}): {}",
            u16::from(frame.code),
            frame.reason.as_str()
        )),
        None => Failure::module(format!("{url}: the server closed the connection")),
    }
}

/// Why the handshake with `url` failed, for people: a refused upgrade says the server's own
/// error (a bad or expired token, a missing subprotocol); the rest is the connection's error.
fn handshake_failure(url: &str, error: Error) -> Failure {
    match error {
        Error::Http(response) => {
            let status = response.status();
            let body = response.body().as_deref().unwrap_or_default();
            let reason = match serde_json::from_slice::<ErrorBody>(body) {
                Ok(body) => format!("{}: {}", body.error.code, body.error.message),
                Err(_) => String::from_utf8_lossy(body).into_owned(),
            };
            Failure::usage(format!("{url} refused the connection ({status}): {reason}"))
        }
        other => Failure::usage(format!("cannot connect to {url}: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_name_the_subscribe_endpoint() {
        for base in [
            "http://127.0.0.1:3000",
            "http://127.0.0.1:3000/",
            "ws://127.0.0.1:3000",
            "ws://127.0.0.1:3000/v1/subscribe",
        ] {
            assert_eq!(
                endpoint(base).expect(base),
                "ws://127.0.0.1:3000/v1/subscribe"
            );
        }
    }

    #[test]
    fn the_http_base_drops_the_endpoint() {
        assert_eq!(
            http_base("ws://127.0.0.1:3000/v1/subscribe").expect("a URL"),
            "http://127.0.0.1:3000"
        );
        assert_eq!(
            http_base("http://127.0.0.1:3000/").expect("a URL"),
            "http://127.0.0.1:3000"
        );
    }

    #[test]
    fn urls_without_a_plain_scheme_or_a_host_are_refused() {
        for base in [
            "https://example.org",
            "wss://example.org",
            "ftp://x",
            "http://",
            "ws:///v1/subscribe",
            "x",
        ] {
            assert!(endpoint(base).is_err(), "{base}");
        }
    }

    #[test]
    fn servers_are_told_from_modules_by_their_scheme() {
        assert!(is_server_url("http://127.0.0.1:3000"));
        assert!(is_server_url("wss://example.org"));
        assert!(!is_server_url("examples/quickstart"));
        assert!(!is_server_url("module.wasm"));
    }
}
