//! Typed inputs of the handlers, each failing with the API's JSON errors ([`HttpError`])
//! rather than axum's plain-text rejections.
//!
//! - [`Caller`]: the identity of `Authorization: Bearer <token>`, and the token's claims, if
//!   the header is there. A header that is there must hold a valid token, whatever the route:
//!   a client with a bad token learns it at once instead of being silently treated as
//!   anonymous. Its check, as every check of a token, is under the source's rate of wrong
//!   tokens ([`AppState::check_token`], [`AppState::verify_token`]).
//! - [`Body`]: the raw body, within the body limit.
//! - [`JsonBody`]: the body as JSON (an empty body is `[]`: no arguments).
//! - [`name`]: a `{name}` path segment.
//! - [`Source`]: the address the request came from, when the server is serving a socket.

use super::AppState;
use crate::auth::{self, Verified};
use crate::error::{ApiError, ErrorCode, HttpError};
use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Path, Request};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use axum::http::StatusCode;
use serde_json::Value;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use wasmod_abi::Identity;
use wasmod_node::Claims;

/// The address the request came from; `None` for a router called in-process (tests,
/// embedding), which has no peer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Source(pub Option<IpAddr>);

impl Source {
    /// The address the request of `parts` came from.
    pub fn of(parts: &Parts) -> Self {
        let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>();
        Self(peer.map(|ConnectInfo(address)| address.ip()))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Source {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Self::of(parts))
    }
}

impl AppState {
    /// `check`, a check of a token sent from `source`, under the source's rate of wrong
    /// tokens ([`ServerConfig::failed_tokens_per_second`]): a source past it is refused
    /// (`too_many_calls`, with `Retry-After`) before anything is checked, whatever it sent, so
    /// that a right guess looks like a wrong one; a token found wrong (`invalid_token`,
    /// `not_operator`) counts one, and the one past the rate is refused as `too_many_calls`.
    /// Other refusals (no token, an expired one) count nothing.
    ///
    /// [`ServerConfig::failed_tokens_per_second`]: crate::ServerConfig::failed_tokens_per_second
    pub(crate) fn check_token<T>(
        &self,
        source: Source,
        check: impl FnOnce() -> Result<T, ApiError>,
    ) -> Result<T, HttpError> {
        self.failed_tokens.check_uncounted(source.0)?;
        self.counted(source, check())
    }

    /// What a client's `token` sent from `source` proves, checked as [`Self::check_token`]
    /// says: an OpenID Connect token whose issuer's keys must be fetched first waits for them
    /// (within the fetch's timeout).
    pub(crate) async fn verify_token(
        &self,
        source: Source,
        token: &str,
    ) -> Result<Verified, HttpError> {
        self.failed_tokens.check_uncounted(source.0)?;
        self.counted(source, self.auth.verify(token).await)
    }

    /// `checked`, a check's result, counted against `source`'s rate of wrong tokens if it
    /// found the token wrong.
    fn counted<T>(
        &self,
        Source(source): Source,
        checked: Result<T, ApiError>,
    ) -> Result<T, HttpError> {
        checked.or_else(|refused| {
            if matches!(
                refused.code,
                ErrorCode::InvalidToken | ErrorCode::NotOperator
            ) {
                self.failed_tokens.check(source)?;
            }
            Err(refused.into())
        })
    }
}

/// Who calls: the identity a token proves and the token's claims, or neither without an
/// `Authorization` header.
#[derive(Clone, Debug, Default)]
pub(crate) struct Caller {
    /// The identity the token proves.
    pub identity: Option<Identity>,
    /// The verified payload of an OpenID Connect token, which the module reads
    /// (`ctx.claims()`); `None` for a token of the server's own, which has none.
    pub claims: Option<Claims>,
    /// The OpenID Connect token itself, when the token was one: a WebSocket hands it back to
    /// connect again with.
    pub oidc_token: Option<String>,
}

impl Caller {
    /// The caller as the node takes it, from `source`.
    pub fn node(self, source: Option<IpAddr>) -> wasmod_node::Caller {
        wasmod_node::Caller::new(self.identity, source).with_claims(self.claims)
    }
}

impl Caller {
    /// The caller `token` proves, as `verified` says: its identity, and the claims of an
    /// OpenID Connect token.
    pub fn proven(verified: Verified, token: &str) -> Self {
        Self {
            identity: Some(verified.identity),
            oidc_token: verified.claims.is_some().then(|| token.to_owned()),
            claims: verified.claims,
        }
    }
}

impl FromRequestParts<Arc<AppState>> for Caller {
    type Rejection = HttpError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, HttpError> {
        let mut headers = parts.headers.get_all(AUTHORIZATION).iter();
        let Some(header) = headers.next() else {
            return Ok(Self::default());
        };
        let source = Source::of(parts);
        let token = state.check_token(source, || {
            if headers.next().is_some() {
                return Err(ApiError::new(
                    ErrorCode::InvalidToken,
                    "send one Authorization header, not several",
                ));
            }
            auth::bearer(header.as_bytes())
        })?;
        let verified = state.verify_token(source, token).await?;
        Ok(Self::proven(verified, token))
    }
}

/// The request body, no larger than the server's limit.
#[derive(Clone, Debug)]
pub(crate) struct Body(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = HttpError;

    async fn from_request(request: Request, state: &S) -> Result<Self, HttpError> {
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|rejection| {
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    payload_too_large()
                } else {
                    ApiError::new(
                        ErrorCode::BadRequest,
                        format!("the request body could not be read: {rejection}"),
                    )
                }
            })?;
        Ok(Self(bytes))
    }
}

/// `payload_too_large`: a body over the router's limit, whichever extractor read it.
pub(crate) fn payload_too_large() -> ApiError {
    ApiError::new(
        ErrorCode::PayloadTooLarge,
        "the request body is larger than the server accepts",
    )
}

/// The request body as JSON; `[]` (no arguments) when the body is empty, so that a `null`
/// that was sent is told apart from a body that was not.
#[derive(Clone, Debug)]
pub(crate) struct JsonBody(pub Value);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = HttpError;

    async fn from_request(request: Request, state: &S) -> Result<Self, HttpError> {
        let Body(bytes) = Body::from_request(request, state).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self(Value::Array(Vec::new())));
        }
        let json = serde_json::from_slice(&bytes).map_err(|error| {
            ApiError::new(
                ErrorCode::BadJson,
                format!("the body is not valid JSON: {error}"),
            )
        })?;
        Ok(Self(json))
    }
}

/// The `{name}` segment of the path.
pub(crate) fn name(path: Result<Path<String>, PathRejection>) -> Result<String, ApiError> {
    path.map(|Path(name)| name).map_err(|rejection| {
        ApiError::new(
            ErrorCode::BadRequest,
            format!("the path is not valid: {rejection}"),
        )
    })
}
