//! Why the server closes a socket: the close codes, with their reasons.
//!
//! Standard codes where one fits; `4000`–`4999` (the range RFC 6455 leaves to applications)
//! for the module's and the server's own reasons.

/// A close code (RFC 6455, section 7.4).
pub type CloseCode = u16;

/// A reason to close a socket: its code and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Close {
    /// The close code.
    pub code: CloseCode,
    /// Why, for people (cut to the 123 bytes a close frame carries).
    pub reason: String,
}

/// The client closed, or the socket ended cleanly.
pub const NORMAL: CloseCode = 1000;
/// The server is shutting down.
pub const GOING_AWAY: CloseCode = 1001;
/// A text frame on the binary protocol, or a binary frame on the JSON protocol.
pub const UNSUPPORTED_DATA: CloseCode = 1003;
/// A frame that is not a message of the protocol.
pub const INVALID_MESSAGE: CloseCode = 1007;
/// The client pinged more often than [`PINGS`](super::limits::PINGS) allows.
pub const POLICY: CloseCode = 1008;
/// A message over [`MAX_INBOUND_MESSAGE`](super::limits::MAX_INBOUND_MESSAGE).
pub const TOO_BIG: CloseCode = 1009;
/// The server failed (a message it could not render, its evaluation task gone).
pub const INTERNAL: CloseCode = 1011;
/// The module's `client_connected` refused the connection (or it could not run).
pub const REFUSED: CloseCode = 4000;
/// The client did not read its messages fast enough: its outbound queue was full.
pub const TOO_SLOW: CloseCode = 4001;
/// The evaluation task fell behind the commit feed: the connection's updates are lost, so it
/// must reconnect and subscribe again.
pub const RESYNC: CloseCode = 4002;
/// The client stayed silent (not even answering a ping) for two ping intervals.
pub const IDLE: CloseCode = 4003;
/// The server is a standby of a replicated deployment, which takes no connection (a
/// connection is a write: its `client_connected`): connect to the primary, or to the next of
/// the deployment's servers.
pub const NOT_PRIMARY: CloseCode = 4004;

/// The most bytes a close frame's reason may have.
pub const MAX_REASON: usize = 123;

impl Close {
    /// A close with `code` and `reason`.
    pub fn new(code: CloseCode, reason: impl Into<String>) -> Self {
        Self {
            code,
            reason: reason.into(),
        }
    }
}
