//! Operations: `GET /health`, `GET /metrics`, and `GET /v1/module` (the description).

use super::Shared;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde_json::Value;
use wasmod_protocol::description::{describe as describe_module, Tables};
use wasmod_protocol::ModuleDescription;

/// `GET /health`: the node's report ([`wasmod_node::Health`]): `200` with `"status": "ok"`
/// and `"queue_free"` while it serves; `503` with `"status"` `stopped` (the module's thread
/// died), `degraded` (its commit log failed, or it is behind) or, on an edge, `catching_up`,
/// and the reason, so that a load balancer sends clients elsewhere meanwhile.
pub(crate) async fn health(State(state): Shared) -> (StatusCode, Json<Value>) {
    let health = state.node.health();
    let status = if health.ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(health.report))
}

/// `GET /metrics`: the Prometheus text format.
pub(crate) async fn metrics(State(state): Shared) -> impl IntoResponse {
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        state.node.metrics(),
    )
}

/// `GET /v1/module`: the module's description, public tables only.
pub(crate) async fn describe(State(state): Shared) -> Json<ModuleDescription> {
    Json(describe_module(&state.node.describe(), Tables::PublicOnly))
}
