//! Errors of the API: a stable code, an HTTP status, and a message for people.
//!
//! Every failure a client can see is an [`ApiError`], answered as
//! `{ "error": { "code": "stable_snake_case", "message": "…" } }` with the status of its
//! [`ErrorCode`]. Clients branch on the code, which never changes meaning; the message is for
//! people and may be reworded. `docs/http-api.md` lists every code.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use std::fmt;

/// What went wrong, as clients branch on it. Each code has one HTTP status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
    /// The module's `client_connected` reducer refused the new identity (403).
    ConnectionRefused,
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
    /// The entry point returned an error; the message is the module's (422).
    EntryFailed,
    /// The identity has as many calls in progress as the server allows (429).
    TooManyCalls,
    /// The module trapped or panicked; its transaction was rolled back (500).
    Aborted,
    /// The module failed in a way that is not the client's fault: an unexpected error code, a
    /// result that does not match its own description, an invalid HTTP response (500).
    ModuleError,
    /// The server failed (500).
    Internal,
    /// The queue of calls waiting for the module is full; retry later (503).
    Busy,
    /// The server is shutting down (503).
    ShuttingDown,
    /// The request took longer than the server's request timeout; a call may still complete
    /// (504).
    Timeout,
}

impl ErrorCode {
    /// Every code, in the order of the table in `docs/http-api.md`.
    pub const ALL: [ErrorCode; 23] = [
        Self::BadJson,
        Self::BadArguments,
        Self::BadRequest,
        Self::Unauthenticated,
        Self::InvalidToken,
        Self::TokenExpired,
        Self::PrivateTable,
        Self::LifecycleReducer,
        Self::ConnectionRefused,
        Self::NotFound,
        Self::NoSuchEntry,
        Self::NoSuchTable,
        Self::NoSuchRoute,
        Self::MethodNotAllowed,
        Self::PayloadTooLarge,
        Self::EntryFailed,
        Self::TooManyCalls,
        Self::Aborted,
        Self::ModuleError,
        Self::Internal,
        Self::Busy,
        Self::ShuttingDown,
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
            Self::ConnectionRefused => "connection_refused",
            Self::NotFound => "not_found",
            Self::NoSuchEntry => "no_such_entry",
            Self::NoSuchTable => "no_such_table",
            Self::NoSuchRoute => "no_such_route",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::PayloadTooLarge => "payload_too_large",
            Self::EntryFailed => "entry_failed",
            Self::TooManyCalls => "too_many_calls",
            Self::Aborted => "aborted",
            Self::ModuleError => "module_error",
            Self::Internal => "internal",
            Self::Busy => "busy",
            Self::ShuttingDown => "shutting_down",
            Self::Timeout => "timeout",
        }
    }

    /// The HTTP status the code is answered with.
    pub const fn status(self) -> StatusCode {
        match self {
            Self::BadJson | Self::BadArguments | Self::BadRequest => StatusCode::BAD_REQUEST,
            Self::Unauthenticated | Self::InvalidToken | Self::TokenExpired => {
                StatusCode::UNAUTHORIZED
            }
            Self::PrivateTable | Self::LifecycleReducer | Self::ConnectionRefused => {
                StatusCode::FORBIDDEN
            }
            Self::NotFound | Self::NoSuchEntry | Self::NoSuchTable | Self::NoSuchRoute => {
                StatusCode::NOT_FOUND
            }
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::EntryFailed => StatusCode::UNPROCESSABLE_ENTITY,
            Self::TooManyCalls => StatusCode::TOO_MANY_REQUESTS,
            Self::Aborted | Self::ModuleError | Self::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Busy | Self::ShuttingDown => StatusCode::SERVICE_UNAVAILABLE,
            Self::Timeout => StatusCode::GATEWAY_TIMEOUT,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure answered to a client.
#[derive(Clone, Debug, PartialEq, Eq)]
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

    /// The error as the API writes it: `{"error": {"code": .., "message": ..}}`.
    pub fn to_json(&self) -> serde_json::Value {
        json!({ "error": { "code": self.code.as_str(), "message": self.message } })
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.code.status(), Json(self.to_json())).into_response()
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
            let status = code.status();
            assert!(
                status.is_client_error() || status.is_server_error(),
                "{text}"
            );
        }
    }

    #[test]
    fn errors_render_as_the_documented_json() {
        let error = ApiError::new(ErrorCode::NoSuchTable, "no table `x`");
        assert_eq!(
            error.to_json(),
            json!({"error": {"code": "no_such_table", "message": "no table `x`"}})
        );
    }
}
