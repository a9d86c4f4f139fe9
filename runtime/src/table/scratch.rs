//! One reusable buffer for what table operations encode for the host: rows and scans.
//!
//! Every insert, update, delete and lookup encodes a row or a key, hands the bytes to the host
//! (which copies what it keeps) and drops them. Encoding into a fresh vector would allocate,
//! and grow it a few times, on every operation; the scratch buffer keeps its capacity from one
//! operation to the next, so once it has grown to the largest row, encoding allocates nothing.

use core::cell::Cell;

/// Buffers grown past this are dropped after use rather than kept, so that one huge row does
/// not pin its memory for the rest of the instance's life.
const MAX_KEPT: usize = 64 << 10;

std::thread_local! {
    /// The buffer between uses. A module is single-threaded, so this is a plain cell in wasm.
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// Runs `f` with an empty buffer, kept for the next use afterwards. A use inside `f` (there is
/// none today) would get a fresh buffer, not this one.
pub(crate) fn with_scratch<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    let mut buffer = SCRATCH.take();
    buffer.clear();
    let result = f(&mut buffer);
    if buffer.capacity() <= MAX_KEPT {
        SCRATCH.set(buffer);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::{with_scratch, MAX_KEPT};

    #[test]
    fn the_buffer_is_empty_each_time_and_keeps_its_capacity() {
        with_scratch(|buffer| buffer.extend_from_slice(b"a row"));
        let (len, capacity) = with_scratch(|buffer| (buffer.len(), buffer.capacity()));
        assert_eq!(len, 0);
        assert!(capacity >= 5, "the capacity is kept: {capacity}");
    }

    #[test]
    fn a_huge_buffer_is_not_kept() {
        with_scratch(|buffer| buffer.resize(MAX_KEPT + 1, 0));
        let capacity = with_scratch(|buffer| buffer.capacity());
        assert!(capacity <= MAX_KEPT, "{capacity}");
    }

    #[test]
    fn a_nested_use_gets_its_own_buffer() {
        with_scratch(|outer| {
            outer.push(1);
            with_scratch(|inner| {
                assert!(inner.is_empty());
                inner.push(2);
            });
            assert_eq!(outer, &[1]);
        });
    }
}
