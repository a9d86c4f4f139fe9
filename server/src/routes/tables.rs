//! `GET /v1/tables/{name}`: a page of the rows of a public table, as JSON.
//!
//! Rows are read from the datastore directly, not on the module's thread: a read needs no
//! wasm, and should not wait behind a slow procedure. It does wait for a reducer's transaction
//! in progress (readers see committed states only), so it runs on the blocking pool, never on
//! a runtime thread. Paging, its bounds and the streamed JSON are [`crate::pages`]'. Private
//! tables are the module's own and are refused (`private_table`); the operator reads them
//! through the admin API, with the same pages.
//!
//! A table with a visibility filter shows a client only the rows the filter lets it see, the
//! filter bound to the identity of its token ([`RowFilter`], the subscription crate's own
//! evaluation of the filter, as subscriptions and one-off queries apply it). A client without
//! a token has no identity to compare with: a filter that uses `:sender` refuses it
//! (`unauthenticated`) rather than answer with pages that are always empty, which would read
//! as a table without rows. The operator's reads see every row.

use super::extract::{name, Caller, Source};
use super::Shared;
use crate::error::{ApiError, ErrorCode, HttpError};
use crate::pages::{read_page, PageQuery, TableRows};
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::response::Response;
use std::sync::Arc;
use wasmod_abi::Identity;
use wasmod_node::memory::Holder;
use wasmod_subscription::{QueryError, RowFilter};

/// Which tables and rows a reader may see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Visibility {
    /// Public tables only, and of a table with a visibility filter only the rows it lets the
    /// client see (the identity of its token, if it sent one): clients.
    Client(Option<Identity>),
    /// Every row of every table: the operator.
    All,
}

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
        page(&state, path, query, Visibility::Client(reader), holder).await
    };
    Ok(state.node.metrics().measure("table", work).await?)
}

/// A page of the table named in `path`, if `visibility` lets the reader see it, held for
/// `holder` until it is sent.
pub(crate) async fn page(
    state: &Arc<super::AppState>,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<PageQuery>, QueryRejection>,
    visibility: Visibility,
    holder: Holder,
) -> Result<Response, ApiError> {
    let name = name(path)?;
    let Query(query) = query.map_err(|rejection| {
        ApiError::new(
            ErrorCode::BadRequest,
            format!("the query is not valid: {rejection}"),
        )
    })?;
    let build = state.node.build().get();
    let (id, table) = build
        .module
        .tables
        .iter()
        .zip(0u32..)
        .find_map(|(table, id)| (table.name == name).then_some((id, table)))
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::NoSuchTable,
                format!("the module has no table named `{name}`"),
            )
        })?;
    let rows = match visibility {
        Visibility::All => None,
        Visibility::Client(_) if !table.public => {
            return Err(ApiError::new(
                ErrorCode::PrivateTable,
                format!("table `{name}` is private to the module"),
            ))
        }
        Visibility::Client(reader) => {
            Some(RowFilter::new(&build.catalog, id, reader).map_err(refused_reader)?)
        }
    };
    read_page(
        &state.table_reads,
        state.config.page_limits(),
        build.module.clone(),
        build.datastore.clone(),
        TableRows { table: id, rows },
        &query,
        holder,
    )
    .await
}

/// Why a client may not read a table's rows, as the API's error.
fn refused_reader(error: QueryError) -> ApiError {
    match error {
        QueryError::NeedsIdentity(_) => {
            ApiError::new(ErrorCode::Unauthenticated, error.to_string())
        }
        QueryError::PrivateTable(_) => ApiError::new(ErrorCode::PrivateTable, error.to_string()),
        other => ApiError::new(ErrorCode::Internal, other.to_string()),
    }
}
