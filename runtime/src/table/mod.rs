//! Typed access to tables: handles, row iteration, and index lookups.
//!
//! A table handle is a zero-sized value: the table's id is a constant of its row type
//! ([`TableRow`]), fixed by the module-level macro, so every call names its table without a
//! lookup. Rows travel encoded; iteration fills one buffer with many rows per host call.

mod index;
mod iter;
mod scan;
mod scratch;

pub use index::{BTreeIndex, UniqueColumn};
pub use iter::RowIter;
pub use scan::{ColumnScan, IndexKey, IndexScan, KeyArg};

use crate::db::{Access, ReadWrite};
use crate::rt::Registered;
use crate::{sys, Errno, SchemaType};
use core::marker::PhantomData;
use scratch::with_scratch;
use wasmod_abi::{TableDef, Typespace};

/// A row type of a table. Implemented by `#[table]`.
pub trait TableRow: SchemaType + Registered + Sized + 'static {
    /// The table's name.
    const TABLE_NAME: &'static str;

    /// Whether the table has auto-increment columns, whose values the host writes into an
    /// inserted row: without them, an inserted row is stored exactly as given.
    #[doc(hidden)]
    const HAS_AUTO_INC: bool;

    /// The table's description.
    fn describe(typespace: &mut Typespace) -> TableDef;

    /// The table's id in its module.
    #[doc(hidden)]
    fn table_id() -> u32 {
        <Self as Registered>::ID
    }
}

/// A handle to the table of rows `T`, with access `A`.
///
/// Generated table handles (`ctx.db.message()`) dereference to this type, which holds the
/// operations every table has; the generated handle adds one accessor per index.
pub struct Table<T, A> {
    marker: PhantomData<(fn() -> T, A)>,
}

impl<T: TableRow, A: Access> Table<T, A> {
    #[doc(hidden)]
    pub const fn __new() -> Self {
        Self {
            marker: PhantomData,
        }
    }

    /// How many rows the table has.
    pub fn count(&self) -> u64 {
        sys::table_row_count(T::table_id())
            .unwrap_or_else(|errno| host_failed(T::TABLE_NAME, errno))
    }

    /// Every row, in no particular order.
    pub fn iter(&self) -> RowIter<T> {
        RowIter::open(T::TABLE_NAME, sys::table_scan(T::table_id()))
    }
}

impl<T: TableRow> Table<T, ReadWrite> {
    /// Inserts `row` and returns it as stored, with auto-increment columns filled in.
    ///
    /// # Panics
    ///
    /// If the row clashes with another on a unique column or the primary key (which rolls the
    /// whole call back). Use [`try_insert`](Self::try_insert) to handle that instead.
    pub fn insert(&self, row: T) -> T {
        self.try_insert(row)
            .unwrap_or_else(|error| panic!("{error}"))
    }

    /// Inserts `row` and returns it as stored, with auto-increment columns filled in.
    pub fn try_insert(&self, row: T) -> Result<T, InsertError> {
        with_scratch(|bytes| {
            row.encode(bytes);
            match sys::insert(T::table_id(), bytes) {
                Ok(()) if !T::HAS_AUTO_INC => Ok(row),
                Ok(()) => Ok(crate::rt::decode_row(T::TABLE_NAME, bytes)),
                Err(errno) => Err(InsertError::new(T::TABLE_NAME, errno)),
            }
        })
    }

    /// Deletes the rows equal to `row`; returns whether one was deleted.
    pub fn delete(&self, row: &T) -> bool {
        let deleted = with_scratch(|bytes| {
            row.encode(bytes);
            sys::delete_rows(T::table_id(), bytes)
        });
        deleted.unwrap_or_else(|errno| host_failed(T::TABLE_NAME, errno)) > 0
    }

    /// Deletes every row; returns how many there were.
    pub fn clear(&self) -> u64 {
        sys::clear_table(T::table_id()).unwrap_or_else(|errno| host_failed(T::TABLE_NAME, errno))
    }
}

/// Why an insert or an update did not happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum InsertError {
    /// Another row has the same value in a unique column or the primary key.
    UniqueViolation {
        /// The table.
        table: &'static str,
    },
    /// An update found no row with the row's key.
    NoSuchRow {
        /// The table.
        table: &'static str,
    },
    /// An auto-increment sequence has no values left.
    SequenceExhausted {
        /// The table.
        table: &'static str,
    },
    /// The host refused for another reason.
    Host {
        /// The table.
        table: &'static str,
        /// The host's error code.
        errno: Errno,
    },
}

impl InsertError {
    fn new(table: &'static str, errno: Errno) -> Self {
        match errno {
            Errno::UNIQUE_VIOLATION => Self::UniqueViolation { table },
            Errno::NO_SUCH_ROW => Self::NoSuchRow { table },
            Errno::SEQUENCE_EXHAUSTED => Self::SequenceExhausted { table },
            errno => Self::Host { table, errno },
        }
    }
}

impl core::fmt::Display for InsertError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::UniqueViolation { table } => {
                write!(f, "table `{table}`: another row has the same unique key")
            }
            Self::NoSuchRow { table } => write!(f, "table `{table}`: no row has this key"),
            Self::SequenceExhausted { table } => {
                write!(
                    f,
                    "table `{table}`: an auto-increment sequence is exhausted"
                )
            }
            Self::Host { table, errno } => write!(f, "table `{table}`: {errno}"),
        }
    }
}

impl std::error::Error for InsertError {}

/// A host call on a table failed in a way only a bug (in the host or the generated code)
/// explains: abort the call, which rolls it back.
#[cold]
#[inline(never)]
pub(crate) fn host_failed(table: &str, errno: Errno) -> ! {
    panic!("table `{table}`: the host refused an operation: {errno}")
}
