//! Index handles: lookups through unique columns and btree indexes.

use super::scan::encode_key_scan;
use super::scratch::with_scratch;
use super::{host_failed, IndexScan, InsertError, KeyArg, RowIter, TableRow};
use crate::db::{Access, ReadWrite};
use crate::sys;
use core::marker::PhantomData;

/// The marker of a handle to rows `T` keyed by `K` with access `A`: covariant, `Send` and
/// `Sync` whatever the types, since a handle holds no values.
type Marker<T, K, A> = PhantomData<(fn() -> T, fn() -> K, A)>;

/// A unique column (or the primary key) of the table of rows `T`, of type `K`.
///
/// Obtained from a generated table handle, named after the column: `ctx.db.user().name()`.
pub struct UniqueColumn<T, K, A> {
    index: u32,
    marker: Marker<T, K, A>,
}

impl<T: TableRow, K, A: Access> UniqueColumn<T, K, A> {
    #[doc(hidden)]
    pub const fn __new(index: u32) -> Self {
        Self {
            index,
            marker: PhantomData,
        }
    }

    /// The row whose column equals `key`, if any.
    pub fn find(&self, key: impl KeyArg<K>) -> Option<T> {
        let handle = with_scratch(|scan| {
            encode_key_scan(&key, scan);
            sys::index_scan(T::table_id(), self.index, scan)
        });
        RowIter::<T>::open(T::TABLE_NAME, handle).next()
    }
}

impl<T: TableRow, K> UniqueColumn<T, K, ReadWrite> {
    /// Deletes the row whose column equals `key`; returns whether there was one.
    pub fn delete(&self, key: impl KeyArg<K>) -> bool {
        let deleted = with_scratch(|scan| {
            encode_key_scan(&key, scan);
            sys::delete_by_index_scan(T::table_id(), self.index, scan)
        });
        deleted.unwrap_or_else(|errno| host_failed(T::TABLE_NAME, errno)) > 0
    }

    /// Replaces the row that has the same value in this column as `row`, and returns `row`.
    ///
    /// # Panics
    ///
    /// If no row has that value, or the new row clashes with another on a unique column
    /// (which rolls the call back). Use [`try_update`](Self::try_update) to handle those.
    pub fn update(&self, row: T) -> T {
        self.try_update(row)
            .unwrap_or_else(|error| panic!("{error}"))
    }

    /// Replaces the row that has the same value in this column as `row`, and returns `row`.
    pub fn try_update(&self, row: T) -> Result<T, InsertError> {
        let updated = with_scratch(|bytes| {
            row.encode(bytes);
            sys::update_by_unique(T::table_id(), self.index, bytes)
        });
        match updated {
            Ok(()) => Ok(row),
            Err(errno) => Err(InsertError::new(T::TABLE_NAME, errno)),
        }
    }
}

/// A btree index of the table of rows `T`, over columns of types `Cols` (a tuple).
///
/// Obtained from a generated table handle: `ctx.db.message().sender()` for a column index, or
/// the index's name for a multi-column one.
pub struct BTreeIndex<T, Cols, A> {
    index: u32,
    marker: Marker<T, Cols, A>,
}

impl<T: TableRow, Cols, A: Access> BTreeIndex<T, Cols, A> {
    #[doc(hidden)]
    pub const fn __new(index: u32) -> Self {
        Self {
            index,
            marker: PhantomData,
        }
    }

    /// The rows the scan selects, in index order: see [`IndexScan`] for what it can be.
    pub fn filter(&self, scan: impl IndexScan<Cols>) -> RowIter<T> {
        let handle = with_scratch(|bytes| {
            scan.encode_scan(bytes);
            sys::index_scan(T::table_id(), self.index, bytes)
        });
        RowIter::open(T::TABLE_NAME, handle)
    }
}

impl<T: TableRow, Cols> BTreeIndex<T, Cols, ReadWrite> {
    /// Deletes the rows the scan selects; returns how many.
    pub fn delete(&self, scan: impl IndexScan<Cols>) -> u32 {
        let deleted = with_scratch(|bytes| {
            scan.encode_scan(bytes);
            sys::delete_by_index_scan(T::table_id(), self.index, bytes)
        });
        deleted.unwrap_or_else(|errno| host_failed(T::TABLE_NAME, errno))
    }
}
