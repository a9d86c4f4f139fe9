//! Indexes of a table's rows by one column's encoding, so that `find_by_<column>` (and
//! `filter_by_<column>`) of the generated bindings find rows without reading every row.
//!
//! A column is indexed the first time it is looked up (`Cache::index_column`): a table whose
//! columns are never looked up costs nothing more to apply. From then on the index follows
//! the table: a row that enters the cache is added, one that leaves is removed (an update is
//! one of each), in the same step that changes the table's rows.
//!
//! An entry holds the row's shared bytes (no copy) and where the column's encoding lies in
//! them; its hash is of that encoding, so equal values (the encoding is canonical) land
//! together. A column need not be unique: rows with one value are entries of one hash.

use crate::cache::{PrimaryKey, RowBytes};
use foldhash::fast::RandomState;
use hashbrown::HashTable;
use std::hash::BuildHasher;
use std::ops::Range;
use std::sync::Arc;

/// One row in a column's index.
#[derive(Debug)]
struct Entry {
    /// The hash of the column's encoding.
    hash: u64,
    /// The row.
    row: RowBytes,
    /// Where the column's encoding is in `row`.
    key: Range<usize>,
}

impl Entry {
    fn key(&self) -> &[u8] {
        &self.row[self.key.clone()]
    }
}

/// A table's rows by one column's encoding.
#[derive(Debug)]
pub(crate) struct ColumnIndex {
    /// The column's name.
    column: Box<str>,
    /// Finds the column in a row's encoding.
    reader: PrimaryKey,
    entries: HashTable<Entry>,
}

impl ColumnIndex {
    /// An index of column `column`, found by `reader`, holding `rows` (`count` of them).
    pub(crate) fn new<'r>(
        column: &str,
        reader: PrimaryKey,
        hasher: &RandomState,
        (rows, count): (impl Iterator<Item = &'r RowBytes>, usize),
    ) -> Self {
        let mut index = Self {
            column: column.into(),
            reader,
            entries: HashTable::with_capacity(count),
        };
        for row in rows {
            index.insert(hasher, row);
        }
        index
    }

    /// The column's name.
    pub(crate) fn column(&self) -> &str {
        &self.column
    }

    /// Room for `additional` more rows.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.entries.reserve(additional, |entry| entry.hash);
    }

    /// Adds `row`, which just entered the table; a row whose encoding does not reach the
    /// column (never sent by a server of the declared type) is not indexed.
    pub(crate) fn insert(&mut self, hasher: &RandomState, row: &RowBytes) {
        let Some(key) = self.reader.key_range(row) else {
            return;
        };
        let hash = hasher.hash_one(&row[key.clone()]);
        self.entries.insert_unique(
            hash,
            Entry {
                hash,
                row: row.clone(),
                key,
            },
            |entry| entry.hash,
        );
    }

    /// Removes `row`, which just left the table.
    pub(crate) fn remove(&mut self, hasher: &RandomState, row: &RowBytes) {
        let Some(key) = self.reader.key_range(row) else {
            return;
        };
        let hash = hasher.hash_one(&row[key]);
        if let Ok(entry) = self.entries.find_entry(hash, |entry| {
            Arc::ptr_eq(&entry.row, row) || entry.row[..] == row[..]
        }) {
            entry.remove();
        }
    }

    /// The rows whose column is encoded as `key`.
    pub(crate) fn find<'i>(
        &'i self,
        hasher: &RandomState,
        key: &'i [u8],
    ) -> impl Iterator<Item = &'i [u8]> + 'i {
        self.entries
            .iter_hash(hasher.hash_one(key))
            .filter(move |entry| entry.key() == key)
            .map(|entry| &entry.row[..])
    }

    /// How many rows are indexed.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}
