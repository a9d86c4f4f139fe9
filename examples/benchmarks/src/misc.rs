//! Reducers that measure the call itself: no work, a large argument, logging.

use wasmod::prelude::*;

/// Does nothing: the cost of a call through the host.
#[reducer]
pub fn empty(_ctx: &ReducerContext) {}

/// Takes one string argument (the benchmarks pass 64 KiB) and looks at it.
#[reducer]
pub fn fn_with_1_arg(_ctx: &ReducerContext, arg: String) {
    std::hint::black_box(&arg);
}

/// Logs `n` lines.
#[reducer]
pub fn print_many(_ctx: &ReducerContext, n: u32) {
    for line in 0..n {
        wasmod::info!("print_many: line {line} of {n}");
    }
}

/// An export that does nothing, outside the dispatch: the floor a benchmark compares a whole
/// host call with (a bare call into the instance).
#[unsafe(no_mangle)]
pub extern "C" fn bench_floor() {}
