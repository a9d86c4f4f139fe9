//! The host's imports, as safe functions over slices.
//!
//! Everything the runtime asks of the host goes through here. In wasm the functions call the
//! raw imports of `docs/abi.md` (`sys/wasm.rs`); compiled natively they call an in-process
//! host's implementation of the same semantics (`sys/native.rs`, through [`crate::native`]),
//! so module code can be tested with `cargo test`. The signatures are the same for both, so nothing above this module knows
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

use crate::Errno;

/// Reads a whole byte source; the empty source without asking the host. The bytes are read
/// straight into the vector's spare capacity: nothing is zeroed first.
pub(crate) fn read_source(source: u32) -> Result<Vec<u8>, Errno> {
    if source == wasmod_abi::names::EMPTY_SOURCE {
        return Ok(Vec::new());
    }
    let remaining = bytes_source_remaining(source)? as usize;
    let mut bytes = Vec::with_capacity(remaining);
    loop {
        let spare = bytes.spare_capacity_mut();
        let room = spare.len();
        let (read, exhausted) = bytes_source_read(source, spare)?;
        // SAFETY: the host initialised the first `read` bytes of the spare capacity (never
        // more than it was given).
        unsafe { bytes.set_len(bytes.len() + read.min(room)) };
        if exhausted || bytes.len() == remaining {
            return Ok(bytes);
        }
    }
}
