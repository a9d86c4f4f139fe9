//! The one-copy path for plain types (see [`Layout`](super::Layout)).
//!
//! Each function checks `T::LAYOUT` before touching bytes, so calling one with a type that is
//! not plain is a logic error reported as [`DecodeError::NotPlain`], never undefined behaviour.

use super::{Decode, DecodeError, Reader};
use core::mem::size_of;

/// The bytes of a plain value.
fn bytes_of<T: Decode>(items: &[T]) -> &[u8] {
    assert_plain::<T>();
    // SAFETY: `T` is plain (checked above), so it has no padding and every byte is initialised.
    unsafe {
        core::slice::from_raw_parts(items.as_ptr().cast::<u8>(), core::mem::size_of_val(items))
    }
}

fn assert_plain<T: Decode>() {
    assert!(
        T::LAYOUT.is_plain(),
        "encode_plain called with a type that is not plain"
    );
}

/// Encodes a plain value: its bytes in memory are its encoding.
#[inline]
pub fn encode_plain<T: Decode>(value: &T, out: &mut Vec<u8>) {
    out.extend_from_slice(bytes_of(core::slice::from_ref(value)));
}

/// Encodes a slice of plain values with one copy.
#[inline]
pub fn encode_plain_slice<T: Decode>(items: &[T], out: &mut Vec<u8>) {
    out.extend_from_slice(bytes_of(items));
}

/// Decodes a plain value with one read of its bytes.
#[inline]
pub fn decode_plain<T: Decode>(reader: &mut Reader<'_>) -> Result<T, DecodeError> {
    if !T::LAYOUT.is_plain() {
        return Err(DecodeError::NotPlain);
    }
    let bytes = reader.take(size_of::<T>())?;
    // SAFETY: `T` is plain: any `size_of::<T>()` bytes are a valid `T`; the read is unaligned.
    Ok(unsafe { bytes.as_ptr().cast::<T>().read_unaligned() })
}

/// Decodes `len` plain values with one copy.
#[inline]
pub fn decode_plain_vec<T: Decode>(
    reader: &mut Reader<'_>,
    len: usize,
) -> Result<Vec<T>, DecodeError> {
    let size = size_of::<T>();
    if !T::LAYOUT.is_plain() || size == 0 {
        return Err(DecodeError::NotPlain);
    }
    let total = len.checked_mul(size).ok_or(DecodeError::LengthOverflow)?;
    let bytes = reader.take(total)?;
    let mut items = Vec::<T>::with_capacity(len);
    // SAFETY: the vector has room for `len` items, which are `total` bytes; `T` is plain, so
    // the copied bytes are `len` valid values.
    unsafe {
        core::ptr::copy_nonoverlapping(bytes.as_ptr(), items.as_mut_ptr().cast::<u8>(), total);
        items.set_len(len);
    }
    Ok(items)
}
