//! Calls one import with one bad pointer or length, and reports the codes the host answered.
//!
//! `run(import, arg, case)` calls `import` with valid values for every argument except `arg`,
//! which gets bad value number `case`:
//!
//! - a buffer (`(pointer, length)`): [`bad_buffer`] — just past the end of memory, straddling
//!   the end, at the last address, a length near `u32::MAX`, and a pointer plus length that
//!   overflows 32 bits;
//! - an out-pointer (or in-out pointer): [`bad_out`] — at the end of memory, straddling it, and
//!   at the last addresses.
//!
//! Table imports run inside a transaction the probe opens and commits, so that a write the host
//! made despite a bad pointer would stay for the test to see. The answer is the bad call's code
//! followed by the codes of the calls after it.

use core::ptr::without_provenance_mut;
use wasmod::abi::encoding::to_vec;
use wasmod::http::{Method, Request};

#[link(wasm_import_module = "wasmod_v1")]
extern "C" {
    fn bytes_source_remaining(source: u32, out: *mut u32) -> u16;
    fn bytes_source_read(source: u32, buf: *mut u8, buf_len: *mut u32) -> i16;
    fn bytes_sink_write(sink: u32, buf: *const u8, buf_len: *mut u32) -> u16;
    fn caller_claims(out_source: *mut u32) -> u16;
    fn table_row_count(table: u32, out: *mut u64) -> u16;
    fn table_scan(table: u32, out_iter: *mut u32) -> u16;
    fn index_scan(
        table: u32,
        index: u32,
        scan: *const u8,
        scan_len: u32,
        out_iter: *mut u32,
    ) -> u16;
    fn row_iter_advance(iter: u32, buf: *mut u8, buf_len: *mut u32) -> i16;
    fn insert(table: u32, row: *mut u8, row_len: u32) -> u16;
    fn update_by_unique(table: u32, index: u32, row: *const u8, row_len: u32) -> u16;
    fn delete_by_index_scan(
        table: u32,
        index: u32,
        scan: *const u8,
        scan_len: u32,
        out_count: *mut u32,
    ) -> u16;
    fn delete_rows(table: u32, rows: *const u8, rows_len: u32, out_count: *mut u32) -> u16;
    fn clear_table(table: u32, out_count: *mut u64) -> u16;
    #[allow(
        clippy::too_many_arguments,
        reason = "the signature of an ABI import (docs/abi.md)"
    )]
    fn console_log(
        level: u32,
        target: *const u8,
        target_len: u32,
        file: *const u8,
        file_len: u32,
        line: u32,
        message: *const u8,
        message_len: u32,
    );
    fn procedure_start_tx(out_timestamp: *mut i64) -> u16;
    fn procedure_start_read_tx(out_timestamp: *mut i64) -> u16;
    fn procedure_commit_tx() -> u16;
    fn procedure_http_request(request: *const u8, request_len: u32, out_response: *mut u32) -> u16;
}

/// The end of the module's memory.
fn memory_end() -> u32 {
    (core::arch::wasm32::memory_size::<0>() * 65536) as u32
}

/// Bad `(pointer, length)` number `case`, of 5.
fn bad_buffer(case: u32) -> (u32, u32) {
    let end = memory_end();
    match case {
        0 => (end, 1),
        1 => (end - 1, 2),
        2 => (u32::MAX, 1),
        3 => (8, u32::MAX),
        _ => (0x8000_0000, 0x8000_0001),
    }
}

/// Bad out-pointer number `case` (of 4), for a value of `size` bytes.
fn bad_out(case: u32, size: u32) -> u32 {
    let end = memory_end();
    match case {
        0 => end,
        1 => end - size + 1,
        2 => u32::MAX - 1,
        _ => u32::MAX,
    }
}

/// The argument to spoil and how.
struct Probe<'a> {
    arg: &'a str,
    case: u32,
}

impl Probe<'_> {
    /// `valid` as a `(pointer, length)`, or a bad one if it is argument `name`.
    fn buffer(&self, name: &str, valid: &[u8]) -> (*mut u8, u32) {
        if self.arg == name {
            let (pointer, len) = bad_buffer(self.case);
            (without_provenance_mut(pointer as usize), len)
        } else {
            (valid.as_ptr().cast_mut(), valid.len() as u32)
        }
    }

    /// `valid` as an out-pointer, or a bad one if it is argument `name`.
    fn out<T>(&self, name: &str, valid: &mut T) -> *mut T {
        if self.arg == name {
            without_provenance_mut(bad_out(self.case, size_of::<T>() as u32) as usize)
        } else {
            valid
        }
    }
}

/// An item as the table encodes it.
fn item(id: u32, name: &str) -> Vec<u8> {
    to_vec(&(id, name.to_owned()))
}

/// A point scan of the primary key on `id`.
fn point(id: u32) -> Vec<u8> {
    let mut scan = to_vec(&1u32);
    scan.extend(to_vec(&id));
    scan.extend([0, 0]);
    scan
}

/// A request the test's HTTP client answers.
fn request() -> Vec<u8> {
    to_vec(&Request::new(Method::Get, "http://test.invalid/motd"))
}

/// Calls `import` with argument `arg` spoiled as `case` says; the codes the host answered.
pub fn run(import: &str, arg: &str, case: u32) -> Vec<u32> {
    let probe = Probe { arg, case };
    // SAFETY (every block below): the host checks every pointer and never writes outside the
    // module's memory; pointers it could write through are either valid locals or addresses
    // outside memory, which the host refuses.
    unsafe {
        match import {
            "procedure_start_tx" => {
                let mut timestamp = 0;
                let bad = procedure_start_tx(probe.out("out", &mut timestamp));
                // Had the bad call opened a transaction, this would be TX_ALREADY_OPEN.
                let again = procedure_start_tx(&mut timestamp);
                vec![bad.into(), again.into(), procedure_commit_tx().into()]
            }
            "procedure_start_read_tx" => {
                let mut timestamp = 0;
                let bad = procedure_start_read_tx(probe.out("out", &mut timestamp));
                let again = procedure_start_read_tx(&mut timestamp);
                vec![bad.into(), again.into(), procedure_commit_tx().into()]
            }
            "procedure_http_request" => {
                let request = request();
                let (pointer, len) = probe.buffer("request", &request);
                let mut source = 0;
                let code = procedure_http_request(pointer, len, probe.out("out", &mut source));
                vec![code.into()]
            }
            "bytes_source_remaining" | "bytes_source_read" => {
                let request = request();
                let mut source = 0;
                let sent =
                    procedure_http_request(request.as_ptr(), request.len() as u32, &mut source);
                let code = if import == "bytes_source_remaining" {
                    let mut remaining = 0;
                    bytes_source_remaining(source, probe.out("out", &mut remaining)) as i16
                } else {
                    let mut buf = [0u8; 64];
                    let (pointer, len) = probe.buffer("buf", &buf);
                    let mut buf_len = len;
                    let pointer = if probe.arg == "buf" {
                        pointer
                    } else {
                        buf.as_mut_ptr()
                    };
                    bytes_source_read(source, pointer, probe.out("buf_len", &mut buf_len))
                };
                vec![sent.into(), code as u32]
            }
            "caller_claims" => {
                let mut source = 0;
                let bad = caller_claims(probe.out("out", &mut source));
                let good = caller_claims(&mut source);
                vec![bad.into(), good.into(), u32::from(source != 0)]
            }
            "bytes_sink_write" => {
                let bytes = *b"written through a bad pointer";
                let (pointer, len) = probe.buffer("buf", &bytes);
                let mut buf_len = len;
                vec![bytes_sink_write(1, pointer, probe.out("buf_len", &mut buf_len)).into()]
            }
            "console_log" => {
                let (target, target_len) = probe.buffer("target", b"hostile::probe");
                let (file, file_len) = probe.buffer("file", b"probe.rs");
                let (message, message_len) = probe.buffer("message", b"a line with a bad pointer");
                console_log(
                    2,
                    target,
                    target_len,
                    file,
                    file_len,
                    1,
                    message,
                    message_len,
                );
                Vec::new()
            }
            _ => {
                let mut timestamp = 0;
                let opened = procedure_start_tx(&mut timestamp);
                let code = table_import(&probe, import);
                vec![opened.into(), code as u32, procedure_commit_tx().into()]
            }
        }
    }
}

/// Calls table import `import` inside the probe's transaction.
///
/// # Safety
///
/// See [`run`].
unsafe fn table_import(probe: &Probe<'_>, import: &str) -> i16 {
    let (table, index) = (0, 0);
    // SAFETY: see `run`.
    unsafe {
        match import {
            "table_row_count" => {
                let mut count = 0;
                table_row_count(table, probe.out("out", &mut count)) as i16
            }
            "table_scan" => {
                let mut iter = 0;
                table_scan(table, probe.out("out", &mut iter)) as i16
            }
            "index_scan" => {
                let scan = point(1);
                let (pointer, len) = probe.buffer("scan", &scan);
                let mut iter = 0;
                index_scan(table, index, pointer, len, probe.out("out", &mut iter)) as i16
            }
            "row_iter_advance" => {
                let mut iter = 0;
                let scanned = table_scan(table, &mut iter);
                if scanned != 0 {
                    return scanned as i16;
                }
                let mut buf = [0u8; 256];
                let (pointer, len) = probe.buffer("buf", &buf);
                let mut buf_len = len;
                let pointer = if probe.arg == "buf" {
                    pointer
                } else {
                    buf.as_mut_ptr()
                };
                row_iter_advance(iter, pointer, probe.out("buf_len", &mut buf_len))
            }
            "insert" => {
                let mut row = item(99, "inserted through a bad pointer");
                let (pointer, len) = probe.buffer("row", &row);
                let pointer = if probe.arg == "row" {
                    pointer
                } else {
                    row.as_mut_ptr()
                };
                insert(table, pointer, len) as i16
            }
            "update_by_unique" => {
                let row = item(1, "updated through a bad pointer");
                let (pointer, len) = probe.buffer("row", &row);
                update_by_unique(table, index, pointer, len) as i16
            }
            "delete_by_index_scan" => {
                let scan = point(1);
                let (pointer, len) = probe.buffer("scan", &scan);
                let mut count = 0;
                delete_by_index_scan(table, index, pointer, len, probe.out("out", &mut count))
                    as i16
            }
            "delete_rows" => {
                let rows = item(1, "one");
                let (pointer, len) = probe.buffer("rows", &rows);
                let mut count = 0;
                delete_rows(table, pointer, len, probe.out("out", &mut count)) as i16
            }
            "clear_table" => {
                let mut count = 0;
                clear_table(table, probe.out("out", &mut count)) as i16
            }
            _ => -2,
        }
    }
}
