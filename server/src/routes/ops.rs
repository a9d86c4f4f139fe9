//! Operations: `GET /health`, `GET /metrics`, and `GET /v1/module` (the description).

use super::Shared;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::Json;
use serde_json::{json, Value};
use wasmod_protocol::description::{describe as describe_module, Tables};
use wasmod_protocol::ModuleDescription;

/// `GET /health`: `{"status": "ok", "queue_free": n}` while the server answers.
pub(crate) async fn health(State(state): Shared) -> Json<Value> {
    Json(json!({ "status": "ok", "queue_free": state.worker.capacity() }))
}

/// `GET /metrics`: the Prometheus text format.
pub(crate) async fn metrics(State(state): Shared) -> impl IntoResponse {
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        {
            let mut text = state.metrics.render();
            state.realtime.stats.render(&mut text);
            if let Some(publish) = &state.publish {
                publish.render(&mut text);
            }
            text
        },
    )
}

/// `GET /v1/module`: the module's description, public tables only.
pub(crate) async fn describe(State(state): Shared) -> Json<ModuleDescription> {
    Json(describe_module(&state.module, Tables::PublicOnly))
}
