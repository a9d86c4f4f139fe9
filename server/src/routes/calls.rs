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
use wasmod_abi::{ConnectionId, EntryKind, Identity};
use wasmod_node::entry;
use wasmod_node::slots::Requester;
use wasmod_protocol::http::CallResponse;

/// The entry points one route calls.
pub(crate) trait Family {
    /// The kinds of entry point the route finds names among.
    const KINDS: &'static [EntryKind];
    /// The `kind` label of the route's metrics.
    const METRIC: &'static str;
}

/// `POST /v1/reducers/{name}`.
pub(crate) enum Reducers {}

/// `POST /v1/procedures/{name}`.
pub(crate) enum Procedures {}

/// `POST /v1/views/{name}`: per-caller and anonymous views alike.
pub(crate) enum Views {}

impl Family for Reducers {
    const KINDS: &'static [EntryKind] = &[EntryKind::Reducer];
    const METRIC: &'static str = EntryKind::Reducer.as_str();
}

impl Family for Procedures {
    const KINDS: &'static [EntryKind] = &[EntryKind::Procedure];
    const METRIC: &'static str = EntryKind::Procedure.as_str();
}

impl Family for Views {
    const KINDS: &'static [EntryKind] = &[EntryKind::View, EntryKind::AnonymousView];
    const METRIC: &'static str = EntryKind::View.as_str();
}

/// Calls the entry point `{name}` of family `F` with the body's JSON arguments; the body is
/// read once the request is known to be good.
pub(crate) async fn call<F: Family>(
    State(state): Shared,
    path: Result<Path<String>, PathRejection>,
    caller: Result<Caller, HttpError>,
    Source(source): Source,
    body: Request,
) -> Result<Json<CallResponse>, HttpError> {
    if let Ok(Caller(None)) = caller {
        state.anonymous_calls.check(source)?;
    }
    let work = async {
        let name = name(path)?;
        let caller = caller?;
        let build = state.node.build().get();
        let entry = entry::find(&build.module, &name, F::KINDS)?;
        let identity = if entry.point.kind.takes_caller() {
            Some(caller.required(&format!("{} `{name}`", entry.point.kind.as_str()))?)
        } else {
            caller.0
        };
        let JsonBody(args) = JsonBody::from_request(body, &()).await?;
        let args = entry.encode_args(&args)?;
        let slot = state
            .node
            .slots()
            .acquire(Requester::of(identity, source))?;
        let invocation = entry.invocation();
        let sender = identity.unwrap_or(Identity::ZERO);
        let done = state
            .node
            .runner()
            .run(invocation.clone(), sender, ConnectionId::ZERO, args, slot)
            .await?;
        let answer = state
            .node
            .results()
            .answer(&build.module, &invocation, done);
        answer.await.map(Json)
    };
    Ok(state.node.metrics().measure(F::METRIC, work).await?)
}
