//! One table's rows by id: a vector in id order, with holes where rows were removed.
//!
//! Row ids grow with each insert and are never reused, so a new row always goes after every
//! other: inserting is a push, where a B-tree would walk down its right edge (and split nodes)
//! for every row. Removing a row leaves a hole in its slot, so the other rows keep their
//! places; once holes are the majority, they are squeezed out in one pass, which costs no more
//! than the removals that made them.
//!
//! A slot's position is at most its id minus the first slot's id (ids are distinct and
//! increasing), and exactly that while no hole before it has been squeezed out, which is
//! most of the time: a row is found with one probe there, else by a binary search below it.

use crate::row::Row;
use crate::table::RowId;

/// Squeezing holes out is not worth a pass below this many.
const MIN_SQUEEZE: usize = 32;

/// A table's rows, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Rows {
    /// The slots by increasing id; `None` where the row was removed.
    slots: Vec<(RowId, Option<Row>)>,
    /// How many slots hold a row.
    live: usize,
}

impl Rows {
    /// How many rows there are.
    pub(crate) fn len(&self) -> usize {
        self.live
    }

    /// The row with id `id`.
    pub(crate) fn get(&self, id: RowId) -> Option<&Row> {
        let position = self.position(id).ok()?;
        self.slots[position].1.as_ref()
    }

    /// Every row with its id, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (RowId, &Row)> + '_ {
        self.iter_from(0)
    }

    /// The rows whose id is `start` or later, oldest first.
    pub(crate) fn since(&self, start: RowId) -> impl Iterator<Item = &Row> + '_ {
        let first = self.slots.partition_point(|(id, _)| *id < start);
        self.iter_from(first).map(|(_, row)| row)
    }

    /// Adds `row` under `id`, which must be greater than every id here.
    pub(crate) fn push(&mut self, id: RowId, row: Row) {
        debug_assert!(self.slots.last().is_none_or(|(last, _)| *last < id));
        self.slots.push((id, Some(row)));
        self.live += 1;
    }

    /// Removes the row with id `id`, and returns it.
    pub(crate) fn remove(&mut self, id: RowId) -> Option<Row> {
        let position = self.position(id).ok()?;
        let row = self.slots[position].1.take()?;
        self.live -= 1;
        let holes = self.slots.len() - self.live;
        if holes >= MIN_SQUEEZE && holes > self.live {
            self.slots.retain(|(_, row)| row.is_some());
        }
        Some(row)
    }

    /// Removes every row whose id is `start` or later, and returns them with their ids.
    pub(crate) fn split_off(&mut self, start: RowId) -> Vec<(RowId, Row)> {
        let first = self.slots.partition_point(|(id, _)| *id < start);
        let removed: Vec<(RowId, Row)> = self
            .slots
            .drain(first..)
            .filter_map(|(id, row)| Some((id, row?)))
            .collect();
        self.live -= removed.len();
        removed
    }

    /// Puts back rows removed earlier, under their ids, which none of the rows here has.
    pub(crate) fn restore(&mut self, rows: Vec<(RowId, Row)>) {
        self.live += rows.len();
        let mut squeezed = Vec::new();
        for (id, row) in rows {
            match self.position(id) {
                Ok(position) => self.slots[position].1 = Some(row),
                Err(_) => squeezed.push((id, Some(row))),
            }
        }
        if squeezed.is_empty() {
            return;
        }
        // Their holes were squeezed out: merge them back in, in one pass.
        squeezed.sort_unstable_by_key(|(id, _)| *id);
        let mut merged = Vec::with_capacity(self.slots.len() + squeezed.len());
        let mut back = squeezed.into_iter().peekable();
        for slot in self.slots.drain(..) {
            while let Some(earlier) = back.next_if(|(id, _)| *id < slot.0) {
                merged.push(earlier);
            }
            merged.push(slot);
        }
        merged.extend(back);
        self.slots = merged;
    }

    /// The rows with their ids from slot `first` on, oldest first.
    fn iter_from(&self, first: usize) -> impl Iterator<Item = (RowId, &Row)> + '_ {
        self.slots[first..]
            .iter()
            .filter_map(|(id, row)| Some((*id, row.as_ref()?)))
    }

    /// The slot of id `id`: `Ok(position)` if there is one (holding a row or not), else
    /// `Err(position)` where it would go.
    fn position(&self, id: RowId) -> Result<usize, usize> {
        let first = self.slots.first().map_or(0, |(first, _)| first.0);
        let Some(guess) = id.0.checked_sub(first) else {
            return Err(0);
        };
        let guess = usize::try_from(guess).unwrap_or(usize::MAX);
        match self.slots.get(guess) {
            Some((found, _)) if *found == id => Ok(guess),
            _ => {
                let below = &self.slots[..guess.min(self.slots.len())];
                below.binary_search_by_key(&id, |(id, _)| *id)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(byte: u8) -> Row {
        Row::from(&[byte][..])
    }

    /// The ids of the rows, oldest first.
    fn ids(rows: &Rows) -> Vec<u64> {
        rows.iter().map(|(id, _)| id.0).collect()
    }

    /// Rows with ids `0..count`, each row's byte its id.
    fn counted(count: u8) -> Rows {
        let mut rows = Rows::default();
        for id in 0..count {
            rows.push(RowId(id.into()), row(id));
        }
        rows
    }

    #[test]
    fn rows_are_found_by_id_around_holes() {
        let mut rows = counted(10);
        assert_eq!(rows.remove(RowId(3)), Some(row(3)));
        assert_eq!(rows.remove(RowId(3)), None);
        assert_eq!(rows.get(RowId(3)), None);
        assert_eq!(rows.get(RowId(4)), Some(&row(4)));
        assert_eq!(rows.get(RowId(10)), None);
        assert_eq!(rows.len(), 9);
        assert_eq!(ids(&rows), [0, 1, 2, 4, 5, 6, 7, 8, 9]);
        assert_eq!(
            rows.since(RowId(3)).cloned().collect::<Vec<_>>(),
            (4..10).map(row).collect::<Vec<_>>()
        );
    }

    #[test]
    fn squeezed_holes_keep_ids_and_order() {
        let mut rows = counted(100);
        // Enough removals to squeeze: the rows left are no longer at `id - first`.
        for id in (0..100).filter(|id| id % 3 != 0) {
            assert!(rows.remove(RowId(id)).is_some());
        }
        assert!(rows.slots.len() < 100);
        assert_eq!(ids(&rows), (0..100).step_by(3).collect::<Vec<_>>());
        for id in 0..100u8 {
            let expected = (id % 3 == 0).then(|| row(id));
            assert_eq!(rows.get(RowId(id.into())), expected.as_ref());
        }
        rows.push(RowId(200), row(200));
        assert_eq!(rows.get(RowId(200)), Some(&row(200)));
        assert_eq!(rows.since(RowId(100)).count(), 1);
    }

    #[test]
    fn restored_rows_go_back_in_order() {
        let mut rows = counted(100);
        let removed: Vec<(RowId, Row)> = (0..80)
            .map(|id| (RowId(id), rows.remove(RowId(id)).expect("the row is there")))
            .collect();
        assert_eq!(rows.len(), 20);
        // Some holes were squeezed out, some are still there.
        assert!(rows.slots.len() > 20 && rows.slots.len() < 100);
        rows.restore(removed.into_iter().rev().collect());
        assert_eq!(rows.len(), 100);
        assert_eq!(ids(&rows), (0..100).collect::<Vec<_>>());
        assert!((0..100).all(|id| rows.get(RowId(id)) == Some(&row(id as u8))));
    }

    #[test]
    fn split_off_takes_the_newest_rows_and_their_holes() {
        let mut rows = counted(10);
        rows.remove(RowId(7));
        let taken = rows.split_off(RowId(5));
        assert_eq!(
            taken.iter().map(|(id, _)| id.0).collect::<Vec<_>>(),
            [5, 6, 8, 9]
        );
        assert_eq!(rows.len(), 5);
        assert_eq!(ids(&rows), [0, 1, 2, 3, 4]);
        rows.push(RowId(5), row(5));
        assert_eq!(rows.get(RowId(5)), Some(&row(5)));
    }
}
