//! What the SDK's socket ([`crate::socket`]) and the platforms' transports under it
//! (`platform/`) share: a data frame's payload, how a socket closed, and why one did not open.
//! Both sides name these, so they live below both (the socket re-exports them).

use bytes::Bytes;
use std::fmt;
use std::time::Duration;
use wasmod_protocol::errors::ApiError;
#[cfg(not(target_arch = "wasm32"))]
use wasmod_protocol::errors::ErrorBody;

/// A data frame's payload, either way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Payload {
    /// A binary frame.
    Binary(Bytes),
    /// A text frame.
    Text(String),
}

/// How a socket closed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Closed {
    /// The server sent a close frame (or answered the client's): its code, `None` when the
    /// frame had none, and its reason.
    ByServer {
        /// The close code: `4001` for a client too slow for its queue, `1009` for a message
        /// too large... (`docs/protocol.md`).
        code: Option<u16>,
        /// The reason, empty when the server gave none.
        reason: String,
    },
    /// The socket ended without a close frame (the server went away, or reading failed):
    /// why.
    Ended(String),
}

impl fmt::Display for Closed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ByServer {
                code: Some(code),
                reason,
            } if !reason.is_empty() => write!(f, "the server closed the socket: {code} {reason}"),
            Self::ByServer {
                code: Some(code), ..
            } => write!(f, "the server closed the socket: {code}"),
            Self::ByServer { code: None, .. } => f.write_str("the server closed the socket"),
            Self::Ended(why) => f.write_str(why),
        }
    }
}

/// Why a connection did not open, step by step.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OpenError {
    /// The URL is not one the transport can open: why.
    Request(String),
    /// The token has characters an HTTP header cannot carry.
    Token,
    /// The server refused the upgrade (a bad or expired token, too many new identities from
    /// one address, too many connections...): its HTTP status and its error.
    Refused {
        /// The HTTP status.
        status: u16,
        /// The server's API error, when its answer's body was one (`{"error": {"code", "message"}}`,
        /// what `wasmod serve` answers): its [`code`](ApiError::code) is what to act on
        /// (`too_many_calls`: wait; `invalid_token`, `token_expired`: connect without the token).
        /// `None` when something else answered (a proxy's error page).
        error: Option<ApiError>,
        /// The server's error for people: `code: message` of its API error, else the body's
        /// text (its start), else the status's reason.
        reason: String,
    },
    /// The connection or the handshake failed (nothing listens, the socket broke, the server
    /// did not agree to the subprotocol): why.
    Failed(String),
    /// The TLS handshake of a `wss://` connection failed (the server's certificate is not
    /// trusted, or not the host's), or nothing is trusted at all: why.
    Tls(String),
    /// The handshake and the first message took longer than this.
    TimedOut(Duration),
    /// The socket opened, and closed before its first message.
    Closed(Closed),
    /// The socket opened, but its first message was not an `IdentityToken`: what came
    /// instead (another message, or a frame that is not a message).
    FirstMessage(String),
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Request(why) | Self::Failed(why) | Self::FirstMessage(why) => f.write_str(why),
            Self::Token => f.write_str("the token is not a valid header value"),
            Self::Refused { status, reason, .. } => {
                write!(f, "the server refused the connection ({status}): {reason}")
            }
            Self::Tls(why) => write!(f, "TLS failed: {why}"),
            Self::TimedOut(timeout) => write!(f, "no answer within {} ms", timeout.as_millis()),
            Self::Closed(closed) => write!(f, "before its first message, {closed}"),
        }
    }
}

impl std::error::Error for OpenError {}

/// The most of a refusal's body that is kept as its reason, when it is not an API error (a
/// proxy's HTML page can be long).
#[cfg(not(target_arch = "wasm32"))]
const REASON_BYTES: usize = 512;

/// A browser's `WebSocket` shows no refused upgrade's status or body: only the native
/// transport reads them.
#[cfg(not(target_arch = "wasm32"))]
impl OpenError {
    /// The refusal of an upgrade answered `status` (with its canonical reason, `Too Many
    /// Requests`) and `body`: the server's API error if the body is one, else its text.
    pub(crate) fn refused(status: u16, canonical: Option<&str>, body: &[u8]) -> Self {
        if let Ok(ErrorBody { error }) = serde_json::from_slice::<ErrorBody>(body) {
            return Self::Refused {
                status,
                reason: format!("{}: {}", error.code, error.message),
                error: Some(error),
            };
        }
        let text = String::from_utf8_lossy(&body[..body.len().min(REASON_BYTES)]);
        let text = text.trim();
        let reason = if text.is_empty() {
            canonical.unwrap_or("no reason given").to_owned()
        } else {
            text.to_owned()
        };
        Self::Refused {
            status,
            error: None,
            reason,
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use wasmod_protocol::errors::ErrorCode;

    #[test]
    fn a_refusal_keeps_the_servers_error_or_what_else_answered() {
        let body = br#"{"error":{"code":"too_many_calls","message":"at most 30 new identities a minute"}}"#;
        let OpenError::Refused {
            status,
            error: Some(error),
            reason,
        } = OpenError::refused(429, Some("Too Many Requests"), body)
        else {
            panic!("not the API error");
        };
        assert_eq!(status, 429);
        assert_eq!(error.code, ErrorCode::TooManyCalls);
        assert_eq!(reason, "too_many_calls: at most 30 new identities a minute");

        let page = OpenError::refused(502, Some("Bad Gateway"), b"<html>502 Bad Gateway</html>\n");
        assert!(
            matches!(&page, OpenError::Refused { error: None, reason, .. } if reason == "<html>502 Bad Gateway</html>"),
            "{page:?}"
        );
        let long = OpenError::refused(500, None, &[b'x'; 4096]);
        assert!(matches!(&long, OpenError::Refused { reason, .. } if reason.len() == REASON_BYTES));
        let empty = OpenError::refused(429, Some("Too Many Requests"), b"");
        assert_eq!(
            empty.to_string(),
            "the server refused the connection (429): Too Many Requests"
        );
    }
}
