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
/// Keys are passed by value or by reference (`&str` for a `String` column).
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
/// let by_sku = module.read(|db| db.item().sku().find("nut"));
/// let by_id = module.read(|db| db.item().id().find(1u64));
/// assert_eq!(by_sku, by_id);
/// ```
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
    /// assert_eq!(module.read(|db| db.item().sku().find("nut")).map(|item| item.price), Some(5));
    /// assert_eq!(module.read(|db| db.item().sku().find("bolt")), None);
    /// ```
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
    /// assert!(module.write(|db| db.item().sku().delete("nut")));
    /// assert!(!module.write(|db| db.item().sku().delete("nut")));
    /// ```
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
    /// If [`try_update`](Self::try_update) fails: no row has that value, or the new row
    /// clashes with another on a unique column (the panic rolls the call back). Use
    /// `try_update` to handle those.
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
    ///     db.item().sku().update(Item { price: 6, ..nut });
    /// });
    /// assert_eq!(module.read(|db| db.item().sku().find("nut")).map(|item| item.price), Some(6));
    /// ```
    pub fn update(&self, row: T) -> T {
        self.try_update(row)
            .unwrap_or_else(|error| panic!("{error}"))
    }

    /// Replaces the row that has the same value in this column as `row`, and returns `row`.
    ///
    /// # Errors
    ///
    /// [`InsertError::NoSuchRow`] if no row has `row`'s value in this column;
    /// [`InsertError::UniqueViolation`] if the new row clashes with another row on another
    /// unique column (naming the table, not the column). Nothing was written in either case.
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
    ///     let nut = db.item().insert(Item { id: 0, sku: "nut".into(), price: 5 });
    ///     db.item().insert(Item { id: 0, sku: "bolt".into(), price: 9 });
    ///     let renamed = db.item().id().try_update(Item { sku: "bolt".into(), ..nut.clone() });
    ///     assert_eq!(renamed, Err(InsertError::UniqueViolation { table: "item" }));
    ///     let missing = db.item().sku().try_update(Item { sku: "washer".into(), ..nut });
    ///     assert_eq!(missing, Err(InsertError::NoSuchRow { table: "item" }));
    /// });
    /// ```
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
/// the index's name for a multi-column one, declared on the table:
/// `#[table(index(name = by_shelf, columns(aisle, shelf)))]` gives `ctx.db.item().by_shelf()`.
///
/// ```
/// use wasmod_testing::TestModule;
///
/// #[wasmod::module]
/// mod store {
///     #[wasmod::table(index(name = by_shelf, columns(aisle, shelf)))]
///     pub struct Slot {
///         #[primary_key]
///         pub sku: String,
///         pub aisle: u8,
///         pub shelf: u8,
///     }
/// }
/// use store::{Slot, SlotAccess};
///
/// let module = TestModule::<store::Module>::new();
/// module.write(|db| {
///     db.slot().insert(Slot { sku: "nut".into(), aisle: 1, shelf: 2 });
///     db.slot().insert(Slot { sku: "bolt".into(), aisle: 1, shelf: 3 });
///     db.slot().insert(Slot { sku: "nail".into(), aisle: 2, shelf: 1 });
/// });
/// let skus = |scan: (u8, u8)| -> Vec<String> {
///     module.read(|db| db.slot().by_shelf().filter(scan).map(|slot| slot.sku).collect())
/// };
/// assert_eq!(skus((1, 3)), ["bolt"]);
/// let aisle_one: Vec<String> =
///     module.read(|db| db.slot().by_shelf().filter((1u8,)).map(|slot| slot.sku).collect());
/// assert_eq!(aisle_one, ["nut", "bolt"]);
/// let from_aisle_two = module.read(|db| db.slot().by_shelf().filter(2u8..).count());
/// assert_eq!(from_aisle_two, 1);
/// ```
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

    /// The rows the scan selects, in index order: see [`IndexScan`] for what it can be (a
    /// key, a range, a prefix of the columns, or `..` for every row).
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
    ///     for (sku, price) in [("nut", 5), ("bolt", 9), ("nail", 2), ("washer", 5)] {
    ///         db.item().insert(Item { id: 0, sku: sku.into(), price });
    ///     }
    /// });
    /// let skus = |prices: std::ops::Range<u32>| -> Vec<String> {
    ///     module.read(|db| db.item().price().filter(prices).map(|item| item.sku).collect())
    /// };
    /// assert_eq!(skus(2..6), ["nail", "nut", "washer"]);
    /// assert_eq!(module.read(|db| db.item().price().filter(5u32).count()), 2);
    /// let cheapest = module.read(|db| db.item().price().filter(..).next());
    /// assert_eq!(cheapest.map(|item| item.sku), Some("nail".to_string()));
    /// ```
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
    ///     for (sku, price) in [("nut", 5), ("bolt", 9), ("nail", 2)] {
    ///         db.item().insert(Item { id: 0, sku: sku.into(), price });
    ///     }
    /// });
    /// assert_eq!(module.write(|db| db.item().price().delete(..6)), 2);
    /// assert_eq!(module.read(|db| db.item().count()), 1);
    /// ```
    pub fn delete(&self, scan: impl IndexScan<Cols>) -> u32 {
        let deleted = with_scratch(|bytes| {
            scan.encode_scan(bytes);
            sys::delete_by_index_scan(T::table_id(), self.index, bytes)
        });
        deleted.unwrap_or_else(|errno| host_failed(T::TABLE_NAME, errno))
    }
}
