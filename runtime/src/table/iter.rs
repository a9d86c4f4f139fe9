//! Iterating rows: many rows per host call, into a reused buffer.

use crate::sys::{self, Advance};
use crate::Errno;
use core::marker::PhantomData;
use std::cell::RefCell;
use wasmod_abi::Reader;

use super::{host_failed, TableRow};

/// The size of a fresh iteration buffer: room for a few hundred typical rows per host call.
const INITIAL_BUFFER: usize = 64 * 1024;

std::thread_local! {
    /// Buffers of finished iterators, kept so that the next iterator neither allocates nor
    /// zero-fills. A module is single-threaded, so this is a plain cell in wasm.
    static BUFFERS: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// The rows of a scan, decoded one by one from a buffer the host fills many rows at a time:
/// what [`Table::iter`](super::Table::iter) and [`BTreeIndex::filter`](super::BTreeIndex::filter)
/// return. Dropping it early closes the host's iterator.
///
/// ```
/// # use wasmod::prelude::*;
/// # use wasmod_testing::TestModule;
/// # #[wasmod::module]
/// # mod shop {
/// #     #[wasmod::table]
/// #     #[derive(Clone, Debug, PartialEq)]
/// #     pub struct Item {
/// #         #[primary_key]
/// #         #[auto_inc]
/// #         pub id: u64,
/// #         #[unique]
/// #         pub sku: String,
/// #         #[index(btree)]
/// #         pub price: u32,
/// #     }
/// # }
/// # use shop::{Item, ItemAccess};
/// # let module = TestModule::<shop::Module>::new();
/// module.write(|db| {
///     for sku in ["nut", "bolt", "nail"] {
///         db.item().insert(Item { id: 0, sku: sku.into(), price: 1 });
///     }
/// });
/// let first_two = module.read(|db| db.item().price().filter(1u32).take(2).count());
/// assert_eq!(first_two, 2);
/// ```
pub struct RowIter<T: TableRow> {
    /// The host's iterator handle; `None` once the host has no more rows.
    handle: Option<u32>,
    /// The rows the host wrote last, `buffer[start..end]` not yet decoded.
    buffer: Vec<u8>,
    start: usize,
    end: usize,
    rows: PhantomData<fn() -> T>,
}

impl<T: TableRow> RowIter<T> {
    pub(crate) fn open(table: &'static str, handle: Result<u32, Errno>) -> Self {
        let handle = handle.unwrap_or_else(|errno| host_failed(table, errno));
        let buffer = BUFFERS
            .with(|buffers| buffers.borrow_mut().pop())
            .unwrap_or_else(|| vec![0; INITIAL_BUFFER]);
        Self {
            handle: Some(handle),
            buffer,
            start: 0,
            end: 0,
            rows: PhantomData,
        }
    }

    /// Asks the host for the next batch of rows; `false` when there are none.
    fn refill(&mut self) -> bool {
        let Some(handle) = self.handle else {
            return false;
        };
        loop {
            match sys::row_iter_advance(handle, &mut self.buffer) {
                Ok(Advance::More { written }) => {
                    (self.start, self.end) = (0, written);
                    if written > 0 {
                        return true;
                    }
                }
                Ok(Advance::Exhausted { written }) => {
                    self.handle = None;
                    (self.start, self.end) = (0, written);
                    return written > 0;
                }
                Ok(Advance::BufferTooSmall { needed }) => self.buffer.resize(needed, 0),
                Err(errno) => host_failed(T::TABLE_NAME, errno),
            }
        }
    }
}

impl<T: TableRow> Iterator for RowIter<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        if self.start == self.end && !self.refill() {
            return None;
        }
        let mut reader = Reader::new(&self.buffer[self.start..self.end]);
        let row =
            T::decode(&mut reader).unwrap_or_else(|error| super::bad_row(T::TABLE_NAME, error));
        self.start = self.end - reader.remaining();
        Some(row)
    }
}

impl<T: TableRow> Drop for RowIter<T> {
    fn drop(&mut self) {
        if let Some(handle) = self.handle.take() {
            // Closing can only fail for a handle the host already dropped: nothing to undo.
            let _ = sys::row_iter_close(handle);
        }
        let buffer = core::mem::take(&mut self.buffer);
        BUFFERS.with(|buffers| buffers.borrow_mut().push(buffer));
    }
}
