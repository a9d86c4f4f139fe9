//! Live queries over a wasmod module's tables: the SQL subset that clients subscribe with, and
//! the incremental evaluation of every commit over all of them.
//!
//! A client subscribes with SQL text; the server keeps its subscription up to date after every
//! commit by sending only what changed. This crate is the part of that which needs no socket:
//!
//! 1. **Parse and check** ([`Query::parse`]): text to a query of the subset (`sqlparser` does
//!    the parsing; the subset is `SELECT * FROM t [WHERE …]` with comparisons of columns with
//!    literals, `AND`, `OR`, `:sender`, and an inner join of two tables on indexed columns),
//!    checked against the module's tables ([`Catalog`]). Everything wrong is a [`QueryError`]
//!    that names it. See `docs/subscriptions.md` for the subset with examples. A table's
//!    visibility filter is ANDed into every query of it here, so that everything after sees
//!    only the rows a client may read ([`RowFilter`] applies it to reads that are not queries).
//!    A [`Catalog`] of a module whose filter cannot be applied is a [`VisibilityError`].
//! 2. **Bind** ([`Query::bind`]): `:sender` replaced by the subscriber's identity, giving a
//!    [`BoundQuery`] in a normal form, so that equal queries from many clients compare and hash
//!    equal.
//! 3. **Evaluate from scratch** ([`BoundQuery::evaluate`]): the initial rows of a
//!    subscription, or the answer to a one-off query, read through indexes where the filter
//!    allows; [`BoundQuery::evaluate_within`] does it within a [`Budget`] of reads and
//!    rows returned, checked as it goes.
//! 4. **Evaluate a commit** ([`Subscriptions::evaluate`]): from the commit's
//!    [`TxData`](wasmod_datastore::TxData) and the tables right after it, each affected
//!    query's [`Delta`] (rows inserted into and deleted from its result), evaluating only the
//!    queries the commit can affect, each once, and never re-reading a whole table;
//!    [`Subscriptions::evaluate_batch`] does the same for several commits when the tables are
//!    already past the first of them.
//! 5. **Catch a client up** ([`changes_since`]): the net change of some queries over several
//!    commits, for a client that reconnects holding its rows as of the first of them.
//!
//! Rows are the datastore's shared encoded rows ([`Row`](wasmod_datastore::Row)); predicates
//! read the columns they need in place (no row is decoded into values), and encoding deltas
//! for the wire is the caller's job, once per query.

mod budget;
mod catalog;
mod column;
mod error;
mod eval;
mod literal;
mod plan;
mod query;
mod registry;
mod resume;
mod routes;
mod sql;
mod validate;
mod visibility;

pub use budget::{Budget, BudgetError};
pub use catalog::Catalog;
pub use error::QueryError;
pub use eval::Delta;
pub use query::{BoundQuery, Query};
pub use registry::{Deltas, Subscriptions};
pub use resume::{changes_since, changes_since_within};
pub use routes::QueryId;
pub use sql::{MAX_QUERY_LEN, MAX_QUERY_TOKENS};
pub use visibility::{RowFilter, VisibilityError};
