//! `GET /v1/tables/{name}`: a page of the rows of a public table, as JSON.
//!
//! Rows are read from the datastore directly, not on the module's thread; which table a
//! reader names and what of it the reader may see are the node's to decide
//! ([`wasmod_node::NodeHandle::table`]: private tables refused, visibility filters applied,
//! a filter that needs an identity refused without a token). Paging, its bounds and the
//! streamed JSON are [`crate::pages`]'. The operator reads every table through the admin API,
//! with the same pages.

use super::extract::{name, Caller, Source};
use super::Shared;
use crate::error::{ApiError, ErrorCode, HttpError};
use crate::pages::{read_page, PageQuery};
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::response::Response;
use std::sync::Arc;
use wasmod_node::{Holder, Reader};

/// `GET /v1/tables/{name}?limit=&cursor=`: `{"rows": [..], "next_cursor": ..}`.
pub(crate) async fn read(
    State(state): Shared,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<PageQuery>, QueryRejection>,
    caller: Result<Caller, HttpError>,
    Source(source): Source,
) -> Result<Response, HttpError> {
    let work = async {
        let Caller(reader) = caller?;
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
    let table = state.node.table(&name, reader)?;
    read_page(
        &state.table_reads,
        state.config.page_limits(),
        table,
        &query,
        holder,
    )
    .await
}
