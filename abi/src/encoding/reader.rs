//! A cursor over encoded bytes.

use super::DecodeError;
use std::any::Any;

/// A cursor over the bytes being decoded. Every read is bounds-checked, and nesting is bounded:
/// the containers through which a type can recurse (`Vec`, `Box`, `Option`, `Result`) count
/// their depth here, so that hostile input cannot exhaust the decoder's stack.
///
/// A reader made by [`Reader::shared`] also knows the value that owns its bytes, so that a
/// decoder of a large part (a protocol's row list) can keep a cheap handle on the owner's
/// buffer instead of copying the part out of it.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    depth: u32,
    owner: Option<&'a dyn Any>,
}

/// How deeply containers may nest in one decoded value.
pub const MAX_DEPTH: u32 = 64;

impl<'a> Reader<'a> {
    /// A reader over `bytes`.
    pub const fn new(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            depth: 0,
            owner: None,
        }
    }

    /// A reader over `owner`'s bytes (`owner.as_ref()`), which decoders may find with
    /// [`Reader::owner`].
    pub fn shared<O: AsRef<[u8]> + Any>(owner: &'a O) -> Self {
        Self {
            bytes: owner.as_ref(),
            depth: 0,
            owner: Some(owner),
        }
    }

    /// The value whose bytes this reader reads, when it was made by [`Reader::shared`]: every
    /// slice the reader hands out lies within that value's `as_ref()`, so a decoder that
    /// knows the owner's type can share the owner's buffer rather than copy the slice.
    pub fn owner(&self) -> Option<&'a dyn Any> {
        self.owner
    }

    /// Decodes one nested level with `decode`, failing with [`DecodeError::TooDeep`] past
    /// [`MAX_DEPTH`] levels.
    #[inline]
    pub fn nested<T>(
        &mut self,
        decode: impl FnOnce(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<T, DecodeError> {
        if self.depth >= MAX_DEPTH {
            return Err(DecodeError::TooDeep);
        }
        self.depth += 1;
        let result = decode(self);
        self.depth -= 1;
        result
    }

    /// How many bytes are left.
    pub const fn remaining(&self) -> usize {
        self.bytes.len()
    }

    /// The bytes not read yet.
    pub const fn rest(&self) -> &'a [u8] {
        self.bytes
    }

    /// Takes the next `len` bytes.
    #[inline]
    pub fn take(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        if len > self.bytes.len() {
            return Err(self.unexpected_end(len));
        }
        let (head, tail) = self.bytes.split_at(len);
        self.bytes = tail;
        Ok(head)
    }

    /// The error of a read of `len` bytes past the end: out of line, so that the reads that
    /// succeed stay small enough to inline into every decoder.
    #[cold]
    #[inline(never)]
    fn unexpected_end(&self, len: usize) -> DecodeError {
        DecodeError::UnexpectedEnd {
            needed: len - self.bytes.len(),
            remaining: self.bytes.len(),
        }
    }

    /// Takes the next `N` bytes as an array.
    #[inline]
    pub fn take_array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut array = [0; N];
        array.copy_from_slice(self.take(N)?);
        Ok(array)
    }

    /// Reads a `u32` length prefix.
    #[inline]
    pub fn read_len(&mut self) -> Result<usize, DecodeError> {
        Ok(u32::from_le_bytes(self.take_array()?) as usize)
    }

    /// Reads a length prefix, then that many bytes.
    #[inline]
    pub fn read_len_prefixed(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.read_len()?;
        self.take(len)
    }

    /// Checks that nothing is left.
    #[inline]
    pub fn finish(self) -> Result<(), DecodeError> {
        match self.bytes.len() {
            0 => Ok(()),
            left => Err(DecodeError::TrailingBytes(left)),
        }
    }
}
