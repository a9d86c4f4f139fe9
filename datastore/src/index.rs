//! BTree indexes over byte keys, and the byte ranges that serve every index scan.
//!
//! A key is the indexed columns' [key bytes](crate::key): comparing keys is comparing bytes,
//! and the keys whose first columns are fixed are exactly those starting with those columns'
//! bytes. A unique index maps each key to its one row. An index that is not unique appends the
//! row's id (big-endian) to each key, so that equal keys stay distinct and sorted by age; since
//! the key bytes are prefix-free, the id never changes how keys compare with each other.
//!
//! A scan is a [`KeyRange`]: from a key (included) up to another (excluded) or to the end, so
//! every scan is one `range` of the underlying B-tree.

use crate::key::Key;
use crate::table::RowId;
use std::collections::{btree_map, BTreeMap, BTreeSet};
use std::ops::Bound;

/// The keys from `low` (included) up to `high` (excluded; `None`: up to the end). Empty when
/// `low >= high`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KeyRange {
    pub(crate) low: Key,
    pub(crate) high: Option<Key>,
}

/// The entries of one index.
#[derive(Debug)]
pub(crate) enum Index {
    /// Each key once, with its row.
    Unique(BTreeMap<Key, RowId>),
    /// Each key followed by its row's id.
    Multi(BTreeSet<Key>),
}

impl Index {
    /// An empty index, unique or not.
    pub(crate) fn new(unique: bool) -> Self {
        if unique {
            Self::Unique(BTreeMap::new())
        } else {
            Self::Multi(BTreeSet::new())
        }
    }

    /// Adds `row` under `key`; in a unique index where another row has `key`, changes nothing
    /// (callers check first).
    pub(crate) fn insert(&mut self, key: Key, row: RowId) {
        if let Ok(vacancy) = self.vacancy(key) {
            vacancy.fill(row);
        }
    }

    /// Removes `row` from under `key`.
    pub(crate) fn remove(&mut self, mut key: Key, row: RowId) {
        match self {
            Self::Unique(map) => {
                map.remove(&key);
            }
            Self::Multi(set) => {
                key.extend(&row.0.to_be_bytes());
                set.remove(&key);
            }
        }
    }

    /// Finds where `key` goes: `Err(row)` if this is a unique index where `row` has that key
    /// already. Nothing changes until the vacancy is filled.
    pub(crate) fn vacancy(&mut self, key: Key) -> Result<Vacancy<'_>, RowId> {
        match self {
            Self::Unique(map) => match map.entry(key) {
                btree_map::Entry::Occupied(entry) => Err(*entry.get()),
                btree_map::Entry::Vacant(entry) => Ok(Vacancy::Unique(entry)),
            },
            Self::Multi(set) => Ok(Vacancy::Multi(set, key)),
        }
    }

    /// The row under exactly `key`, in a unique index; `None` in an index that is not unique.
    pub(crate) fn get_unique(&self, key: &Key) -> Option<RowId> {
        match self {
            Self::Unique(map) => map.get(key).copied(),
            Self::Multi(_) => None,
        }
    }

    /// The rows whose keys lie in `range`, in index order.
    pub(crate) fn range<'a>(&'a self, range: &KeyRange) -> impl Iterator<Item = RowId> + 'a {
        let empty = range.high.as_ref().is_some_and(|high| range.low >= *high);
        let bounds = (
            Bound::Included(&range.low),
            range
                .high
                .as_ref()
                .map_or(Bound::Unbounded, Bound::Excluded),
        );
        let (unique, multi) = match self {
            _ if empty => (None, None),
            Self::Unique(map) => (Some(map.range(bounds)), None),
            Self::Multi(set) => (None, Some(set.range(bounds))),
        };
        let unique = unique.into_iter().flatten().map(|(_, &row)| row);
        let multi = multi.into_iter().flatten().map(row_of);
        unique.chain(multi)
    }
}

/// Where a new key goes in an index: see [`Index::vacancy`].
pub(crate) enum Vacancy<'a> {
    /// In a unique index.
    Unique(btree_map::VacantEntry<'a, Key, RowId>),
    /// In an index that is not unique, where keys never clash: the key.
    Multi(&'a mut BTreeSet<Key>, Key),
}

impl Vacancy<'_> {
    /// Adds `row` under the key.
    pub(crate) fn fill(self, row: RowId) {
        match self {
            Self::Unique(entry) => {
                entry.insert(row);
            }
            Self::Multi(set, mut key) => {
                key.extend(&row.0.to_be_bytes());
                set.insert(key);
            }
        }
    }
}

/// The row id at the end of an entry of an index that is not unique.
fn row_of(entry: &Key) -> RowId {
    let bytes = entry.as_bytes();
    let mut id = [0; 8];
    id.copy_from_slice(&bytes[bytes.len() - 8..]);
    RowId(u64::from_be_bytes(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(bytes: &[u8]) -> Key {
        Key::from_slice(bytes)
    }

    fn range(low: &[u8], high: Option<&[u8]>) -> KeyRange {
        KeyRange {
            low: key(low),
            high: high.map(key),
        }
    }

    #[test]
    fn equal_keys_sort_by_row() {
        let mut index = Index::new(false);
        index.insert(key(&[3]), RowId(2));
        index.insert(key(&[3]), RowId(1));
        index.insert(key(&[4]), RowId(0));
        let rows: Vec<_> = index.range(&range(&[3], Some(&[4]))).collect();
        assert_eq!(rows, [RowId(1), RowId(2)]);
        index.remove(key(&[3]), RowId(1));
        let rows: Vec<_> = index.range(&range(&[3], None)).collect();
        assert_eq!(rows, [RowId(2), RowId(0)]);
        assert_eq!(index.get_unique(&key(&[3])), None);
        assert_eq!(index.range(&range(&[5], Some(&[2]))).count(), 0);
        assert_eq!(index.range(&range(&[3], Some(&[3]))).count(), 0);
    }

    #[test]
    fn a_unique_index_maps_keys_to_rows() {
        let mut index = Index::new(true);
        index.insert(key(&[1, 2]), RowId(7));
        index.insert(key(&[1]), RowId(8));
        assert_eq!(index.get_unique(&key(&[1, 2])), Some(RowId(7)));
        let rows: Vec<_> = index.range(&range(&[1], Some(&[2]))).collect();
        assert_eq!(rows, [RowId(8), RowId(7)]);
        index.remove(key(&[1, 2]), RowId(7));
        assert_eq!(index.get_unique(&key(&[1, 2])), None);
    }
}
