//! The module's linear memory as the imports see it: every `(pointer, length)` the module
//! passes is checked here, before the host touches a byte.
//!
//! A pointer and a length are `u32`s chosen by the module, so they may point anywhere: past
//! the end of memory, or (with a length near `u32::MAX`) wrap around it. [`GuestMemory`] turns
//! each pair into a range of the memory only if the whole range lies inside it, and answers
//! `OUT_OF_BOUNDS` otherwise. Out-pointers are checked the same way, and an import checks all
//! of its pointers before it acts, so a bad out-pointer never leaves a change behind that the
//! module was told failed.

use std::ops::Range;
use wasmod_abi::Errno;

/// The bytes of the module's memory, during one import call.
pub(crate) struct GuestMemory<'a> {
    bytes: &'a mut [u8],
}

/// A place for a result of `N` bytes, checked to lie inside the memory.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Out<const N: usize> {
    at: usize,
}

impl<'a> GuestMemory<'a> {
    /// A view of `bytes`, the whole of the module's memory.
    pub(crate) fn new(bytes: &'a mut [u8]) -> Self {
        Self { bytes }
    }

    /// The range `pointer .. pointer + len`, if it lies inside the memory.
    pub(crate) fn range(&self, pointer: u32, len: u32) -> Result<Range<usize>, Errno> {
        let start = usize::try_from(pointer).map_err(|_| Errno::OUT_OF_BOUNDS)?;
        let len = usize::try_from(len).map_err(|_| Errno::OUT_OF_BOUNDS)?;
        let end = start.checked_add(len).ok_or(Errno::OUT_OF_BOUNDS)?;
        if end > self.bytes.len() {
            return Err(Errno::OUT_OF_BOUNDS);
        }
        Ok(start..end)
    }

    /// The `len` bytes at `pointer`.
    pub(crate) fn slice(&self, pointer: u32, len: u32) -> Result<&[u8], Errno> {
        let range = self.range(pointer, len)?;
        Ok(&self.bytes[range])
    }

    /// The bytes of a range [`GuestMemory::range`] returned, to write.
    pub(crate) fn slice_mut(&mut self, range: Range<usize>) -> &mut [u8] {
        &mut self.bytes[range]
    }

    /// An out-pointer for `N` bytes at `pointer`.
    pub(crate) fn out<const N: usize>(&self, pointer: u32) -> Result<Out<N>, Errno> {
        let range = self.range(pointer, N as u32)?;
        Ok(Out { at: range.start })
    }

    /// Writes a result through a checked out-pointer.
    pub(crate) fn write<const N: usize>(&mut self, out: Out<N>, bytes: [u8; N]) {
        self.bytes[out.at..out.at + N].copy_from_slice(&bytes);
    }

    /// Reads the little-endian `u32` an in-out pointer points at.
    pub(crate) fn read_u32(&self, out: Out<4>) -> u32 {
        let mut bytes = [0; 4];
        bytes.copy_from_slice(&self.bytes[out.at..out.at + 4]);
        u32::from_le_bytes(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_inside_the_memory_are_accepted() {
        let mut bytes = [0u8; 16];
        let memory = GuestMemory::new(&mut bytes);
        assert_eq!(memory.range(0, 16), Ok(0..16));
        assert_eq!(memory.range(16, 0), Ok(16..16));
        assert_eq!(memory.range(3, 4), Ok(3..7));
    }

    #[test]
    fn ranges_past_the_end_or_wrapping_are_refused() {
        let mut bytes = [0u8; 16];
        let memory = GuestMemory::new(&mut bytes);
        for (pointer, len) in [
            (0, 17),
            (16, 1),
            (17, 0),
            (u32::MAX, 1),
            (1, u32::MAX),
            (u32::MAX, u32::MAX),
            (8, u32::MAX - 4),
        ] {
            assert_eq!(
                memory.range(pointer, len),
                Err(Errno::OUT_OF_BOUNDS),
                "{pointer} + {len}"
            );
        }
    }

    #[test]
    fn out_pointers_need_room_for_the_whole_value() {
        let mut bytes = [0u8; 16];
        let mut memory = GuestMemory::new(&mut bytes);
        assert!(memory.out::<8>(9).is_err());
        assert!(memory.out::<4>(u32::MAX - 1).is_err());
        let out = memory.out::<8>(8).unwrap();
        memory.write(out, 7u64.to_le_bytes());
        let inout = memory.out::<4>(8).unwrap();
        assert_eq!(memory.read_u32(inout), 7);
    }
}
