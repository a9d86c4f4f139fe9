//! One table's rows by id: chunks of slots in id order, with holes where rows were removed.
//!
//! Row ids grow with each insert and are never reused, so a new row always goes after every
//! other: inserting is a push onto the last chunk, where a B-tree would walk down its right
//! edge (and split nodes) for every row. Chunks hold at most [`CHUNK`] slots, so that a
//! growing table never copies all its slots into a vector twice as large: on a large table
//! that copy, and the page faults of the fresh memory it fills, cost more than the inserts
//! around it.
//!
//! Removing a row leaves a hole in its slot, so the other rows keep their places. Once holes
//! are the majority of a chunk they are squeezed out of it in one pass, which costs no more
//! than the removals that made them; a chunk left without rows goes.
//!
//! Ids are distinct and increasing, so a slot's position in its chunk is at most its id minus
//! the chunk's first id, and exactly that while no hole before it has been squeezed out: a row
//! is found with one probe there (and its chunk with one probe while the chunks before it are
//! full), else by binary search.

use crate::row::{Row, RowId};

/// The most slots a chunk holds.
const CHUNK: usize = 512;

/// Squeezing the holes out of a chunk is not worth a pass below this many.
const MIN_SQUEEZE: usize = 32;

/// A row's id, and the row (`None` once removed).
type Slot = (RowId, Option<Row>);

/// A table's rows, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Rows {
    /// The chunks, by increasing ids; none is empty.
    chunks: Vec<Chunk>,
    /// How many rows there are.
    live: usize,
}

/// Consecutive slots, by increasing id.
#[derive(Debug)]
struct Chunk {
    /// At least one, at most [`CHUNK`].
    slots: Vec<Slot>,
    /// How many slots hold a row.
    live: usize,
}

impl Chunk {
    /// The id of the first slot.
    fn first(&self) -> RowId {
        // A chunk is never empty.
        self.slots[0].0
    }

    /// The id of the last slot.
    fn last(&self) -> RowId {
        self.slots[self.slots.len() - 1].0
    }

    /// The position of the slot of `id`: `Ok` if there is one (holding a row or not), else
    /// `Err` with where it would go.
    fn position(&self, id: RowId) -> Result<usize, usize> {
        let Some(guess) = id.0.checked_sub(self.first().0) else {
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

impl Rows {
    /// How many rows there are.
    pub(crate) fn len(&self) -> usize {
        self.live
    }

    /// The row with id `id`.
    pub(crate) fn get(&self, id: RowId) -> Option<&Row> {
        let (chunk, position) = self.slot(id)?;
        self.chunks[chunk].slots[position].1.as_ref()
    }

    /// Every row with its id, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (RowId, &Row)> + '_ {
        self.iter_from(0, 0)
    }

    /// The rows whose id is `start` or later, oldest first.
    pub(crate) fn since(&self, start: RowId) -> impl Iterator<Item = &Row> + '_ {
        self.since_with_ids(start).map(|(_, row)| row)
    }

    /// The rows whose id is `start` or later, with their ids, oldest first.
    pub(crate) fn since_with_ids(&self, start: RowId) -> impl Iterator<Item = (RowId, &Row)> + '_ {
        let (chunk, position) = self.first_from(start);
        self.iter_from(chunk, position)
    }

    /// Adds `row` under `id`, which must be greater than every id here.
    pub(crate) fn push(&mut self, id: RowId, row: Row) {
        debug_assert!(self.chunks.last().is_none_or(|chunk| chunk.last() < id));
        if self
            .chunks
            .last()
            .is_none_or(|chunk| chunk.slots.len() >= CHUNK)
        {
            // The first chunk grows as the table does (many tables stay small); later ones
            // get their full size at once.
            let capacity = if self.chunks.is_empty() { 0 } else { CHUNK };
            self.chunks.push(Chunk {
                slots: Vec::with_capacity(capacity),
                live: 0,
            });
        }
        if let Some(chunk) = self.chunks.last_mut() {
            chunk.slots.push((id, Some(row)));
            chunk.live += 1;
            self.live += 1;
        }
    }

    /// Removes the row with id `id`, and returns it.
    pub(crate) fn remove(&mut self, id: RowId) -> Option<Row> {
        let (index, position) = self.slot(id)?;
        let chunk = &mut self.chunks[index];
        let row = chunk.slots[position].1.take()?;
        chunk.live -= 1;
        self.live -= 1;
        let holes = chunk.slots.len() - chunk.live;
        if chunk.live == 0 {
            self.chunks.remove(index);
        } else if holes >= MIN_SQUEEZE && holes > chunk.live {
            chunk.slots.retain(|(_, row)| row.is_some());
        }
        Some(row)
    }

    /// Removes every row whose id is `start` or later, and returns them with their ids.
    pub(crate) fn split_off(&mut self, start: RowId) -> Vec<(RowId, Row)> {
        let (index, position) = self.first_from(start);
        let mut removed = Vec::new();
        // The chunks from `gone` on go whole.
        let mut gone = index;
        if let Some(chunk) = self.chunks.get_mut(index).filter(|_| position > 0) {
            removed.extend(take_rows(chunk.slots.drain(position..)));
            chunk.live -= removed.len();
            if chunk.live > 0 {
                gone += 1;
            }
        }
        for chunk in self.chunks.drain(gone..) {
            removed.extend(take_rows(chunk.slots));
        }
        self.live -= removed.len();
        removed
    }

    /// Puts back rows removed earlier, under their ids, which none of the rows here has.
    ///
    /// A row whose slot is still there (a hole) goes back into it. One whose slot was squeezed
    /// out, or whose chunk went, is inserted in id order into the chunk its id falls in (or
    /// the first), which is split in two if that takes it past [`CHUNK`] slots: putting back
    /// `n` rows costs `O(n × CHUNK)` at most, whatever the table's size.
    pub(crate) fn restore(&mut self, rows: Vec<(RowId, Row)>) {
        for (id, row) in rows {
            self.live += 1;
            let index = match self.chunk_of(id) {
                Some(index) => index,
                None if self.chunks.is_empty() => {
                    self.chunks.push(Chunk {
                        slots: vec![(id, Some(row))],
                        live: 1,
                    });
                    continue;
                }
                // Before the first chunk's first id.
                None => 0,
            };
            let chunk = &mut self.chunks[index];
            match chunk.position(id) {
                Ok(position) => {
                    debug_assert!(chunk.slots[position].1.is_none());
                    chunk.slots[position].1 = Some(row);
                }
                Err(position) => chunk.slots.insert(position, (id, Some(row))),
            }
            chunk.live += 1;
            if chunk.slots.len() > CHUNK {
                let upper = chunk.slots.split_off(CHUNK / 2);
                let live = upper.iter().filter(|(_, row)| row.is_some()).count();
                chunk.live -= live;
                self.chunks.insert(index + 1, Chunk { slots: upper, live });
            }
        }
    }

    /// The chunk and position of the slot of `id`, if there is one.
    fn slot(&self, id: RowId) -> Option<(usize, usize)> {
        let index = self.chunk_of(id)?;
        let position = self.chunks[index].position(id).ok()?;
        Some((index, position))
    }

    /// The chunk whose ids `id` falls among: the last one whose first id is at most `id`.
    fn chunk_of(&self, id: RowId) -> Option<usize> {
        let first = self.chunks.first()?.first();
        let guess = id.0.checked_sub(first.0)? / CHUNK as u64;
        let guess = usize::try_from(guess).unwrap_or(usize::MAX);
        let fits = |index: usize| {
            self.chunks[index].first() <= id
                && self
                    .chunks
                    .get(index + 1)
                    .is_none_or(|next| id < next.first())
        };
        if guess < self.chunks.len() && fits(guess) {
            return Some(guess);
        }
        let after = self.chunks.partition_point(|chunk| chunk.first() <= id);
        after.checked_sub(1)
    }

    /// The chunk and position of the first slot whose id is `start` or later (one past the
    /// end if there is none).
    fn first_from(&self, start: RowId) -> (usize, usize) {
        let index = self.chunks.partition_point(|chunk| chunk.last() < start);
        let position = self.chunks.get(index).map_or(0, |chunk| {
            chunk.slots.partition_point(|(id, _)| *id < start)
        });
        (index, position)
    }

    /// The rows with their ids from slot `position` of chunk `index` on, oldest first.
    fn iter_from(&self, index: usize, position: usize) -> impl Iterator<Item = (RowId, &Row)> + '_ {
        let chunks = self.chunks.get(index..).unwrap_or_default();
        chunks
            .iter()
            .enumerate()
            .flat_map(move |(nth, chunk)| &chunk.slots[if nth == 0 { position } else { 0 }..])
            .filter_map(|(id, row)| Some((*id, row.as_ref()?)))
    }
}

/// The rows of `slots`, without the holes.
fn take_rows(slots: impl IntoIterator<Item = Slot>) -> impl Iterator<Item = (RowId, Row)> {
    slots.into_iter().filter_map(|(id, row)| Some((id, row?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: u64) -> Row {
        Row::from(&id.to_le_bytes()[..])
    }

    /// The ids of the rows, oldest first.
    fn ids(rows: &Rows) -> Vec<u64> {
        rows.iter().map(|(id, _)| id.0).collect()
    }

    /// Rows with ids `0..count`, each row its id's bytes.
    fn counted(count: u64) -> Rows {
        let mut rows = Rows::default();
        for id in 0..count {
            rows.push(RowId(id), row(id));
        }
        rows
    }

    /// Checks that `rows` holds exactly the rows with the ids `expected`, each found by id,
    /// and none of the ids below `end` that are not expected.
    fn check(rows: &Rows, expected: &[u64], end: u64) {
        assert_eq!(ids(rows), expected);
        assert_eq!(rows.len(), expected.len());
        assert!(rows.iter().all(|(id, found)| *found == row(id.0)));
        for id in 0..end {
            let present = expected.contains(&id).then(|| row(id));
            assert_eq!(rows.get(RowId(id)), present.as_ref(), "row {id}");
        }
        assert!(rows.chunks.iter().all(|chunk| chunk.live > 0
            && chunk.slots.len() <= CHUNK
            && chunk.live == chunk.slots.iter().filter(|(_, row)| row.is_some()).count()));
    }

    #[test]
    fn rows_from_a_position_skip_holes_and_squeezed_chunks() {
        let mut rows = counted(2000);
        // Holes in the first chunk, squeezed out of the second, a whole third chunk gone.
        for id in (1..512).step_by(100).chain(520..900).chain(1024..1536) {
            rows.remove(RowId(id));
        }
        let from = |start: u64| -> Vec<u64> {
            rows.since_with_ids(RowId(start))
                .map(|(id, _)| id.0)
                .take(3)
                .collect()
        };
        assert_eq!(from(0), [0, 2, 3]);
        assert_eq!(from(101), [102, 103, 104]);
        assert_eq!(from(519), [519, 900, 901]);
        assert_eq!(from(600), [900, 901, 902]);
        assert_eq!(from(1023), [1023, 1536, 1537]);
        assert_eq!(from(1998), [1998, 1999]);
        assert_eq!(from(5000), Vec::<u64>::new());
        assert!(rows
            .since_with_ids(RowId(0))
            .all(|(id, found)| *found == row(id.0)));
    }

    #[test]
    fn rows_are_found_by_id_around_holes() {
        let mut rows = counted(10);
        assert_eq!(rows.remove(RowId(3)), Some(row(3)));
        assert_eq!(rows.remove(RowId(3)), None);
        assert_eq!(rows.remove(RowId(10)), None);
        check(&rows, &[0, 1, 2, 4, 5, 6, 7, 8, 9], 12);
        assert_eq!(
            rows.since(RowId(3)).cloned().collect::<Vec<_>>(),
            (4..10).map(row).collect::<Vec<_>>()
        );
        assert_eq!(rows.since(RowId(10)).count(), 0);
    }

    #[test]
    fn rows_span_chunks() {
        let count = 3 * CHUNK as u64 + 10;
        let mut rows = counted(count);
        assert_eq!(rows.chunks.len(), 4);
        // Half of the second chunk (not enough to squeeze it), all of the third.
        let second = CHUNK as u64..2 * CHUNK as u64;
        let third = 2 * CHUNK as u64..3 * CHUNK as u64;
        for id in second.clone().step_by(2).chain(third.clone()) {
            assert_eq!(rows.remove(RowId(id)), Some(row(id)));
        }
        assert_eq!(rows.chunks.len(), 3);
        let expected: Vec<u64> = (0..count)
            .filter(|id| !(third.contains(id) || second.contains(id) && id % 2 == 0))
            .collect();
        check(&rows, &expected, count + 5);
        let since = CHUNK as u64 + 100;
        assert_eq!(
            rows.since(RowId(since)).cloned().collect::<Vec<_>>(),
            expected
                .iter()
                .filter(|&&id| id >= since)
                .map(|&id| row(id))
                .collect::<Vec<_>>()
        );
        rows.push(RowId(count + 1), row(count + 1));
        assert_eq!(rows.get(RowId(count + 1)), Some(&row(count + 1)));
    }

    #[test]
    fn squeezed_holes_keep_ids_and_order() {
        let count = 2 * CHUNK as u64;
        let mut rows = counted(count);
        // Enough removals to squeeze: the rows left are no longer at `id - first`.
        for id in (0..count).filter(|id| id % 3 != 0) {
            assert!(rows.remove(RowId(id)).is_some());
        }
        assert!(rows.chunks[0].slots.len() < CHUNK);
        let expected: Vec<u64> = (0..count).step_by(3).collect();
        check(&rows, &expected, count);
        rows.push(RowId(count + 100), row(count + 100));
        assert_eq!(rows.get(RowId(count + 100)), Some(&row(count + 100)));
        assert_eq!(rows.since(RowId(count)).count(), 1);
    }

    #[test]
    fn restored_rows_go_back_in_order() {
        let count = 3 * CHUNK as u64;
        let mut rows = counted(count);
        // A whole chunk, most of another (squeezed), a few of the last (holes).
        let removed: Vec<(RowId, Row)> = (0..CHUNK as u64 + 400)
            .chain((2 * CHUNK as u64..count).step_by(7))
            .map(|id| (RowId(id), rows.remove(RowId(id)).expect("the row is there")))
            .collect();
        rows.restore(removed.into_iter().rev().collect());
        check(&rows, &(0..count).collect::<Vec<_>>(), count);
        check_chunks(&rows);

        // Holes only: filled in place.
        let removed: Vec<(RowId, Row)> = [5, 700, 1200]
            .map(|id| (RowId(id), rows.remove(RowId(id)).expect("the row is there")))
            .into();
        rows.restore(removed);
        check(&rows, &(0..count).collect::<Vec<_>>(), count);
        check_chunks(&rows);

        // Every row, so every chunk, gone: they come back into new chunks.
        let mut rows = counted(3);
        let removed: Vec<(RowId, Row)> = (0..3)
            .map(|id| (RowId(id), rows.remove(RowId(id)).expect("the row is there")))
            .collect();
        assert_eq!(rows.len(), 0);
        rows.restore(removed);
        check(&rows, &[0, 1, 2], 3);
        check_chunks(&rows);
    }

    /// Chunks are not empty, hold at most [`CHUNK`] slots in id order, and count their rows.
    fn check_chunks(rows: &Rows) {
        for chunk in &rows.chunks {
            assert!(!chunk.slots.is_empty() && chunk.slots.len() <= CHUNK);
            assert!(chunk.slots.windows(2).all(|pair| pair[0].0 < pair[1].0));
            let live = chunk.slots.iter().filter(|(_, row)| row.is_some()).count();
            assert_eq!(chunk.live, live);
        }
    }

    #[test]
    fn split_off_takes_the_newest_rows_and_their_holes() {
        let count = 2 * CHUNK as u64 + 3;
        let mut rows = counted(count);
        rows.remove(RowId(CHUNK as u64 + 7));
        let start = CHUNK as u64 + 5;
        let taken = rows.split_off(RowId(start));
        let expected: Vec<u64> = (start..count).filter(|&id| id != start + 2).collect();
        assert_eq!(
            taken.iter().map(|(id, _)| id.0).collect::<Vec<_>>(),
            expected
        );
        check(&rows, &(0..start).collect::<Vec<_>>(), count);
        rows.push(RowId(start), row(start));
        assert_eq!(rows.get(RowId(start)), Some(&row(start)));

        // From the start of a chunk: the chunk goes.
        let taken = rows.split_off(RowId(CHUNK as u64));
        assert_eq!(taken.len(), 6);
        assert_eq!(rows.chunks.len(), 1);
        check(&rows, &(0..CHUNK as u64).collect::<Vec<_>>(), count);
        assert!(rows.split_off(RowId(0)).len() == CHUNK && rows.chunks.is_empty());
        check(&rows, &[], count);
    }
}
