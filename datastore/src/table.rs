//! One table's rows and indexes, and the changes to them.
//!
//! Rows are kept by [`RowId`] (see [`Rows`]), ids growing with each insert, so a full scan
//! returns rows oldest first, and the rows a transaction inserted are exactly those from the
//! id it started at. A table is a set of rows: to find a row equal to given bytes (to refuse an
//! exact duplicate, or to delete by value), a table with a unique index looks the row's key up
//! in its first unique index and compares the bytes; a table without one keeps a hash map from
//! bytes to id.
//!
//! Keys are not stored with the rows: removing a row computes its keys again from its bytes,
//! which for most tables is cheaper than keeping them. An update through a unique index keeps
//! that index's entry, which only changes its row, and computes the old row's keys only if
//! the table has other indexes. The checks (encoding, sequences, unique constraints) all
//! happen before anything changes, so a failed operation changes nothing.

use crate::error::Error;
use crate::index::{Index, IndexKey, KeyRange};
use crate::row::{check_row, describe_key, Row, RowHasher, RowId};
use crate::rows::Rows;
use crate::schema::TableSchema;
use crate::sequence::{write_back, Sequence};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;
use wasmod_abi::{Errno, Typespace};

/// The state of one table.
#[derive(Debug)]
pub(crate) struct Table {
    schema: Arc<TableSchema>,
    typespace: Arc<Typespace>,
    rows: Rows,
    /// The id of each row by its bytes, only in a table without a unique index.
    by_bytes: Option<HashMap<Row, RowId, RowHasher>>,
    indexes: Vec<Index>,
    pub(crate) sequences: Vec<Sequence>,
    pub(crate) next_row_id: u64,
    /// Scratch space for the spans of the row at hand.
    spans: Vec<Range<usize>>,
    /// Scratch space for the keys of the row being inserted, by index.
    keys: Vec<IndexKey>,
    /// Scratch space for the keys of the row being removed, by index.
    old_keys: Vec<IndexKey>,
}

impl Table {
    /// An empty table.
    pub(crate) fn new(schema: &Arc<TableSchema>, typespace: &Arc<Typespace>) -> Self {
        Self {
            by_bytes: schema.set_index.is_none().then(HashMap::default),
            indexes: schema
                .indexes
                .iter()
                .map(|index| Index::new(index.unique, index.width))
                .collect(),
            sequences: vec![Sequence::new(); schema.sequences.len()],
            next_row_id: 0,
            rows: Rows::default(),
            spans: Vec::with_capacity(schema.shapes.len()),
            keys: Vec::with_capacity(schema.indexes.len()),
            old_keys: Vec::with_capacity(schema.indexes.len()),
            schema: schema.clone(),
            typespace: typespace.clone(),
        }
    }

    /// How many rows the table has.
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// Every row id, oldest first.
    pub(crate) fn ids(&self) -> impl Iterator<Item = RowId> + '_ {
        self.rows.iter().map(|(id, _)| id)
    }

    /// Every row, oldest first.
    pub(crate) fn rows(&self) -> impl Iterator<Item = &Row> + '_ {
        self.rows.iter().map(|(_, row)| row)
    }

    /// The rows whose id is `start` or later, oldest first.
    pub(crate) fn rows_from(&self, start: RowId) -> impl Iterator<Item = &Row> + '_ {
        self.rows.since(start)
    }

    /// The rows whose id is `start` or later, with their ids, oldest first.
    pub(crate) fn rows_with_ids_from(
        &self,
        start: RowId,
    ) -> impl Iterator<Item = (RowId, &Row)> + '_ {
        self.rows.since_with_ids(start)
    }

    /// The ids of the rows whose keys in index `index` lie in `range`, in index order.
    pub(crate) fn ids_in<'a>(
        &'a self,
        index: usize,
        range: &KeyRange,
    ) -> impl Iterator<Item = RowId> + 'a {
        self.indexes[index].range(range)
    }

    /// The rows whose keys in index `index` lie in `range`, in index order.
    pub(crate) fn rows_in<'a>(
        &'a self,
        index: usize,
        range: &KeyRange,
    ) -> impl Iterator<Item = &'a Row> + 'a {
        self.ids_in(index, range).filter_map(|id| self.rows.get(id))
    }

    /// The id of the row whose bytes are `bytes`, a checked row of this table.
    pub(crate) fn find(&mut self, bytes: &[u8]) -> Option<RowId> {
        if let Some(by_bytes) = &self.by_bytes {
            return by_bytes.get(bytes).copied();
        }
        let schema = &*self.schema;
        let set = schema.set_index?;
        let spans = check_row(schema, &self.typespace, bytes, &mut self.spans).ok()?;
        let index = &self.indexes[set];
        let key = index.key(schema, &self.typespace, &schema.indexes[set], bytes, spans);
        let id = index.get_unique(&key)?;
        self.rows
            .get(id)
            .is_some_and(|row| **row == *bytes)
            .then_some(id)
    }

    /// Inserts the encoded row `row`, filling its auto-increment columns in place.
    ///
    /// A row equal to one the table has changes nothing (but still gets its generated values).
    /// Errors, with nothing changed (`row` included): `BAD_ENCODING`, `SEQUENCE_EXHAUSTED`,
    /// `UNIQUE_VIOLATION`.
    pub(crate) fn insert(&mut self, row: &mut [u8]) -> Result<(), Error> {
        let schema = &*self.schema;
        let typespace = &*self.typespace;
        let spans = check_row(schema, typespace, row, &mut self.spans)?;
        let patched = fill_sequences(schema, &self.sequences, row, spans)?;
        let bytes = patched.as_deref().unwrap_or(row);
        row_keys(
            schema,
            typespace,
            &self.indexes,
            bytes,
            spans,
            &mut self.keys,
        );

        // Find where the row goes in the first unique index (or the byte map) with one search,
        // which also finds an exact duplicate; the row is added there only if no other unique
        // index clashes.
        let id = RowId(self.next_row_id);
        let stored = match (schema.set_index, &mut self.by_bytes) {
            (Some(set), _) => {
                let clash =
                    unique_clash(schema, &self.indexes, &self.keys, None, |other| other > set);
                let key = std::mem::take(&mut self.keys[set]);
                match (self.indexes[set].vacancy(key), clash) {
                    (Err(existing), _) => {
                        if self.rows.get(existing).is_some_and(|row| **row == *bytes) {
                            None
                        } else {
                            return Err(unique_violation(schema, typespace, set, bytes, spans));
                        }
                    }
                    (Ok(_), Some(index)) => {
                        return Err(unique_violation(schema, typespace, index, bytes, spans));
                    }
                    (Ok(vacancy), None) => {
                        vacancy.fill(id);
                        Some(Row::from(bytes))
                    }
                }
            }
            (None, Some(by_bytes)) => {
                let stored = Row::from(bytes);
                match by_bytes.entry(stored.clone()) {
                    Entry::Occupied(_) => None,
                    Entry::Vacant(vacancy) => {
                        vacancy.insert(id);
                        Some(stored)
                    }
                }
            }
            (None, None) => Some(Row::from(bytes)),
        };
        if let Some(stored) = stored {
            for (sequence_schema, sequence) in schema.sequences.iter().zip(&mut self.sequences) {
                sequence.observe(
                    sequence_schema.kind,
                    &bytes[spans[sequence_schema.column].clone()],
                );
            }
            self.next_row_id += 1;
            let others = self.indexes.iter_mut().zip(self.keys.drain(..)).enumerate();
            for (_, (index, key)) in
                others.filter(|(position, _)| Some(*position) != schema.set_index)
            {
                index.insert(key, id);
            }
            self.rows.push(id, stored);
        }
        if let Some(patched) = patched {
            row.copy_from_slice(&patched);
        }
        Ok(())
    }

    /// Replaces the row whose key in the unique index `index` equals that of the encoded row
    /// `row`, by `row`, taken as given; returns the row it replaced, with its id (`None` if
    /// that row was equal to `row`, which changes nothing).
    ///
    /// Errors, with nothing changed: `BAD_ENCODING`, `NO_SUCH_ROW` (no row has the key),
    /// `UNIQUE_VIOLATION` (the new row clashes with another row in another unique index).
    pub(crate) fn update(
        &mut self,
        index: usize,
        row: &[u8],
    ) -> Result<Option<(RowId, Row)>, Error> {
        let schema = &*self.schema;
        let typespace = &*self.typespace;
        let spans = check_row(schema, typespace, row, &mut self.spans)?;
        row_keys(schema, typespace, &self.indexes, row, spans, &mut self.keys);
        let index_schema = &schema.indexes[index];
        let Some(old) = self.indexes[index].get_unique(&self.keys[index]) else {
            return Err(Error::new(
                Errno::NO_SUCH_ROW,
                format!(
                    "table `{}`: no row has key {} in index `{}`",
                    schema.def.name,
                    describe_key(schema, typespace, index_schema, row, spans),
                    index_schema.name
                ),
            ));
        };
        if self.rows.get(old).is_some_and(|stored| **stored == *row) {
            return Ok(None);
        }
        // Index `index` has the key under `old`: only the others can clash.
        let clash = unique_clash(schema, &self.indexes, &self.keys, Some(old), |other| {
            other != index
        });
        if let Some(clash) = clash {
            return Err(unique_violation(schema, typespace, clash, row, spans));
        }
        for (sequence_schema, sequence) in schema.sequences.iter().zip(&mut self.sequences) {
            sequence.observe(
                sequence_schema.kind,
                &row[spans[sequence_schema.column].clone()],
            );
        }
        let id = RowId(self.next_row_id);
        self.next_row_id += 1;
        let removed = self.rows.remove(old);
        self.relink(index, old, removed.as_deref().unwrap_or_default(), id);
        self.rows.push(id, Row::from(row));
        Ok(removed.map(|removed| (old, removed)))
    }

    /// Puts removed rows back under the ids they had.
    pub(crate) fn restore(&mut self, rows: Vec<(RowId, Row)>) {
        for (id, row) in &rows {
            let mut keys = std::mem::take(&mut self.keys);
            self.keys_into(row, &mut keys);
            self.keys = keys;
            self.link(*id, row);
        }
        self.rows.restore(rows);
    }

    /// Removes the row with id `id`, and returns it.
    pub(crate) fn remove(&mut self, id: RowId) -> Option<Row> {
        let row = self.rows.remove(id)?;
        self.unlink(id, &row);
        Some(row)
    }

    /// Removes every row whose id is `start` or later.
    pub(crate) fn truncate(&mut self, start: RowId) {
        for (id, row) in self.rows.split_off(start) {
            self.unlink(id, &row);
        }
    }

    /// Adds the entries of `row`, under `id` and with the keys in the scratch `keys` (by
    /// index), to the indexes and the byte map.
    fn link(&mut self, id: RowId, row: &Row) {
        for (index, key) in self.indexes.iter_mut().zip(self.keys.drain(..)) {
            index.insert(key, id);
        }
        if let Some(by_bytes) = &mut self.by_bytes {
            by_bytes.insert(row.clone(), id);
        }
    }

    /// Removes `row`'s entries from the indexes and the byte map.
    fn unlink(&mut self, id: RowId, row: &Row) {
        let mut keys = std::mem::take(&mut self.old_keys);
        self.keys_into(row, &mut keys);
        for (index, key) in self.indexes.iter_mut().zip(keys.drain(..)) {
            index.remove(key, id);
        }
        self.old_keys = keys;
        if let Some(by_bytes) = &mut self.by_bytes {
            by_bytes.remove(row);
        }
    }

    /// Moves the index entries of row `old`, whose bytes are `old_row`, to row `id`, whose
    /// keys are in the scratch `keys` (by index) and equal the old row's in index `same`.
    ///
    /// An entry whose key stays the same is moved in place; the old row's keys are computed
    /// only for a table with other indexes than `same`. (The table has a unique index, so no
    /// byte map.)
    fn relink(&mut self, same: usize, old: RowId, old_row: &[u8], id: RowId) {
        let mut old_keys = std::mem::take(&mut self.old_keys);
        old_keys.clear();
        if self.indexes.len() > 1 {
            self.keys_into(old_row, &mut old_keys);
        }
        let entries = self.indexes.iter_mut().zip(self.keys.drain(..)).enumerate();
        for (position, (index, key)) in entries {
            match old_keys.get_mut(position) {
                Some(old_key) if position != same && *old_key != key => {
                    index.remove(std::mem::take(old_key), old);
                    index.insert(key, id);
                }
                // The key stays: index `same`, or another whose columns did not change.
                _ => index.relink(key, old, id),
            }
        }
        self.old_keys = old_keys;
    }

    /// Writes the keys of the stored row `row`, by index, into `keys`.
    fn keys_into(&mut self, row: &[u8], keys: &mut Vec<IndexKey>) {
        keys.clear();
        let schema = &*self.schema;
        // A stored row was checked on the way in, so it checks again.
        if let Ok(spans) = check_row(schema, &self.typespace, row, &mut self.spans) {
            row_keys(schema, &self.typespace, &self.indexes, row, spans, keys);
        }
    }
}

/// Writes the keys of the checked row `bytes` of `schema`, whose spans are `spans`, in each of
/// its indexes `indexes` into `keys`, by index.
fn row_keys(
    schema: &TableSchema,
    typespace: &Typespace,
    indexes: &[Index],
    bytes: &[u8],
    spans: &[Range<usize>],
    keys: &mut Vec<IndexKey>,
) {
    keys.clear();
    let each = indexes.iter().zip(&schema.indexes);
    keys.extend(
        each.map(|(index, index_schema)| index.key(schema, typespace, index_schema, bytes, spans)),
    );
}

/// The row `row` with its auto-increment columns filled in, if any must be (`0`), as a copy:
/// `row` itself is left as it is until the insert succeeds.
fn fill_sequences(
    schema: &TableSchema,
    sequences: &[Sequence],
    row: &[u8],
    spans: &[Range<usize>],
) -> Result<Option<Vec<u8>>, Error> {
    let mut patched: Option<Vec<u8>> = None;
    for (sequence_schema, sequence) in schema.sequences.iter().zip(sequences) {
        let span = spans[sequence_schema.column].clone();
        let generated = sequence
            .fill(sequence_schema.kind, &row[span.clone()])
            .map_err(|_| {
                Error::new(
                    Errno::SEQUENCE_EXHAUSTED,
                    format!(
                        "table `{}`: the auto-increment sequence of column `{}` is exhausted",
                        schema.def.name,
                        schema.column_name(sequence_schema.column)
                    ),
                )
            })?;
        if let Some(value) = generated {
            let bytes = patched.get_or_insert_with(|| row.to_vec());
            write_back(bytes, span.start, sequence_schema.kind, value);
        }
    }
    Ok(patched)
}

/// The first unique index among those whose positions `checked` accepts where a row other
/// than `except` has the key given in `keys` (by index).
fn unique_clash(
    schema: &TableSchema,
    indexes: &[Index],
    keys: &[IndexKey],
    except: Option<RowId>,
    checked: impl Fn(usize) -> bool,
) -> Option<usize> {
    let unique = schema.indexes.iter().zip(indexes).zip(keys).enumerate();
    unique
        .filter(|(position, ((index_schema, _), _))| index_schema.unique && checked(*position))
        .find_map(|(position, ((_, index), key))| {
            let existing = index.get_unique(key)?;
            (Some(existing) != except).then_some(position)
        })
}

/// The error for a row whose key in unique index `index` another row has.
fn unique_violation(
    schema: &TableSchema,
    typespace: &Typespace,
    index: usize,
    bytes: &[u8],
    spans: &[Range<usize>],
) -> Error {
    let index = &schema.indexes[index];
    Error::new(
        Errno::UNIQUE_VIOLATION,
        format!(
            "table `{}`: unique index `{}` already has a row with key {}",
            schema.def.name,
            index.name,
            describe_key(schema, typespace, index, bytes, spans)
        ),
    )
}
