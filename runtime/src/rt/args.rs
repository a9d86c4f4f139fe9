//! Decoding an entry point's arguments, parameter by parameter, with errors that name the
//! parameter.

use super::CallError;
use wasmod_abi::{Decode, EntryKind, Reader};

/// The encoded arguments of one call, read in parameter order.
pub struct Args<'a> {
    reader: Reader<'a>,
    kind: EntryKind,
    name: &'static str,
}

impl<'a> Args<'a> {
    /// The arguments `bytes` of the entry point of `kind` called `name`.
    #[inline]
    pub fn new(kind: EntryKind, name: &'static str, bytes: &'a [u8]) -> Self {
        Self {
            reader: Reader::new(bytes),
            kind,
            name,
        }
    }

    /// Decodes the next parameter, `param`.
    #[inline]
    pub fn next<T: Decode>(&mut self, param: &'static str) -> Result<T, CallError> {
        T::decode(&mut self.reader)
            .map_err(|error| CallError::bad_argument(self.kind.as_str(), self.name, param, error))
    }

    /// Reads every parameter at once as the `#[repr(C, packed)]` struct `P` of their types.
    ///
    /// # Safety
    ///
    /// Every field of `P` must be plain (`Decode::LAYOUT`), and `P` must be `#[repr(C, packed)]`
    /// with its fields in parameter order, so that its bytes are exactly the encoded arguments.
    #[inline]
    pub unsafe fn all_plain<P>(&mut self) -> Result<P, CallError> {
        let bytes = self
            .reader
            .take(core::mem::size_of::<P>())
            .map_err(|error| {
                CallError::bad_argument(self.kind.as_str(), self.name, "(all)", error)
            })?;
        // SAFETY: the caller guarantees any `size_of::<P>()` bytes are a valid `P`.
        Ok(unsafe { bytes.as_ptr().cast::<P>().read_unaligned() })
    }

    /// Checks that no bytes are left.
    #[inline]
    pub fn finish(self) -> Result<(), CallError> {
        match self.reader.remaining() {
            0 => Ok(()),
            _ => Err(CallError::trailing_arguments(self.kind.as_str(), self.name)),
        }
    }
}
