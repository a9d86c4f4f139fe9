//! What can go wrong with a query: one typed error, whose message a client can be shown as is.

use std::fmt;

/// Why a query was refused, or why evaluating it failed.
///
/// Every message names what is at fault (the construct, the table, the column, the literal),
/// so that the error can go back to the client that wrote the query unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueryError {
    /// The text is not SQL that `sqlparser` understands.
    Syntax(String),
    /// Valid SQL outside the subset: the construct, as in "GROUP BY" (the message reads
    /// "GROUP BY is not supported").
    Unsupported(String),
    /// No table of the module has this name.
    UnknownTable(String),
    /// The table exists but is private: only the module may read it.
    PrivateTable(String),
    /// A column that the table (or the query's tables) does not have.
    UnknownColumn {
        /// The column as written.
        column: String,
        /// The tables it was looked for in, as the query names them.
        tables: Vec<String>,
    },
    /// A column name that both tables of a join have, written without a table name.
    AmbiguousColumn(String),
    /// A qualifier (`x.column`, `x.*`) that names neither table of the query.
    UnknownQualifier(String),
    /// A literal that is not a value of its column's type (a string for a `u64`, `300` for a
    /// `u8`, `:sender` for a string column).
    Literal {
        /// The column compared with the literal.
        column: String,
        /// The column's type, as a person would write it.
        ty: String,
        /// What is wrong with the literal.
        problem: String,
    },
    /// A column whose type queries cannot compare (arrays, options, structs, enums).
    NotComparable {
        /// The column.
        column: String,
        /// Its type.
        ty: String,
    },
    /// The join's columns cannot join: one is not indexed, or their types differ.
    Join(String),
    /// The table shows each client its own rows (its visibility filter compares with
    /// `:sender`), and the reader has no identity to compare with.
    NeedsIdentity(String),
    /// A query checked against another module's tables was given to a registry.
    OtherModule,
    /// The datastore refused a read (the tables do not belong to the module the query was
    /// checked against).
    Datastore(String),
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Syntax(message) => write!(f, "the query is not valid SQL: {message}"),
            Self::Unsupported(what) => write!(f, "{what} is not supported"),
            Self::UnknownTable(table) => write!(f, "no table is named `{table}`"),
            Self::PrivateTable(table) => {
                write!(f, "table `{table}` is private: it cannot be queried")
            }
            Self::UnknownColumn { column, tables } => match tables.as_slice() {
                [one, other] => write!(
                    f,
                    "neither table `{one}` nor table `{other}` has a column `{column}`"
                ),
                tables => write!(
                    f,
                    "table `{}` has no column `{column}`",
                    tables.join("`, `")
                ),
            },
            Self::AmbiguousColumn(column) => write!(
                f,
                "column `{column}` is in both tables of the join: write it with its table's name"
            ),
            Self::UnknownQualifier(name) => {
                write!(f, "`{name}` names no table of the query")
            }
            Self::Literal {
                column,
                ty,
                problem,
            } => write!(f, "column `{column}` ({ty}): {problem}"),
            Self::NotComparable { column, ty } => write!(
                f,
                "column `{column}` has type {ty}, which queries cannot compare"
            ),
            Self::Join(message) => write!(f, "the join cannot be evaluated: {message}"),
            Self::NeedsIdentity(table) => write!(
                f,
                "table `{table}` shows each client only the rows it may see: read it as an \
                 identity (with a token)"
            ),
            Self::OtherModule => f.write_str(
                "the query was checked against another module's tables than the registry's",
            ),
            Self::Datastore(message) => write!(f, "the tables refused a read: {message}"),
        }
    }
}

impl std::error::Error for QueryError {}

impl QueryError {
    /// The error of a plan that names a table the tables at hand do not have.
    pub(crate) fn not_in_catalog() -> Self {
        Self::Datastore("the query names a table the module does not have".to_owned())
    }
}
