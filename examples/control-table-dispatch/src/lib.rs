//! A module that breaks the dispatch contract on purpose: the negative control of
//! `wasmod-inspect`.
//!
//! Its exports have the signatures of a wasmod module's dispatch exports (see `docs/abi.md`),
//! but each one picks its entry point from a `static` table of function pointers and calls it
//! through the pointer. In wasm that is a `call_indirect`, which is exactly what the inspection
//! exists to catch, so its tests assert that every export here is flagged, in release and in
//! debug builds.
//!
//! The table goes through [`core::hint::black_box`] so that LLVM cannot see its contents and
//! turn the indexed load and call back into a `br_table` of direct calls (which it would do in
//! release builds with a constant table). No wasmod dependency: the point is the shape of the
//! binary, not the behaviour.

use core::hint::black_box;

/// The error code for an id that names no entry point (`NO_SUCH_ENTRY` in `docs/abi.md`).
const NO_SUCH_ENTRY: i16 = 17;

/// The arguments every reducer-like entry point receives after the id.
#[derive(Clone, Copy)]
pub struct Call {
    /// The caller's identity, four little-endian words.
    pub sender: [u64; 4],
    /// The connection id, two words.
    pub connection_id: [u64; 2],
    /// Microseconds since the Unix epoch.
    pub timestamp: i64,
    /// The byte source holding the arguments.
    pub args: u32,
    /// The byte sink for the error message or the result.
    pub sink: u32,
}

/// The arguments of an anonymous view or an HTTP handler after the id.
#[derive(Clone, Copy)]
pub struct SmallCall {
    /// Microseconds since the Unix epoch.
    pub timestamp: i64,
    /// The byte source holding the arguments (or the request).
    pub args: u32,
    /// The byte sink for the result (or the response).
    pub sink: u32,
}

/// Entry points with the full context: each returns a different code so that none can be merged.
static REDUCERS: [fn(Call) -> i16; 3] = [first, second, third];
/// Entry points with the small context.
static SMALL: [fn(SmallCall) -> i16; 2] = [small_first, small_second];

/// Calls entry `id` of `table` through its function pointer: the `call_indirect` to be caught.
#[inline(never)]
fn dispatch<A>(table: &[fn(A) -> i16], id: u32, args: A) -> i16 {
    match black_box(table).get(id as usize) {
        Some(entry) => entry(args),
        None => NO_SUCH_ENTRY,
    }
}

#[inline(never)]
fn first(call: Call) -> i16 {
    (call.args as i16).wrapping_add(1)
}

#[inline(never)]
fn second(call: Call) -> i16 {
    (call.sink as i16).wrapping_sub(call.timestamp as i16)
}

#[inline(never)]
fn third(call: Call) -> i16 {
    (call.sender[0] ^ call.connection_id[1]) as i16
}

#[inline(never)]
fn small_first(call: SmallCall) -> i16 {
    (call.args as i16).wrapping_mul(3)
}

#[inline(never)]
fn small_second(call: SmallCall) -> i16 {
    (call.timestamp as i16) ^ (call.sink as i16)
}

/// Builds the full argument set from the export's flat parameters.
fn call(s: [u64; 4], c: [u64; 2], timestamp: i64, args: u32, sink: u32) -> Call {
    Call {
        sender: s,
        connection_id: c,
        timestamp,
        args,
        sink,
    }
}

/// Describes nothing: the control is never loaded by a host.
#[unsafe(no_mangle)]
pub extern "C" fn __describe_module__(_sink: u32) -> i16 {
    0
}

/// `__call_reducer__`, dispatched through [`REDUCERS`].
#[unsafe(no_mangle)]
#[allow(
    clippy::too_many_arguments,
    reason = "the signature of an ABI export (docs/abi.md)"
)]
pub extern "C" fn __call_reducer__(
    id: u32,
    s0: u64,
    s1: u64,
    s2: u64,
    s3: u64,
    c0: u64,
    c1: u64,
    timestamp: i64,
    args: u32,
    error: u32,
) -> i16 {
    dispatch(
        &REDUCERS,
        id,
        call([s0, s1, s2, s3], [c0, c1], timestamp, args, error),
    )
}

/// `__call_procedure__`, dispatched through [`REDUCERS`].
#[unsafe(no_mangle)]
#[allow(
    clippy::too_many_arguments,
    reason = "the signature of an ABI export (docs/abi.md)"
)]
pub extern "C" fn __call_procedure__(
    id: u32,
    s0: u64,
    s1: u64,
    s2: u64,
    s3: u64,
    c0: u64,
    c1: u64,
    timestamp: i64,
    args: u32,
    result: u32,
) -> i16 {
    dispatch(
        &REDUCERS,
        id,
        call([s0, s1, s2, s3], [c0, c1], timestamp, args, result),
    )
}

/// `__call_view__`, dispatched through [`REDUCERS`].
#[unsafe(no_mangle)]
#[allow(
    clippy::too_many_arguments,
    reason = "the signature of an ABI export (docs/abi.md)"
)]
pub extern "C" fn __call_view__(
    id: u32,
    s0: u64,
    s1: u64,
    s2: u64,
    s3: u64,
    c0: u64,
    c1: u64,
    timestamp: i64,
    args: u32,
    result: u32,
) -> i16 {
    dispatch(
        &REDUCERS,
        id,
        call([s0, s1, s2, s3], [c0, c1], timestamp, args, result),
    )
}

/// `__call_view_anon__`, dispatched through [`SMALL`].
#[unsafe(no_mangle)]
pub extern "C" fn __call_view_anon__(id: u32, timestamp: i64, args: u32, result: u32) -> i16 {
    dispatch(
        &SMALL,
        id,
        SmallCall {
            timestamp,
            args,
            sink: result,
        },
    )
}

/// `__call_http_handler__`, dispatched through [`SMALL`].
#[unsafe(no_mangle)]
pub extern "C" fn __call_http_handler__(
    id: u32,
    timestamp: i64,
    request: u32,
    response: u32,
) -> i16 {
    dispatch(
        &SMALL,
        id,
        SmallCall {
            timestamp,
            args: request,
            sink: response,
        },
    )
}
