//! The value encoding shared by modules and hosts.
//!
//! The format is deliberately simple so that another language's bindings can be written from
//! this page alone:
//!
//! | value | bytes |
//! |---|---|
//! | `bool` | one byte, `0` or `1`; anything else is an error |
//! | integers, `f32`, `f64` | little-endian, their natural width (up to 128 bits) |
//! | `String`, `Vec<T>` | a `u32` element count, then the elements |
//! | `[T; N]` | the `N` elements, no count |
//! | products (structs, tuples) | the fields in declaration order, concatenated |
//! | sums (enums, `Option`, `Result`) | a `u8` tag (the variant's position), then its payload |
//!
//! `Option<T>` is the sum `none | some(T)` (tag 0 is `None`); `Result<T, E>` is `ok(T) | err(E)`.
//!
//! A product made only of fixed-size numbers, laid out without padding, has the same bytes in
//! memory (on a little-endian target) as in this encoding. Such types are *plain* (see
//! [`Layout`]): encoding or decoding them, or a slice of them, is a copy of bytes rather than a
//! walk over fields. See [`Decode::decode_vec`].
//!
//! Decoding never panics: malformed or truncated input yields a [`DecodeError`].

mod borrowed;
mod error;
mod impls;
mod reader;

pub use borrowed::{from_slice_borrowed, DecodeBorrowed};
pub use error::DecodeError;
pub use reader::{Reader, MAX_DEPTH};

/// A value that can be written in the wasmod encoding.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot cross the module boundary",
    label = "this type is not a wasmod type",
    note = "columns, parameters and return values must implement `SchemaType`: use the standard types (integers, floats, bool, String, Vec, Option, tuples, arrays, Identity, ConnectionId, Timestamp) or add `#[derive(wasmod::SchemaType)]`"
)]
pub trait Encode {
    /// Appends the encoding of `self` to `out`.
    fn encode(&self, out: &mut Vec<u8>);

    /// How many bytes [`Encode::encode`] appends for `self`, so that a buffer can be sized
    /// before encoding and grow once. Every type of this crate, and every derived type, answers
    /// exactly; the default, `0`, only costs the buffer's growth.
    fn encoded_len(&self) -> usize {
        0
    }

    /// How many bytes [`Encode::encode_slice`] appends for `items`.
    fn encoded_len_slice(items: &[Self]) -> usize
    where
        Self: Sized,
    {
        items.iter().map(Self::encoded_len).sum()
    }

    /// Appends the encodings of every item of `items`, in order, without a count.
    ///
    /// The default walks the slice; plain types override it with one copy of bytes.
    fn encode_slice(items: &[Self], out: &mut Vec<u8>)
    where
        Self: Sized,
    {
        for item in items {
            item.encode(out);
        }
    }
}

/// A value that can be read back from the wasmod encoding.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot cross the module boundary",
    label = "this type is not a wasmod type",
    note = "columns, parameters and return values must implement `SchemaType`: use the standard types (integers, floats, bool, String, Vec, Option, tuples, arrays, Identity, ConnectionId, Timestamp) or add `#[derive(wasmod::SchemaType)]`"
)]
pub trait Decode: Sized {
    /// Whether the type is plain: see [`Layout`]. Only derived impls and the numbers set it.
    #[doc(hidden)]
    const LAYOUT: Layout = Layout::STRUCTURED;

    /// Reads one value from the front of `reader`.
    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError>;

    /// Reads `len` consecutive values.
    ///
    /// The default decodes them one by one; plain types override it with one copy of bytes.
    /// Implementations must not trust `len` for allocation: it comes from the input.
    fn decode_vec(reader: &mut Reader<'_>, len: usize) -> Result<Vec<Self>, DecodeError> {
        decode_each(reader, len)
    }
}

/// Decodes `len` values one by one: the default of [`Decode::decode_vec`].
///
/// The capacity reserved up front takes at most as many bytes as are left in the input, so a
/// forged length cannot make it reserve more than the input's size: bounding the count of
/// elements by the bytes left is not enough, since an element may take far more memory than
/// its one encoded byte, and every level of nested vectors reserves its own (a description
/// of 400 bytes whose nested vectors each claimed `u32::MAX` elements once reserved 700 KB).
/// Past that room the vector grows as its elements are actually decoded.
pub fn decode_each<T: Decode>(reader: &mut Reader<'_>, len: usize) -> Result<Vec<T>, DecodeError> {
    let room = reader.remaining() / size_of::<T>().max(1);
    let mut items = Vec::with_capacity(len.min(room));
    for _ in 0..len {
        items.push(T::decode(reader)?);
    }
    Ok(items)
}

/// Whether a type's encoding is its bytes in memory.
///
/// A *plain* type has no padding, accepts every bit pattern of its size, and has an encoding
/// equal to its in-memory bytes on this target. Plain values and slices of them are encoded and
/// decoded with one copy. Only `unsafe` code can claim a type is plain; `#[derive(SchemaType)]`
/// does it for `#[repr(C)]` (or `packed`, or `transparent`) structs whose fields are all plain
/// and whose size is the sum of their sizes, which it checks at compile time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout(bool);

impl Layout {
    /// Not plain: encoded field by field. The default.
    pub const STRUCTURED: Self = Self(false);

    /// Plain.
    ///
    /// # Safety
    ///
    /// The type must have no padding bytes, every bit pattern of its size must be a valid value,
    /// and its encoding must be exactly its bytes in memory.
    pub const unsafe fn plain() -> Self {
        Self(true)
    }

    /// Plain if `condition` holds, structured otherwise.
    ///
    /// # Safety
    ///
    /// When `condition` is true, the contract of [`Layout::plain`] must hold.
    pub const unsafe fn plain_if(condition: bool) -> Self {
        Self(condition)
    }

    /// Whether the type is plain.
    pub const fn is_plain(self) -> bool {
        self.0
    }
}

/// Encodes `value` into a new vector, allocated once at its [`Encode::encoded_len`].
pub fn to_vec<T: Encode + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.encoded_len());
    value.encode(&mut out);
    out
}

/// Decodes exactly one `T` from `bytes`; trailing bytes are an error.
pub fn from_slice<T: Decode>(bytes: &[u8]) -> Result<T, DecodeError> {
    let mut reader = Reader::new(bytes);
    let value = T::decode(&mut reader)?;
    reader.finish()?;
    Ok(value)
}

/// Decodes exactly one `T` from `owner`'s bytes, with a reader that lets `T`'s decoders share
/// `owner` instead of copying out of it ([`Reader::shared`]); trailing bytes are an error.
pub fn from_shared<T: Decode, O: AsRef<[u8]> + std::any::Any>(owner: &O) -> Result<T, DecodeError> {
    let mut reader = Reader::shared(owner);
    let value = T::decode(&mut reader)?;
    reader.finish()?;
    Ok(value)
}

mod plain;

#[doc(hidden)]
pub use plain::{decode_plain, decode_plain_vec, encode_plain, encode_plain_slice};

#[cfg(test)]
mod tests;
