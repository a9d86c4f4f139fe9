//! `POST /v1/identity`: a new identity and its token.
//!
//! The identity is new and random; nobody else can obtain it. Issuing it runs the module's
//! `client_connected` reducer for it, on the module's thread, before the token is returned, so
//! the module knows the client before its first call (the quickstart creates the user's row
//! there). If the module refuses the connection (its reducer returns an error), no token is
//! issued (`connection_refused`). Issuing an identity opens no connection (it runs with
//! `ConnectionId::ZERO`), so no `client_disconnected` follows it; clients that stay
//! connected hold a connection.

use super::extract::Source;
use super::{AppState, Shared};
use crate::error::{ApiError, ErrorCode, HttpError};
use axum::extract::State;
use axum::Json;
use std::net::IpAddr;
use wasmod_abi::Identity;
use wasmod_protocol::http::IdentityResponse;

/// `POST /v1/identity`: `{"identity": hex, "token": .., "expires_at": unix seconds}`; at most
/// [`ServerConfig::identities_per_minute`](crate::ServerConfig) per source address.
pub(crate) async fn issue(
    State(state): Shared,
    Source(source): Source,
) -> Result<Json<IdentityResponse>, HttpError> {
    let identity = fresh(&state, source)?;
    let work = async {
        state.node.admit(identity).await?;
        let issued = state.auth.tokens().issue(identity);
        tracing::info!(identity = %identity, "issued an identity");
        Ok(Json(IdentityResponse {
            expires_at: issued.expires_at,
            identity,
            token: issued.token,
        }))
    };
    Ok(state.node.measured("identity", work).await?)
}

/// A new identity for a client at `source`, within the rate of new identities per address:
/// what `POST /v1/identity` and a WebSocket connection without a token both give.
pub(crate) fn fresh(state: &AppState, source: Option<IpAddr>) -> Result<Identity, HttpError> {
    state.identities.check(source)?;
    wasmod_node::new_identity().map_err(|error| {
        HttpError::from(ApiError::new(
            ErrorCode::Internal,
            format!("no randomness for a new identity: {error}"),
        ))
    })
}
