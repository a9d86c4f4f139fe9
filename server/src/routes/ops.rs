//! Operations: `GET /health`, `GET /metrics`, and `GET /v1/module` (the description).

use super::Shared;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde_json::{json, Value};
use wasmod_protocol::description::{describe as describe_module, Tables};
use wasmod_protocol::ModuleDescription;

/// `GET /health`: `{"status": "ok", "queue_free": n}` while the server answers; `503` with
/// `"status": "degraded"` and `"reason"` once its commit log failed (`crate::degraded`).
///
/// An edge adds `"edge": {"caught_up": .., "offset": .., "lag_offsets": .., "lag_seconds": ..}`,
/// and answers `503` with `"status": "catching_up"` while its copy is not caught up with the
/// stream, so that a load balancer sends its clients elsewhere meanwhile.
pub(crate) async fn health(State(state): Shared) -> (StatusCode, Json<Value>) {
    let queue_free = state.worker.capacity();
    if let Some(reason) = state.log_health.failure() {
        let answer = json!({
            "status": "degraded",
            "reason": format!("the commit log failed: {reason}; restart the server"),
            "queue_free": queue_free,
        });
        return (StatusCode::SERVICE_UNAVAILABLE, Json(answer));
    }
    let Some(edge) = &state.edge else {
        return (
            StatusCode::OK,
            Json(json!({ "status": "ok", "queue_free": queue_free })),
        );
    };
    let reading = edge.stats.read(edge.fresh);
    let (status, word) = if reading.caught_up {
        (StatusCode::OK, "ok")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "catching_up")
    };
    let answer = json!({
        "status": word,
        "queue_free": queue_free,
        "edge": {
            "caught_up": reading.caught_up,
            "offset": reading.applied,
            "lag_offsets": reading.lag_offsets(),
            "lag_seconds": reading.lag.as_secs_f64(),
            "resyncs": reading.resyncs,
        },
    });
    (status, Json(answer))
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
            if let Some(edge) = &state.edge {
                edge.stats.render(&mut text, edge.fresh);
            }
            text
        },
    )
}

/// `GET /v1/module`: the module's description, public tables only.
pub(crate) async fn describe(State(state): Shared) -> Json<ModuleDescription> {
    Json(describe_module(
        &state.build.get().module,
        Tables::PublicOnly,
    ))
}
