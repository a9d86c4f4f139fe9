//! `GET /v1/subscribe`: the WebSocket handshake (`docs/protocol.md`).
//!
//! Everything that can be refused is refused here, as an HTTP error, before the upgrade: a
//! request that is not a WebSocket upgrade, a subprotocol other than `v1.bin.wasmod` and
//! `v1.json.wasmod`, a bad token. A token is checked first, even on a request that is not an
//! upgrade: a browser's `WebSocket` shows nothing of a refused upgrade (no status, no body:
//! the socket just closes), so the browser client asks again with a plain `fetch` of the same
//! URL, whose answer is the token's refusal (`token_expired`: ask the token provider for a new
//! one) or, for a good token, that this is a WebSocket endpoint. The token comes from
//! `Authorization: Bearer <token>` or, for browsers (which cannot set headers on a
//! WebSocket), the `token` query parameter; with neither, a new identity is issued and its
//! token sent in the first message. The first message's token is one of this server's,
//! fresh, unless the client connected with an OpenID Connect token in the `token` parameter:
//! then it is that token, since one of this server's would prove the identity without the
//! claims. The `compression` query parameter (`none`, the default, `brotli` or `gzip`)
//! chooses how large binary frames are compressed; an unknown value, or a compression asked
//! of the JSON protocol (whose text frames cannot carry the compression byte), is refused.
//! So is an identity that holds [`crate::ServerConfig::max_websockets_per_identity`] sockets
//! already (`too_many_calls`): one token must not hold the server's connections. The module's
//! `client_connected` runs once the socket is open ([`wasmod_node::NodeHandle::serve_socket`]).

use super::extract::{Caller, Source};
use super::Shared;
use crate::error::{ApiError, ErrorCode, HttpError};
use axum::extract::rejection::QueryRejection;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Query, State};
use axum::response::Response;
use serde::Deserialize;
use wasmod_node::socket::{Encoding, Socket, MAX_INBOUND_MESSAGE, READ_BUFFER, WRITE_BUFFER};
use wasmod_protocol::ws::{Compression, BIN_PROTOCOL, JSON_PROTOCOL};

/// The handshake's query parameters.
#[derive(Debug, Deserialize)]
pub(crate) struct Params {
    /// A token, for clients that cannot send an `Authorization` header.
    token: Option<String>,
    /// How binary frames are compressed: `none` (the default), `brotli` or `gzip`.
    compression: Option<String>,
}

/// The compression `name` names (none without a name), or why it cannot be used with the
/// chosen encoding.
fn compression(name: Option<&str>, binary: bool) -> Result<Compression, ApiError> {
    let Some(name) = name else {
        return Ok(Compression::None);
    };
    let compression = Compression::from_name(name).ok_or_else(|| {
        ApiError::new(
            ErrorCode::BadRequest,
            format!("unknown compression `{name}`: use none, brotli or gzip"),
        )
    })?;
    if !binary && compression != Compression::None {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            format!(
                "compression={name} needs the binary protocol ({}): JSON text frames are never compressed",
                BIN_PROTOCOL
            ),
        ));
    }
    Ok(compression)
}

/// Upgrades to a WebSocket in the subprotocol the client asked for.
pub(crate) async fn subscribe(
    State(state): Shared,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
    caller: Result<Caller, HttpError>,
    params: Result<Query<Params>, QueryRejection>,
    Source(source): Source,
) -> Result<Response, HttpError> {
    let Query(params) = params.map_err(|rejection| {
        ApiError::new(
            ErrorCode::BadRequest,
            format!("the query string is not valid: {rejection}"),
        )
    })?;
    // The token's verdict before anything else (the module's docs say why); a new identity
    // only once the request is known to be an upgrade.
    let Caller {
        identity,
        claims,
        oidc_token,
    } = match (caller?, params.token) {
        (
            caller @ Caller {
                identity: Some(_), ..
            },
            _,
        ) => caller,
        (_, Some(token)) => {
            Caller::proven(state.verify_token(Source(source), &token).await?, &token)
        }
        (_, None) => Caller::default(),
    };
    let upgrade = upgrade.map_err(|rejection| {
        ApiError::new(
            ErrorCode::BadRequest,
            format!("GET /v1/subscribe is a WebSocket endpoint: {rejection}"),
        )
    })?;
    let upgrade = upgrade.protocols([BIN_PROTOCOL, JSON_PROTOCOL]);
    let binary = match upgrade
        .selected_protocol()
        .map(|protocol| protocol.as_bytes())
    {
        Some(protocol) => protocol == BIN_PROTOCOL.as_bytes(),
        None => {
            return Err(HttpError::from(ApiError::new(
                ErrorCode::BadRequest,
                format!(
                    "ask for the subprotocol {} or {} (Sec-WebSocket-Protocol)",
                    BIN_PROTOCOL, JSON_PROTOCOL
                ),
            )))
        }
    };
    let compression = compression(params.compression.as_deref(), binary)?;
    let identity = match identity {
        Some(identity) => identity,
        None => super::identity::fresh(&state, source)?,
    };
    let open = state.websockets.take(identity).ok_or_else(|| {
        ApiError::new(
            ErrorCode::TooManyCalls,
            format!(
                "this identity has {} WebSocket connections open, the most the server allows",
                state.websockets.max()
            ),
        )
    })?;
    // The token to connect again with: an OpenID Connect token is the client's own (a token
    // of this server would prove the identity without its claims); otherwise a fresh one.
    let token = oidc_token.unwrap_or_else(|| state.auth.tokens().issue(identity).token);
    let node = state.node.clone();
    let socket = Socket {
        encoding: if binary {
            Encoding::Binary
        } else {
            Encoding::Json
        },
        identity,
        token,
        compression,
        source,
        claims,
    };
    let upgrade = upgrade
        .read_buffer_size(READ_BUFFER)
        .write_buffer_size(WRITE_BUFFER)
        .max_write_buffer_size(WRITE_BUFFER + state.config.node.outbound_bytes)
        .max_message_size(MAX_INBOUND_MESSAGE)
        .max_frame_size(MAX_INBOUND_MESSAGE);
    // The identity's place is held by the socket's task, until it ends.
    Ok(upgrade.on_upgrade(move |ws| async move {
        crate::frames::serve(ws, &node, socket).await;
        drop(open);
    }))
}
