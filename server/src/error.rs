//! Errors of the API, answered over HTTP.
//!
//! The codes and the error body are the protocol's ([`wasmod_protocol::errors`]), shared with
//! clients, and re-exported here. What is the server's own is the axum glue: [`HttpError`]
//! answers an [`ApiError`] as `{"error": {"code": .., "message": ..}}` with the HTTP status of
//! its code, and a `Retry-After` header on `too_many_calls` (429). Handlers work with
//! [`ApiError`]s and `?` turns them into [`HttpError`]s at the edge.

use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::time::Duration;
pub use wasmod_protocol::errors::{ApiError, ErrorBody, ErrorCode};

/// How long a client refused with `too_many_calls` is told to wait when the limit that refused
/// it cannot say (a call slot is freed when a call ends, which nobody can predict).
pub const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);

/// An [`ApiError`] as an HTTP response: the status of its code, and the error body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpError {
    /// The error.
    pub error: ApiError,
    /// How long the client should wait before it tries again, when the error is
    /// `too_many_calls` and the limit knows ([`DEFAULT_RETRY_AFTER`] otherwise).
    pub retry_after: Option<Duration>,
}

impl HttpError {
    /// `error`, refused for `wait`: answered with `Retry-After` of that many seconds (rounded
    /// up).
    pub fn retry_after(error: ApiError, wait: Duration) -> Self {
        Self {
            error,
            retry_after: Some(wait),
        }
    }
}

impl From<ApiError> for HttpError {
    fn from(error: ApiError) -> Self {
        Self {
            error,
            retry_after: None,
        }
    }
}

impl From<HttpError> for ApiError {
    fn from(error: HttpError) -> Self {
        error.error
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.error.code.http_status())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, Json(ErrorBody::from(self.error))).into_response();
        if status == StatusCode::TOO_MANY_REQUESTS {
            let wait = self.retry_after.unwrap_or(DEFAULT_RETRY_AFTER);
            let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(seconds.max(1)));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_a_valid_error_status() {
        for code in ErrorCode::ALL {
            let response = HttpError::from(ApiError::new(code, "x")).into_response();
            assert_eq!(response.status().as_u16(), code.http_status(), "{code}");
            assert!(
                response.status().is_client_error() || response.status().is_server_error(),
                "{code}"
            );
            assert_eq!(
                response.headers().contains_key(RETRY_AFTER),
                code == ErrorCode::TooManyCalls,
                "{code}"
            );
        }
    }

    #[test]
    fn retry_after_is_in_whole_seconds_rounded_up() {
        let refused = ApiError::new(ErrorCode::TooManyCalls, "x");
        for (wait, header) in [(Duration::from_millis(2001), "3"), (Duration::ZERO, "1")] {
            let response = HttpError::retry_after(refused.clone(), wait).into_response();
            assert_eq!(response.headers()[RETRY_AFTER], header);
        }
        let response = HttpError::from(refused).into_response();
        assert_eq!(response.headers()[RETRY_AFTER], "1");
    }
}
