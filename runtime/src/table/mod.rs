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
use crate::registered::Registered;
use crate::{sys, Decode, Errno, SchemaType};
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
/// operations every table has; the generated handle adds one accessor per index, named after
/// its column (or the index's name for a multi-column one): a [`UniqueColumn`] for the primary
/// key and `#[unique]` columns, a [`BTreeIndex`] for `#[index(btree)]` ones. With
/// [`ReadOnly`](crate::ReadOnly) access (views) only the reading methods exist.
///
/// The examples of its methods use this table, written through
/// `wasmod_testing::TestModule::write`, whose `db` is the one a reducer's
/// `ctx.db` is:
///
/// ```
/// use wasmod::prelude::*;
/// use wasmod_testing::TestModule;
///
/// #[wasmod::module]
/// mod shop {
///     #[wasmod::table]
///     #[derive(Clone, Debug, PartialEq)]
///     pub struct Item {
///         #[primary_key]
///         #[auto_inc]
///         pub id: u64,
///         #[unique]
///         pub sku: String,
///         #[index(btree)]
///         pub price: u32,
///     }
/// }
/// use shop::{Item, ItemAccess};
///
/// let module = TestModule::<shop::Module>::new();
/// let nut = module.write(|db| db.item().insert(Item { id: 0, sku: "nut".into(), price: 5 }));
/// assert_eq!(nut.id, 1);
/// assert_eq!(module.read(|db| db.item().sku().find("nut")), Some(nut));
/// ```
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
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::TestModule;
    /// # #[wasmod::module]
    /// # mod shop {
    /// #     #[wasmod::table]
    /// #     #[derive(Clone, Debug, PartialEq)]
    /// #     pub struct Item {
    /// #         #[primary_key]
    /// #         #[auto_inc]
    /// #         pub id: u64,
    /// #         #[unique]
    /// #         pub sku: String,
    /// #         #[index(btree)]
    /// #         pub price: u32,
    /// #     }
    /// # }
    /// # use shop::{Item, ItemAccess};
    /// # let module = TestModule::<shop::Module>::new();
    /// module.write(|db| db.item().insert(Item { id: 0, sku: "nut".into(), price: 5 }));
    /// assert_eq!(module.read(|db| db.item().count()), 1);
    /// ```
    pub fn count(&self) -> u64 {
        sys::table_row_count(T::table_id())
            .unwrap_or_else(|errno| host_failed(T::TABLE_NAME, errno))
    }

    /// Every row, in no particular order.
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::TestModule;
    /// # #[wasmod::module]
    /// # mod shop {
    /// #     #[wasmod::table]
    /// #     #[derive(Clone, Debug, PartialEq)]
    /// #     pub struct Item {
    /// #         #[primary_key]
    /// #         #[auto_inc]
    /// #         pub id: u64,
    /// #         #[unique]
    /// #         pub sku: String,
    /// #         #[index(btree)]
    /// #         pub price: u32,
    /// #     }
    /// # }
    /// # use shop::{Item, ItemAccess};
    /// # let module = TestModule::<shop::Module>::new();
    /// module.write(|db| {
    ///     db.item().insert(Item { id: 0, sku: "nut".into(), price: 5 });
    ///     db.item().insert(Item { id: 0, sku: "bolt".into(), price: 9 });
    /// });
    /// let total: u32 = module.read(|db| db.item().iter().map(|item| item.price).sum());
    /// assert_eq!(total, 14);
    /// ```
    pub fn iter(&self) -> RowIter<T> {
        RowIter::open(T::TABLE_NAME, sys::table_scan(T::table_id()))
    }
}

impl<T: TableRow> Table<T, ReadWrite> {
    /// Inserts `row` and returns it as stored, with auto-increment columns filled in.
    ///
    /// # Panics
    ///
    /// If [`try_insert`](Self::try_insert) fails: the row clashes with another on a unique
    /// column or the primary key, or a sequence is exhausted. The panic rolls the whole call
    /// back (a reducer's transaction, or a procedure's current one); use `try_insert` to
    /// handle the clash instead.
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::TestModule;
    /// # #[wasmod::module]
    /// # mod shop {
    /// #     #[wasmod::table]
    /// #     #[derive(Clone, Debug, PartialEq)]
    /// #     pub struct Item {
    /// #         #[primary_key]
    /// #         #[auto_inc]
    /// #         pub id: u64,
    /// #         #[unique]
    /// #         pub sku: String,
    /// #         #[index(btree)]
    /// #         pub price: u32,
    /// #     }
    /// # }
    /// # use shop::{Item, ItemAccess};
    /// # let module = TestModule::<shop::Module>::new();
    /// let nut = module.write(|db| db.item().insert(Item { id: 0, sku: "nut".into(), price: 5 }));
    /// assert_eq!((nut.id, nut.sku.as_str()), (1, "nut"));
    /// ```
    pub fn insert(&self, row: T) -> T {
        self.try_insert(row)
            .unwrap_or_else(|error| panic!("{error}"))
    }

    /// Inserts `row` and returns it as stored, with auto-increment columns filled in.
    ///
    /// Inserting a row equal to one the table has (every column the same) is not a clash:
    /// nothing changes and the row is returned. An auto-increment column given as `0` gets
    /// the sequence's next value; any other value is stored as given.
    ///
    /// # Errors
    ///
    /// - [`InsertError::UniqueViolation`] if another row has the same value in the primary key
    ///   or a `#[unique]` column. It names the table, not which of its unique indexes clashed
    ///   (the host logs that, with the key, at debug level under the target `wasmod::host`).
    ///   Nothing was written, and the transaction goes on: the caller decides.
    /// - [`InsertError::SequenceExhausted`] if an auto-increment column has no values left.
    /// - [`InsertError::Host`] for a refusal that only a bug explains.
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::TestModule;
    /// # #[wasmod::module]
    /// # mod shop {
    /// #     #[wasmod::table]
    /// #     #[derive(Clone, Debug, PartialEq)]
    /// #     pub struct Item {
    /// #         #[primary_key]
    /// #         #[auto_inc]
    /// #         pub id: u64,
    /// #         #[unique]
    /// #         pub sku: String,
    /// #         #[index(btree)]
    /// #         pub price: u32,
    /// #     }
    /// # }
    /// # use shop::{Item, ItemAccess};
    /// # let module = TestModule::<shop::Module>::new();
    /// use wasmod::InsertError;
    ///
    /// module.write(|db| {
    ///     let nut = db.item().try_insert(Item { id: 0, sku: "nut".into(), price: 5 });
    ///     assert_eq!(nut.map(|item| item.id), Ok(1));
    ///     let again = db.item().try_insert(Item { id: 0, sku: "nut".into(), price: 7 });
    ///     assert_eq!(again, Err(InsertError::UniqueViolation { table: "item" }));
    ///     let same = db.item().try_insert(Item { id: 1, sku: "nut".into(), price: 5 });
    ///     assert!(same.is_ok(), "an equal row is not a clash");
    /// });
    /// assert_eq!(module.read(|db| db.item().count()), 1);
    /// ```
    pub fn try_insert(&self, row: T) -> Result<T, InsertError> {
        with_scratch(|bytes| {
            row.encode(bytes);
            match sys::insert(T::table_id(), bytes) {
                Ok(()) if !T::HAS_AUTO_INC => Ok(row),
                Ok(()) => Ok(decode_row(T::TABLE_NAME, bytes)),
                Err(errno) => Err(InsertError::new(T::TABLE_NAME, errno)),
            }
        })
    }

    /// Deletes the row equal to `row` (every column the same); returns whether there was one.
    /// To delete by key, use the key's [`UniqueColumn::delete`].
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::TestModule;
    /// # #[wasmod::module]
    /// # mod shop {
    /// #     #[wasmod::table]
    /// #     #[derive(Clone, Debug, PartialEq)]
    /// #     pub struct Item {
    /// #         #[primary_key]
    /// #         #[auto_inc]
    /// #         pub id: u64,
    /// #         #[unique]
    /// #         pub sku: String,
    /// #         #[index(btree)]
    /// #         pub price: u32,
    /// #     }
    /// # }
    /// # use shop::{Item, ItemAccess};
    /// # let module = TestModule::<shop::Module>::new();
    /// module.write(|db| {
    ///     let nut = db.item().insert(Item { id: 0, sku: "nut".into(), price: 5 });
    ///     assert!(!db.item().delete(&Item { price: 6, ..nut.clone() }));
    ///     assert!(db.item().delete(&nut));
    /// });
    /// assert_eq!(module.read(|db| db.item().count()), 0);
    /// ```
    pub fn delete(&self, row: &T) -> bool {
        let deleted = with_scratch(|bytes| {
            row.encode(bytes);
            sys::delete_rows(T::table_id(), bytes)
        });
        deleted.unwrap_or_else(|errno| host_failed(T::TABLE_NAME, errno)) > 0
    }

    /// Deletes every row; returns how many there were.
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::TestModule;
    /// # #[wasmod::module]
    /// # mod shop {
    /// #     #[wasmod::table]
    /// #     #[derive(Clone, Debug, PartialEq)]
    /// #     pub struct Item {
    /// #         #[primary_key]
    /// #         #[auto_inc]
    /// #         pub id: u64,
    /// #         #[unique]
    /// #         pub sku: String,
    /// #         #[index(btree)]
    /// #         pub price: u32,
    /// #     }
    /// # }
    /// # use shop::{Item, ItemAccess};
    /// # let module = TestModule::<shop::Module>::new();
    /// module.write(|db| {
    ///     db.item().insert(Item { id: 0, sku: "nut".into(), price: 5 });
    ///     db.item().insert(Item { id: 0, sku: "bolt".into(), price: 9 });
    /// });
    /// assert_eq!(module.write(|db| db.item().clear()), 2);
    /// ```
    pub fn clear(&self) -> u64 {
        sys::clear_table(T::table_id()).unwrap_or_else(|errno| host_failed(T::TABLE_NAME, errno))
    }
}

/// Why an insert or an update did not happen: what [`Table::try_insert`] and
/// [`UniqueColumn::try_update`] return (their examples show it). Each variant names the table;
/// none names the index.
///
/// ```
/// use wasmod::InsertError;
///
/// let clash = InsertError::UniqueViolation { table: "item" };
/// assert_eq!(clash.to_string(), "table `item`: another row has the same unique key");
/// ```
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

/// Decodes a row the host wrote back.
pub(crate) fn decode_row<T: Decode>(table: &'static str, bytes: &[u8]) -> T {
    wasmod_abi::encoding::from_slice(bytes).unwrap_or_else(|error| bad_row(table, error))
}

/// A row from the host did not decode: the host and the module disagree on the table's type.
#[cold]
#[inline(never)]
pub(crate) fn bad_row(table: &str, error: wasmod_abi::DecodeError) -> ! {
    panic!("table `{table}`: a row from the host did not decode: {error}")
}
