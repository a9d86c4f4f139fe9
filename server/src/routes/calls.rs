//! `POST /v1/reducers/{name}`, `/v1/procedures/{name}`, `/v1/views/{name}`: calls by name with
//! JSON arguments.
//!
//! Everything that can be refused is refused before the call is queued (unknown name,
//! lifecycle reducer, missing identity, bad arguments, too many calls), so the module's thread
//! only sees calls it can run. The entry point's kind decides whether an identity is needed:
//! reducers, procedures and per-caller views run as the token's identity; anonymous views need
//! none.
//!
//! The extractors' failures are taken as values (`Result<_, ApiError>`) so that every request
//! is counted in the metrics, refused ones included.

use super::extract::{name, Caller, JsonBody};
use super::Shared;
use crate::entry::{self, Kind};
use crate::error::ApiError;
use axum::extract::rejection::PathRejection;
use axum::extract::Path;
use axum::Json;
use serde_json::Value;
use wasmod_abi::Identity;

/// `POST /v1/reducers/{name}`.
pub(crate) async fn reducer(
    state: Shared,
    path: Result<Path<String>, PathRejection>,
    caller: Result<Caller, ApiError>,
    args: Result<JsonBody, ApiError>,
) -> Result<Json<Value>, ApiError> {
    call(state, &[Kind::Reducer], "reducer", path, caller, args).await
}

/// `POST /v1/procedures/{name}`.
pub(crate) async fn procedure(
    state: Shared,
    path: Result<Path<String>, PathRejection>,
    caller: Result<Caller, ApiError>,
    args: Result<JsonBody, ApiError>,
) -> Result<Json<Value>, ApiError> {
    call(state, &[Kind::Procedure], "procedure", path, caller, args).await
}

/// `POST /v1/views/{name}`: per-caller and anonymous views alike.
pub(crate) async fn view(
    state: Shared,
    path: Result<Path<String>, PathRejection>,
    caller: Result<Caller, ApiError>,
    args: Result<JsonBody, ApiError>,
) -> Result<Json<Value>, ApiError> {
    let kinds = [Kind::View, Kind::AnonymousView];
    call(state, &kinds, "view", path, caller, args).await
}

async fn call(
    axum::extract::State(state): Shared,
    kinds: &[Kind],
    metric: &'static str,
    path: Result<Path<String>, PathRejection>,
    caller: Result<Caller, ApiError>,
    args: Result<JsonBody, ApiError>,
) -> Result<Json<Value>, ApiError> {
    let in_flight = state.metrics.start(metric);
    let result = async {
        let name = name(path)?;
        let caller = caller?;
        let entry = entry::find(&state.module, &name, kinds)?;
        let identity = if entry.kind.needs_identity() {
            Some(caller.required(&format!("{} `{name}`", entry.kind.as_str()))?)
        } else {
            caller.0
        };
        let JsonBody(args) = args?;
        let args = entry.encode_args(&args)?;
        let slot = identity
            .map(|identity| state.slots.acquire(identity))
            .transpose()?;
        let invocation = entry.invocation();
        let sender = identity.unwrap_or(Identity::ZERO);
        let outcome = state
            .worker
            .run(move |module| {
                let _slot = slot;
                invocation.run(module, sender, &args)
            })
            .await?;
        entry.answer(outcome).map(|result| Json(result.to_json()))
    }
    .await;
    in_flight.finish(result)
}
