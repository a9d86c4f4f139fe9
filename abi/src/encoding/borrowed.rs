//! [`DecodeBorrowed`]: decoding that reads strings and byte strings straight from the input.
//!
//! [`Decode`] returns owned values, so every `String` field costs an allocation and a copy
//! (in a module, a string row's decode is most of the cost of iterating a table:
//! `benches/RESULTS.md`, "Where we miss, and why"). A type that only needs to look at its rows
//! while the input lives can borrow instead: a struct with `&'a str` or `&'a [u8]` fields and
//! `#[derive(DecodeBorrowed)]` decodes with one UTF-8 check per string and no allocation.
//!
//! Every [`Decode`] type is also `DecodeBorrowed` (it owns what it reads), so the fields of a
//! borrowing struct may be any wasmod type; the borrowing types are `&str`, `&[u8]` and the
//! structs derived from them. A borrowing struct is decoded with the same encoding as its
//! owned twin (`String` and `&str` are both a length and the bytes), so the same row bytes
//! decode either way.

use super::{Decode, DecodeError, Reader};

/// A value that can be read from the wasmod encoding borrowing the input's bytes (for
/// `'de`, how long the input lives).
pub trait DecodeBorrowed<'de>: Sized {
    /// Reads one value from the front of `reader`, borrowing from its bytes.
    fn decode_borrowed(reader: &mut Reader<'de>) -> Result<Self, DecodeError>;
}

impl<'de, T: Decode> DecodeBorrowed<'de> for T {
    #[inline]
    fn decode_borrowed(reader: &mut Reader<'de>) -> Result<Self, DecodeError> {
        T::decode(reader)
    }
}

impl<'de> DecodeBorrowed<'de> for &'de str {
    #[inline]
    fn decode_borrowed(reader: &mut Reader<'de>) -> Result<Self, DecodeError> {
        core::str::from_utf8(reader.read_len_prefixed()?).map_err(|_| DecodeError::InvalidUtf8)
    }
}

impl<'de> DecodeBorrowed<'de> for &'de [u8] {
    #[inline]
    fn decode_borrowed(reader: &mut Reader<'de>) -> Result<Self, DecodeError> {
        reader.read_len_prefixed()
    }
}

/// Decodes exactly one `T` from `bytes`, borrowing from them; trailing bytes are an error.
pub fn from_slice_borrowed<'de, T: DecodeBorrowed<'de>>(
    bytes: &'de [u8],
) -> Result<T, DecodeError> {
    let mut reader = Reader::new(bytes);
    let value = T::decode_borrowed(&mut reader)?;
    reader.finish()?;
    Ok(value)
}
