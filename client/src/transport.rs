//! What the SDK's socket ([`crate::socket`]) and the platforms' transports under it
//! (`platform/`) share: a data frame's payload, how a socket closed, and why one did not open.
//! Both sides name these, so they live below both (the socket re-exports them).

use bytes::Bytes;
use std::fmt;
use std::time::Duration;

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
    /// The server refused the upgrade (a bad or expired token, too many connections...): its
    /// HTTP status, and its error (`code: message` of its JSON error body, else the body).
    Refused {
        /// The HTTP status.
        status: u16,
        /// The server's error.
        reason: String,
    },
    /// The connection or the handshake failed (nothing listens, the socket broke, the server
    /// did not agree to the subprotocol): why.
    Failed(String),
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
            Self::Refused { status, reason } => {
                write!(f, "the server refused the connection ({status}): {reason}")
            }
            Self::TimedOut(timeout) => write!(f, "no answer within {} ms", timeout.as_millis()),
            Self::Closed(closed) => write!(f, "before its first message, {closed}"),
        }
    }
}

impl std::error::Error for OpenError {}
