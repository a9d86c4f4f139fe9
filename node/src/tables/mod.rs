//! Tables read directly, off the module's thread: which table a reader names, what of it the
//! reader may see, and how many rows each table holds.
//!
//! A read needs no wasm and should not wait behind a slow procedure, so the transports read
//! the datastore of the build serving now (on the blocking pool: a read waits for a commit
//! in progress). What a reader may see is the node's to decide: private tables are the
//! module's own (`private_table`), and a table with a visibility filter shows a client only
//! the rows the filter lets it see ([`RowFilter`], the subscription crate's own evaluation of
//! the filter, as subscriptions and one-off queries apply it). A client without a token has
//! no identity to compare with: a filter that uses `:sender` refuses it (`unauthenticated`)
//! rather than answer with pages that are always empty. The operator sees every row.
//!
//! A read is one page, bounded in rows, in bytes and in how many run at once ([`pages`]).

mod pages;

pub(crate) use pages::{read_page, PageLimits, TableReads};
pub use pages::{PageQuery, TablePage};

use crate::build::CurrentBuild;
use std::sync::Arc;
use wasmod_abi::{Identity, ModuleDef};
use wasmod_host::datastore::Datastore;
use wasmod_protocol::errors::{ApiError, ErrorCode};
use wasmod_subscription::{QueryError, RowFilter};

/// Who reads a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    /// The operator: every table, every row.
    Operator,
    /// A client, with its token's identity if it sent one: public tables, the rows their
    /// visibility filters give it.
    Client(Option<Identity>),
}

/// A table to read, found in the build serving now, with what its reader may see.
#[derive(Debug)]
pub(crate) struct TableRead {
    /// The description of the build it was found in (its columns' types).
    pub module: Arc<ModuleDef>,
    /// The tables of that build.
    pub datastore: Arc<Datastore>,
    /// The table's id.
    pub table: u32,
    /// The rows the reader may see; `None`: every row.
    pub rows: Option<RowFilter>,
}

/// The table `name` of the build `build` serves now, as `reader` may read it. Fails with
/// `no_such_table`, `private_table`, or `unauthenticated` for a filter that needs the
/// reader's identity.
pub(crate) fn find(
    build: &CurrentBuild,
    name: &str,
    reader: Reader,
) -> Result<TableRead, ApiError> {
    let build = build.get();
    let (table, def) = build
        .module
        .tables
        .iter()
        .zip(0u32..)
        .find_map(|(def, id)| (def.name == name).then_some((id, def)))
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::NoSuchTable,
                format!("the module has no table named `{name}`"),
            )
        })?;
    let rows = match reader {
        Reader::Operator => None,
        Reader::Client(_) if !def.public => {
            return Err(ApiError::new(
                ErrorCode::PrivateTable,
                format!("table `{name}` is private to the module"),
            ))
        }
        Reader::Client(identity) => {
            Some(RowFilter::new(&build.catalog, table, identity).map_err(refused_reader)?)
        }
    };
    Ok(TableRead {
        module: build.module.clone(),
        datastore: build.datastore.clone(),
        table,
        rows,
    })
}

/// The description of the build serving now, and how many rows each of its tables holds
/// (in the order of its tables), read under one read transaction.
pub(crate) async fn row_counts(
    build: &CurrentBuild,
) -> Result<(Arc<ModuleDef>, Vec<u64>), ApiError> {
    let build = build.get();
    let module = build.module.clone();
    let counts = tokio::task::spawn_blocking(move || {
        let read = build.datastore.begin_read();
        (0..build.module.tables.len() as u32)
            .map(|id| read.row_count(id).unwrap_or_default())
            .collect()
    })
    .await
    .map_err(|error| ApiError::new(ErrorCode::Internal, format!("counting rows: {error}")))?;
    Ok((module, counts))
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
