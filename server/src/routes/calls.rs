//! `POST /v1/reducers/{name}`, `/v1/procedures/{name}`, `/v1/views/{name}`: calls by name with
//! JSON arguments.
//!
//! Everything that can be refused is refused before the call is queued (unknown name,
//! lifecycle reducer, missing identity, bad arguments, too many calls), so the module's thread
//! only sees calls it can run. The entry point's kind decides whether an identity is needed:
//! reducers, procedures and per-caller views run as the token's identity; anonymous views need
//! none. A call without a token counts against its source address's rate of anonymous calls,
//! and every call takes a call slot (its identity's, or its address's without a token).
//!
//! The body is read last, once the token, the name and the caller are known to be good: a
//! request refused for those is answered without its body being read (and a small body is
//! then dropped by the [`unread`](super::unread) layer).
//!
//! The extractors' failures are taken as values (`Result<_, HttpError>`) so that every request
//! is counted in the metrics, refused ones included (except those past the rate of anonymous
//! calls, refused before any work).

use super::extract::{name, Caller, JsonBody, Source};
use super::Shared;
use crate::error::HttpError;
use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequest, Path, Request, State};
use axum::Json;
use wasmod_node::CallKind;
use wasmod_protocol::http::CallResponse;

/// The calls one route makes.
pub(crate) trait Family {
    /// Their kind.
    const KIND: CallKind;
}

/// `POST /v1/reducers/{name}`.
pub(crate) enum Reducers {}

/// `POST /v1/procedures/{name}`.
pub(crate) enum Procedures {}

/// `POST /v1/views/{name}`: per-caller and anonymous views alike.
pub(crate) enum Views {}

impl Family for Reducers {
    const KIND: CallKind = CallKind::Reducer;
}

impl Family for Procedures {
    const KIND: CallKind = CallKind::Procedure;
}

impl Family for Views {
    const KIND: CallKind = CallKind::View;
}

/// Calls the entry point `{name}` of family `F` with the body's JSON arguments, through the
/// node's call pipeline ([`wasmod_node::NodeHandle::call`]); the body is read once the call
/// is known to be good.
pub(crate) async fn call<F: Family>(
    State(state): Shared,
    path: Result<Path<String>, PathRejection>,
    caller: Result<Caller, HttpError>,
    Source(source): Source,
    body: Request,
) -> Result<Json<CallResponse>, HttpError> {
    if let Ok(Caller { identity: None, .. }) = caller {
        state.anonymous_calls.check(source)?;
    }
    let (name, caller) = match (name(path), caller) {
        (Ok(name), Ok(caller)) => (name, caller),
        (Err(error), _) => return Err(state.node.refused(F::KIND.as_str(), error).into()),
        (_, Err(error)) => {
            return Err(state.node.refused(F::KIND.as_str(), error.into()).into());
        }
    };
    let args = async {
        let JsonBody(args) = JsonBody::from_request(body, &()).await?;
        Ok(args)
    };
    let answer = state
        .node
        .call(Some(F::KIND), &name, caller.node(source), args)
        .await?;
    Ok(Json(answer))
}
