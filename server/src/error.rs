//! Errors of the API, answered over HTTP.
//!
//! The codes and the error body are the protocol's ([`wasmod_protocol::errors`]), shared with
//! clients, and re-exported here. What is the server's own is the axum glue: [`HttpError`]
//! answers an [`ApiError`] as `{"error": {"code": .., "message": ..}}` with the HTTP status of
//! its code. Handlers work with [`ApiError`]s and `?` turns them into [`HttpError`]s at the
//! edge.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
pub use wasmod_protocol::errors::{ApiError, ErrorBody, ErrorCode};

/// An [`ApiError`] as an HTTP response: the status of its code, and the error body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpError(pub ApiError);

impl From<ApiError> for HttpError {
    fn from(error: ApiError) -> Self {
        Self(error)
    }
}

impl From<HttpError> for ApiError {
    fn from(HttpError(error): HttpError) -> Self {
        error
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.0.code.http_status())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, Json(ErrorBody::from(self.0))).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_a_valid_error_status() {
        for code in ErrorCode::ALL {
            let response = HttpError(ApiError::new(code, "x")).into_response();
            assert_eq!(response.status().as_u16(), code.http_status(), "{code}");
            assert!(
                response.status().is_client_error() || response.status().is_server_error(),
                "{code}"
            );
        }
    }
}
