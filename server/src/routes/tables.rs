//! `GET /v1/tables/{name}`: the rows of a public table, as JSON.
//!
//! The answer is written from the encoded rows by the protocol's streaming JSON mapping
//! ([`wasmod_protocol::json::rows_json`]), without a tree of values per row.
//!
//! Rows are read from the datastore directly, not on the module's thread: a read needs no
//! wasm, and should not wait behind a slow procedure. It does wait for a reducer's transaction
//! in progress (readers see committed states only), so it runs on the blocking pool, never on
//! a runtime thread. Private tables are the module's own and are refused (`private_table`).

use super::extract::{name, Caller};
use super::Shared;
use crate::error::{ApiError, ErrorCode, HttpError};
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::Json;
use wasmod_protocol::http::TableResponse;
use wasmod_protocol::json::rows_json;

/// `GET /v1/tables/{name}`: `{"rows": [..]}`.
pub(crate) async fn read(
    State(state): Shared,
    path: Result<Path<String>, PathRejection>,
    caller: Result<Caller, HttpError>,
) -> Result<Json<TableResponse>, HttpError> {
    let work = async {
        let name = name(path)?;
        caller?;
        let (id, table) = state
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
        if !table.public {
            return Err(ApiError::new(
                ErrorCode::PrivateTable,
                format!("table `{name}` is private to the module"),
            ));
        }
        let row_type = table.row_type.clone();
        let reader = state.clone();
        let rows = tokio::task::spawn_blocking(move || {
            let rows = reader.datastore.begin_read().scan(id).map_err(|error| {
                ApiError::new(ErrorCode::Internal, format!("reading `{name}`: {error:?}"))
            })?;
            let rows = rows.iter().map(|row| &row[..]);
            rows_json(&row_type, &reader.module.typespace, rows).map_err(|error| {
                ApiError::new(
                    ErrorCode::ModuleError,
                    format!("a row of `{name}` does not match its type: {error}"),
                )
            })
        })
        .await
        .map_err(|error| {
            ApiError::new(ErrorCode::Internal, format!("the read failed: {error}"))
        })??;
        Ok(Json(TableResponse { rows }))
    };
    Ok(state.metrics.measure("table", work).await?)
}
