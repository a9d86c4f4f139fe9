//! A module with a valid description whose dispatch exports return codes the ABI does not
//! define: its reducers write a row first, so that a test can see the write rolled back.
//!
//! Reducers: `unknown_code` returns 12345, `negative` returns -7, `too_wide` returns 65536
//! (not an `i16` at all), `no_such_entry` returns `NO_SUCH_ENTRY` for an id that exists, and
//! `well` returns `0`: its write commits.

#![cfg(target_arch = "wasm32")]

mod common;

#[link(wasm_import_module = "wasmod_v1")]
extern "C" {
    fn insert(table: u32, row: *mut u8, row_len: u32) -> u16;
}

const REDUCERS: [(&str, i32); 5] = [
    ("unknown_code", 12345),
    ("negative", -7),
    ("too_wide", 65536),
    ("no_such_entry", common::NO_SUCH_ENTRY as i32),
    ("well", 0),
];

#[no_mangle]
extern "C" fn __describe_module__(sink: u32) -> i16 {
    let names = REDUCERS.map(|(name, _)| name);
    common::write(
        sink,
        &wasmod_abi::description::encode(&common::description(&names)),
    )
}

/// Writes a row, then returns the reducer's garbage code.
#[no_mangle]
extern "C" fn __call_reducer__(
    id: u32,
    _: u64,
    _: u64,
    _: u64,
    _: u64,
    _: u64,
    _: u64,
    _: i64,
    _: u32,
    _: u32,
) -> i32 {
    let mut row = wasmod_abi::encoding::to_vec(&(77u32, "written before the garbage".to_owned()));
    // SAFETY: `row` is valid for reads and writes of its length.
    unsafe { insert(0, row.as_mut_ptr(), row.len() as u32) };
    REDUCERS.get(id as usize).map_or(-1, |(_, code)| *code)
}

#[no_mangle]
extern "C" fn __call_procedure__(
    _: u32,
    _: u64,
    _: u64,
    _: u64,
    _: u64,
    _: u64,
    _: u64,
    _: i64,
    _: u32,
    _: u32,
) -> i32 {
    i32::from(common::NO_SUCH_ENTRY)
}

#[no_mangle]
extern "C" fn __call_view__(
    _: u32,
    _: u64,
    _: u64,
    _: u64,
    _: u64,
    _: u64,
    _: u64,
    _: i64,
    _: u32,
    _: u32,
) -> i32 {
    i32::from(common::NO_SUCH_ENTRY)
}

#[no_mangle]
extern "C" fn __call_view_anon__(_: u32, _: i64, _: u32, _: u32) -> i32 {
    i32::from(common::NO_SUCH_ENTRY)
}

#[no_mangle]
extern "C" fn __call_http_handler__(_: u32, _: i64, _: u32, _: u32) -> i32 {
    i32::from(common::NO_SUCH_ENTRY)
}
