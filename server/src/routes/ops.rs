//! Operations: `GET /health`, `GET /metrics`, and `GET /v1/module` (the description).

use super::Shared;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde_json::{json, Value};
use wasmod_node::health::BEHIND_BOUND;
use wasmod_node::worker::Worker;
use wasmod_protocol::description::{describe as describe_module, Tables};
use wasmod_protocol::ModuleDescription;

/// `GET /health`: `{"status": "ok", "queue_free": n}` while the server answers; `503` with
/// `"status": "stopped"` and `"reason"` if the module's thread has died ([`module_stopped`]),
/// or with `"status": "degraded"` and `"reason"` once its commit log failed
/// (`crate::degraded`).
///
/// An edge adds `"edge": {"caught_up": .., "offset": .., "lag_offsets": .., "lag_seconds": ..}`,
/// and answers `503` with `"status": "catching_up"` while its copy is not caught up with the
/// stream, so that a load balancer sends its clients elsewhere meanwhile.
pub(crate) async fn health(State(state): Shared) -> (StatusCode, Json<Value>) {
    if let Some(stopped) = module_stopped(state.node.worker()) {
        return stopped;
    }
    let queue_free = state.node.worker().capacity();
    if let Some(reason) = state.node.log_health().failure() {
        let answer = json!({
            "status": "degraded",
            "reason": format!("the commit log failed: {reason}; restart the server"),
            "queue_free": queue_free,
        });
        return (StatusCode::SERVICE_UNAVAILABLE, Json(answer));
    }
    if let Some(behind) = behind(&state) {
        return behind;
    }
    let Some(edge) = state.node.edge() else {
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

/// The answer of `/health` if the module's queue or the subscription evaluation is behind by
/// more than [`BEHIND_BOUND`]: `503`, `"status": "degraded"`, with the reason and both lags,
/// so that a load balancer sends new clients elsewhere while it catches up.
fn behind(state: &super::AppState) -> Option<(StatusCode, Json<Value>)> {
    let module = state.node.worker().behind();
    let evaluation = state.node.realtime().stats.evaluation_lag().behind();
    let reason = if module > BEHIND_BOUND {
        format!("calls have waited {module:.1?} for the module")
    } else if evaluation > BEHIND_BOUND {
        format!("subscriptions and updates have waited {evaluation:.1?} for their evaluation")
    } else {
        return None;
    };
    let answer = json!({
        "status": "degraded",
        "reason": format!("{reason}, more than {BEHIND_BOUND:?}: the server is overloaded"),
        "queue_free": state.node.worker().capacity(),
        "behind": {
            "module_seconds": module.as_secs_f64(),
            "evaluation_seconds": evaluation.as_secs_f64(),
        },
    });
    Some((StatusCode::SERVICE_UNAVAILABLE, Json(answer)))
}

/// The answer of `/health` if the module's thread has died: `503`, `"status": "stopped"`.
fn module_stopped(worker: &Worker) -> Option<(StatusCode, Json<Value>)> {
    if !worker.stopped() {
        return None;
    }
    let answer = json!({
        "status": "stopped",
        "reason": "the module's thread has stopped (a panic in the host it could not recover \
                   from; the log says which): no call can run; restart the server",
        "queue_free": 0,
    });
    Some((StatusCode::SERVICE_UNAVAILABLE, Json(answer)))
}

/// `GET /metrics`: the Prometheus text format.
pub(crate) async fn metrics(State(state): Shared) -> impl IntoResponse {
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        {
            let mut text = state.node.metrics().render();
            state.node.realtime().stats.render(&mut text);
            if let Some(publish) = state.node.publish_stats() {
                publish.render(&mut text);
            }
            if let Some(edge) = state.node.edge() {
                edge.stats.render(&mut text, edge.fresh);
            }
            text
        },
    )
}

/// `GET /v1/module`: the module's description, public tables only.
pub(crate) async fn describe(State(state): Shared) -> Json<ModuleDescription> {
    Json(describe_module(
        &state.node.build().get().module,
        Tables::PublicOnly,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};
    use wasmod_host::{InstanceEnv, WasmConfig, WasmEngine, WasmModule};
    use wasmod_wasm_tests::{built, Profile};

    /// A panic payload whose drop panics too: it escapes the module thread's `catch_unwind`
    /// and ends the thread, as a failed recovery would.
    struct PanicsWhenDropped;

    impl Drop for PanicsWhenDropped {
        fn drop(&mut self) {
            panic!("a panic while dropping a panic");
        }
    }

    #[tokio::test]
    async fn health_answers_503_once_the_module_thread_has_died() {
        let wasm = built(Profile::Release).library("quickstart");
        let compiled = WasmEngine::shared()
            .expect("the engine")
            .compile(&wasm)
            .expect("compiles");
        let module = WasmModule::load(&compiled, WasmConfig::default(), InstanceEnv::unloaded())
            .expect("loads");
        let (worker, _thread) = Worker::start(module, 4).expect("the thread starts");
        assert!(
            module_stopped(&worker).is_none(),
            "a live thread is healthy"
        );
        let lost = worker
            .run(|_| std::panic::panic_any(PanicsWhenDropped))
            .await;
        assert!(lost.is_err());
        let deadline = Instant::now() + Duration::from_secs(10);
        while !worker.stopped() {
            assert!(Instant::now() < deadline, "the thread never ends");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let (status, Json(answer)) = module_stopped(&worker).expect("unhealthy");
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(answer["status"], "stopped");
        assert!(
            answer["reason"]
                .as_str()
                .unwrap()
                .contains("restart the server"),
            "{answer}"
        );
        let refused = worker.run(|_| ()).await.expect_err("no call runs");
        assert_eq!(refused.code, crate::error::ErrorCode::ShuttingDown);
    }
}
