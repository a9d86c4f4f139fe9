//! The operator's side: the console at `/admin` and the JSON API under `/v1/admin/`.
//!
//! Every route here takes the operator token ([`crate::operator`]); a server started without
//! one has no admin side (`not_found`). What the API shows:
//!
//! - `GET /v1/admin/module`: the description with private tables (entry points with their
//!   parameters and ids); `POST /v1/admin/module`: a new build (`wasmod publish`,
//!   [`wasmod_node::NodeHandle::publish`]);
//! - `GET /v1/admin/tables`: every table with its row count; `GET /v1/admin/tables/{name}`:
//!   a page of its rows, private tables included, with the bounds of `GET /v1/tables`;
//! - `GET /v1/admin/stats`: the commit rate, the open sockets and their queue depths, clients
//!   dropped, the module's queue, the log feed's counters;
//! - `GET /v1/admin/dispatch`: the dispatch report of the served binary (`wasmod inspect`),
//!   until a new build is published;
//! - `GET /v1/admin/logs`: the recent module logs; `GET /v1/admin/logs/feed`: the same, then
//!   each new one as it is logged, as server-sent events (`log`, and `dropped` when the reader
//!   fell behind and lost some).
//!
//! The console is one HTML page with its script ([`CONSOLE`]), served to a request with the
//! token; without one, `/admin` answers a sign-in page ([`SIGN_IN`]) that sends the token to
//! `POST /v1/admin/session`, which answers the cookie ([`crate::operator::set_cookie`]), and
//! reloads; `DELETE /v1/admin/session` (the console's sign-out) makes the browser forget it.

use super::extract::{payload_too_large, Body, Source};
use super::tables::page;
use super::{AppState, Shared};
use crate::commit_rate::CommitRate;
use crate::error::{ApiError, ErrorCode, HttpError};
use crate::operator::{self, check_site, credential, OperatorToken, Site};
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::Json;
use futures_util::StreamExt as _;
use serde_json::{json, Value};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use wasmod_node::{FeedEvent, FeedRecord, LevelFilter};
use wasmod_node::{Holder, PageQuery, Published, Reader, Status};
use wasmod_protocol::description::{describe, Tables};

/// The console: plain HTML and script, no framework.
const CONSOLE: &str = include_str!("admin/console.html");

/// The page `/admin` answers without the operator token.
const SIGN_IN: &str = include_str!("admin/sign_in.html");

/// What the admin side needs beside the rest of the server.
#[derive(Debug)]
pub(crate) struct Admin {
    /// The operator's token.
    pub token: OperatorToken,
    /// The answer of `GET /v1/admin/dispatch`, if the server was given a report for the
    /// build serving now (a build published since has none: the server does not inspect).
    pub dispatch: parking_lot::RwLock<Option<String>>,
    /// Makes the dispatch report of a published build, if the server was given a way to.
    pub inspect: Option<crate::Inspect>,
    /// The commit rate, between reads of the stats.
    pub commit_rate: CommitRate,
}

impl Admin {
    /// The operator's side of `options`, over `module`.
    pub(crate) fn new(
        module: &wasmod_host::WasmModule,
        options: crate::AdminOptions,
    ) -> std::io::Result<Self> {
        let dispatch = options
            .dispatch_report
            .as_ref()
            .map(crate::DispatchReport::answer)
            .transpose()?;
        Ok(Self {
            token: options.token,
            dispatch: parking_lot::RwLock::new(dispatch),
            inspect: options.inspect,
            commit_rate: CommitRate::new(module.database().next_offset()),
        })
    }
}

/// A request that carries the operator token.
pub(crate) struct Operator;

impl FromRequestParts<Arc<AppState>> for Operator {
    type Rejection = HttpError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Arc<AppState>,
    ) -> Result<Self, HttpError> {
        let admin = admin(state)?;
        let presented = checked_credential(state, admin, Source::of(parts), &parts.headers)?;
        check_site(&parts.method, presented, &parts.headers)?;
        Ok(Self)
    }
}

/// The operator's credential of `headers`, checked: one that is there (or a malformed
/// `Authorization`) under the source's rate of wrong tokens ([`AppState::check_token`]);
/// none is `unauthenticated`, which counts nothing.
fn checked_credential<'h>(
    state: &AppState,
    admin: &Admin,
    source: Source,
    headers: &'h HeaderMap,
) -> Result<Option<operator::Credential<'h>>, HttpError> {
    match credential(headers) {
        Ok(Some(presented)) => state.check_token(source, || {
            admin.token.check(Some(presented.token()))?;
            Ok(Some(presented))
        }),
        Ok(None) => Ok(admin.token.check(None).map(|()| None)?),
        Err(malformed) => state.check_token(source, || Err(malformed)),
    }
}

/// The admin side, or `not_found` on a server without one.
fn admin(state: &AppState) -> Result<&Admin, ApiError> {
    state.admin.as_ref().ok_or_else(|| {
        ApiError::new(
            ErrorCode::NotFound,
            "this server has no admin API: start it with an operator token",
        )
    })
}

/// `GET /admin`: the console with the token, the sign-in page without (401) or with a wrong
/// one (403); `too_many_calls` (429) from an address past its rate of wrong tokens.
pub(crate) async fn console(
    State(state): Shared,
    source: Source,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let admin = admin(&state)?;
    let page = match checked_credential(&state, admin, source, &headers) {
        Ok(_) => return Ok(Html(CONSOLE).into_response()),
        Err(refused) if refused.error.code == ErrorCode::TooManyCalls => return Err(refused),
        Err(refused) => refused.error,
    };
    let status = StatusCode::from_u16(page.code.http_status()).unwrap_or(StatusCode::UNAUTHORIZED);
    Ok((status, Html(SIGN_IN)).into_response())
}

/// The body of `POST /v1/admin/session`.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct SignIn {
    token: String,
}

/// Refuses a sign-in or sign-out sent by another site's page (the sign-in would sign the
/// browser in as whoever's token that page holds).
fn from_own_site(headers: &HeaderMap) -> Result<(), ApiError> {
    match Site::of(headers) {
        Site::Foreign => Err(ApiError::new(
            ErrorCode::CrossSite,
            "the console signs in and out from this server's own pages only",
        )),
        Site::Own | Site::Unknown => Ok(()),
    }
}

/// `POST /v1/admin/session` with `{"token": "<operator token>"}`: the console's sign-in.
/// Answers `204` with the operator's cookie (`HttpOnly`, `SameSite=Strict`, for the console's
/// paths; `Secure` behind a TLS proxy), or the token's refusal without it.
pub(crate) async fn sign_in(
    State(state): Shared,
    source: Source,
    headers: HeaderMap,
    body: Result<Json<SignIn>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, HttpError> {
    let admin = admin(&state)?;
    from_own_site(&headers)?;
    let Json(SignIn { token }) = body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            payload_too_large()
        } else {
            ApiError::new(
                ErrorCode::BadJson,
                "send `{\"token\": \"<operator token>\"}` as JSON",
            )
        }
    })?;
    state.check_token(source, || admin.token.check(Some(token.trim().as_bytes())))?;
    Ok(with_cookie(Some(&admin.token), &headers))
}

/// `DELETE /v1/admin/session`: the console's sign-out. Answers `204` with the cookie expired,
/// whatever the request carried.
pub(crate) async fn sign_out(
    State(state): Shared,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    admin(&state)?;
    from_own_site(&headers)?;
    Ok(with_cookie(None, &headers))
}

/// `204` that sets the operator's cookie to `token`, or expires it.
fn with_cookie(token: Option<&OperatorToken>, headers: &HeaderMap) -> Response {
    let cookies = operator::set_cookie(token, operator::over_tls(headers));
    (StatusCode::NO_CONTENT, cookies).into_response()
}

/// `GET /v1/admin/module`: the description, private tables included.
pub(crate) async fn module(State(state): Shared, _: Operator) -> Json<Value> {
    Json(json!(describe(&state.node.describe(), Tables::All)))
}

/// `POST /v1/admin/module`: makes the body, a compiled module, the build that serves from the
/// next call on ([`wasmod_node::NodeHandle::publish`]); answers what changed.
pub(crate) async fn publish(
    State(state): Shared,
    _: Operator,
    Body(wasm): Body,
) -> Result<Json<Published>, HttpError> {
    let admin = admin(&state)?;
    let report = match admin.inspect {
        Some(inspect) => {
            let wasm = wasm.clone();
            tokio::task::spawn_blocking(move || inspect(&wasm))
                .await
                .map_err(|error| {
                    ApiError::new(
                        ErrorCode::Internal,
                        format!("inspecting the build: {error}"),
                    )
                })?
        }
        None => None,
    };
    let published = state.node.publish(wasm.to_vec()).await?;
    // The report of the build serving now, or none.
    *admin.dispatch.write() = report.and_then(|report| report.answer().ok());
    Ok(Json(published))
}

/// `GET /v1/admin/tables`: every table, with its row count.
pub(crate) async fn tables(State(state): Shared, _: Operator) -> Result<Json<Value>, HttpError> {
    let (module, counts) = state.node.row_counts().await?;
    let tables: Vec<Value> = module
        .tables
        .iter()
        .zip(counts)
        .zip(0u32..)
        .map(|((table, rows), id)| {
            json!({ "id": id, "name": table.name, "public": table.public, "rows": rows })
        })
        .collect();
    Ok(Json(json!({ "tables": tables })))
}

/// `GET /v1/admin/tables/{name}`: a page of any table's rows.
pub(crate) async fn table(
    State(state): Shared,
    _: Operator,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<PageQuery>, QueryRejection>,
    Source(source): Source,
) -> Result<Response, HttpError> {
    let holder = Holder::new(None, source);
    Ok(page(&state, path, query, Reader::Operator, holder).await?)
}

/// `GET /v1/admin/stats`: how the server is doing now; on a node of a replicated deployment,
/// its place in it (`cluster`, as `/health` has it; `null` elsewhere).
pub(crate) async fn stats(State(state): Shared, _: Operator) -> Result<Json<Value>, HttpError> {
    let admin = admin(&state)?;
    let logs = state.node.logs();
    let Status {
        commits,
        sockets,
        dropped,
        queue_free,
    } = state.node.status();
    Ok(Json(json!({
        "commits": commits,
        "commits_per_second": admin.commit_rate.observe(commits),
        "connections": sockets,
        "clients_dropped": {
            "slow": dropped.slow,
            "idle": dropped.idle,
            "lagged": dropped.lagged,
        },
        "queue_free": queue_free,
        "cluster": state.node.cluster(),
        "logs": {
            "kept": logs.capacity(),
            "readers": logs.readers(),
            "dropped_for_slow_readers": logs.dropped(),
        },
    })))
}

/// `GET /v1/admin/dispatch`: the dispatch report (`{"clean", "report", "text"}`), or
/// `{"report": null}` if the server was given none.
pub(crate) async fn dispatch(State(state): Shared, _: Operator) -> Result<Response, HttpError> {
    let admin = admin(&state)?;
    let body = match &*admin.dispatch.read() {
        Some(answer) => answer.clone(),
        None => "{\"report\":null}".to_owned(),
    };
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// The `?level=` of the log routes.
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct LevelQuery {
    level: Option<String>,
}

impl LevelQuery {
    fn filter(query: Result<Query<Self>, QueryRejection>) -> Result<LevelFilter, ApiError> {
        let Ok(Query(query)) = query else {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                "the query is not valid",
            ));
        };
        match query.level.as_deref() {
            None => Ok(LevelFilter::ALL),
            Some(level) => LevelFilter::parse(level).ok_or_else(|| {
                ApiError::new(
                    ErrorCode::BadRequest,
                    format!("`level` is one of error, warn, info, debug, trace, not `{level}`"),
                )
            }),
        }
    }
}

/// `GET /v1/admin/logs?level=`: the recent records, oldest first.
pub(crate) async fn logs(
    State(state): Shared,
    _: Operator,
    query: Result<Query<LevelQuery>, QueryRejection>,
) -> Result<Json<Value>, HttpError> {
    let filter = LevelQuery::filter(query)?;
    let records = state.node.logs().recent(filter);
    let records: Vec<&FeedRecord> = records.iter().map(|record| &**record).collect();
    Ok(Json(json!({ "records": records })))
}

/// How often an idle feed sends a comment, so that proxies keep it open.
const FEED_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// `GET /v1/admin/logs/feed?level=`: the recent records, then each new one, as server-sent
/// events.
pub(crate) async fn feed(
    State(state): Shared,
    _: Operator,
    query: Result<Query<LevelQuery>, QueryRejection>,
) -> Result<Response, HttpError> {
    let filter = LevelQuery::filter(query)?;
    let (backlog, reader) = state.node.logs().subscribe(filter);
    let backlog =
        futures_util::stream::iter(backlog.into_iter().map(|record| Ok(log_event(&record))));
    let live = futures_util::stream::unfold(reader, move |mut reader| async move {
        loop {
            match reader.next().await {
                FeedEvent::Record(record) if filter.admits(&record) => {
                    return Some((Ok::<_, Infallible>(log_event(&record)), reader))
                }
                FeedEvent::Record(_) => {}
                FeedEvent::Dropped(count) => {
                    let event = Event::default()
                        .event("dropped")
                        .data(json!({ "dropped": count }).to_string());
                    return Some((Ok(event), reader));
                }
                FeedEvent::Closed => return None,
            }
        }
    });
    let events = backlog.chain(live);
    Ok(Sse::new(events)
        .keep_alive(KeepAlive::new().interval(FEED_KEEP_ALIVE))
        .into_response())
}

/// A record as an event of the feed.
fn log_event(record: &FeedRecord) -> Event {
    Event::default()
        .event("log")
        .id(record.seq.to_string())
        .data(serde_json::to_string(record).unwrap_or_default())
}
