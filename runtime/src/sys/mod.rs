//! The host's imports, as safe functions over slices.
//!
//! Everything the runtime asks of the host goes through here. In wasm the functions call the
//! raw imports of `docs/abi.md` (`sys/wasm.rs`); compiled natively they call the host's own
//! implementation of the same semantics in-process (`sys/native.rs`), so module code can be tested
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

pub use wasmod_abi::imports::{Advance, LogLevel};
