//! The API's errors: a stable code, the HTTP status it is answered with, and a message for
//! people.
//!
//! Every failure a client can see is an [`ApiError`], sent as an [`ErrorBody`]:
//! `{"error": {"code": "stable_snake_case", "message": "…"}}`. Clients branch on the
//! [`ErrorCode`], which never changes meaning; the message is for people and may be reworded.
//! The codes live here rather than in the server so that clients (the CLI, the SDK) read the
//! same type the server writes. `docs/http-api.md` lists every code.
//!
//! The WebSocket protocol's binary messages carry the same errors: a code is encoded as its
//! name (a string), like in JSON, so that a code added later reads as an error rather than as
//! another code.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use wasmod_abi::{AlgebraicType, Decode, DecodeError, Encode, Reader, SchemaType, Typespace};

/// What went wrong, as clients branch on it. Each code has one HTTP status
/// ([`ErrorCode::http_status`]).
///
/// Written in JSON as its [`ErrorCode::as_str`], such as `"bad_arguments"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The body is not valid JSON (400).
    BadJson,
    /// The arguments do not match the entry point's parameters (400).
    BadArguments,
    /// The request is malformed in another way (400).
    BadRequest,
    /// The call needs an identity and none was given (401).
    Unauthenticated,
    /// The token is malformed or its signature is wrong (401).
    InvalidToken,
    /// The token's signature is right but it has expired (401).
    TokenExpired,
    /// The table is private to the module (403).
    PrivateTable,
    /// The reducer is a lifecycle reducer, which only the host calls (403).
    LifecycleReducer,
    /// The reducer is called with the rows of a schedule table, by the host only (403).
    ScheduledReducer,
    /// The module's `client_connected` reducer refused the new identity (403).
    ConnectionRefused,
    /// The credential given is not the operator's, for the admin API (403).
    NotOperator,
    /// A browser request to the admin API that changes something, authenticated by the
    /// operator's cookie, came from another site (or would not say where from) (403).
    CrossSite,
    /// No route of the API matches the path (404).
    NotFound,
    /// The module has no entry point of that kind and name (404).
    NoSuchEntry,
    /// The module has no table of that name (404).
    NoSuchTable,
    /// None of the module's HTTP handlers answers that method and path (404).
    NoSuchRoute,
    /// The route exists but not for this method (405).
    MethodNotAllowed,
    /// The body is larger than the server accepts (413).
    PayloadTooLarge,
    /// `wasmod publish`: the new build's tables cannot take the stored data, or this server
    /// cannot take a new build (an edge, or one that publishes its commits to edges) (409).
    IncompatibleBuild,
    /// The entry point returned an error; the message is the module's (422).
    EntryFailed,
    /// `wasmod publish`: the new build is not a module this server can load (not wasm, not the
    /// ABI, an invalid description or visibility filter) (422).
    InvalidModule,
    /// The identity has as many calls in progress as the server allows (429).
    TooManyCalls,
    /// The module trapped or panicked; its transaction was rolled back (500).
    Aborted,
    /// The module failed in a way that is not the client's fault: an unexpected error code, a
    /// result that does not match its own description, an invalid HTTP response (500).
    ModuleError,
    /// The call ended, but the value it returned is larger than the server sends as an answer
    /// (`max_result_bytes`); a procedure's commits stay (500).
    ResultTooLarge,
    /// The server failed (500).
    Internal,
    /// The queue of calls waiting for the module is full; retry later (503).
    Busy,
    /// The server is shutting down (503).
    ShuttingDown,
    /// The server's commit log failed (a full or failing disk): it takes no writes until it is
    /// restarted, and what it serves may include commits a restart loses (503).
    Degraded,
    /// The server is a standby of a replicated deployment (`docs/high-availability.md`): it
    /// serves reads, and takes no writes until it becomes the primary; send them to the
    /// primary, or try the next server (503).
    NotPrimary,
    /// The request took longer than the server's request timeout; a call may still complete
    /// (504).
    Timeout,
}

impl ErrorCode {
    /// Every code, in the order of the table in `docs/http-api.md`.
    pub const ALL: [ErrorCode; 31] = [
        Self::BadJson,
        Self::BadArguments,
        Self::BadRequest,
        Self::Unauthenticated,
        Self::InvalidToken,
        Self::TokenExpired,
        Self::PrivateTable,
        Self::LifecycleReducer,
        Self::ScheduledReducer,
        Self::ConnectionRefused,
        Self::NotOperator,
        Self::CrossSite,
        Self::NotFound,
        Self::NoSuchEntry,
        Self::NoSuchTable,
        Self::NoSuchRoute,
        Self::MethodNotAllowed,
        Self::PayloadTooLarge,
        Self::IncompatibleBuild,
        Self::EntryFailed,
        Self::InvalidModule,
        Self::TooManyCalls,
        Self::Aborted,
        Self::ModuleError,
        Self::ResultTooLarge,
        Self::Internal,
        Self::Busy,
        Self::ShuttingDown,
        Self::Degraded,
        Self::NotPrimary,
        Self::Timeout,
    ];

    /// The code as clients see it, such as `"bad_arguments"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::BadJson => "bad_json",
            Self::BadArguments => "bad_arguments",
            Self::BadRequest => "bad_request",
            Self::Unauthenticated => "unauthenticated",
            Self::InvalidToken => "invalid_token",
            Self::TokenExpired => "token_expired",
            Self::PrivateTable => "private_table",
            Self::LifecycleReducer => "lifecycle_reducer",
            Self::ScheduledReducer => "scheduled_reducer",
            Self::ConnectionRefused => "connection_refused",
            Self::NotOperator => "not_operator",
            Self::CrossSite => "cross_site",
            Self::NotFound => "not_found",
            Self::NoSuchEntry => "no_such_entry",
            Self::NoSuchTable => "no_such_table",
            Self::NoSuchRoute => "no_such_route",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::PayloadTooLarge => "payload_too_large",
            Self::IncompatibleBuild => "incompatible_build",
            Self::InvalidModule => "invalid_module",
            Self::EntryFailed => "entry_failed",
            Self::TooManyCalls => "too_many_calls",
            Self::Aborted => "aborted",
            Self::ModuleError => "module_error",
            Self::ResultTooLarge => "result_too_large",
            Self::Internal => "internal",
            Self::Busy => "busy",
            Self::ShuttingDown => "shutting_down",
            Self::Degraded => "degraded",
            Self::NotPrimary => "not_primary",
            Self::Timeout => "timeout",
        }
    }

    /// The code named `text` (as [`ErrorCode::as_str`] writes it), if there is one.
    pub fn from_name(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|code| code.as_str() == text)
    }

    /// The HTTP status the code is answered with, such as `400`.
    pub const fn http_status(self) -> u16 {
        match self {
            Self::BadJson | Self::BadArguments | Self::BadRequest => 400,
            Self::Unauthenticated | Self::InvalidToken | Self::TokenExpired => 401,
            Self::PrivateTable
            | Self::LifecycleReducer
            | Self::ScheduledReducer
            | Self::ConnectionRefused
            | Self::NotOperator
            | Self::CrossSite => 403,
            Self::NotFound | Self::NoSuchEntry | Self::NoSuchTable | Self::NoSuchRoute => 404,
            Self::MethodNotAllowed => 405,
            Self::IncompatibleBuild => 409,
            Self::PayloadTooLarge => 413,
            Self::EntryFailed | Self::InvalidModule => 422,
            Self::TooManyCalls => 429,
            Self::Aborted | Self::ModuleError | Self::ResultTooLarge | Self::Internal => 500,
            Self::Busy | Self::ShuttingDown | Self::Degraded | Self::NotPrimary => 503,
            Self::Timeout => 504,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Self::from_name(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown error code `{text}`")))
    }
}

impl Encode for ErrorCode {
    fn encode(&self, out: &mut Vec<u8>) {
        self.as_str().encode(out);
    }

    fn encoded_len(&self) -> usize {
        self.as_str().encoded_len()
    }
}

impl Decode for ErrorCode {
    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let name = String::decode(reader)?;
        Self::from_name(&name).ok_or(DecodeError::InvalidTag {
            tag: 0,
            type_name: "ErrorCode",
        })
    }
}

impl SchemaType for ErrorCode {
    fn schema(_: &mut Typespace) -> AlgebraicType {
        AlgebraicType::String
    }
}

/// A failure answered to a client: `{"code": .., "message": ..}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, wasmod_abi::SchemaType)]
#[wasmod(crate = wasmod_abi)]
pub struct ApiError {
    /// What went wrong.
    pub code: ErrorCode,
    /// Why, for people.
    pub message: String,
}

impl ApiError {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

/// The body of every error answer: `{"error": {"code": .., "message": ..}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The error.
    pub error: ApiError,
}

impl From<ApiError> for ErrorBody {
    fn from(error: ApiError) -> Self {
        Self { error }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_snake_case_and_errors_by_status() {
        let mut seen = HashSet::new();
        for code in ErrorCode::ALL {
            let text = code.as_str();
            assert!(seen.insert(text), "{text} twice");
            assert!(text.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
            assert!((400..600).contains(&code.http_status()), "{text}");
            assert_eq!(ErrorCode::from_name(text), Some(code));
        }
    }

    #[test]
    fn errors_are_written_and_read_as_the_documented_json() {
        let body = ErrorBody::from(ApiError::new(ErrorCode::NoSuchTable, "no table `x`"));
        let text = serde_json::to_string(&body).unwrap();
        assert_eq!(
            text,
            r#"{"error":{"code":"no_such_table","message":"no table `x`"}}"#
        );
        assert_eq!(serde_json::from_str::<ErrorBody>(&text).unwrap(), body);
        let unknown = r#"{"error":{"code":"no_such_thing","message":""}}"#;
        let refused = serde_json::from_str::<ErrorBody>(unknown).unwrap_err();
        assert!(refused
            .to_string()
            .contains("unknown error code `no_such_thing`"));
    }
}
