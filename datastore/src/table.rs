//! One table's rows and indexes, and the primitive changes to them.
//!
//! Rows are kept in a `BTreeMap` by [`RowId`], ids growing with each insert, so a full scan
//! returns rows oldest first, and the rows a transaction inserted are exactly those from the
//! id it started at. A hash map from bytes to id makes a table a set of rows: deleting by value
//! and refusing exact duplicates cost one lookup. Constraint checks happen before any of these
//! primitives run (see `tx`), so the primitives cannot fail.

use crate::index::Index;
use crate::row::{Key, Row};
use crate::schema::TableSchema;
use crate::sequence::Sequence;
use std::collections::{BTreeMap, HashMap};

/// A row's id in its table: never reused, growing with each insert.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct RowId(pub(crate) u64);

/// A row and its key in each index of its table.
#[derive(Clone, Debug)]
pub(crate) struct StoredRow {
    pub(crate) bytes: Row,
    pub(crate) keys: Box<[Key]>,
}

/// The state of one table.
#[derive(Debug)]
pub(crate) struct Table {
    rows: BTreeMap<RowId, StoredRow>,
    by_bytes: HashMap<Row, RowId>,
    pub(crate) indexes: Vec<Index>,
    pub(crate) sequences: Vec<Sequence>,
    pub(crate) next_row_id: u64,
}

impl Table {
    /// An empty table.
    pub(crate) fn new(schema: &TableSchema) -> Self {
        Self {
            rows: BTreeMap::new(),
            by_bytes: HashMap::new(),
            indexes: vec![Index::default(); schema.indexes.len()],
            sequences: vec![Sequence::new(); schema.sequences.len()],
            next_row_id: 0,
        }
    }

    /// How many rows the table has.
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// The row with id `id`.
    pub(crate) fn get(&self, id: RowId) -> Option<&StoredRow> {
        self.rows.get(&id)
    }

    /// The id of the row whose bytes are `bytes`.
    pub(crate) fn find(&self, bytes: &[u8]) -> Option<RowId> {
        self.by_bytes.get(bytes).copied()
    }

    /// Every row id, oldest first.
    pub(crate) fn ids(&self) -> impl Iterator<Item = RowId> + '_ {
        self.rows.keys().copied()
    }

    /// Every row, oldest first.
    pub(crate) fn rows(&self) -> impl Iterator<Item = &Row> + '_ {
        self.rows.values().map(|row| &row.bytes)
    }

    /// The rows whose id is `start` or later, oldest first.
    pub(crate) fn rows_from(&self, start: RowId) -> impl Iterator<Item = &Row> + '_ {
        self.rows.range(start..).map(|(_, row)| &row.bytes)
    }

    /// Adds a new row, under a fresh id.
    pub(crate) fn insert(&mut self, row: StoredRow) {
        let id = RowId(self.next_row_id);
        self.next_row_id += 1;
        self.place(id, row);
    }

    /// Puts `row` back under the id it had.
    pub(crate) fn place(&mut self, id: RowId, row: StoredRow) {
        for (index, key) in self.indexes.iter_mut().zip(row.keys.iter()) {
            index.insert(key.clone(), id);
        }
        self.by_bytes.insert(row.bytes.clone(), id);
        self.rows.insert(id, row);
    }

    /// Removes the row with id `id`.
    pub(crate) fn remove(&mut self, id: RowId) -> Option<StoredRow> {
        let row = self.rows.remove(&id)?;
        self.unlink(id, &row);
        Some(row)
    }

    /// Removes every row whose id is `start` or later.
    pub(crate) fn truncate(&mut self, start: RowId) {
        for (id, row) in self.rows.split_off(&start) {
            self.unlink(id, &row);
        }
    }

    /// Removes `row`'s entries from the indexes and the byte map.
    fn unlink(&mut self, id: RowId, row: &StoredRow) {
        for (index, key) in self.indexes.iter_mut().zip(row.keys.iter()) {
            index.remove(key, id);
        }
        self.by_bytes.remove(&row.bytes);
    }
}
