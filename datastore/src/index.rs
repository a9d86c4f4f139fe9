//! BTree indexes, and the order that lets one range query serve every index scan.
//!
//! An index is a sorted set of [`Entry`]s: a row's key (the indexed columns' values) followed by
//! the row's id, so that equal keys (in a non-unique index) stay distinct and sorted by age.
//! A scan fixes a prefix of the key and bounds the next column; its ends are entries too,
//! whose key may be shorter than a full key and whose tail is [`Tail::Low`] (before every entry
//! that extends the key) or [`Tail::High`] (after every such entry). So "every key starting with
//! `(a, b)`" is the range from `(a, b, Low)` to `(a, b, High)`, and "column 1 after `b`" starts
//! at `(a, b, High)`: every scan is one `BTreeSet::range`.

use crate::row::Key;
use crate::table::RowId;
use std::cmp::Ordering;
use std::collections::BTreeSet;

/// What follows the key in an [`Entry`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Tail {
    /// Sorts before everything that extends the key.
    Low,
    /// A stored row.
    Row(RowId),
    /// Sorts after everything that extends the key.
    High,
}

/// A key (or key prefix) and what follows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) key: Key,
    pub(crate) tail: Tail,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        for (mine, theirs) in self.key.iter().zip(&other.key) {
            match mine.cmp(theirs) {
                Ordering::Equal => {}
                unequal => return unequal,
            }
        }
        match self.key.len().cmp(&other.key.len()) {
            Ordering::Equal => self.tail.cmp(&other.tail),
            Ordering::Less => self.tail.before_longer(),
            Ordering::Greater => other.tail.before_longer().reverse(),
        }
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Tail {
    /// How an entry ending in this tail compares with a longer entry that extends its key.
    fn before_longer(self) -> Ordering {
        match self {
            Self::Low | Self::Row(_) => Ordering::Less,
            Self::High => Ordering::Greater,
        }
    }
}

/// The entries of one index.
#[derive(Clone, Debug, Default)]
pub(crate) struct Index {
    entries: BTreeSet<Entry>,
}

impl Index {
    /// Adds `row` under `key`.
    pub(crate) fn insert(&mut self, key: Key, row: RowId) {
        self.entries.insert(Entry {
            key,
            tail: Tail::Row(row),
        });
    }

    /// Removes `row` from under `key`.
    pub(crate) fn remove(&mut self, key: &Key, row: RowId) {
        // A probe must own its key; the clone is the price of a plain `BTreeSet`.
        self.entries.remove(&Entry {
            key: key.clone(),
            tail: Tail::Row(row),
        });
    }

    /// The first row stored under exactly `key`.
    pub(crate) fn first(&self, key: &Key) -> Option<RowId> {
        let low = Entry {
            key: key.clone(),
            tail: Tail::Low,
        };
        let high = Entry {
            key: key.clone(),
            tail: Tail::High,
        };
        self.range(low, high).next()
    }

    /// The rows whose entries lie between `low` and `high`, in index order; none if
    /// `low > high`.
    pub(crate) fn range(&self, low: Entry, high: Entry) -> impl Iterator<Item = RowId> + '_ {
        let entries = (low <= high).then(|| self.entries.range(low..=high));
        entries
            .into_iter()
            .flatten()
            .filter_map(|entry| match entry.tail {
                Tail::Row(row) => Some(row),
                Tail::Low | Tail::High => None,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_abi::Value;

    fn entry(key: &[u32], tail: Tail) -> Entry {
        Entry {
            key: key.iter().map(|&n| Value::U32(n)).collect(),
            tail,
        }
    }

    #[test]
    fn probes_bracket_every_extension_of_their_prefix() {
        let row = Tail::Row(RowId(7));
        assert!(entry(&[1], Tail::Low) < entry(&[1, 0], row));
        assert!(entry(&[1], Tail::High) > entry(&[1, u32::MAX], row));
        assert!(entry(&[1], Tail::High) < entry(&[2, 0], row));
        assert!(entry(&[1, 5], Tail::Low) < entry(&[1, 5], row));
        assert!(entry(&[1, 5], Tail::High) > entry(&[1, 5], row));
        assert!(entry(&[], Tail::Low) < entry(&[0, 0], row));
        assert!(entry(&[], Tail::High) > entry(&[9, 9], row));
        assert!(entry(&[1], Tail::Low) < entry(&[1, 0], Tail::Low));
        assert!(entry(&[1], Tail::High) > entry(&[1, 0], Tail::High));
    }

    #[test]
    fn equal_keys_sort_by_row() {
        let mut index = Index::default();
        let key = vec![Value::U32(3)];
        index.insert(key.clone(), RowId(2));
        index.insert(key.clone(), RowId(1));
        index.insert(vec![Value::U32(4)], RowId(0));
        let rows: Vec<_> = index
            .range(entry(&[3], Tail::Low), entry(&[3], Tail::High))
            .collect();
        assert_eq!(rows, [RowId(1), RowId(2)]);
        assert_eq!(index.first(&key), Some(RowId(1)));
        index.remove(&key, RowId(1));
        assert_eq!(index.first(&key), Some(RowId(2)));
        assert_eq!(
            index
                .range(entry(&[5], Tail::Low), entry(&[2], Tail::High))
                .count(),
            0
        );
    }
}
