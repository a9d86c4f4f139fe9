//! Rows with a count of holders each, hashed once.
//!
//! The cache keeps the same rows in three places: a table's rows, each query set's rows, and
//! a batch's record of what it touched. A row is hashed once when a change arrives, and that
//! hash is stored beside the row in each place ([`hashbrown::HashTable`]), so neither a
//! lookup in another place nor a table's growth hashes the row's bytes again.

use crate::cache::RowBytes;
use hashbrown::HashTable;

/// A row's hash, as computed by the cache's hasher from its bytes.
pub(crate) type RowHash = u64;

/// One row and how many times it is held.
#[derive(Debug)]
pub(crate) struct Held {
    hash: RowHash,
    /// The row's shared bytes.
    pub(crate) row: RowBytes,
    /// How many holders select it (at least 1 while it is in the table).
    pub(crate) count: usize,
}

/// Rows, each once, with how many times each is held.
#[derive(Debug, Default)]
pub(crate) struct Holdings {
    rows: HashTable<Held>,
}

impl Holdings {
    /// How many distinct rows are held.
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// The rows held, each once, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Held> + '_ {
        self.rows.iter()
    }

    /// Room for `additional` more rows.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.rows.reserve(additional, |held| held.hash);
    }

    /// The entry of `row` (whose hash is `hash`), if it is held.
    pub(crate) fn get(&self, hash: RowHash, row: &[u8]) -> Option<&Held> {
        self.rows.find(hash, |held| held.row[..] == *row)
    }

    /// Holds `row` once more; `share` makes its copy if it is not held yet. Returns the
    /// shared bytes and how many times the row was held before.
    pub(crate) fn add(
        &mut self,
        hash: RowHash,
        row: &[u8],
        share: impl FnOnce() -> RowBytes,
    ) -> (RowBytes, usize) {
        let entry = self
            .rows
            .entry(hash, |held| held.row[..] == *row, |held| held.hash);
        let held = entry
            .or_insert_with(|| Held {
                hash,
                row: share(),
                count: 0,
            })
            .into_mut();
        held.count += 1;
        (held.row.clone(), held.count - 1)
    }

    /// Holds `row` `times` fewer times (not below zero; at zero it leaves). Returns its shared
    /// bytes and how many times it was held before, or `None` if it was not held.
    pub(crate) fn remove(
        &mut self,
        hash: RowHash,
        row: &[u8],
        times: usize,
    ) -> Option<(RowBytes, usize)> {
        let Ok(entry) = self.rows.find_entry(hash, |held| held.row[..] == *row) else {
            return None;
        };
        let before = entry.get().count;
        if before > times {
            let held = entry.into_mut();
            held.count -= times;
            Some((held.row.clone(), before))
        } else {
            let (held, _) = entry.remove();
            Some((held.row, before))
        }
    }

    /// Every row with its hash and count, emptying the holdings.
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = Held> + '_ {
        self.rows.drain()
    }
}

impl Held {
    /// The row's hash.
    pub(crate) fn hash(&self) -> RowHash {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(row: &[u8]) -> impl FnOnce() -> RowBytes + '_ {
        move || RowBytes::from(row)
    }

    #[test]
    fn counts_go_up_and_down_and_a_row_leaves_at_zero() {
        let mut holdings = Holdings::default();
        let (first, before) = holdings.add(7, b"row", share(b"row"));
        assert_eq!(before, 0);
        let (second, before) = holdings.add(7, b"row", || unreachable!("already held"));
        assert_eq!(before, 1);
        assert!(std::ptr::eq(first.as_ptr(), second.as_ptr()), "one copy");
        assert_eq!(holdings.remove(7, b"row", 1).map(|(_, n)| n), Some(2));
        assert_eq!(holdings.get(7, b"row").map(|held| held.count), Some(1));
        assert_eq!(holdings.remove(7, b"row", 5).map(|(_, n)| n), Some(1));
        assert_eq!(holdings.len(), 0);
        assert!(holdings.remove(7, b"row", 1).is_none());
    }

    #[test]
    fn rows_with_one_hash_stay_apart() {
        let mut holdings = Holdings::default();
        holdings.add(1, b"a", share(b"a"));
        holdings.add(1, b"b", share(b"b"));
        assert_eq!(holdings.len(), 2);
        assert!(holdings.get(1, b"a").is_some() && holdings.get(1, b"b").is_some());
        assert!(holdings.get(1, b"c").is_none());
        holdings.remove(1, b"a", 1);
        assert!(holdings.get(1, b"b").is_some());
    }
}
