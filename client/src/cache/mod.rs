//! The client cache: the rows of every subscribed query set, each stored once.
//!
//! Rows are kept as their encoded bytes, so that user types need not be `Hash` or `Eq`: the
//! bytes are the identity of a row (the encoding is canonical). A row is held by as many
//! query sets (and queries within one) as select it; the cache keeps one shared copy and a
//! count, and a row leaves the cache only when its count falls to zero.
//!
//! Changes are applied a transaction at a time through a [`Batch`]: it remembers, for each
//! row it touches, whether the row was in the cache before, and [`Batch::finish`] compares
//! that with after. So a row deleted by one query set and inserted by another, or removed and
//! re-added when a query set's rows are replaced after a reconnect, is no change at all, and
//! the events are computed once the whole transaction is in: callbacks see a consistent
//! cache. For a table with a primary key, a deleted and an inserted row with the same key are
//! one update.
//!
//! A change hashes its row once ([`holdings`]): the table, the query set and the batch all
//! find the row by that hash.
//!
//! A column looked up by value (`find_by_<column>`) is indexed from its first look-up on
//! ([`index`]), and the index kept as rows enter and leave the table.

mod holdings;
mod index;
mod key;

use foldhash::fast::RandomState;
use holdings::{Holdings, RowHash};
use index::ColumnIndex;
use std::hash::BuildHasher;
use std::sync::Arc;

pub use key::PrimaryKey;

/// A row's encoding, shared by the cache's tables and query sets.
pub type RowBytes = Arc<[u8]>;

use crate::HashMap;

/// What one transaction changed in one table, once applied.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableEvents {
    /// The table's name.
    pub table: String,
    /// Rows that entered the cache.
    pub inserts: Vec<RowBytes>,
    /// Rows that left it.
    pub deletes: Vec<RowBytes>,
    /// Rows replaced by another with the same primary key: `(old, new)`.
    pub updates: Vec<(RowBytes, RowBytes)>,
}

impl TableEvents {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.inserts.is_empty() && self.deletes.is_empty() && self.updates.is_empty()
    }
}

/// One table's rows, each with how many holders (query sets' queries) select it.
#[derive(Debug, Default)]
struct TableRows {
    rows: Holdings,
    primary_key: Option<PrimaryKey>,
    /// The columns looked up so far, each indexed.
    indexes: Vec<ColumnIndex>,
}

impl TableRows {
    /// `row` entered the table: its indexes add it.
    fn entered(&mut self, hasher: &RandomState, row: &RowBytes) {
        for index in &mut self.indexes {
            index.insert(hasher, row);
        }
    }

    /// `row` left the table: its indexes drop it.
    fn left(&mut self, hasher: &RandomState, row: &RowBytes) {
        for index in &mut self.indexes {
            index.remove(hasher, row);
        }
    }

    /// Room for `additional` more rows, in the indexes too.
    fn reserve(&mut self, additional: usize) {
        self.rows.reserve(additional);
        for index in &mut self.indexes {
            index.reserve(additional);
        }
    }

    fn index(&self, column: &str) -> Option<&ColumnIndex> {
        self.indexes.iter().find(|index| index.column() == column)
    }
}

/// The rows one query set holds, per table, with their multiplicity.
type QuerySetRows = HashMap<String, Holdings>;

/// The rows of all subscribed query sets.
#[derive(Debug, Default)]
pub struct Cache {
    /// Hashes rows' bytes: one hash a row per change.
    hasher: RandomState,
    tables: HashMap<String, TableRows>,
    query_sets: HashMap<u32, QuerySetRows>,
}

impl Cache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares `table`'s primary key, so that its deletes and inserts of one key pair up as
    /// updates.
    pub fn set_primary_key(&mut self, table: &str, key: PrimaryKey) {
        self.tables.entry_ref(table).or_default().primary_key = Some(key);
    }

    /// The rows of `table`, each once, in no particular order.
    pub fn rows(&self, table: &str) -> impl Iterator<Item = &[u8]> + '_ {
        self.tables
            .get(table)
            .into_iter()
            .flat_map(|table| table.rows.iter().map(|held| &held.row[..]))
    }

    /// How many distinct rows `table` holds.
    pub fn count(&self, table: &str) -> usize {
        self.tables.get(table).map_or(0, |table| table.rows.len())
    }

    /// How many holders select `row` of `table` (0 if it is not in the cache).
    pub fn holders(&self, table: &str, row: &[u8]) -> usize {
        let hash = self.hash(row);
        self.tables
            .get(table)
            .and_then(|table| table.rows.get(hash, row))
            .map_or(0, |held| held.count)
    }

    /// Indexes `table`'s rows by their column `column`, whose encoding `reader` finds, unless
    /// it is indexed already; from then on the index is kept as rows enter and leave. The
    /// rows held now are read once.
    pub fn index_column(&mut self, table: &str, column: &str, reader: PrimaryKey) {
        let table = self.tables.entry_ref(table).or_default();
        if table.index(column).is_none() {
            let rows = table.rows.iter().map(|held| &held.row);
            let index = ColumnIndex::new(column, reader, &self.hasher, (rows, table.rows.len()));
            table.indexes.push(index);
        }
    }

    /// The rows of `table` whose column `column` is encoded as `key`, in no particular order,
    /// found through the column's index; `None` if the column is not indexed
    /// ([`Cache::index_column`]).
    pub fn find_indexed<'c>(
        &'c self,
        table: &str,
        column: &str,
        key: &'c [u8],
    ) -> Option<impl Iterator<Item = &'c [u8]> + 'c> {
        let index = self.tables.get(table)?.index(column)?;
        Some(index.find(&self.hasher, key))
    }

    /// Whether the cache holds the query set `query_set`.
    pub fn has_query_set(&self, query_set: u32) -> bool {
        self.query_sets.contains_key(&query_set)
    }

    /// Starts applying one transaction (or one subscription answer).
    pub fn batch(&mut self) -> Batch<'_> {
        Batch {
            cache: self,
            touched: Vec::new(),
        }
    }

    fn hash(&self, row: &[u8]) -> RowHash {
        self.hasher.hash_one(row)
    }
}

/// Changes being applied to a [`Cache`]; [`Batch::finish`] says what they changed.
pub struct Batch<'c> {
    cache: &'c mut Cache,
    /// Per table (in the order first touched), the rows touched.
    touched: Vec<(String, Touched)>,
}

/// The rows of one table a batch touched, in the order first touched, with whether each was
/// in the cache then.
///
/// While the batch only adds rows to the table (a subscription's rows, a transaction that
/// only inserts), the rows are only listed: a row added twice is listed twice, the second
/// time as present before, which [`Batch::finish`] reads as no change, and its first entry
/// says rightly whether it was in the cache before the batch. The first release of a row
/// makes the list a set (`seen`, each row once, its first entry kept), since from then on a
/// row's entries must agree on whether it left.
#[derive(Default)]
struct Touched {
    /// The rows, in the order first touched.
    order: Vec<Touch>,
    /// Once a row was released: indexes into `order`, found by the row's hash.
    seen: Option<hashbrown::HashTable<usize>>,
}

/// One row a batch touched.
struct Touch {
    hash: RowHash,
    row: RowBytes,
    /// Whether the row was in the cache before the batch.
    was_present: bool,
    /// Whether the batch released a holder of it: if not, it only added holders, so the row
    /// is in the cache at the end without looking.
    released: bool,
}

impl Touched {
    /// Room for `additional` more rows.
    fn reserve(&mut self, additional: usize) {
        let Self { order, seen } = self;
        order.reserve(additional);
        if let Some(seen) = seen {
            seen.reserve(additional, |&at| order[at].hash);
        }
    }

    /// Notes a change to `row`: whether it was in the cache before (kept from the first
    /// touch), and whether a holder was released.
    fn note(&mut self, hash: RowHash, row: RowBytes, was_present: bool, released: bool) {
        let touch = Touch {
            hash,
            row,
            was_present,
            released,
        };
        match &mut self.seen {
            None if !released => self.order.push(touch),
            None => {
                // The first release: the rows listed so far made a set, each row's first
                // entry kept (the later ones, all adds, say nothing more).
                let listed = std::mem::take(&mut self.order);
                self.order.reserve(listed.len() + 1);
                let seen = self
                    .seen
                    .insert(hashbrown::HashTable::with_capacity(listed.len() + 1));
                for touch in listed.into_iter().chain([touch]) {
                    merge(&mut self.order, seen, touch);
                }
            }
            Some(seen) => merge(&mut self.order, seen, touch),
        }
    }
}

/// Adds `touch` to the rows of `order` indexed by `seen`, or, if its row is there already,
/// adds its release to that entry.
fn merge(order: &mut Vec<Touch>, seen: &mut hashbrown::HashTable<usize>, touch: Touch) {
    match seen.entry(
        touch.hash,
        |&at| order[at].row == touch.row,
        |&at| order[at].hash,
    ) {
        hashbrown::hash_table::Entry::Vacant(vacant) => {
            vacant.insert(order.len());
            order.push(touch);
        }
        hashbrown::hash_table::Entry::Occupied(occupied) => {
            order[*occupied.get()].released |= touch.released;
        }
    }
}

/// What `touched` holds for `table`, added (empty) if the batch has not touched it yet.
fn touched_for<'t>(touched: &'t mut Vec<(String, Touched)>, table: &str) -> &'t mut Touched {
    let index = match touched.iter().position(|(name, _)| name == table) {
        Some(index) => index,
        None => {
            touched.push((table.to_owned(), Touched::default()));
            touched.len() - 1
        }
    };
    &mut touched[index].1
}

impl Batch<'_> {
    /// Query set `query_set` now selects `row` of `table` once more.
    pub fn insert(&mut self, query_set: u32, table: &str, row: &[u8]) {
        self.insert_all(query_set, table, [row]);
    }

    /// Makes room for `rows` more rows of `table` held by query set `query_set`, for rows
    /// that come in several lists (a subscription's parts): the tables then grow once, not
    /// once per list (each growth moves every row there and touches memory anew).
    pub fn reserve(&mut self, query_set: u32, table: &str, rows: usize) {
        self.room(query_set, table, rows);
    }

    /// What adding rows of `table` for `query_set` changes (the cache's hasher, the table,
    /// the query set's rows of it, the batch's record), with room made for `additional` rows.
    fn room(
        &mut self,
        query_set: u32,
        table: &str,
        additional: usize,
    ) -> (&RandomState, &mut TableRows, &mut Holdings, &mut Touched) {
        let Cache {
            hasher,
            tables,
            query_sets,
        } = &mut *self.cache;
        let table_rows = tables.entry_ref(table).or_default();
        let held = query_sets
            .entry(query_set)
            .or_default()
            .entry_ref(table)
            .or_default();
        let touched = touched_for(&mut self.touched, table);
        table_rows.reserve(additional);
        held.reserve(additional);
        touched.reserve(additional);
        (hasher, table_rows, held, touched)
    }

    /// Query set `query_set` now selects each of `rows` of `table` once more. The table is
    /// looked up once, and room made for as many rows as the iterator's size hint says.
    pub fn insert_all<'r>(
        &mut self,
        query_set: u32,
        table: &str,
        rows: impl IntoIterator<Item = &'r [u8]>,
    ) {
        let rows = rows.into_iter();
        let (hasher, table_rows, held, touched) = self.room(query_set, table, rows.size_hint().0);
        for row in rows {
            let hash = hasher.hash_one(row);
            let (shared, before) = table_rows.rows.add(hash, row, || RowBytes::from(row));
            if before == 0 {
                table_rows.entered(hasher, &shared);
            }
            held.add(hash, row, || shared.clone());
            touched.note(hash, shared, before > 0, false);
        }
    }

    /// Query set `query_set` selects `row` of `table` once less; a row it does not hold is
    /// ignored (the server never sends one).
    pub fn delete(&mut self, query_set: u32, table: &str, row: &[u8]) {
        self.delete_all(query_set, table, [row]);
    }

    /// Query set `query_set` selects each of `rows` of `table` once less; as
    /// [`Batch::delete`].
    pub fn delete_all<'r>(
        &mut self,
        query_set: u32,
        table: &str,
        rows: impl IntoIterator<Item = &'r [u8]>,
    ) {
        let Cache {
            hasher,
            tables,
            query_sets,
        } = &mut *self.cache;
        let Some(held) = query_sets
            .get_mut(&query_set)
            .and_then(|tables| tables.get_mut(table))
        else {
            return;
        };
        let Some(table_rows) = tables.get_mut(table) else {
            return;
        };
        let touched = touched_for(&mut self.touched, table);
        for row in rows {
            let hash = hasher.hash_one(row);
            if held.remove(hash, row, 1).is_some() {
                release(hasher, table_rows, touched, hash, row, 1);
            }
        }
    }

    /// Query set `query_set` now holds nothing: every row it held is released.
    pub fn clear_query_set(&mut self, query_set: u32) {
        let Cache {
            hasher,
            tables,
            query_sets,
        } = &mut *self.cache;
        let Some(query_set_tables) = query_sets.remove(&query_set) else {
            return;
        };
        for (table, mut held) in query_set_tables {
            let Some(table_rows) = tables.get_mut(&table) else {
                continue;
            };
            let touched = touched_for(&mut self.touched, &table);
            for held in held.drain() {
                release(
                    hasher,
                    table_rows,
                    touched,
                    held.hash(),
                    &held.row,
                    held.count,
                );
            }
        }
    }

    /// Marks query set `query_set` as subscribed, even if it selects no row yet.
    pub fn open_query_set(&mut self, query_set: u32) {
        self.cache.query_sets.entry(query_set).or_default();
    }

    /// Ends the batch: the rows that entered and left the cache, per table (only tables with
    /// a change), deletes and inserts of one primary key paired into updates.
    pub fn finish(self) -> Vec<TableEvents> {
        let mut events: Vec<TableEvents> = Vec::new();
        for (table, touched) in self.touched {
            let mut table_events = TableEvents {
                table,
                inserts: Vec::with_capacity(touched.order.len()),
                ..TableEvents::default()
            };
            let rows = self.cache.tables.get(&table_events.table);
            for touch in touched.order {
                let present = !touch.released
                    || rows.is_some_and(|rows| rows.rows.get(touch.hash, &touch.row).is_some());
                match (touch.was_present, present) {
                    (false, true) => table_events.inserts.push(touch.row),
                    (true, false) => table_events.deletes.push(touch.row),
                    _ => {}
                }
            }
            if let Some(key) = rows.and_then(|rows| rows.primary_key.as_ref()) {
                pair_updates(&mut table_events, key);
            }
            if !table_events.is_empty() {
                events.push(table_events);
            }
        }
        events
    }
}

/// `times` holders less for `row` of a table's rows; the row leaves the cache at zero.
fn release(
    hasher: &RandomState,
    table_rows: &mut TableRows,
    touched: &mut Touched,
    hash: RowHash,
    row: &[u8],
    times: usize,
) {
    if let Some((shared, before)) = table_rows.rows.remove(hash, row, times) {
        if before <= times {
            table_rows.left(hasher, &shared);
        }
        touched.note(hash, shared, before > 0, true);
    }
}

/// Moves each delete whose key an insert has too into `updates`.
fn pair_updates(events: &mut TableEvents, key: &PrimaryKey) {
    if events.inserts.is_empty() || events.deletes.is_empty() {
        return;
    }
    let deletes = std::mem::take(&mut events.deletes);
    let partners: Vec<Option<usize>> = {
        let mut inserted: HashMap<&[u8], usize> =
            HashMap::with_capacity_and_hasher(events.inserts.len(), RandomState::default());
        for (index, row) in events.inserts.iter().enumerate() {
            if let Some(row_key) = key.key(row) {
                inserted.insert(row_key, index);
            }
        }
        deletes
            .iter()
            .map(|old| key.key(old).and_then(|old_key| inserted.remove(old_key)))
            .collect()
    };
    let mut inserts: Vec<Option<RowBytes>> = std::mem::take(&mut events.inserts)
        .into_iter()
        .map(Some)
        .collect();
    for (old, partner) in deletes.into_iter().zip(partners) {
        match partner.and_then(|index| inserts[index].take()) {
            Some(new) => events.updates.push((old, new)),
            None => events.deletes.push(old),
        }
    }
    events.inserts = inserts.into_iter().flatten().collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_abi::encoding::to_vec;
    use wasmod_abi::{AlgebraicType, Field, SchemaType, Typespace};

    /// Rows of a `(id: u32, name: String)` table keyed by `id`.
    fn row(id: u32, name: &str) -> Vec<u8> {
        to_vec(&(id, name.to_owned()))
    }

    fn keyed_cache() -> Cache {
        let row_type = AlgebraicType::Product(vec![
            Field::named("id", u32::schema(&mut Typespace::default())),
            Field::named("name", String::schema(&mut Typespace::default())),
        ]);
        let column = PrimaryKey::column_named(&row_type, &Typespace::default(), "id");
        assert_eq!(column, Some(0));
        let key = PrimaryKey::new(&row_type, Typespace::default(), 0).expect("a product");
        let mut cache = Cache::new();
        cache.set_primary_key("t", key);
        cache
    }

    fn rows(list: &[RowBytes]) -> Vec<Vec<u8>> {
        list.iter().map(|row| row.to_vec()).collect()
    }

    /// Reads column `column` of the `(id, name)` rows.
    fn reader(column: &str) -> PrimaryKey {
        let mut typespace = Typespace::default();
        let row_type = AlgebraicType::Product(vec![
            Field::named("id", u32::schema(&mut typespace)),
            Field::named("name", String::schema(&mut typespace)),
        ]);
        PrimaryKey::named(&row_type, typespace, column).expect("a column")
    }

    fn id_reader() -> PrimaryKey {
        reader("id")
    }

    /// The rows of `t` found through `column`'s index by `key`, sorted.
    fn found(cache: &Cache, column: &str, key: &[u8]) -> Vec<Vec<u8>> {
        let mut found: Vec<Vec<u8>> = cache
            .find_indexed("t", column, key)
            .expect("indexed")
            .map(<[u8]>::to_vec)
            .collect();
        found.sort();
        found
    }

    /// The rows of `t` whose `column` is encoded as `key`, by reading every row, sorted.
    fn scanned(cache: &Cache, column: &str, key: &[u8]) -> Vec<Vec<u8>> {
        let reader = reader(column);
        let mut rows: Vec<Vec<u8>> = cache
            .rows("t")
            .filter(|row| reader.key(row) == Some(key))
            .map(<[u8]>::to_vec)
            .collect();
        rows.sort();
        rows
    }

    /// Every id and name of these tests' rows finds through the indexes what a scan finds,
    /// and the indexes hold exactly the table's rows.
    fn assert_indexes_match(cache: &Cache) {
        for id in 0..8u32 {
            let key = to_vec(&id);
            assert_eq!(
                found(cache, "id", &key),
                scanned(cache, "id", &key),
                "id {id}"
            );
        }
        for name in ["a", "b", "c", "d"] {
            let key = to_vec(&name.to_owned());
            assert_eq!(
                found(cache, "name", &key),
                scanned(cache, "name", &key),
                "{name}"
            );
        }
        for index in &cache.tables["t"].indexes {
            assert_eq!(index.len(), cache.count("t"), "{}", index.column());
        }
    }

    #[test]
    fn column_indexes_follow_inserts_updates_deletes_and_cleared_query_sets() {
        let mut cache = keyed_cache();
        cache.index_column("t", "id", id_reader());
        let mut batch = cache.batch();
        for (id, name) in [(1, "a"), (2, "b"), (3, "a")] {
            batch.insert(1, "t", &row(id, name));
        }
        batch.insert(2, "t", &row(4, "c"));
        batch.finish();
        // Indexed after rows arrived: the rows held are read once.
        cache.index_column("t", "name", reader("name"));
        assert_indexes_match(&cache);
        assert_eq!(found(&cache, "id", &to_vec(&2u32)), vec![row(2, "b")]);
        assert_eq!(
            found(&cache, "name", &to_vec(&"a".to_owned())),
            vec![row(1, "a"), row(3, "a")],
            "a column that is not unique finds every row of the value"
        );

        // An update: the key keeps its row, the new one.
        let mut batch = cache.batch();
        batch.delete(1, "t", &row(2, "b"));
        batch.insert(1, "t", &row(2, "d"));
        assert_eq!(batch.finish()[0].updates.len(), 1);
        assert_indexes_match(&cache);
        assert_eq!(found(&cache, "id", &to_vec(&2u32)), vec![row(2, "d")]);
        assert!(found(&cache, "name", &to_vec(&"b".to_owned())).is_empty());

        // A row held by two query sets stays found until the last lets it go.
        let mut batch = cache.batch();
        batch.insert(2, "t", &row(1, "a"));
        batch.delete(1, "t", &row(1, "a"));
        batch.finish();
        assert_indexes_match(&cache);
        assert_eq!(found(&cache, "id", &to_vec(&1u32)), vec![row(1, "a")]);

        // A cleared query set takes its rows out of the indexes; inserted again, they are
        // found again.
        let mut batch = cache.batch();
        batch.clear_query_set(2);
        batch.finish();
        assert_indexes_match(&cache);
        assert!(found(&cache, "id", &to_vec(&1u32)).is_empty());
        assert!(found(&cache, "id", &to_vec(&4u32)).is_empty());
        let mut batch = cache.batch();
        batch.insert(3, "t", &row(4, "c"));
        batch.finish();
        assert_indexes_match(&cache);
        assert_eq!(found(&cache, "id", &to_vec(&4u32)), vec![row(4, "c")]);
    }

    #[test]
    fn a_column_never_looked_up_has_no_index() {
        let mut cache = keyed_cache();
        let mut batch = cache.batch();
        batch.insert(1, "t", &row(1, "a"));
        batch.finish();
        assert!(cache.find_indexed("t", "id", &to_vec(&1u32)).is_none());
        assert!(cache.find_indexed("other", "id", &to_vec(&1u32)).is_none());
        cache.index_column("other", "id", id_reader());
        assert_eq!(
            cache
                .find_indexed("other", "id", &to_vec(&1u32))
                .map(Iterator::count),
            Some(0),
            "a table with no rows yet is indexed, empty"
        );
    }

    #[test]
    fn a_row_held_by_two_query_sets_is_stored_once_and_leaves_with_the_last() {
        let mut cache = Cache::new();
        let a = row(1, "a");
        let mut batch = cache.batch();
        batch.insert(1, "t", &a);
        let events = batch.finish();
        assert_eq!(rows(&events[0].inserts), vec![a.clone()]);

        let mut batch = cache.batch();
        batch.insert(2, "t", &a);
        assert!(batch.finish().is_empty(), "a second holder is no change");
        assert_eq!(cache.count("t"), 1);
        assert_eq!(cache.holders("t", &a), 2);
        let stored: Vec<*const u8> = cache
            .query_sets
            .values()
            .flat_map(|tables| tables["t"].iter().map(|held| held.row.as_ptr()))
            .collect();
        assert_eq!(stored[0], stored[1], "both query sets share one copy");

        let mut batch = cache.batch();
        batch.clear_query_set(1);
        assert!(batch.finish().is_empty(), "still held by query set 2");
        assert_eq!(cache.holders("t", &a), 1);

        let mut batch = cache.batch();
        batch.delete(2, "t", &a);
        let events = batch.finish();
        assert_eq!(rows(&events[0].deletes), vec![a.clone()]);
        assert_eq!(cache.count("t"), 0);
    }

    #[test]
    fn two_queries_of_one_set_selecting_a_row_hold_it_twice() {
        let mut cache = Cache::new();
        let a = row(1, "a");
        let mut batch = cache.batch();
        batch.insert(1, "t", &a);
        batch.insert(1, "t", &a);
        batch.finish();
        let mut batch = cache.batch();
        batch.delete(1, "t", &a);
        assert!(batch.finish().is_empty());
        assert_eq!(cache.holders("t", &a), 1);
    }

    #[test]
    fn a_delete_and_an_insert_of_one_key_are_an_update() {
        let mut cache = keyed_cache();
        let (old, new, other) = (row(1, "old"), row(1, "new"), row(2, "x"));
        let mut batch = cache.batch();
        batch.insert(1, "t", &old);
        batch.finish();
        let mut batch = cache.batch();
        batch.delete(1, "t", &old);
        batch.insert(1, "t", &new);
        batch.insert(1, "t", &other);
        let events = batch.finish();
        assert_eq!(events.len(), 1);
        assert_eq!(
            events[0]
                .updates
                .iter()
                .map(|(a, b)| (a.to_vec(), b.to_vec()))
                .collect::<Vec<_>>(),
            vec![(old, new.clone())]
        );
        assert_eq!(rows(&events[0].inserts), vec![other]);
        assert!(events[0].deletes.is_empty());
        let key = to_vec(&1u32);
        cache.index_column("t", "id", id_reader());
        assert_eq!(found(&cache, "id", &key), vec![new]);
    }

    #[test]
    fn without_a_primary_key_deletes_and_inserts_stay_apart() {
        let mut cache = Cache::new();
        let (old, new) = (row(1, "old"), row(1, "new"));
        let mut batch = cache.batch();
        batch.insert(1, "t", &old);
        batch.finish();
        let mut batch = cache.batch();
        batch.delete(1, "t", &old);
        batch.insert(1, "t", &new);
        let events = batch.finish();
        assert_eq!(rows(&events[0].deletes), vec![old]);
        assert_eq!(rows(&events[0].inserts), vec![new]);
        assert!(events[0].updates.is_empty());
    }

    #[test]
    fn replacing_a_query_set_reports_only_the_difference() {
        let mut cache = keyed_cache();
        let (kept, gone, changed, changed_now, new) = (
            row(1, "kept"),
            row(2, "gone"),
            row(3, "before"),
            row(3, "after"),
            row(4, "new"),
        );
        let mut batch = cache.batch();
        for r in [&kept, &gone, &changed] {
            batch.insert(7, "t", r);
        }
        batch.finish();

        let mut batch = cache.batch();
        batch.clear_query_set(7);
        batch.open_query_set(7);
        for r in [&kept, &changed_now, &new] {
            batch.insert(7, "t", r);
        }
        let events = batch.finish();
        assert_eq!(events.len(), 1);
        assert_eq!(rows(&events[0].inserts), vec![new]);
        assert_eq!(rows(&events[0].deletes), vec![gone]);
        assert_eq!(
            events[0]
                .updates
                .iter()
                .map(|(a, b)| (a.to_vec(), b.to_vec()))
                .collect::<Vec<_>>(),
            vec![(changed, changed_now)]
        );
        assert_eq!(cache.count("t"), 3);
        assert!(cache.has_query_set(7));
    }

    #[test]
    fn a_row_inserted_and_deleted_in_one_batch_is_no_event() {
        let mut cache = Cache::new();
        let a = row(1, "a");
        let mut batch = cache.batch();
        batch.insert(1, "t", &a);
        batch.delete(1, "t", &a);
        assert!(batch.finish().is_empty());
        assert_eq!(cache.count("t"), 0);
    }

    #[test]
    fn a_row_added_twice_in_a_batch_is_one_event_whatever_is_released_after() {
        let (a, b) = (row(1, "a"), row(2, "b"));
        // Added by two query sets: one insert.
        let mut cache = Cache::new();
        let mut batch = cache.batch();
        batch.insert_all(1, "t", [&a[..], &b[..]]);
        batch.insert(2, "t", &a);
        let events = batch.finish();
        assert_eq!(rows(&events[0].inserts), vec![a.clone(), b.clone()]);
        // Added twice, then one holder released: still an insert.
        let mut cache = Cache::new();
        let mut batch = cache.batch();
        batch.insert(1, "t", &a);
        batch.insert(2, "t", &a);
        batch.delete(1, "t", &a);
        let events = batch.finish();
        assert_eq!(rows(&events[0].inserts), vec![a.clone()]);
        assert_eq!(cache.holders("t", &a), 1);
        // Added twice, then both released: nothing.
        let mut cache = Cache::new();
        let mut batch = cache.batch();
        batch.insert(1, "t", &a);
        batch.insert(2, "t", &a);
        batch.insert(2, "t", &b);
        batch.clear_query_set(1);
        batch.clear_query_set(2);
        assert!(batch.finish().is_empty());
        assert_eq!(cache.count("t"), 0);
    }

    #[test]
    fn the_first_release_makes_the_touched_rows_a_set_keeping_first_entries() {
        let (a, b): (RowBytes, RowBytes) = (row(1, "a").into(), row(2, "b").into());
        let mut touched = Touched::default();
        touched.note(1, a.clone(), false, false);
        touched.note(1, a.clone(), true, false);
        touched.note(2, b.clone(), true, false);
        assert_eq!(touched.order.len(), 3, "adds only: listed");
        touched.note(1, a.clone(), true, true);
        let listed: Vec<(&[u8], bool, bool)> = touched
            .order
            .iter()
            .map(|touch| (&touch.row[..], touch.was_present, touch.released))
            .collect();
        assert_eq!(
            listed,
            vec![(&a[..], false, true), (&b[..], true, false)],
            "each row once, its first entry's presence, the release on it"
        );
    }

    #[test]
    fn deleting_what_a_query_set_does_not_hold_changes_nothing() {
        let mut cache = Cache::new();
        let a = row(1, "a");
        let mut batch = cache.batch();
        batch.insert(1, "t", &a);
        batch.finish();
        let mut batch = cache.batch();
        batch.delete(2, "t", &a);
        batch.delete(1, "other", &a);
        assert!(batch.finish().is_empty());
        assert_eq!(cache.holders("t", &a), 1);
    }

    #[test]
    fn a_key_of_a_truncated_row_is_none() {
        let key = keyed_cache().tables["t"]
            .primary_key
            .clone()
            .expect("a key");
        let full = row(9, "name");
        assert_eq!(key.key(&full), Some(&to_vec(&9u32)[..]));
        for len in 0..4 {
            assert_eq!(key.key(&full[..len]), None, "{len} bytes");
        }
    }
}
