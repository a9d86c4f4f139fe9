//! [`Error`]: every way a call, a query or a subscription can fail, as one enum, so that an
//! application can tell "the module said no" from "the server refused the call" from "the
//! connection went away" without parsing messages.
//!
//! What the server refused carries its [`ApiError`], whose [`ErrorCode`] is what to act on
//! (`busy`: retry later; `too_many_calls`: slow down): [`Error::code`] reads it whichever
//! way it came, a call's answer or a refused connection. Both types are this crate's
//! (re-exported from the protocol's), so matching them needs no other crate.

use crate::transport::OpenError;
use std::fmt;
use wasmod_abi::DecodeError;
use wasmod_protocol::errors::{ApiError, ErrorCode};
use wasmod_protocol::ws::MessageError;

/// Why a client operation failed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The server refused the call before it ran (unknown name, bad arguments, busy...): its
    /// API error, code and message.
    Api(ApiError),
    /// The reducer returned an error; nothing was committed.
    Failed(String),
    /// The module trapped, panicked or ran out of time or memory; nothing was committed.
    Aborted(String),
    /// A one-off query or a subscription the server refused, with its message.
    Query(String),
    /// The connection ended before the answer came (whether a reducer call ran is then
    /// unknown), or the client is disconnected.
    Disconnected,
    /// The server (or a proxy in front of it) refused to open the connection, answering the
    /// WebSocket upgrade with an HTTP error: too many new identities from this address
    /// (`too_many_calls`), a bad or expired token, a server full or shutting down...
    Refused {
        /// The HTTP status.
        status: u16,
        /// The server's API error; `None` when what answered was not the server (a proxy's
        /// error page).
        error: Option<ApiError>,
        /// The error for people: the API error's `code: message`, else the answer's text.
        reason: String,
    },
    /// The connection could not be opened: the URL, TLS, the handshake or the first message.
    Connect(String),
    /// The token provider ([`ClientBuilder::token_provider`](crate::ClientBuilder::token_provider))
    /// gave no token: its error's text, or that it did not answer in time.
    TokenProvider(String),
    /// A server message that is not a message of the protocol (the connection is dropped).
    Protocol(String),
    /// Bytes that do not decode as the expected type (a result or a row).
    Decode(DecodeError),
    /// A table's rows were searched by a column their row type does not have.
    NoSuchColumn {
        /// The table searched.
        table: String,
        /// The column asked for.
        column: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Api(error) => write!(f, "the server refused the call: {error}"),
            Self::Failed(message) => write!(f, "the reducer failed: {message}"),
            Self::Aborted(reason) => write!(f, "the call aborted: {reason}"),
            Self::Query(message) => write!(f, "the query was refused: {message}"),
            Self::Disconnected => f.write_str("the connection ended before the answer"),
            Self::Refused {
                status,
                reason,
                error,
            } => {
                write!(f, "the server refused the connection ({status}): {reason}")?;
                match error.as_ref().map(|error| error.code) {
                    Some(ErrorCode::InvalidToken) => f.write_str(
                        " (the server does not accept the client's token: connect with another \
                         one, or with none as a new identity)",
                    ),
                    Some(ErrorCode::TokenExpired) => f.write_str(
                        " (the client's token has expired: connect with a fresh one, or give \
                         the client a token provider)",
                    ),
                    _ => Ok(()),
                }
            }
            Self::Connect(why) => write!(f, "could not connect: {why}"),
            Self::TokenProvider(why) => write!(f, "the token provider gave no token: {why}"),
            Self::Protocol(why) => write!(f, "the server sent a malformed message: {why}"),
            Self::Decode(error) => write!(f, "could not decode the value: {error}"),
            Self::NoSuchColumn { table, column } => {
                write!(f, "table `{table}`'s row type has no column `{column}`")
            }
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// The server's error code, when the server refused something: a call
    /// ([`Error::Api`]) or the connection ([`Error::Refused`] with its API error).
    ///
    /// ```
    /// use wasmod_client::{Error, ErrorCode};
    ///
    /// fn retry_later(error: &Error) -> bool {
    ///     matches!(error.code(), Some(ErrorCode::Busy | ErrorCode::TooManyCalls))
    /// }
    /// ```
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Self::Api(error)
            | Self::Refused {
                error: Some(error), ..
            } => Some(error.code),
            _ => None,
        }
    }
}

impl From<DecodeError> for Error {
    fn from(error: DecodeError) -> Self {
        Self::Decode(error)
    }
}

impl From<OpenError> for Error {
    /// A refused upgrade is [`Error::Refused`], with the server's error; any other connection
    /// that did not open is [`Error::Connect`], saying why.
    fn from(error: OpenError) -> Self {
        match error {
            OpenError::Refused {
                status,
                error,
                reason,
            } => Self::Refused {
                status,
                error,
                reason,
            },
            other => Self::Connect(other.to_string()),
        }
    }
}

impl From<MessageError> for Error {
    fn from(error: MessageError) -> Self {
        Self::Protocol(error.to_string())
    }
}
