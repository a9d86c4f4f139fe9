//! `GET /v1/tables/{name}`: a page of the rows of a public table, as JSON.
//!
//! Rows are read from the datastore directly, not on the module's thread; which table a
//! reader names and what of it the reader may see are the node's to decide
//! ([`wasmod_node::NodeHandle::table`]: private tables refused, visibility filters applied,
//! a filter that needs an identity refused without a token), and so are paging, its bounds
//! and the page's JSON ([`wasmod_node::NodeHandle::read_page`]); the page is streamed here in
//! its chunks. The operator reads every table through the admin API, with the same pages.

use super::extract::{name, Caller, Source};
use super::Shared;
use crate::error::{ApiError, ErrorCode, HttpError};
use axum::body::Body;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::response::Response;
use std::io;
use std::sync::Arc;
use wasmod_node::{Holder, PageQuery, Reader};

/// `GET /v1/tables/{name}?limit=&cursor=`: `{"rows": [..], "next_cursor": ..}`.
pub(crate) async fn read(
    State(state): Shared,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<PageQuery>, QueryRejection>,
    caller: Result<Caller, HttpError>,
    Source(source): Source,
) -> Result<Response, HttpError> {
    let work = async {
        let reader = caller?.identity;
        let holder = Holder::new(reader, source);
        page(&state, path, query, Reader::Client(reader), holder).await
    };
    Ok(state.node.measured("table", work).await?)
}

/// A page of the table named in `path`, as `reader` may read it, held for `holder` until it
/// is sent.
pub(crate) async fn page(
    state: &Arc<super::AppState>,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<PageQuery>, QueryRejection>,
    reader: Reader,
    holder: Holder,
) -> Result<Response, ApiError> {
    let name = name(path)?;
    let Query(query) = query.map_err(|rejection| {
        ApiError::new(
            ErrorCode::BadRequest,
            format!("the query is not valid: {rejection}"),
        )
    })?;
    let page = state.node.read_page(&name, reader, &query, holder).await?;
    // The body holds the page's charge: given back as the last chunk is taken, or when the
    // connection ends without taking them.
    let chunks = futures_util::stream::iter(page.into_chunks().map(Ok::<_, io::Error>));
    Ok((
        [(CONTENT_TYPE, "application/json")],
        Body::from_stream(chunks),
    )
        .into_response())
}
