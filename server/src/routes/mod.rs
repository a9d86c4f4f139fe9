//! The HTTP API: routes, the state they share, and the layers around them.
//!
//! One file per group of routes: [`calls`] (reducers, procedures, views), [`tables`],
//! [`identity`], [`module_http`] (the module's own handlers), [`ops`] (health, metrics, the
//! description), [`subscribe`] (the WebSocket handshake), [`admin`] (the operator's console
//! and API), [`replication`] (the snapshot edges bootstrap from); [`extract`] turns requests
//! into typed inputs with the API's errors; [`unread`] drops the small bodies of requests
//! answered without them.
//!
//! Around every route, outermost first: a `tracing` span per request (method, path; module
//! logs of the request's call are emitted inside it), the request timeout (`timeout`, 504),
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

use crate::auth::Tokens;
use crate::build::CurrentBuild;
use crate::config::ServerConfig;
use crate::error::{ApiError, ErrorCode, HttpError};
use crate::limits::{CallSlots, SourceRate};
use crate::metrics::Metrics;
use crate::pages::TableReads;
use crate::realtime::Realtime;
use crate::replication::PublishStats;
use crate::results::Results;
use crate::runner::Runner;
use crate::worker::Worker;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::Router;
use std::sync::Arc;
use tower_http::trace::{DefaultMakeSpan, DefaultOnResponse, TraceLayer};
use tracing::Level;

/// What every handler shares.
#[derive(Debug)]
pub(crate) struct AppState {
    /// The build serving now: description, catalog, HTTP routes, tables (read directly, off
    /// the module's thread, for `GET /v1/tables`). Taken once per request.
    pub build: CurrentBuild,
    /// The module's thread.
    pub worker: Worker,
    /// Whether the commit log has failed (the server is degraded).
    pub log_health: crate::degraded::LogHealth,
    /// Where calls run: the module's thread, or for an edge's writes, the primary.
    pub runner: Runner,
    /// The edge's counters, if the server is an edge node.
    pub edge: Option<crate::EdgeState>,
    /// Issues and checks tokens.
    pub tokens: Tokens,
    /// Calls in progress per identity.
    pub slots: CallSlots,
    /// New identities per source address.
    pub identities: SourceRate,
    /// Calls without a token per source address.
    pub anonymous_calls: SourceRate,
    /// The counters of `/metrics`.
    pub metrics: Arc<Metrics>,
    /// Table reads in progress.
    pub table_reads: TableReads,
    /// The bound on returned values and the turns of their conversions.
    pub results: Results,
    /// The limits.
    pub config: ServerConfig,
    /// Publishes new builds of the module (`POST /v1/admin/module`).
    pub swap: crate::swap::Swap,
    /// The WebSocket side: live queries and their evaluation.
    pub realtime: Arc<Realtime>,
    /// The operator's side, if the server was given an operator token.
    pub admin: Option<admin::Admin>,
    /// The replication publisher's counters, if the server publishes its commits.
    pub publish: Option<Arc<PublishStats>>,
    /// The token edges present for the snapshot, if the server serves edges.
    pub edge_token: Option<String>,
}

/// The shared state, as handlers receive it.
pub(crate) type Shared = State<Arc<AppState>>;

/// The API's router over `state`.
pub(crate) fn router(state: Arc<AppState>) -> Router {
    let trace = TraceLayer::new_for_http()
        .make_span_with(DefaultMakeSpan::new().level(Level::INFO))
        .on_response(DefaultOnResponse::new().level(Level::INFO));
    Router::new()
        .route("/health", get(ops::health))
        .route("/metrics", get(ops::metrics))
        .route("/v1/module", get(ops::describe))
        .route(
            crate::replication::SNAPSHOT_PATH,
            get(replication::snapshot),
        )
        .route(
            crate::replication::forward::CALLS_PATH,
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
            state.log_health.clone(),
            crate::degraded::mark,
        ))
        .layer(trace)
        .with_state(state)
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
