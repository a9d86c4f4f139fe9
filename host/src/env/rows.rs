//! Tables, scans and row iterators.
//!
//! A scan runs when it is asked for and copies the bytes of the rows it selects, end to end,
//! into the iterator's buffer, so an iterator is unaffected by later writes of the same call.
//! [`InstanceEnv::row_iter_advance`] then hands the module as many whole rows per call as its
//! buffer holds, in one copy: a host call costs more than decoding a small row. The buffers of
//! finished iterators are kept for the next scans of the instance, so a scan allocates only
//! when it selects more than any before it.
//!
//! Since a scan copies, open iterators count against the call's budget of host memory (see
//! `budget`): past it, a scan fails with `TOO_LARGE`, and a module that opens scans in a loop
//! without reading them cannot make the host hold more than that. The budget is checked as the
//! rows are copied, so a scan of a table larger than it stops there rather than copy the whole
//! table first.
//!
//! A scan runs inside one host call, where the deadline's epoch interruption (which stops wasm
//! code) cannot reach it: a scan of a large table could run on well past the call's deadline.
//! So a scan looks at the deadline every [`DEADLINE_CHECK_ROWS`] rows, and stops once it has
//! passed: the import then traps as wasm code past its deadline does, and the call ends
//! `deadline exceeded` ([`InstanceEnv::take_interrupt`]).

use super::{report, InstanceEnv};
use std::time::Instant;
pub use wasmod_abi::imports::Advance;
use wasmod_abi::Errno;
use wasmod_datastore::Row;

/// How many rows a scan copies between two looks at the call's deadline: a look costs a clock
/// read, and this many rows take well under a millisecond to copy.
pub(crate) const DEADLINE_CHECK_ROWS: usize = 4096;

/// Why a scan stopped before its last row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stopped {
    /// Its rows would hold more than the call's budget has room for.
    TooLarge,
    /// The call's deadline passed.
    Deadline,
}

/// What a scan may take: the bytes left in the call's budget, and the call's deadline.
#[derive(Clone, Copy, Debug)]
struct ScanBounds {
    room: usize,
    deadline: Option<Instant>,
}

/// How many finished iterators' buffers an instance keeps.
const SPARE_ITERS: usize = 8;

/// Buffers of iterators that held more than this many bytes of rows are dropped rather than
/// kept, so that one large scan does not pin its memory for the instance's life.
const MAX_SPARE_BYTES: usize = 1 << 20;

/// The rows of a scan, and how many the module has taken.
#[derive(Debug, Default)]
pub(crate) struct RowIter {
    /// The rows' bytes, end to end.
    bytes: Vec<u8>,
    /// Where each row ends in `bytes`.
    ends: Vec<usize>,
    /// How many rows the module has taken.
    next: usize,
}

impl RowIter {
    /// Copies `rows` into this (empty) iterator, stopping once they take more than
    /// `bounds.room` bytes, or, looking every [`DEADLINE_CHECK_ROWS`] rows, once
    /// `bounds.deadline` has passed.
    fn fill<'a>(
        &mut self,
        rows: impl Iterator<Item = &'a Row>,
        bounds: ScanBounds,
    ) -> Result<(), Stopped> {
        for (count, row) in rows.enumerate() {
            self.bytes.extend_from_slice(row);
            self.ends.push(self.bytes.len());
            if self.bytes.len() + self.ends.len() * size_of::<usize>() > bounds.room {
                return Err(Stopped::TooLarge);
            }
            let look = count % DEADLINE_CHECK_ROWS == DEADLINE_CHECK_ROWS - 1;
            if look
                && bounds
                    .deadline
                    .is_some_and(|deadline| Instant::now() >= deadline)
            {
                return Err(Stopped::Deadline);
            }
        }
        Ok(())
    }

    /// The bytes the iterator holds: its rows and their ends.
    fn held(&self) -> usize {
        self.bytes.capacity() + self.ends.capacity() * size_of::<usize>()
    }

    /// Where row `row` ends in `bytes`; `0` before the first.
    fn end(&self, row: usize) -> usize {
        match row {
            0 => 0,
            row => self.ends[row - 1],
        }
    }

    /// Empties the iterator, keeping its buffers.
    fn reset(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.next = 0;
    }
}

/// Keeps the buffers of a finished iterator in `spare` for a later scan, up to
/// [`SPARE_ITERS`] of them and [`MAX_SPARE_BYTES`] each for its rows and for their ends.
pub(crate) fn keep(spare: &mut Vec<RowIter>, mut iter: RowIter) {
    let ends_bytes = iter.ends.capacity() * std::mem::size_of::<usize>();
    let small = iter.bytes.capacity() <= MAX_SPARE_BYTES && ends_bytes <= MAX_SPARE_BYTES;
    if spare.len() < SPARE_ITERS && small {
        iter.reset();
        spare.push(iter);
    }
}

impl InstanceEnv {
    /// `table_row_count`. Errors: `NO_TX`, `NO_SUCH_TABLE`.
    pub fn table_row_count(&mut self, table: u32) -> Result<u64, Errno> {
        self.reading(table)?.row_count(table).map_err(report)
    }

    /// `table_scan`: an iterator over every row. Errors: `NO_TX`, `NO_SUCH_TABLE`,
    /// `TOO_LARGE` (see the module docs).
    pub fn table_scan(&mut self, table: u32) -> Result<u32, Errno> {
        let mut iter = self.new_iter()?;
        let bounds = self.scan_bounds();
        let filled = iter.fill(self.reading(table)?.rows(table).map_err(report)?, bounds);
        self.open_iter(iter, filled)
    }

    /// `index_scan`: an iterator over the rows the encoded scan selects, in index order.
    /// Errors: `NO_TX`, `NO_SUCH_TABLE`, `NO_SUCH_INDEX`, `BAD_ENCODING`, `TOO_LARGE`.
    pub fn index_scan(&mut self, table: u32, index: u32, scan: &[u8]) -> Result<u32, Errno> {
        let mut iter = self.new_iter()?;
        let bounds = self.scan_bounds();
        let rows = self.reading(table)?.index_rows(table, index, scan);
        let filled = iter.fill(rows.map_err(report)?, bounds);
        self.open_iter(iter, filled)
    }

    /// What a scan may take now.
    fn scan_bounds(&self) -> ScanBounds {
        ScanBounds {
            room: self.limits.max_held_bytes.saturating_sub(self.held_bytes),
            deadline: self.deadline,
        }
    }

    /// An empty iterator for a scan, if the call may open one more.
    fn new_iter(&mut self) -> Result<RowIter, Errno> {
        self.room_for_handle()?;
        Ok(self.spare_iters.pop().unwrap_or_default())
    }

    /// Opens the iterator `iter` if its scan ended (`filled`) and the call's iterators may
    /// hold it too. A scan stopped at the deadline marks the call interrupted (its error code
    /// is never seen: the import traps).
    fn open_iter(&mut self, iter: RowIter, filled: Result<(), Stopped>) -> Result<u32, Errno> {
        let held = match filled {
            Ok(()) => self.hold(iter.held()),
            Err(Stopped::TooLarge) => Err(Errno::TOO_LARGE),
            Err(Stopped::Deadline) => {
                self.interrupted = true;
                Err(Errno::TOO_LARGE)
            }
        };
        if let Err(errno) = held {
            keep(&mut self.spare_iters, iter);
            return Err(errno);
        }
        Ok(self.iters.insert(iter))
    }

    /// Closes iterator `handle`, keeping its buffers for later scans.
    fn close_iter(&mut self, handle: u32) -> Option<()> {
        let iter = self.iters.remove(handle)?;
        self.release(iter.held());
        keep(&mut self.spare_iters, iter);
        Some(())
    }

    /// `row_iter_advance`: writes as many whole rows as fit in `buf`. Errors: `NO_SUCH_ITER`.
    pub fn row_iter_advance(&mut self, iter: u32, buf: &mut [u8]) -> Result<Advance, Errno> {
        let handle = iter;
        let iter = self.iters.get_mut(handle).ok_or(Errno::NO_SUCH_ITER)?;
        let start = iter.end(iter.next);
        let fitting = iter.ends[iter.next..].partition_point(|&end| end - start <= buf.len());
        iter.next += fitting;
        let end = iter.end(iter.next);
        let written = end - start;
        buf[..written].copy_from_slice(&iter.bytes[start..end]);
        match iter.ends.get(iter.next) {
            None => {
                self.close_iter(handle);
                Ok(Advance::Exhausted { written })
            }
            Some(&next_end) if written == 0 => Ok(Advance::BufferTooSmall {
                needed: next_end - start,
            }),
            Some(_) => Ok(Advance::More { written }),
        }
    }

    /// `row_iter_close`: drops an iterator early. Errors: `NO_SUCH_ITER`.
    pub fn row_iter_close(&mut self, iter: u32) -> Result<(), Errno> {
        self.close_iter(iter).ok_or(Errno::NO_SUCH_ITER)
    }

    /// `insert`: inserts the encoded row; generated auto-increment values are written back
    /// into `row`. Errors: `NO_TX`, `NOT_ALLOWED`, `NO_SUCH_TABLE`, `BAD_ENCODING`,
    /// `UNIQUE_VIOLATION`, `SEQUENCE_EXHAUSTED`.
    pub fn insert(&mut self, table: u32, row: &mut [u8]) -> Result<(), Errno> {
        self.writing(table)?.insert(table, row).map_err(report)
    }

    /// `update_by_unique`: replaces the row with the same key in unique index `index`.
    /// Errors: `NO_TX`, `NOT_ALLOWED`, `NO_SUCH_TABLE`, `NO_SUCH_INDEX` (also for an index
    /// that is not unique), `BAD_ENCODING`, `NO_SUCH_ROW`, `UNIQUE_VIOLATION`.
    pub fn update_by_unique(&mut self, table: u32, index: u32, row: &[u8]) -> Result<(), Errno> {
        self.writing(table)?
            .update_by_unique(table, index, row)
            .map_err(report)
    }

    /// `delete_by_index_scan`: deletes the rows the scan selects; returns how many. Errors:
    /// `NO_TX`, `NOT_ALLOWED`, `NO_SUCH_TABLE`, `NO_SUCH_INDEX`, `BAD_ENCODING`.
    pub fn delete_by_index_scan(
        &mut self,
        table: u32,
        index: u32,
        scan: &[u8],
    ) -> Result<u32, Errno> {
        self.writing(table)?
            .delete_by_index_scan(table, index, scan)
            .map_err(report)
    }

    /// `delete_rows`: deletes the rows equal to the concatenated encoded `rows`; returns how
    /// many. Errors: `NO_TX`, `NOT_ALLOWED`, `NO_SUCH_TABLE`, `BAD_ENCODING`.
    pub fn delete_rows(&mut self, table: u32, rows: &[u8]) -> Result<u32, Errno> {
        self.writing(table)?
            .delete_rows(table, rows)
            .map_err(report)
    }

    /// `clear_table`: deletes every row; returns how many. Errors: `NO_TX`, `NOT_ALLOWED`,
    /// `NO_SUCH_TABLE`.
    pub fn clear_table(&mut self, table: u32) -> Result<u64, Errno> {
        self.writing(table)?.clear(table).map_err(report)
    }
}

#[cfg(test)]
mod tests {
    use super::{keep, RowIter, MAX_SPARE_BYTES, SPARE_ITERS};

    #[test]
    fn spare_buffers_are_kept_emptied_and_bounded() {
        let mut spare = Vec::new();
        for _ in 0..SPARE_ITERS + 2 {
            let mut iter = RowIter::default();
            iter.bytes.extend_from_slice(b"row");
            iter.ends.push(3);
            iter.next = 1;
            keep(&mut spare, iter);
        }
        assert_eq!(spare.len(), SPARE_ITERS);
        assert!(spare
            .iter()
            .all(|iter| iter.bytes.is_empty() && iter.ends.is_empty() && iter.next == 0));

        spare.clear();
        let huge = RowIter {
            bytes: Vec::with_capacity(MAX_SPARE_BYTES + 1),
            ..RowIter::default()
        };
        keep(&mut spare, huge);
        assert!(spare.is_empty(), "a huge buffer is not kept");
        let many_ends = RowIter {
            ends: Vec::with_capacity(MAX_SPARE_BYTES / std::mem::size_of::<usize>() + 1),
            ..RowIter::default()
        };
        keep(&mut spare, many_ends);
        assert!(spare.is_empty(), "a huge list of row ends is not kept");
    }
}
