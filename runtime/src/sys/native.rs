//! The native transport: the imports, served in-process by the host [`crate::native`] holds.
//!
//! Compiled natively, module code runs inside a call of an in-process host (the real one,
//! through `wasmod-testing`'s `TestModule`). Every function here hands its slices to that
//! host's [`Imports`](crate::native::Imports): for the real host, the same code that serves a
//! wasm module's imports, minus the memory bounds checks a native slice does not need.

use super::{Advance, LogLevel};
use crate::native::imports;
use core::mem::MaybeUninit;
use wasmod_abi::Errno;

/// Bytes left in a byte source.
pub fn bytes_source_remaining(source: u32) -> Result<u32, Errno> {
    imports().bytes_source_remaining(source)
}

/// Reads up to `buf.len()` bytes into the front of `buf`; returns the count (bytes that are
/// now initialised) and whether the source is now empty.
pub fn bytes_source_read(source: u32, buf: &mut [MaybeUninit<u8>]) -> Result<(usize, bool), Errno> {
    // The host's side takes initialised bytes: zero them first (the wasm transport does not
    // need to, its host writes into the module's memory).
    for byte in buf.iter_mut() {
        byte.write(0);
    }
    // SAFETY: every byte of `buf` was just initialised, and `MaybeUninit<u8>` has the layout of
    // `u8`.
    let buf = unsafe { &mut *(buf as *mut [MaybeUninit<u8>] as *mut [u8]) };
    imports().bytes_source_read(source, buf)
}

/// Appends `bytes` to a byte sink.
pub fn bytes_sink_write(sink: u32, bytes: &[u8]) -> Result<(), Errno> {
    imports().bytes_sink_write(sink, bytes)
}

/// A byte source holding the claims of the call's caller (a JSON object), or the empty source
/// if it has none.
pub fn caller_claims() -> Result<u32, Errno> {
    imports().caller_claims()
}

/// Rows in a table.
pub fn table_row_count(table: u32) -> Result<u64, Errno> {
    imports().table_row_count(table)
}

/// An iterator over every row of a table.
pub fn table_scan(table: u32) -> Result<u32, Errno> {
    imports().table_scan(table)
}

/// An iterator over the rows an encoded index scan selects.
pub fn index_scan(table: u32, index: u32, scan: &[u8]) -> Result<u32, Errno> {
    imports().index_scan(table, index, scan)
}

/// Fills `buf` with as many whole rows as fit.
pub fn row_iter_advance(iter: u32, buf: &mut [u8]) -> Result<Advance, Errno> {
    imports().row_iter_advance(iter, buf)
}

/// Drops a row iterator before it is exhausted.
pub fn row_iter_close(iter: u32) -> Result<(), Errno> {
    imports().row_iter_close(iter)
}

/// Inserts an encoded row; generated auto-increment values are written back into `row`.
pub fn insert(table: u32, row: &mut [u8]) -> Result<(), Errno> {
    imports().insert(table, row)
}

/// Replaces the row with the same key in a unique index.
pub fn update_by_unique(table: u32, index: u32, row: &[u8]) -> Result<(), Errno> {
    imports().update_by_unique(table, index, row)
}

/// Deletes the rows an encoded index scan selects; returns how many.
pub fn delete_by_index_scan(table: u32, index: u32, scan: &[u8]) -> Result<u32, Errno> {
    imports().delete_by_index_scan(table, index, scan)
}

/// Deletes the rows equal to the given concatenated encoded rows; returns how many.
pub fn delete_rows(table: u32, rows: &[u8]) -> Result<u32, Errno> {
    imports().delete_rows(table, rows)
}

/// Deletes every row of a table; returns how many.
pub fn clear_table(table: u32) -> Result<u64, Errno> {
    imports().clear_table(table)
}

/// Logs one line.
pub fn console_log(level: LogLevel, target: &str, file: &str, line: u32, message: &str) {
    imports().console_log(level, target, file, line, message);
}

/// Opens a transaction from a procedure; returns its timestamp.
pub fn procedure_start_tx() -> Result<i64, Errno> {
    imports()
        .procedure_start_tx()
        .map(|timestamp| timestamp.to_micros_since_unix_epoch())
}

/// Opens a read-only transaction from a procedure; returns its timestamp.
pub fn procedure_start_read_tx() -> Result<i64, Errno> {
    imports()
        .procedure_start_read_tx()
        .map(|timestamp| timestamp.to_micros_since_unix_epoch())
}

/// Commits a procedure's transaction.
pub fn procedure_commit_tx() -> Result<(), Errno> {
    imports().procedure_commit_tx()
}

/// Rolls a procedure's transaction back.
pub fn procedure_abort_tx() -> Result<(), Errno> {
    imports().procedure_abort_tx()
}

/// Sends an encoded HTTP request; returns a byte source holding the encoded response.
pub fn procedure_http_request(request: &[u8]) -> Result<u32, Errno> {
    imports().procedure_http_request(request)
}
