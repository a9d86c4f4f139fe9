//! Row visibility: a table's filter, declared by the module, that restricts which of its rows a
//! client may read (`owner = :sender`: each client reads the rows it owns).
//!
//! The filter is a condition of the query subset over the table's own columns, checked once
//! when the module is loaded ([`Catalog::new`](crate::Catalog::new)): a module whose filter
//! does not parse, names a column the table does not have, or compares a column with
//! `:sender` that is not an `Identity` is refused with a [`VisibilityError`] that names the
//! table and the reason, before any client reads it.
//!
//! Applying it is the planner's job, so that every reader of rows gets one implementation:
//! checking a query ANDs the filter of each table it reads into its plan (for a join, the
//! other table's too, so a join cannot probe rows the client may not see), and binding the
//! query binds the filter's `:sender` to the reader with the rest. Subscriptions (initial rows
//! and every delta) and one-off queries need nothing more. Table reads by position, which are
//! not queries, ask for a [`RowFilter`].

use crate::catalog::{Catalog, TableInfo};
use crate::error::QueryError;
use crate::eval::Rows;
use crate::plan::{Bytes, Filter, Operand};
use crate::{sql, validate};
use std::fmt;
use std::sync::Arc;
use wasmod_abi::{Identity, ModuleDef};

/// A module's visibility filter that cannot be applied: the module is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VisibilityError {
    /// The table that declares the filter.
    pub table: String,
    /// The filter, as declared.
    pub filter: String,
    /// Why it cannot be applied.
    pub reason: String,
}

impl fmt::Display for VisibilityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "table `{}` has the visibility filter `{}`, which cannot be applied: {}",
            self.table, self.filter, self.reason
        )
    }
}

impl std::error::Error for VisibilityError {}

impl Catalog {
    /// The tables of the module `def`, with their visibility filters checked.
    ///
    /// Errors: the first table whose visibility filter cannot be applied (it does not parse,
    /// names a column the table does not have, compares `:sender` with a column that is not an
    /// `Identity`, or is declared on a private table).
    pub fn new(def: &ModuleDef) -> Result<Self, VisibilityError> {
        let mut catalog = Catalog::unfiltered(def);
        for ((id, info), table) in (0u32..).zip(catalog.tables_mut()).zip(&def.tables) {
            if let Some(text) = &table.visibility {
                info.visibility = Some(checked(id, info, text)?);
            }
        }
        Ok(catalog)
    }
}

/// The filter `text` of table `table` (whose id is `id`), checked against its columns.
pub(crate) fn checked(
    id: u32,
    table: &TableInfo,
    text: &str,
) -> Result<Filter<Operand>, VisibilityError> {
    let refused = |reason: String| VisibilityError {
        table: table.name.clone(),
        filter: text.to_owned(),
        reason,
    };
    if !table.public {
        return Err(refused(
            "the table is private, so no client reads any of its rows (make it public, or drop \
             the filter)"
                .to_owned(),
        ));
    }
    let condition = sql::parse_condition(text).map_err(|error| refused(error.to_string()))?;
    validate::table_filter(id, table, &condition).map_err(|error| refused(error.to_string()))
}

/// What one reader may see of one table's rows: its visibility filter bound to the reader, for
/// reads that are not queries (a table's rows by position, page after page).
#[derive(Clone, Debug)]
pub struct RowFilter {
    catalog: Arc<Catalog>,
    table: u32,
    filter: Option<Filter<Bytes>>,
}

impl RowFilter {
    /// The rows of table `table` that `reader` (`None`: a reader without an identity) may see.
    ///
    /// Errors: [`QueryError::UnknownTable`] for a table the catalog does not have,
    /// [`QueryError::PrivateTable`] for a private one, and [`QueryError::NeedsIdentity`] for a
    /// table whose filter compares with `:sender` when there is no reader to compare with.
    pub fn new(
        catalog: &Arc<Catalog>,
        table: u32,
        reader: Option<Identity>,
    ) -> Result<Self, QueryError> {
        let info = catalog
            .table(table)
            .ok_or_else(|| QueryError::UnknownTable(format!("#{table}")))?;
        if !info.public {
            return Err(QueryError::PrivateTable(info.name.clone()));
        }
        let filter = match (&info.visibility, reader) {
            (None, _) => None,
            (Some(filter), Some(reader)) => Some(crate::query::bind_filter(filter, reader)),
            (Some(filter), None) if filter.uses_sender() => {
                return Err(QueryError::NeedsIdentity(info.name.clone()))
            }
            // Nothing to bind: the filter does not use `:sender`.
            (Some(filter), None) => Some(crate::query::bind_filter(filter, Identity::ZERO)),
        };
        Ok(Self {
            catalog: catalog.clone(),
            table,
            filter,
        })
    }

    /// Whether the reader may see `row`, a row of the table.
    pub fn admits(&self, row: &[u8]) -> bool {
        let Some(filter) = &self.filter else {
            return true;
        };
        self.catalog
            .table(self.table)
            .is_some_and(|table| filter.matches(&Rows::one(&table.layout, row)))
    }
}
