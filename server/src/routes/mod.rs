//! The HTTP API: routes, the state they share, and the layers around them.
//!
//! One file per group of routes: [`calls`] (reducers, procedures, views), [`tables`],
//! [`identity`], [`module_http`] (the module's own handlers), [`ops`] (health, metrics, the
//! description), [`subscribe`] (the WebSocket handshake), [`admin`] (the operator's console
//! and API), [`replication`] (the snapshot edges bootstrap from); [`extract`] turns requests
//! into typed inputs with the API's errors; [`unread`] drops the small bodies of requests
//! answered without them.
//!
//! Around every route, outermost first: a `tracing` span per request (method, URI with the
//! value of a `token` query parameter redacted, [`RequestSpan`]; module logs of the request's
//! call are emitted inside it), the request timeout (`timeout`, 504),
//! the body limit (`payload_too_large`, 413), and the draining of a small body the route did
//! not read ([`unread`]). Unknown paths and methods answer the API's
//! JSON errors (`not_found`, `method_not_allowed`) like everything else.

pub(crate) mod admin;
mod calls;
mod extract;
mod identity;
mod module_http;
mod ops;
mod replication;
mod static_files;
mod subscribe;
mod tables;
mod unread;

pub(crate) use static_files::with_static_files;

use crate::auth::Authenticator;
use crate::config::ServerConfig;
use crate::error::{ApiError, ErrorCode, HttpError};
use crate::limits::SourceRate;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::Uri;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::Router;
use std::borrow::Cow;
use std::sync::Arc;
use tower_http::trace::{DefaultOnResponse, MakeSpan, TraceLayer};
use tracing::Level;
use wasmod_node::Counts;
use wasmod_node::NodeHandle;

/// What every handler shares: the node, and what the HTTP API keeps of its own.
#[derive(Debug)]
pub(crate) struct AppState {
    /// The node served: its build, its module's thread, its calls, its sockets.
    pub node: NodeHandle,
    /// Issues the tokens of this server, and checks them and OpenID Connect tokens.
    pub auth: Authenticator,
    /// WebSocket connections open per identity.
    pub websockets: Counts<wasmod_abi::Identity>,
    /// New identities per source address.
    pub identities: SourceRate,
    /// Calls without a token per source address.
    pub anonymous_calls: SourceRate,
    /// Tokens got wrong per source address ([`AppState::check_token`]).
    pub failed_tokens: SourceRate,
    /// The limits.
    pub config: ServerConfig,
    /// The operator's side, if the server was given an operator token.
    pub admin: Option<admin::Admin>,
    /// The token edges present for the snapshot, if the server serves edges.
    pub edge_token: Option<String>,
}

/// The shared state, as handlers receive it.
pub(crate) type Shared = State<Arc<AppState>>;

/// The API's router over `state`.
pub(crate) fn router(state: Arc<AppState>) -> Router {
    let trace = TraceLayer::new_for_http()
        .make_span_with(RequestSpan)
        .on_response(DefaultOnResponse::new().level(Level::INFO));
    Router::new()
        .route("/health", get(ops::health))
        .route("/metrics", get(ops::metrics))
        .route("/v1/module", get(ops::describe))
        .route(
            wasmod_node::replication::SNAPSHOT_PATH,
            get(replication::snapshot),
        )
        .route(
            wasmod_node::replication::CALLS_PATH,
            post(replication::calls),
        )
        .route("/v1/identity", post(identity::issue))
        .route("/v1/reducers/{name}", post(calls::call::<calls::Reducers>))
        .route(
            "/v1/procedures/{name}",
            post(calls::call::<calls::Procedures>),
        )
        .route("/v1/views/{name}", post(calls::call::<calls::Views>))
        .route("/v1/tables/{name}", get(tables::read))
        .route("/v1/subscribe", get(subscribe::subscribe))
        .route("/v1/http", any(module_http::forward))
        .route("/v1/http/", any(module_http::forward))
        .route("/v1/http/{*path}", any(module_http::forward))
        .route("/admin", get(admin::console))
        .route(
            "/v1/admin/session",
            post(admin::sign_in).delete(admin::sign_out),
        )
        .route(
            "/v1/admin/module",
            get(admin::module)
                .post(admin::publish)
                .layer(DefaultBodyLimit::max(state.config.max_module_bytes)),
        )
        .route("/v1/admin/tables", get(admin::tables))
        .route("/v1/admin/tables/{name}", get(admin::table))
        .route("/v1/admin/stats", get(admin::stats))
        .route("/v1/admin/dispatch", get(admin::dispatch))
        .route("/v1/admin/logs", get(admin::logs))
        .route("/v1/admin/logs/feed", get(admin::feed))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(middleware::from_fn(unread::drain_unread))
        .layer(middleware::from_fn_with_state(state.clone(), timeout))
        .layer(middleware::from_fn_with_state(
            state.node.clone(),
            crate::degraded::mark,
        ))
        .layer(trace)
        .with_state(state)
}

/// The `info` span of a request: its method, its URI without secrets ([`redacted`]) and its
/// HTTP version.
#[derive(Clone, Copy, Debug)]
struct RequestSpan;

impl<B> MakeSpan<B> for RequestSpan {
    fn make_span(&mut self, request: &axum::http::Request<B>) -> tracing::Span {
        tracing::info_span!(
            "request",
            method = %request.method(),
            uri = %redacted(request.uri()),
            version = ?request.version(),
        )
    }
}

/// What replaces a secret in a logged URI.
const REDACTED: &str = "REDACTED";

/// `uri` as logged: the value of every `token` query parameter (a client's token, which
/// browsers' WebSockets send as `/v1/subscribe?token=…`) replaced by [`REDACTED`].
fn redacted(uri: &Uri) -> Cow<'_, str> {
    let Some(query) = uri.query() else {
        return Cow::Borrowed(uri.path());
    };
    let secret = |pair: &str| {
        let name = pair.split_once('=').map_or(pair, |(name, _)| name);
        wasmod_abi::route::percent_decode(name).is_some_and(|name| name == "token")
    };
    if !query.split('&').any(secret) {
        return Cow::Borrowed(uri.path_and_query().map_or("", |whole| whole.as_str()));
    }
    let query: Vec<Cow<'_, str>> = query
        .split('&')
        .map(|pair| match secret(pair) {
            true => Cow::Owned(format!("token={REDACTED}")),
            false => Cow::Borrowed(pair),
        })
        .collect();
    Cow::Owned(format!("{}?{}", uri.path(), query.join("&")))
}

/// Answers `timeout` (504) for a request that takes longer than the configured limit.
async fn timeout(State(state): Shared, request: Request, next: Next) -> Response {
    let limit = state.config.request_timeout;
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => HttpError::from(ApiError::new(
            ErrorCode::Timeout,
            format!("no answer within {limit:?}; a call the module had started may still complete"),
        ))
        .into_response(),
    }
}

async fn not_found(request: Request) -> HttpError {
    HttpError::from(ApiError::new(
        ErrorCode::NotFound,
        format!("no route of the API matches {}", request.uri().path()),
    ))
}

async fn method_not_allowed(request: Request) -> HttpError {
    HttpError::from(ApiError::new(
        ErrorCode::MethodNotAllowed,
        format!(
            "{} does not accept {}",
            request.uri().path(),
            request.method()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logged_uris_carry_no_token() {
        let logged = |uri: &'static str| redacted(&Uri::from_static(uri)).into_owned();
        assert_eq!(
            logged("/v1/subscribe?token=abc.def&resume=3"),
            "/v1/subscribe?token=REDACTED&resume=3"
        );
        assert_eq!(
            logged("/v1/subscribe?%74oken=abc"),
            "/v1/subscribe?token=REDACTED"
        );
        assert_eq!(logged("/x?a=1&token&b=2"), "/x?a=1&token=REDACTED&b=2");
        assert_eq!(logged("/v1/tables/t?limit=5"), "/v1/tables/t?limit=5");
        assert_eq!(logged("/v1/tables/t?tokens=5"), "/v1/tables/t?tokens=5");
        assert_eq!(logged("/health"), "/health");
    }
}
