//! Tables, scans and row iterators.
//!
//! A scan runs when it is asked for and its rows are held by the iterator as shared handles
//! (`Arc<[u8]>`), so an iterator is unaffected by later writes of the same call, and
//! [`InstanceEnv::row_iter_advance`] can hand the module as many whole rows per call as its
//! buffer holds: a host call costs more than decoding a small row.

use super::{report, InstanceEnv};
pub use wasmod_abi::imports::Advance;
use wasmod_abi::Errno;
use wasmod_datastore::Row;

/// The rows of a scan, and how many the module has taken.
#[derive(Debug)]
pub(crate) struct RowIter {
    rows: Vec<Row>,
    next: usize,
}

impl InstanceEnv {
    /// `table_row_count`. Errors: `NO_TX`, `NO_SUCH_TABLE`.
    pub fn table_row_count(&mut self, table: u32) -> Result<u64, Errno> {
        self.reading()?.row_count(table).map_err(report)
    }

    /// `table_scan`: an iterator over every row. Errors: `NO_TX`, `NO_SUCH_TABLE`.
    pub fn table_scan(&mut self, table: u32) -> Result<u32, Errno> {
        let rows = self.reading()?.scan(table).map_err(report)?;
        Ok(self.iters.insert(RowIter { rows, next: 0 }))
    }

    /// `index_scan`: an iterator over the rows the encoded scan selects, in index order.
    /// Errors: `NO_TX`, `NO_SUCH_TABLE`, `NO_SUCH_INDEX`, `BAD_ENCODING`.
    pub fn index_scan(&mut self, table: u32, index: u32, scan: &[u8]) -> Result<u32, Errno> {
        let rows = self
            .reading()?
            .index_scan(table, index, scan)
            .map_err(report)?;
        Ok(self.iters.insert(RowIter { rows, next: 0 }))
    }

    /// `row_iter_advance`: writes as many whole rows as fit in `buf`. Errors: `NO_SUCH_ITER`.
    pub fn row_iter_advance(&mut self, iter: u32, buf: &mut [u8]) -> Result<Advance, Errno> {
        let handle = iter;
        let iter = self.iters.get_mut(handle).ok_or(Errno::NO_SUCH_ITER)?;
        let mut written = 0;
        while let Some(row) = iter.rows.get(iter.next) {
            let Some(space) = buf.get_mut(written..written + row.len()) else {
                break;
            };
            space.copy_from_slice(row);
            written += row.len();
            iter.next += 1;
        }
        match iter.rows.get(iter.next) {
            None => {
                self.iters.remove(handle);
                Ok(Advance::Exhausted { written })
            }
            Some(row) if written == 0 => Ok(Advance::BufferTooSmall { needed: row.len() }),
            Some(_) => Ok(Advance::More { written }),
        }
    }

    /// `row_iter_close`: drops an iterator early. Errors: `NO_SUCH_ITER`.
    pub fn row_iter_close(&mut self, iter: u32) -> Result<(), Errno> {
        self.iters.remove(iter).map(drop).ok_or(Errno::NO_SUCH_ITER)
    }

    /// `insert`: inserts the encoded row; generated auto-increment values are written back
    /// into `row`. Errors: `NO_TX`, `NOT_ALLOWED`, `NO_SUCH_TABLE`, `BAD_ENCODING`,
    /// `UNIQUE_VIOLATION`, `SEQUENCE_EXHAUSTED`.
    pub fn insert(&mut self, table: u32, row: &mut [u8]) -> Result<(), Errno> {
        self.writing()?.insert(table, row).map_err(report)
    }

    /// `update_by_unique`: replaces the row with the same key in unique index `index`.
    /// Errors: `NO_TX`, `NOT_ALLOWED`, `NO_SUCH_TABLE`, `NO_SUCH_INDEX` (also for an index
    /// that is not unique), `BAD_ENCODING`, `NO_SUCH_ROW`, `UNIQUE_VIOLATION`.
    pub fn update_by_unique(&mut self, table: u32, index: u32, row: &[u8]) -> Result<(), Errno> {
        self.writing()?
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
        self.writing()?
            .delete_by_index_scan(table, index, scan)
            .map_err(report)
    }

    /// `delete_rows`: deletes the rows equal to the concatenated encoded `rows`; returns how
    /// many. Errors: `NO_TX`, `NOT_ALLOWED`, `NO_SUCH_TABLE`, `BAD_ENCODING`.
    pub fn delete_rows(&mut self, table: u32, rows: &[u8]) -> Result<u32, Errno> {
        self.writing()?.delete_rows(table, rows).map_err(report)
    }

    /// `clear_table`: deletes every row; returns how many. Errors: `NO_TX`, `NOT_ALLOWED`,
    /// `NO_SUCH_TABLE`.
    pub fn clear_table(&mut self, table: u32) -> Result<u64, Errno> {
        self.writing()?.clear(table).map_err(report)
    }
}
