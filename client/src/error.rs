//! [`Error`]: every way a call, a query or a subscription can fail, as one enum, so that an
//! application can tell "the module said no" from "the server refused the call" from "the
//! connection went away" without parsing messages.

use crate::transport::OpenError;
use std::fmt;
use wasmod_abi::DecodeError;
use wasmod_protocol::errors::ApiError;
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
    /// The connection could not be opened: the URL, the handshake or the first message.
    Connect(String),
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
            Self::Connect(why) => write!(f, "could not connect: {why}"),
            Self::Protocol(why) => write!(f, "the server sent a malformed message: {why}"),
            Self::Decode(error) => write!(f, "could not decode the value: {error}"),
            Self::NoSuchColumn { table, column } => {
                write!(f, "table `{table}`'s row type has no column `{column}`")
            }
        }
    }
}

impl std::error::Error for Error {}

impl From<DecodeError> for Error {
    fn from(error: DecodeError) -> Self {
        Self::Decode(error)
    }
}

impl From<OpenError> for Error {
    /// A connection that did not open is [`Error::Connect`], saying why.
    fn from(error: OpenError) -> Self {
        Self::Connect(error.to_string())
    }
}

impl From<MessageError> for Error {
    fn from(error: MessageError) -> Self {
        Self::Protocol(error.to_string())
    }
}
