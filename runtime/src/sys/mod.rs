//! The host's imports, as safe functions over slices.
//!
//! Everything the runtime asks of the host goes through here. In wasm the functions call the
//! raw imports of `docs/abi.md` ([`wasm`]); compiled natively they call the host's own
//! implementation of the same semantics in-process ([`native`]), so module code can be tested
//! with `cargo test`. The signatures are the same for both, so nothing above this module knows
//! which one it runs on.

#[cfg(not(target_arch = "wasm32"))]
mod native;
#[cfg(target_arch = "wasm32")]
mod wasm;

#[cfg(not(target_arch = "wasm32"))]
pub use native::*;
#[cfg(target_arch = "wasm32")]
pub use wasm::*;

/// What one call of `row_iter_advance` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advance {
    /// `written` bytes of whole rows were written; more rows remain.
    More {
        /// Bytes written.
        written: usize,
    },
    /// `written` bytes of whole rows were written, and they were the last: the iterator is
    /// closed.
    Exhausted {
        /// Bytes written.
        written: usize,
    },
    /// Not even the next row fits: it needs `needed` bytes. Nothing was written.
    BufferTooSmall {
        /// The next row's size.
        needed: usize,
    },
}

/// The level of a log line, as the `console_log` import numbers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u32)]
pub enum LogLevel {
    /// An error.
    Error = 0,
    /// A warning.
    Warn = 1,
    /// Information.
    Info = 2,
    /// Debugging detail.
    Debug = 3,
    /// Tracing detail.
    Trace = 4,
    /// The message of a panic about to abort the call.
    Panic = 5,
}
