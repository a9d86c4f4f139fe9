//! The commands that talk to a running server over its WebSocket (`subscribe`, `sql`): its
//! URL, and a connection in the JSON subprotocol (`v1.json.wasmod`, `docs/protocol.md`) over
//! the client SDK's socket ([`wasmod_client::socket`], the tree's one WebSocket client), with
//! what can go wrong said as the command's [`Failure`]s.
//!
//! The commands take the server's base URL, as `wasmod call` does: `http://host:port` (or
//! `ws://host:port`) becomes `ws://host:port/v1/subscribe`, and over TLS (a server behind a
//! TLS-terminating proxy, `docs/deployment.md`) `https://host` (or `wss://host`) becomes
//! `wss://host/v1/subscribe`, trusting the platform's root certificates (the SDK's default).
//!
//! [`Connection::connect`] does the handshake and reads the first message (`IdentityToken`),
//! so a command starts from a connection that the server has accepted (its `client_connected`
//! ran). [`Connection::next`] hands over the server's messages one at a time, with their text as
//! it came (for commands that print it) and parsed (for those that act on it); a close from the
//! server, or a socket that ends without one, is a [`Failure`] that says why.

use crate::api;
use crate::failure::{Failure, Result};
use crate::output;
use std::future::Future;
use wasmod_client::socket::{self, Closed, Json, JsonMessage, OpenError, Received};
use wasmod_protocol::ws::JsonClientMessage;

/// The endpoint's path under the server's base URL.
const ENDPOINT: &str = "/v1/subscribe";

/// Whether `target` names a server (rather than a module): a URL of one of the schemes the
/// commands know.
pub fn is_server_url(target: &str) -> bool {
    ["http://", "https://", "ws://", "wss://"]
        .iter()
        .any(|scheme| target.starts_with(scheme))
}

/// The WebSocket endpoint of the server at `base`: `http://h:p` → `ws://h:p/v1/subscribe`,
/// `https://h` → `wss://h/v1/subscribe`.
pub fn endpoint(base: &str) -> Result<String> {
    let (tls, address) = server_address(base)?;
    let scheme = if tls { "wss" } else { "ws" };
    Ok(format!("{scheme}://{address}{ENDPOINT}"))
}

/// The HTTP base URL of the server at `base`: `ws://h:p/v1/subscribe` → `http://h:p`,
/// `wss://h/v1/subscribe` → `https://h`.
pub fn http_base(base: &str) -> Result<String> {
    let (tls, address) = server_address(base)?;
    let scheme = if tls { "https" } else { "http" };
    Ok(format!("{scheme}://{address}"))
}

/// Whether `base` is over TLS, and what names the server in it, between the scheme and the
/// endpoint: `host:port`, and a path prefix if the server is behind one.
fn server_address(base: &str) -> Result<(bool, &str)> {
    let base = base.trim_end_matches('/');
    let schemes = [
        ("http://", false),
        ("ws://", false),
        ("https://", true),
        ("wss://", true),
    ];
    let Some((tls, rest)) = schemes
        .iter()
        .find_map(|&(scheme, tls)| Some((tls, base.strip_prefix(scheme)?)))
    else {
        return Err(Failure::usage(format!(
            "{base} is not a server's URL: write it http://host:port (or ws://host:port; \
             https:// or wss:// over TLS)"
        )));
    };
    let rest = rest.strip_suffix(ENDPOINT).unwrap_or(rest);
    if rest.is_empty() {
        return Err(Failure::usage(format!("{base} names no host")));
    }
    Ok((tls, rest))
}

/// Runs `task` (a command's talk with a server) to its end on a runtime of its own.
pub fn run<T>(task: impl Future<Output = Result<T>>) -> Result<T> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure::usage(format!("starting the async runtime: {error}")))?
        .block_on(task)
}

/// An open connection, past its `IdentityToken`.
pub struct Connection {
    socket: socket::Connection<Json>,
    url: String,
    /// Whether the identity is new: the connection was made without a token.
    issued: bool,
}

impl Connection {
    /// Connects to the server at `base` as the identity of `token` (a new identity without
    /// one), and reads its `IdentityToken`, within [`api::TIMEOUT`].
    pub async fn connect(base: &str, token: Option<&str>) -> Result<Self> {
        let url = endpoint(base)?;
        let socket = socket::Connection::open(&url, token, api::TIMEOUT)
            .await
            .map_err(|error| open_failure(&url, error))?;
        Ok(Self {
            socket,
            url,
            issued: token.is_none(),
        })
    }

    /// Says whom the connection runs as: a new identity with its token on stderr
    /// ([`output::new_identity`]), so that its rows are not orphaned; a given one in the log.
    pub fn announce(&self) {
        let session = self.socket.session();
        if self.issued {
            output::new_identity(&session.identity, &session.token);
        } else {
            tracing::info!(identity = %session.identity, "connected");
        }
    }

    /// Sends `message`.
    pub async fn send(&mut self, message: &JsonClientMessage) -> Result {
        self.socket
            .send(message)
            .await
            .map_err(|error| Failure::module(format!("sending to {}: {error}", self.url)))
    }

    /// The server's next message. Pings are answered as frames are read; a close from the
    /// server, or the end of the socket, is a failure that says which.
    pub async fn next(&mut self) -> Result<JsonMessage> {
        match self.socket.next().await {
            Ok(Received::Message(message)) => Ok(message),
            Ok(Received::Closed(closed)) => Err(closed_failure(&self.url, closed)),
            Err(error) => Err(Failure::module(format!("{}: {error}", self.url))),
        }
    }

    /// Closes the connection with `1000` and waits (a little) for the server's close frame, so
    /// that the server sees a clean close and runs the connection's `client_disconnected`.
    pub async fn close(self) {
        self.socket.close().await;
    }
}

/// The failure for the server at `url` closing the socket as `closed` says.
fn closed_failure(url: &str, closed: Closed) -> Failure {
    match closed {
        Closed::ByServer {
            code: Some(code),
            reason,
        } if reason.is_empty() => {
            Failure::module(format!("{url}: the server closed the connection ({code})"))
        }
        Closed::ByServer {
            code: Some(code),
            reason,
        } => Failure::module(format!(
            "{url}: the server closed the connection ({code}): {reason}"
        )),
        Closed::ByServer { code: None, .. } => {
            Failure::module(format!("{url}: the server closed the connection"))
        }
        Closed::Ended(why) => Failure::module(format!("{url}: {why}")),
    }
}

/// Why the connection to `url` did not open, for people: a refused upgrade says the server's
/// own error (a bad or expired token, a missing subprotocol), and what the server said once
/// the socket was open is the module's failure rather than a usage error.
fn open_failure(url: &str, error: OpenError) -> Failure {
    match error {
        OpenError::Refused { status, reason, .. } => {
            Failure::usage(format!("{url} refused the connection ({status}): {reason}"))
        }
        OpenError::Token => {
            Failure::usage("--token is not a token: it has characters a header cannot carry")
        }
        OpenError::Closed(closed) => closed_failure(url, closed),
        OpenError::FirstMessage(why) => Failure::module(format!("{url}: {why}")),
        OpenError::TimedOut(_) => Failure::module(format!("cannot connect to {url}: {error}")),
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
    fn tls_urls_stay_over_tls() {
        for base in ["https://example.org", "wss://example.org/v1/subscribe"] {
            assert_eq!(
                endpoint(base).expect(base),
                "wss://example.org/v1/subscribe"
            );
            assert_eq!(http_base(base).expect(base), "https://example.org");
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
    fn urls_without_a_known_scheme_or_a_host_are_refused() {
        for base in ["wss://", "ftp://x", "http://", "ws:///v1/subscribe", "x"] {
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
