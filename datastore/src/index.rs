//! BTree indexes over byte keys, and the byte ranges that serve every index scan.
//!
//! A key is the indexed columns' [key bytes](crate::key): comparing keys is comparing bytes,
//! and the keys whose first columns are fixed are exactly those starting with those columns'
//! bytes. A unique index maps each key to its one row. An index that is not unique appends the
//! row's id (big-endian) to each key, so that equal keys stay distinct and sorted by age; since
//! the key bytes are prefix-free, the id never changes how keys compare with each other.
//!
//! When every key of an index has the same width and fits in 16 bytes with what is appended
//! to it (the usual case: a key of one or two numbers), the B-tree holds the bytes as one
//! big-endian `u128`, zero-padded: padding bytes of equal width does not change their order,
//! and an integer compares faster and takes less room than a [`Key`]. A row's key in such an
//! index is computed as that integer directly from the row's columns ([`IndexKey::Word`]),
//! never as bytes.
//!
//! A scan is a [`KeyRange`]: from a key (included) up to another (excluded) or to the end, so
//! every scan is one `range` of the underlying B-tree. Bounds are never longer than a key, so
//! padding them too keeps their place among the keys.

use crate::key::Key;
use crate::row::RowId;
use crate::row::{index_key, index_word};
use crate::schema::{IndexSchema, TableSchema};
use std::collections::{btree_map, btree_set, BTreeMap, BTreeSet};
use std::ops::{Bound, Range};
use wasmod_abi::Typespace;

/// The keys from `low` (included) up to `high` (excluded; `None`: up to the end). Empty when
/// `low >= high`.
///
/// `whole` says that `low` is a whole key of the index (every column fixed, as a look-up by a
/// unique column is) and the range exactly the keys equal to it: a unique index then finds
/// its one entry with a look-up instead of a range over its B-tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KeyRange {
    pub(crate) low: Key,
    pub(crate) high: Option<Key>,
    pub(crate) whole: bool,
}

/// The entries of one index.
#[derive(Debug)]
pub(crate) enum Index {
    /// Keys of `width` bytes, stored as integers.
    Words {
        width: usize,
        entries: Entries<u128>,
    },
    /// Any keys, stored as bytes.
    Bytes(Entries<Key>),
}

/// A row's key in one index, in the form that index stores it in (see [`Index::key`]); any
/// key can be given to any index, which converts it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum IndexKey {
    /// For an index of words: the key's `width` bytes, zero-padded to 16, as a big-endian
    /// integer.
    Word { word: u128, width: usize },
    /// The key's bytes.
    Bytes(Key),
}

impl Default for IndexKey {
    fn default() -> Self {
        Self::Bytes(Key::new())
    }
}

/// The B-tree of an index, over keys stored as `K`.
#[derive(Debug)]
pub(crate) enum Entries<K> {
    /// Each key once, with its row.
    Unique(BTreeMap<K, RowId>),
    /// Each key followed by its row's id.
    Multi(BTreeSet<K>),
}

/// How the B-tree stores a key (with the row id appended in an index that is not unique).
pub(crate) trait Stored: Ord + Sized {
    /// The stored form of `key`.
    fn store(key: IndexKey) -> Self;
    /// The entry of `row` under this key, in an index that is not unique whose keys are
    /// `width` bytes wide.
    fn with_row(self, row: RowId, width: usize) -> Self;
    /// The id at the end of an entry of an index that is not unique whose keys are `width`
    /// bytes wide.
    fn row(&self, width: usize) -> RowId;
}

impl Stored for Key {
    fn store(key: IndexKey) -> Self {
        match key {
            IndexKey::Bytes(key) => key,
            IndexKey::Word { word, width } => Key::from_slice(&word.to_be_bytes()[..width.min(16)]),
        }
    }

    fn with_row(mut self, row: RowId, _: usize) -> Self {
        self.extend(&row.0.to_be_bytes());
        self
    }

    fn row(&self, _: usize) -> RowId {
        let bytes = self.as_bytes();
        let mut id = [0; 8];
        id.copy_from_slice(&bytes[bytes.len() - 8..]);
        RowId(u64::from_be_bytes(id))
    }
}

impl Stored for u128 {
    fn store(key: IndexKey) -> Self {
        let key = match key {
            IndexKey::Word { word, .. } => return word,
            IndexKey::Bytes(key) => key,
        };
        // Keys and bounds of an index of words are never longer than 16 bytes.
        let bytes = key.as_bytes();
        let len = bytes.len().min(16);
        let mut padded = [0; 16];
        padded[..len].copy_from_slice(&bytes[..len]);
        u128::from_be_bytes(padded)
    }

    fn with_row(self, row: RowId, width: usize) -> Self {
        // The id's 8 bytes follow the key's `width` (at most 8), then zeros.
        self | (u128::from(row.0) << (8 * (8 - width)))
    }

    fn row(&self, width: usize) -> RowId {
        // The id's 8 bytes follow the key's `width` (at most 8), then zeros.
        RowId((*self >> (8 * (8 - width))) as u64)
    }
}

impl Index {
    /// An empty index, unique or not, whose keys are all `width` bytes wide if `width` is
    /// given.
    pub(crate) fn new(unique: bool, width: Option<usize>) -> Self {
        let room = if unique { 16 } else { 8 };
        match width.filter(|&width| width <= room) {
            Some(width) => Self::Words {
                width,
                entries: Entries::new(unique),
            },
            None => Self::Bytes(Entries::new(unique)),
        }
    }

    /// The key in this index of the checked row `bytes` of `table`, whose spans are `spans`;
    /// `schema` is this index's.
    pub(crate) fn key(
        &self,
        table: &TableSchema,
        typespace: &Typespace,
        schema: &IndexSchema,
        bytes: &[u8],
        spans: &[Range<usize>],
    ) -> IndexKey {
        match self {
            Self::Words { width, .. } => IndexKey::Word {
                word: index_word(table, schema, bytes, spans),
                width: *width,
            },
            Self::Bytes(_) => IndexKey::Bytes(index_key(table, typespace, schema, bytes, spans)),
        }
    }

    /// Finds where `key` goes: `Err(row)` if this is a unique index where `row` has that key
    /// already. Nothing changes until the vacancy is filled.
    pub(crate) fn vacancy(&mut self, key: IndexKey) -> Result<Vacancy<'_>, RowId> {
        match self {
            Self::Words {
                entries: Entries::Unique(map),
                ..
            } => match map.entry(u128::store(key)) {
                btree_map::Entry::Occupied(entry) => Err(*entry.get()),
                btree_map::Entry::Vacant(entry) => Ok(Vacancy::Word(entry)),
            },
            Self::Bytes(Entries::Unique(map)) => match map.entry(Key::store(key)) {
                btree_map::Entry::Occupied(entry) => Err(*entry.get()),
                btree_map::Entry::Vacant(entry) => Ok(Vacancy::Bytes(entry)),
            },
            multi => Ok(Vacancy::Multi(multi, key)),
        }
    }

    /// Adds `row` under `key`; in a unique index where another row has `key`, changes nothing
    /// (callers check first).
    pub(crate) fn insert(&mut self, key: IndexKey, row: RowId) {
        match self {
            Self::Words { width, entries } => entries.insert(u128::store(key), row, *width),
            Self::Bytes(entries) => entries.insert(Key::store(key), row, 0),
        }
    }

    /// Removes `row` from under `key`.
    pub(crate) fn remove(&mut self, key: IndexKey, row: RowId) {
        match self {
            Self::Words { width, entries } => entries.remove(u128::store(key), row, *width),
            Self::Bytes(entries) => entries.remove(Key::store(key), row, 0),
        }
    }

    /// Moves the entry of row `from` under `key` to row `to`: in a unique index, the entry
    /// stays where it is.
    pub(crate) fn relink(&mut self, key: IndexKey, from: RowId, to: RowId) {
        match self {
            Self::Words { width, entries } => entries.relink(u128::store(key), from, to, *width),
            Self::Bytes(entries) => entries.relink(Key::store(key), from, to, 0),
        }
    }

    /// The row under exactly `key`, in a unique index; `None` in an index that is not unique.
    pub(crate) fn get_unique(&self, key: &IndexKey) -> Option<RowId> {
        match (self, key) {
            (
                Self::Words {
                    entries: Entries::Unique(map),
                    ..
                },
                key,
            ) => map.get(&u128::store(key.clone())),
            (Self::Bytes(Entries::Unique(map)), IndexKey::Bytes(key)) => map.get(key),
            (Self::Bytes(Entries::Unique(map)), word) => map.get(&Key::store(word.clone())),
            _ => None,
        }
        .copied()
    }

    /// Whether each key has at most one row.
    fn is_unique(&self) -> bool {
        matches!(
            self,
            Self::Words {
                entries: Entries::Unique(_),
                ..
            } | Self::Bytes(Entries::Unique(_))
        )
    }

    /// The rows whose keys lie in `range`, in index order.
    pub(crate) fn range(&self, range: &KeyRange) -> Rows<'_> {
        if range.whole && self.is_unique() {
            return Rows::One(self.get_unique(&IndexKey::Bytes(range.low.clone())));
        }
        match self {
            Self::Words { width, entries } => match entries.range(range) {
                Some(Span::Unique(rows)) => Rows::WordsUnique(rows),
                Some(Span::Multi(entries)) => Rows::WordsMulti(entries, *width),
                None => Rows::Empty,
            },
            Self::Bytes(entries) => match entries.range(range) {
                Some(Span::Unique(rows)) => Rows::BytesUnique(rows),
                Some(Span::Multi(entries)) => Rows::BytesMulti(entries),
                None => Rows::Empty,
            },
        }
    }
}

/// The entries of a range of an [`Entries`].
enum Span<'a, K> {
    Unique(btree_map::Range<'a, K, RowId>),
    Multi(btree_set::Range<'a, K>),
}

/// The rows of a range of an index, in index order: see [`Index::range`].
pub(crate) enum Rows<'a> {
    /// Of a unique index of words.
    WordsUnique(btree_map::Range<'a, u128, RowId>),
    /// Of an index of words, `width` bytes wide, that is not unique.
    WordsMulti(btree_set::Range<'a, u128>, usize),
    /// Of a unique index of bytes.
    BytesUnique(btree_map::Range<'a, Key, RowId>),
    /// Of an index of bytes that is not unique.
    BytesMulti(btree_set::Range<'a, Key>),
    /// Of a look-up in a unique index: its one row, if the key is there.
    One(Option<RowId>),
    /// Of an empty range.
    Empty,
}

impl Iterator for Rows<'_> {
    type Item = RowId;

    fn next(&mut self) -> Option<RowId> {
        match self {
            Self::WordsUnique(rows) => rows.next().map(|(_, &row)| row),
            Self::WordsMulti(entries, width) => entries.next().map(|entry| entry.row(*width)),
            Self::BytesUnique(rows) => rows.next().map(|(_, &row)| row),
            Self::BytesMulti(entries) => entries.next().map(|entry| entry.row(0)),
            Self::One(row) => row.take(),
            Self::Empty => None,
        }
    }
}

impl<K: Stored> Entries<K> {
    fn new(unique: bool) -> Self {
        if unique {
            Self::Unique(BTreeMap::new())
        } else {
            Self::Multi(BTreeSet::new())
        }
    }

    /// Adds `row` under `key` (keys `width` bytes wide, if that matters).
    fn insert(&mut self, key: K, row: RowId, width: usize) {
        match self {
            Self::Unique(map) => {
                if let btree_map::Entry::Vacant(entry) = map.entry(key) {
                    entry.insert(row);
                }
            }
            Self::Multi(set) => {
                set.insert(key.with_row(row, width));
            }
        }
    }

    /// Removes `row` from under `key` (keys `width` bytes wide, if that matters).
    fn remove(&mut self, key: K, row: RowId, width: usize) {
        match self {
            Self::Unique(map) => {
                map.remove(&key);
            }
            Self::Multi(set) => {
                set.remove(&key.with_row(row, width));
            }
        }
    }

    /// Moves the entry of `from` under `key` to `to` (keys `width` bytes wide, if that
    /// matters).
    fn relink(&mut self, key: K, from: RowId, to: RowId, width: usize)
    where
        K: Clone,
    {
        match self {
            Self::Unique(map) => {
                if let Some(row) = map.get_mut(&key).filter(|row| **row == from) {
                    *row = to;
                }
            }
            Self::Multi(set) => {
                set.remove(&key.clone().with_row(from, width));
                set.insert(key.with_row(to, width));
            }
        }
    }

    /// The entries in `range`, in order; `None` if the range is empty.
    fn range(&self, range: &KeyRange) -> Option<Span<'_, K>> {
        let low = K::store(IndexKey::Bytes(range.low.clone()));
        let high = range
            .high
            .clone()
            .map(|high| K::store(IndexKey::Bytes(high)));
        if high.as_ref().is_some_and(|high| low >= *high) {
            return None;
        }
        let bounds = (
            Bound::Included(&low),
            high.as_ref().map_or(Bound::Unbounded, Bound::Excluded),
        );
        Some(match self {
            Self::Unique(map) => Span::Unique(map.range(bounds)),
            Self::Multi(set) => Span::Multi(set.range(bounds)),
        })
    }
}

/// Where a new key goes in an index: see [`Index::vacancy`].
pub(crate) enum Vacancy<'a> {
    /// In a unique index of words.
    Word(btree_map::VacantEntry<'a, u128, RowId>),
    /// In a unique index of bytes.
    Bytes(btree_map::VacantEntry<'a, Key, RowId>),
    /// In an index that is not unique, where keys never clash: the key.
    Multi(&'a mut Index, IndexKey),
}

impl Vacancy<'_> {
    /// Adds `row` under the key.
    pub(crate) fn fill(self, row: RowId) {
        match self {
            Self::Word(entry) => {
                entry.insert(row);
            }
            Self::Bytes(entry) => {
                entry.insert(row);
            }
            Self::Multi(index, key) => index.insert(key, row),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(bytes: &[u8]) -> IndexKey {
        IndexKey::Bytes(Key::from_slice(bytes))
    }

    fn range(low: &[u8], high: Option<&[u8]>) -> KeyRange {
        KeyRange {
            low: Key::from_slice(low),
            high: high.map(Key::from_slice),
            whole: false,
        }
    }

    fn rows(index: &Index, low: &[u8], high: Option<&[u8]>) -> Vec<RowId> {
        index.range(&range(low, high)).collect()
    }

    /// Indexes of two-byte keys, stored both ways.
    fn both(unique: bool) -> [Index; 2] {
        [Index::new(unique, Some(2)), Index::new(unique, None)]
    }

    #[test]
    fn equal_keys_sort_by_row() {
        for mut index in both(false) {
            index.insert(key(&[3, 0]), RowId(2));
            index.insert(key(&[3, 0]), RowId(1));
            index.insert(key(&[4, 0]), RowId(0));
            index.insert(key(&[3, 1]), RowId(3));
            assert_eq!(rows(&index, &[3], Some(&[4])), [1, 2, 3].map(RowId));
            assert_eq!(rows(&index, &[3, 0], Some(&[3, 1])), [1, 2].map(RowId));
            index.remove(key(&[3, 0]), RowId(1));
            assert_eq!(rows(&index, &[3], None), [2, 3, 0].map(RowId));
            index.relink(key(&[3, 0]), RowId(2), RowId(5));
            assert_eq!(rows(&index, &[3], None), [5, 3, 0].map(RowId));
            assert_eq!(index.get_unique(&key(&[3, 0])), None);
            assert_eq!(rows(&index, &[5], Some(&[2])), []);
            assert_eq!(rows(&index, &[3], Some(&[3])), []);
        }
    }

    #[test]
    fn a_unique_index_maps_keys_to_rows() {
        for mut index in both(true) {
            index.insert(key(&[1, 2]), RowId(7));
            index.insert(key(&[1, 0]), RowId(8));
            assert_eq!(index.get_unique(&key(&[1, 2])), Some(RowId(7)));
            assert_eq!(index.vacancy(key(&[1, 2])).err(), Some(RowId(7)));
            assert_eq!(rows(&index, &[1], Some(&[2])), [8, 7].map(RowId));
            assert_eq!(rows(&index, &[1, 1], None), [7].map(RowId));
            index.relink(key(&[1, 2]), RowId(7), RowId(10));
            assert_eq!(index.get_unique(&key(&[1, 2])), Some(RowId(10)));
            index.remove(key(&[1, 2]), RowId(10));
            assert_eq!(index.get_unique(&key(&[1, 2])), None);
            if let Ok(vacancy) = index.vacancy(key(&[1, 2])) {
                vacancy.fill(RowId(9));
            }
            assert_eq!(index.get_unique(&key(&[1, 2])), Some(RowId(9)));
        }
    }

    #[test]
    fn a_whole_key_is_looked_up_and_finds_what_its_range_finds() {
        let whole = |low: &[u8]| KeyRange {
            low: Key::from_slice(low),
            high: Key::from_slice(low).successor(),
            whole: true,
        };
        for unique in [true, false] {
            for mut index in both(unique) {
                index.insert(key(&[1, 2]), RowId(7));
                index.insert(key(&[1, 3]), RowId(8));
                let found: Vec<RowId> = index.range(&whole(&[1, 2])).collect();
                assert_eq!(found, [RowId(7)]);
                let missing: Vec<RowId> = index.range(&whole(&[1, 4])).collect();
                assert_eq!(missing, []);
                assert_eq!(
                    matches!(index.range(&whole(&[1, 2])), Rows::One(_)),
                    unique,
                    "only a unique index looks its whole keys up"
                );
            }
        }
    }

    #[test]
    fn wide_keys_are_stored_as_bytes() {
        assert!(matches!(Index::new(true, Some(16)), Index::Words { .. }));
        assert!(matches!(Index::new(true, Some(17)), Index::Bytes(_)));
        assert!(matches!(Index::new(false, Some(8)), Index::Words { .. }));
        assert!(matches!(Index::new(false, Some(9)), Index::Bytes(_)));
    }
}
