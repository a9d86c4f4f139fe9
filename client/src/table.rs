//! Tables as the application sees them: typed reads of the cache and row callbacks.
//!
//! The cache holds encoded rows; a [`TableHandle`] decodes them into the application's row
//! type when it reads them or calls a callback. Callbacks are kept per table as functions of
//! the encoded rows ([`Listeners`]), so the connection task dispatches a transaction's events
//! without knowing any row type.
//!
//! Callbacks run on the connection task (or, for a client built with
//! [`Callbacks::OnFrameTick`](crate::Callbacks::OnFrameTick), in the application's
//! `frame_tick`), one transaction's after another: a callback that blocks holds up the
//! connection, and a callback must not register or remove callbacks itself (the registry is
//! locked while they run). Each registration returns a [`CallbackId`], which
//! [`TableHandle::remove_callback`] takes. They may read the cache through any handle.
//!
//! Rows are also found by a column's value ([`TableHandle::find_by`],
//! [`TableHandle::filter_by`]): the column is read from each row's encoding as a primary key
//! is, and compared as bytes, so that neither the value nor the row type needs `Eq`. The cache
//! indexes a column the first time it is looked up, and keeps the index from then on.

use crate::cache::{Cache, PrimaryKey, TableEvents};
use crate::sync::{Mutex, RwLock, RwLockWriteGuard};
use crate::Error;
use crate::HashMap;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use wasmod_abi::encoding::{from_slice, to_vec};
use wasmod_abi::{Decode, Encode, SchemaType, Typespace};

/// A callback of one row.
pub(crate) type RowCallback = Box<dyn FnMut(&[u8]) + Send>;

/// A callback of a row replaced by another: `(old, new)`.
type UpdateCallback = Box<dyn FnMut(&[u8], &[u8]) + Send>;

/// A row callback registered on a [`TableHandle`], to remove it with
/// [`TableHandle::remove_callback`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CallbackId(u64);

/// One table's callbacks, each with its id.
#[derive(Default)]
struct TableListeners {
    inserts: Vec<(CallbackId, RowCallback)>,
    deletes: Vec<(CallbackId, RowCallback)>,
    updates: Vec<(CallbackId, UpdateCallback)>,
}

/// Every table's callbacks.
#[derive(Default)]
pub(crate) struct Listeners {
    tables: Mutex<HashMap<String, TableListeners>>,
    /// The next callback's id.
    next_id: AtomicU64,
}

impl Listeners {
    /// Calls the callbacks of `events`: per table, deletes, then updates, then inserts.
    ///
    /// Called with no lock on the cache held, so callbacks may read it.
    pub(crate) fn dispatch(&self, events: &[TableEvents]) {
        let mut tables = self.tables.lock();
        for table_events in events {
            let Some(listeners) = tables.get_mut(&table_events.table) else {
                continue;
            };
            for row in &table_events.deletes {
                listeners
                    .deletes
                    .iter_mut()
                    .for_each(|(_, callback)| callback(row));
            }
            for (old, new) in &table_events.updates {
                listeners
                    .updates
                    .iter_mut()
                    .for_each(|(_, callback)| callback(old, new));
            }
            for row in &table_events.inserts {
                listeners
                    .inserts
                    .iter_mut()
                    .for_each(|(_, callback)| callback(row));
            }
        }
    }

    /// Registers a callback of `table` through `register`, under a new id, and returns the id.
    fn register(
        &self,
        table: &str,
        register: impl FnOnce(&mut TableListeners, CallbackId),
    ) -> CallbackId {
        let id = CallbackId(self.next_id.fetch_add(1, Ordering::Relaxed));
        register(self.tables.lock().entry(table.to_owned()).or_default(), id);
        id
    }

    /// Removes callback `id` of `table`; whether it was registered.
    fn remove(&self, table: &str, id: CallbackId) -> bool {
        let mut tables = self.tables.lock();
        let Some(listeners) = tables.get_mut(table) else {
            return false;
        };
        let before = listeners.inserts.len() + listeners.deletes.len() + listeners.updates.len();
        listeners.inserts.retain(|(of, _)| *of != id);
        listeners.deletes.retain(|(of, _)| *of != id);
        listeners.updates.retain(|(of, _)| *of != id);
        before != listeners.inserts.len() + listeners.deletes.len() + listeners.updates.len()
    }

    /// Registers a callback of `table`'s encoded rows (the browser client converts them to
    /// JavaScript itself).
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn listen(&self, table: &str, listener: RawListener) {
        self.register(table, |listeners, id| match listener {
            RawListener::Insert(callback) => listeners.inserts.push((id, callback)),
            RawListener::Delete(callback) => listeners.deletes.push((id, callback)),
            RawListener::Update(callback) => listeners.updates.push((id, callback)),
        });
    }
}

/// A callback of encoded rows, of one kind of event.
#[cfg(target_arch = "wasm32")]
pub(crate) enum RawListener {
    /// Of each row that enters the cache.
    Insert(RowCallback),
    /// Of each row that leaves it.
    Delete(RowCallback),
    /// Of each row replaced by another with the same primary key: `(old, new)`.
    Update(UpdateCallback),
}

/// One table of the cache, read as rows of type `T`. Cheap to clone.
pub struct TableHandle<T> {
    name: Arc<str>,
    cache: Arc<RwLock<Cache>>,
    listeners: Arc<Listeners>,
    row: PhantomData<fn() -> T>,
}

impl<T> Clone for TableHandle<T> {
    fn clone(&self) -> Self {
        Self {
            name: self.name.clone(),
            cache: self.cache.clone(),
            listeners: self.listeners.clone(),
            row: PhantomData,
        }
    }
}

impl<T: Decode + 'static> TableHandle<T> {
    pub(crate) fn new(name: &str, cache: Arc<RwLock<Cache>>, listeners: Arc<Listeners>) -> Self {
        Self {
            name: name.into(),
            cache,
            listeners,
            row: PhantomData,
        }
    }

    /// The table's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many rows the cache holds for the table.
    pub fn count(&self) -> usize {
        self.cache.read().count(&self.name)
    }

    /// The table's rows in the cache, decoded (in no particular order); an error if one does
    /// not decode as `T`.
    pub fn rows(&self) -> Result<Vec<T>, Error> {
        decoded(self.cache.read().rows(&self.name))
    }

    /// Calls `callback` with each row that enters the cache, after the transaction that
    /// brought it is applied; returns its id, to remove it.
    pub fn on_insert(&self, mut callback: impl FnMut(&T) + Send + 'static) -> CallbackId {
        let name = self.name.clone();
        self.listeners.register(&self.name, |listeners, id| {
            let callback: RowCallback = Box::new(move |row| with_row(&name, row, &mut callback));
            listeners.inserts.push((id, callback));
        })
    }

    /// Calls `callback` with each row that leaves the cache; returns its id, to remove it.
    pub fn on_delete(&self, mut callback: impl FnMut(&T) + Send + 'static) -> CallbackId {
        let name = self.name.clone();
        self.listeners.register(&self.name, |listeners, id| {
            let callback: RowCallback = Box::new(move |row| with_row(&name, row, &mut callback));
            listeners.deletes.push((id, callback));
        })
    }

    /// Calls `callback` with `(old, new)` for each row replaced by another with the same
    /// primary key in one transaction. Only tables whose primary key the client knows (see
    /// [`ClientBuilder::table`](crate::ClientBuilder::table)) have updates; in others a
    /// replaced row is a delete and an insert. Returns its id, to remove it.
    pub fn on_update(&self, mut callback: impl FnMut(&T, &T) + Send + 'static) -> CallbackId {
        let name = self.name.clone();
        self.listeners.register(&self.name, |listeners, id| {
            let callback: UpdateCallback =
                Box::new(
                    move |old, new| match (from_slice::<T>(old), from_slice::<T>(new)) {
                        (Ok(old), Ok(new)) => callback(&old, &new),
                        (Err(error), _) | (_, Err(error)) => {
                            tracing::warn!(table = %name, %error, "a row that does not decode");
                        }
                    },
                );
            listeners.updates.push((id, callback));
        })
    }

    /// Removes the callback `id` of this table (from [`on_insert`](Self::on_insert),
    /// [`on_delete`](Self::on_delete) or [`on_update`](Self::on_update)): it is not called
    /// again. Whether it was registered (`false` for one removed already, or another table's).
    /// Like registering, not from within a callback (the registry is locked while they run).
    pub fn remove_callback(&self, id: CallbackId) -> bool {
        self.listeners.remove(&self.name, id)
    }
}

impl<T: SchemaType + 'static> TableHandle<T> {
    /// The row whose column `column` equals `value` (a unique column's, for at most one), if
    /// the cache holds one. `value` may be any type with the column's encoding (`&str` for a
    /// `String`). An error if `T` has no such column or a row does not decode as `T`.
    pub fn find_by<V: Encode + ?Sized>(&self, column: &str, value: &V) -> Result<Option<T>, Error> {
        Ok(self.matching(column, value, 1)?.pop())
    }

    /// The rows whose column `column` equals `value`, in no particular order; errors as
    /// [`find_by`](Self::find_by)'s.
    pub fn filter_by<V: Encode + ?Sized>(&self, column: &str, value: &V) -> Result<Vec<T>, Error> {
        self.matching(column, value, usize::MAX)
    }

    /// Up to `limit` rows whose `column` is encoded as `value` is (the encoding is canonical,
    /// so equal values have equal bytes), found through the column's index in the cache; the
    /// first look-up of a column indexes it.
    fn matching<V: Encode + ?Sized>(
        &self,
        column: &str,
        value: &V,
        limit: usize,
    ) -> Result<Vec<T>, Error> {
        let wanted = to_vec(value);
        {
            let cache = self.cache.read();
            if let Some(rows) = cache.find_indexed(&self.name, column, &wanted) {
                return decoded(rows.take(limit));
            };
        }
        let reader = self.column_reader(column)?;
        let mut cache = self.cache.write();
        cache.index_column(&self.name, column, reader);
        let cache = RwLockWriteGuard::downgrade(cache);
        let rows = cache.find_indexed(&self.name, column, &wanted);
        decoded(rows.into_iter().flatten().take(limit))
    }

    /// What finds column `column` in the encoding of `T`s.
    fn column_reader(&self, column: &str) -> Result<PrimaryKey, Error> {
        let mut typespace = Typespace::default();
        let row_type = T::schema(&mut typespace);
        PrimaryKey::named(&row_type, typespace, column).ok_or_else(|| Error::NoSuchColumn {
            table: self.name.to_string(),
            column: column.to_owned(),
        })
    }
}

/// `rows` decoded; an error if one does not decode as `T`.
fn decoded<'r, T: Decode>(rows: impl Iterator<Item = &'r [u8]>) -> Result<Vec<T>, Error> {
    rows.map(|row| from_slice(row).map_err(Error::from))
        .collect()
}

/// Calls `callback` with `row` decoded; a row that does not decode is logged and skipped.
fn with_row<T: Decode>(table: &str, row: &[u8], callback: &mut impl FnMut(&T)) {
    match from_slice::<T>(row) {
        Ok(row) => callback(&row),
        Err(error) => tracing::warn!(table, %error, "a row that does not decode"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Events of `table`: `inserts` rows inserted, and one `(1, "old")` → `(1, "new")` update.
    fn events(table: &str, inserts: usize) -> Vec<TableEvents> {
        let row = |id: u32, name: &str| -> Arc<[u8]> { to_vec(&(id, name.to_owned())).into() };
        vec![TableEvents {
            table: table.to_owned(),
            inserts: (0..inserts as u32).map(|id| row(id, "x")).collect(),
            deletes: Vec::new(),
            updates: vec![(row(1, "old"), row(1, "new"))],
        }]
    }

    /// A counter, and a callback that adds one to it.
    fn counter() -> (
        Arc<AtomicUsize>,
        impl FnMut(&(u32, String)) + Send + 'static,
    ) {
        let count = Arc::new(AtomicUsize::new(0));
        let counted = count.clone();
        (count, move |_: &(u32, String)| {
            counted.fetch_add(1, Ordering::Relaxed);
        })
    }

    #[test]
    fn a_removed_callback_is_not_called_again_and_the_others_are() {
        let listeners = Arc::new(Listeners::default());
        let cache = Arc::new(RwLock::new(Cache::new()));
        let handle = TableHandle::<(u32, String)>::new("t", cache.clone(), listeners.clone());
        let other = TableHandle::<(u32, String)>::new("u", cache, listeners.clone());
        let (kept, keep) = counter();
        let (removed, remove) = counter();
        let updates = Arc::new(AtomicUsize::new(0));
        let updated = updates.clone();
        handle.on_insert(keep);
        let id = handle.on_insert(remove);
        let update = handle.on_update(move |old, new| {
            assert_eq!((old.1.as_str(), new.1.as_str()), ("old", "new"));
            updated.fetch_add(1, Ordering::Relaxed);
        });
        assert_ne!(id, update, "ids are unique");
        listeners.dispatch(&events("t", 3));
        assert_eq!(kept.load(Ordering::Relaxed), 3);
        assert_eq!(removed.load(Ordering::Relaxed), 3);
        assert_eq!(updates.load(Ordering::Relaxed), 1);

        assert!(
            !other.remove_callback(id),
            "another table's handle does not remove it"
        );
        assert!(handle.remove_callback(id));
        assert!(!handle.remove_callback(id), "removed already");
        assert!(handle.remove_callback(update));
        listeners.dispatch(&events("t", 2));
        assert_eq!(kept.load(Ordering::Relaxed), 5, "still called");
        assert_eq!(removed.load(Ordering::Relaxed), 3, "not called again");
        assert_eq!(updates.load(Ordering::Relaxed), 1, "not called again");
    }
}
