//! The wasm transport: the raw imports of module `wasmod_v1`, wrapped.
//!
//! Each wrapper passes pointers into this module's memory and turns the returned code into a
//! `Result`. The host checks every pointer and length; nothing here needs to be trusted by it.

use super::{Advance, LogLevel};
use core::mem::MaybeUninit;
use wasmod_abi::errno::Errno;
use wasmod_abi::names::EXHAUSTED;

mod raw {
    #[link(wasm_import_module = "wasmod_v1")]
    extern "C" {
        pub fn bytes_source_remaining(source: u32, out: *mut u32) -> u16;
        pub fn bytes_source_read(source: u32, buf: *mut u8, buf_len: *mut u32) -> i16;
        pub fn bytes_sink_write(sink: u32, buf: *const u8, buf_len: *mut u32) -> u16;
        pub fn caller_claims(out_source: *mut u32) -> u16;
        pub fn table_row_count(table: u32, out: *mut u64) -> u16;
        pub fn table_scan(table: u32, out_iter: *mut u32) -> u16;
        pub fn index_scan(
            table: u32,
            index: u32,
            scan: *const u8,
            scan_len: u32,
            out_iter: *mut u32,
        ) -> u16;
        pub fn row_iter_advance(iter: u32, buf: *mut u8, buf_len: *mut u32) -> i16;
        pub fn row_iter_close(iter: u32) -> u16;
        pub fn insert(table: u32, row: *mut u8, row_len: u32) -> u16;
        pub fn update_by_unique(table: u32, index: u32, row: *const u8, row_len: u32) -> u16;
        pub fn delete_by_index_scan(
            table: u32,
            index: u32,
            scan: *const u8,
            scan_len: u32,
            out_count: *mut u32,
        ) -> u16;
        pub fn delete_rows(table: u32, rows: *const u8, rows_len: u32, out_count: *mut u32) -> u16;
        pub fn clear_table(table: u32, out_count: *mut u64) -> u16;
        #[allow(
            clippy::too_many_arguments,
            reason = "the signature of an ABI import (docs/abi.md)"
        )]
        pub fn console_log(
            level: u32,
            target: *const u8,
            target_len: u32,
            file: *const u8,
            file_len: u32,
            line: u32,
            message: *const u8,
            message_len: u32,
        );
        pub fn procedure_start_tx(out_timestamp: *mut i64) -> u16;
        pub fn procedure_start_read_tx(out_timestamp: *mut i64) -> u16;
        pub fn procedure_commit_tx() -> u16;
        pub fn procedure_abort_tx() -> u16;
        pub fn procedure_http_request(
            request: *const u8,
            request_len: u32,
            out_response: *mut u32,
        ) -> u16;
    }
}

#[inline]
fn check(code: u16) -> Result<(), Errno> {
    match Errno::from_code(code) {
        None => Ok(()),
        Some(errno) => Err(errno),
    }
}

/// Lengths on wasm32 are `u32`; a slice longer than that cannot exist there.
#[inline]
fn len32(len: usize) -> u32 {
    len as u32
}

/// Bytes left in a byte source.
pub fn bytes_source_remaining(source: u32) -> Result<u32, Errno> {
    let mut out = 0;
    // SAFETY: `out` is a valid `u32` out-pointer.
    check(unsafe { raw::bytes_source_remaining(source, &mut out) })?;
    Ok(out)
}

/// Reads up to `buf.len()` bytes into the front of `buf`; returns the count (bytes that are
/// now initialised) and whether the source is now empty.
pub fn bytes_source_read(source: u32, buf: &mut [MaybeUninit<u8>]) -> Result<(usize, bool), Errno> {
    let mut len = len32(buf.len());
    // SAFETY: `buf` is valid for `len` bytes of writes (the host only writes them, so they
    // need not be initialised); `len` is a valid in-out pointer.
    let code = unsafe { raw::bytes_source_read(source, buf.as_mut_ptr().cast(), &mut len) };
    match code {
        0 => Ok((len as usize, false)),
        EXHAUSTED => Ok((len as usize, true)),
        code => Err(Errno::from_code(code as u16).unwrap_or(Errno::BAD_ENCODING)),
    }
}

/// Appends `bytes` to a byte sink.
pub fn bytes_sink_write(sink: u32, bytes: &[u8]) -> Result<(), Errno> {
    let mut len = len32(bytes.len());
    // SAFETY: `bytes` is valid for `len` bytes of reads; `len` is a valid in-out pointer.
    check(unsafe { raw::bytes_sink_write(sink, bytes.as_ptr(), &mut len) })
}

/// A byte source holding the claims of the call's caller (a JSON object), or the empty source
/// if it has none.
pub fn caller_claims() -> Result<u32, Errno> {
    let mut source = 0;
    // SAFETY: `source` is a valid `u32` out-pointer.
    check(unsafe { raw::caller_claims(&mut source) })?;
    Ok(source)
}

/// Rows in a table.
pub fn table_row_count(table: u32) -> Result<u64, Errno> {
    let mut out = 0;
    // SAFETY: `out` is a valid `u64` out-pointer.
    check(unsafe { raw::table_row_count(table, &mut out) })?;
    Ok(out)
}

/// An iterator over every row of a table.
pub fn table_scan(table: u32) -> Result<u32, Errno> {
    let mut iter = 0;
    // SAFETY: `iter` is a valid `u32` out-pointer.
    check(unsafe { raw::table_scan(table, &mut iter) })?;
    Ok(iter)
}

/// An iterator over the rows an encoded index scan selects.
pub fn index_scan(table: u32, index: u32, scan: &[u8]) -> Result<u32, Errno> {
    let mut iter = 0;
    // SAFETY: `scan` is valid for reads of its length; `iter` is a valid out-pointer.
    check(unsafe { raw::index_scan(table, index, scan.as_ptr(), len32(scan.len()), &mut iter) })?;
    Ok(iter)
}

/// Fills `buf` with as many whole rows as fit.
pub fn row_iter_advance(iter: u32, buf: &mut [u8]) -> Result<Advance, Errno> {
    let mut len = len32(buf.len());
    // SAFETY: `buf` is valid for `len` bytes of writes; `len` is a valid in-out pointer.
    let code = unsafe { raw::row_iter_advance(iter, buf.as_mut_ptr(), &mut len) };
    let len = len as usize;
    match code {
        0 => Ok(Advance::More { written: len }),
        EXHAUSTED => Ok(Advance::Exhausted { written: len }),
        code if code as u16 == Errno::BUFFER_TOO_SMALL.code() => {
            Ok(Advance::BufferTooSmall { needed: len })
        }
        code => Err(Errno::from_code(code as u16).unwrap_or(Errno::NO_SUCH_ITER)),
    }
}

/// Drops a row iterator before it is exhausted.
pub fn row_iter_close(iter: u32) -> Result<(), Errno> {
    // SAFETY: no pointers.
    check(unsafe { raw::row_iter_close(iter) })
}

/// Inserts an encoded row; generated auto-increment values are written back into `row`.
pub fn insert(table: u32, row: &mut [u8]) -> Result<(), Errno> {
    // SAFETY: `row` is valid for reads and writes of its length.
    check(unsafe { raw::insert(table, row.as_mut_ptr(), len32(row.len())) })
}

/// Replaces the row with the same key in a unique index.
pub fn update_by_unique(table: u32, index: u32, row: &[u8]) -> Result<(), Errno> {
    // SAFETY: `row` is valid for reads of its length.
    check(unsafe { raw::update_by_unique(table, index, row.as_ptr(), len32(row.len())) })
}

/// Deletes the rows an encoded index scan selects; returns how many.
pub fn delete_by_index_scan(table: u32, index: u32, scan: &[u8]) -> Result<u32, Errno> {
    let mut count = 0;
    // SAFETY: `scan` is valid for reads of its length; `count` is a valid out-pointer.
    check(unsafe {
        raw::delete_by_index_scan(table, index, scan.as_ptr(), len32(scan.len()), &mut count)
    })?;
    Ok(count)
}

/// Deletes the rows equal to the given concatenated encoded rows; returns how many.
pub fn delete_rows(table: u32, rows: &[u8]) -> Result<u32, Errno> {
    let mut count = 0;
    // SAFETY: `rows` is valid for reads of its length; `count` is a valid out-pointer.
    check(unsafe { raw::delete_rows(table, rows.as_ptr(), len32(rows.len()), &mut count) })?;
    Ok(count)
}

/// Deletes every row of a table; returns how many.
pub fn clear_table(table: u32) -> Result<u64, Errno> {
    let mut count = 0;
    // SAFETY: `count` is a valid out-pointer.
    check(unsafe { raw::clear_table(table, &mut count) })?;
    Ok(count)
}

/// Logs one line.
pub fn console_log(level: LogLevel, target: &str, file: &str, line: u32, message: &str) {
    // SAFETY: every pointer is valid for reads of the length passed with it.
    unsafe {
        raw::console_log(
            level as u32,
            target.as_ptr(),
            len32(target.len()),
            file.as_ptr(),
            len32(file.len()),
            line,
            message.as_ptr(),
            len32(message.len()),
        )
    }
}

/// Opens a transaction from a procedure; returns its timestamp.
pub fn procedure_start_tx() -> Result<i64, Errno> {
    let mut timestamp = 0;
    // SAFETY: `timestamp` is a valid out-pointer.
    check(unsafe { raw::procedure_start_tx(&mut timestamp) })?;
    Ok(timestamp)
}

/// Opens a read-only transaction from a procedure; returns its timestamp.
pub fn procedure_start_read_tx() -> Result<i64, Errno> {
    let mut timestamp = 0;
    // SAFETY: `timestamp` is a valid out-pointer.
    check(unsafe { raw::procedure_start_read_tx(&mut timestamp) })?;
    Ok(timestamp)
}

/// Commits a procedure's transaction.
pub fn procedure_commit_tx() -> Result<(), Errno> {
    // SAFETY: no pointers.
    check(unsafe { raw::procedure_commit_tx() })
}

/// Rolls a procedure's transaction back.
pub fn procedure_abort_tx() -> Result<(), Errno> {
    // SAFETY: no pointers.
    check(unsafe { raw::procedure_abort_tx() })
}

/// Sends an encoded HTTP request; returns a byte source holding the encoded response.
pub fn procedure_http_request(request: &[u8]) -> Result<u32, Errno> {
    let mut source = 0;
    // SAFETY: `request` is valid for reads of its length; `source` is a valid out-pointer.
    check(unsafe {
        raw::procedure_http_request(request.as_ptr(), len32(request.len()), &mut source)
    })?;
    Ok(source)
}
