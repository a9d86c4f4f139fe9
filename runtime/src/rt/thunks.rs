//! The out-of-line thunks the dispatch `match` calls: one instance per entry point.
//!
//! A dispatch export is `match id { 0 => run_reducer::<A>(..), 1 => run_reducer::<B>(..), .. }`.
//! Each `run_*::<T>` is generic, so every arm is a direct call of a function specialised for one
//! entry point; `#[inline(never)]` keeps those bodies (argument buffers, contexts, decoding) out
//! of the export, whose frame stays small and whose body stays pure dispatch.

use super::{CallError, HttpHandler, Procedure, Reducer, View};
use crate::context::{
    AnonymousViewContext, HttpContext, ProcedureContext, ReducerContext, ViewContext,
};
use crate::{sys, ConnectionId, Errno, Identity, Timestamp};
use wasmod_abi::ModuleDef;

/// Runs reducer `R`: the body of one arm of `__call_reducer__`.
#[inline(never)]
pub fn run_reducer<R: Reducer>(
    sender: [u64; 4],
    connection_id: [u64; 2],
    timestamp: i64,
    args: u32,
    error: u32,
) -> i16 {
    let ctx = ReducerContext::__new(
        Identity::from_words(sender),
        ConnectionId::from_words(connection_id),
        Timestamp::from_micros_since_unix_epoch(timestamp),
    );
    let result = with_input(args, |bytes| R::invoke(&ctx, bytes));
    report(result, error)
}

/// Runs procedure `P`: the body of one arm of `__call_procedure__`.
#[inline(never)]
pub fn run_procedure<P: Procedure>(
    sender: [u64; 4],
    connection_id: [u64; 2],
    timestamp: i64,
    args: u32,
    result: u32,
) -> i16 {
    let mut ctx = ProcedureContext::__new(
        Identity::from_words(sender),
        ConnectionId::from_words(connection_id),
        Timestamp::from_micros_since_unix_epoch(timestamp),
    );
    let output = with_input(args, |bytes| P::invoke(&mut ctx, bytes));
    report_output(output, result)
}

/// Runs per-caller view `V`: the body of one arm of `__call_view__`.
#[inline(never)]
pub fn run_view<V: View<Context = ViewContext>>(
    sender: [u64; 4],
    _connection_id: [u64; 2],
    _timestamp: i64,
    args: u32,
    result: u32,
) -> i16 {
    let ctx = ViewContext::__new(Identity::from_words(sender));
    let output = with_input(args, |bytes| V::invoke(&ctx, bytes));
    report_output(output, result)
}

/// Runs anonymous view `V`: the body of one arm of `__call_view_anon__`.
#[inline(never)]
pub fn run_anonymous_view<V: View<Context = AnonymousViewContext>>(
    _timestamp: i64,
    args: u32,
    result: u32,
) -> i16 {
    let ctx = AnonymousViewContext::__new();
    let output = with_input(args, |bytes| V::invoke(&ctx, bytes));
    report_output(output, result)
}

/// Runs HTTP handler `H`: the body of one arm of `__call_http_handler__`.
#[inline(never)]
pub fn run_http_handler<H: HttpHandler>(timestamp: i64, request: u32, response: u32) -> i16 {
    let mut ctx = HttpContext::__new(Timestamp::from_micros_since_unix_epoch(timestamp));
    let output = with_input(request, |bytes| H::invoke(&mut ctx, bytes));
    report_output(output, response)
}

/// The arm for an id that names no entry point.
#[cold]
#[inline(never)]
pub fn no_such_entry(sink: u32) -> i16 {
    report(
        Err(CallError::new(
            Errno::NO_SUCH_ENTRY,
            String::from("no entry point has this id"),
        )),
        sink,
    )
}

/// The body of `__describe_module__`: writes the encoded description, with its format version
/// in front ([`wasmod_abi::description::encode`]), to `sink`.
///
/// The host calls `__describe_module__` once on every new instance before any dispatch export
/// (see `docs/abi.md`), so this is also where the instance is set up: in wasm, panic messages
/// are routed to the host's log. Doing it here keeps the dispatch path free of the indirect
/// calls that installing a hook involves.
pub fn write_description(def: &ModuleDef, sink: u32) -> i16 {
    #[cfg(target_arch = "wasm32")]
    crate::panic::install_hook();
    match sys::bytes_sink_write(sink, &wasmod_abi::description::encode(def)) {
        Ok(()) => 0,
        Err(_) => Errno::DESCRIBE_FAILED.code() as i16,
    }
}

/// Reads the byte source `input` whole and hands it to `invoke`.
#[inline(always)]
fn with_input<T>(
    input: u32,
    invoke: impl FnOnce(&[u8]) -> Result<T, CallError>,
) -> Result<T, CallError> {
    sys::read_source(input)
        .map_err(CallError::host)
        .and_then(|bytes| invoke(&bytes))
}

/// Writes an error's message to `sink` and returns its code; `0` for success.
fn report(result: Result<(), CallError>, sink: u32) -> i16 {
    match result {
        Ok(()) => 0,
        Err(error) => {
            // The code already says what failed; a sink the host refuses cannot add to it.
            let _ = sys::bytes_sink_write(sink, error.message().as_bytes());
            error.code().code() as i16
        }
    }
}

/// Writes an entry point's encoded output, or its error's message, to `sink`.
fn report_output(output: Result<Vec<u8>, CallError>, sink: u32) -> i16 {
    match output {
        Ok(bytes) => match sys::bytes_sink_write(sink, &bytes) {
            Ok(()) => 0,
            Err(errno) => report(Err(CallError::host(errno)), sink),
        },
        Err(error) => report(Err(error), sink),
    }
}
