//! The primary's routes for its edge nodes (`docs/edges.md`):
//!
//! - `GET /v1/replication/snapshot`: every table's rows at one offset, for an edge node that
//!   bootstraps its copy before tailing the replication stream from that offset;
//! - `POST /v1/replication/calls`: a call an edge forwards for one of its clients
//!   ([`ForwardedCall`]), run on the module's thread like the server's own clients' calls
//!   ([`wasmod_node::NodeHandle::run_forwarded`]), and answered with its outcome once its
//!   commit is durable.
//!
//! Only servers that publish their commits serve them, and only to edges: the request carries
//! the edge token (`Authorization: Bearer <token>`, `wasmod serve --edge-token-file`), since
//! the snapshot holds private tables and the host's own too (an edge applies every later commit
//! to them), and a forwarded call runs as whatever identity the edge says.
//!
//! # The snapshot
//! The rows are taken under one read transaction, so they are exactly the commits
//! below the offset; the answer waits until those commits are durable, so that an edge never
//! holds a commit a crash of the primary could still lose ([`wasmod_node::NodeHandle::snapshot`]).
//! The body is the commit log's record encoding of one transaction inserting every row, its
//! offset included; `X-Wasmod-Offset` repeats it.

use super::{AppState, Shared};
use crate::error::{ApiError, ErrorCode, HttpError};
use axum::body::Body;
use axum::extract::State;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderName};
use axum::response::{IntoResponse, Response};
use axum::Json;
use sha2::{Digest, Sha256};
use wasmod_node::replication::{ForwardedCall, OFFSET_HEADER, SNAPSHOT_TYPE};

/// `GET /v1/replication/snapshot`.
pub(crate) async fn snapshot(
    State(state): Shared,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    edge_only(&state, &headers)?;
    let (offset, body) = state.node.snapshot().await?;
    Ok((
        [
            (CONTENT_TYPE, SNAPSHOT_TYPE.to_owned()),
            (HeaderName::from_static(OFFSET_HEADER), offset.to_string()),
        ],
        body,
    )
        .into_response())
}

/// `POST /v1/replication/calls`: the outcome of a forwarded call as JSON
/// ([`wasmod_node::replication::ForwardedOutcome`], `null` for a lifecycle reducer the module does not have), with the
/// last commit when it ended in the offset header: what the edge waits to have applied
/// before it answers its client.
///
/// The edge token is checked before the body is read. A call that cannot run here (the
/// module's queue is full, the server is shutting down, its commit could not be made durable)
/// is answered with that error, as the server's own clients' calls are.
pub(crate) async fn calls(
    State(state): Shared,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    edge_only(&state, &headers)?;
    // Arguments and requests up to the body limit, in hexadecimal, with room for the rest.
    let limit = 2 * state.config.max_body_bytes + (64 << 10);
    let bytes = axum::body::to_bytes(body, limit).await.map_err(|error| {
        ApiError::new(
            ErrorCode::PayloadTooLarge,
            format!("a forwarded call must fit in {limit} bytes: {error}"),
        )
    })?;
    let call: ForwardedCall = serde_json::from_slice(&bytes).map_err(|error| {
        ApiError::new(ErrorCode::BadJson, format!("not a forwarded call: {error}"))
    })?;
    let (outcome, offset) = state.node.run_forwarded(call).await?;
    Ok((
        [(HeaderName::from_static(OFFSET_HEADER), offset.to_string())],
        Json(outcome),
    )
        .into_response())
}

/// Refuses a request without the edge token: `not_found` if the server serves no edges,
/// `unauthenticated` if the token is missing or wrong.
fn edge_only(state: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(expected) = state.edge_token.as_deref() else {
        return Err(ApiError::new(
            ErrorCode::NotFound,
            "this server serves no edges (start it with --publish and --edge-token-file)",
        ));
    };
    let presented = headers
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    if !presented.is_some_and(|token| same_token(token, expected)) {
        return Err(ApiError::new(
            ErrorCode::Unauthenticated,
            "this is for edge nodes: present the edge token",
        ));
    }
    Ok(())
}

/// Whether `presented` is `expected`, compared in a time that does not depend on where they
/// differ (their digests are compared whole).
fn same_token(presented: &str, expected: &str) -> bool {
    let (presented, expected) = (Sha256::digest(presented), Sha256::digest(expected));
    presented
        .iter()
        .zip(expected.iter())
        .fold(0u8, |differ, (a, b)| differ | (a ^ b))
        == 0
}
