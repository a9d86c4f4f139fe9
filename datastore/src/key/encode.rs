//! Turning a value's row encoding into its key bytes (the table in the [module docs](super)).
//!
//! Only checked bytes are encoded: rows and scans are checked against their types before any
//! key is built from them, so the walk here never meets malformed input. If it did, the key
//! would stop short; it never panics.

use super::Key;
use wasmod_abi::{AlgebraicType, DecodeError, Field, Reader, Typespace};

/// How a value of one type is laid out in the encoding, as far as reading a row and building a
/// key need to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A `bool`: one byte, `0` or `1`.
    Bool,
    /// An unsigned integer of this many bytes.
    Unsigned(usize),
    /// A signed integer (or a `Timestamp`) of this many bytes.
    Signed(usize),
    /// A float of this many bytes.
    Float(usize),
    /// Bytes compared as they are (`Identity`, `ConnectionId`), this many.
    Raw(usize),
    /// A `String`.
    String,
    /// Anything else: arrays, options, results, products, sums.
    Compound,
}

impl Shape {
    /// The shape of `ty`, following references into `typespace`.
    pub(crate) fn of(ty: &AlgebraicType, typespace: &Typespace) -> Self {
        use AlgebraicType as T;
        match typespace.resolve(ty) {
            Some(T::Bool) => Self::Bool,
            Some(T::U8) => Self::Unsigned(1),
            Some(T::U16) => Self::Unsigned(2),
            Some(T::U32) => Self::Unsigned(4),
            Some(T::U64) => Self::Unsigned(8),
            Some(T::U128) => Self::Unsigned(16),
            Some(T::I8) => Self::Signed(1),
            Some(T::I16) => Self::Signed(2),
            Some(T::I32) => Self::Signed(4),
            Some(T::I64 | T::Timestamp) => Self::Signed(8),
            Some(T::I128) => Self::Signed(16),
            Some(T::F32) => Self::Float(4),
            Some(T::F64) => Self::Float(8),
            Some(T::Identity) => Self::Raw(32),
            Some(T::ConnectionId) => Self::Raw(16),
            Some(T::String) => Self::String,
            _ => Self::Compound,
        }
    }

    /// How many bytes every value of this shape takes; `None` if that varies.
    pub(crate) fn width(self) -> Option<usize> {
        match self {
            Self::Bool => Some(1),
            Self::Unsigned(width) | Self::Signed(width) | Self::Float(width) | Self::Raw(width) => {
                Some(width)
            }
            Self::String | Self::Compound => None,
        }
    }
}

/// Appends the key bytes of `bytes`, the checked encoding of one value of type `ty` (whose
/// shape is `shape`).
pub(crate) fn push_encoded(
    shape: Shape,
    ty: &AlgebraicType,
    typespace: &Typespace,
    bytes: &[u8],
    key: &mut Key,
) {
    match shape {
        Shape::String => push_str(bytes.get(4..).unwrap_or_default(), key),
        Shape::Compound => {
            // Checked bytes always walk to the end; see the module docs.
            let _ = walk(ty, typespace, &mut Reader::new(bytes), key);
        }
        fixed => push_fixed(fixed, bytes, key),
    }
}

/// Appends the key bytes of a value of a fixed-width `shape` from its `bytes` (exactly its
/// width of them).
fn push_fixed(shape: Shape, bytes: &[u8], key: &mut Key) {
    let mut buffer = [0u8; 32];
    let Some(out) = buffer.get_mut(..bytes.len()) else {
        return;
    };
    out.copy_from_slice(bytes);
    match shape {
        Shape::Unsigned(_) => out.reverse(),
        Shape::Signed(_) => {
            out.reverse();
            out[0] ^= 0x80;
        }
        Shape::Float(_) => {
            out.reverse();
            if out[0] & 0x80 != 0 {
                out.iter_mut().for_each(|byte| *byte = !*byte);
            } else {
                out[0] ^= 0x80;
            }
        }
        Shape::Bool | Shape::Raw(_) | Shape::String | Shape::Compound => {}
    }
    key.extend(out);
}

/// The key bytes of a value of a fixed-width `shape` from its `bytes` (exactly its width of
/// them, at most 16), as a big-endian integer: what [`push_encoded`] appends, computed with
/// integer operations.
///
/// An index whose keys fit in 16 bytes stores them as integers (see `crate::index`); building
/// the bytes first and reading them back costs more than the rest of a key's way into it.
pub(crate) fn fixed_word(shape: Shape, bytes: &[u8]) -> u128 {
    let Some(value) = little_endian(bytes) else {
        return 0;
    };
    let bits = 8 * bytes.len() as u32;
    let sign = 1u128 << (bits - 1);
    match shape {
        Shape::Signed(_) => value ^ sign,
        Shape::Float(_) if value & sign != 0 => !value & (u128::MAX >> (128 - bits)),
        Shape::Float(_) => value ^ sign,
        Shape::Raw(_) => value.swap_bytes() >> (128 - bits),
        Shape::Bool | Shape::Unsigned(_) | Shape::String | Shape::Compound => value,
    }
}

/// The little-endian integer of `bytes`, if they are 1, 2, 4, 8 or 16 (the fixed widths up
/// to 16), read with one load.
fn little_endian(bytes: &[u8]) -> Option<u128> {
    Some(match bytes.len() {
        1 => bytes[0].into(),
        2 => u16::from_le_bytes(bytes.try_into().ok()?).into(),
        4 => u32::from_le_bytes(bytes.try_into().ok()?).into(),
        8 => u64::from_le_bytes(bytes.try_into().ok()?).into(),
        16 => u128::from_le_bytes(bytes.try_into().ok()?),
        _ => return None,
    })
}

/// Appends a string's key bytes: `00` escaped as `00 FF`, then the terminator `00 00`.
fn push_str(text: &[u8], key: &mut Key) {
    for (position, part) in text.split(|&byte| byte == 0).enumerate() {
        if position > 0 {
            key.extend(&[0x00, 0xff]);
        }
        key.extend(part);
    }
    key.extend(&[0x00, 0x00]);
}

/// Walks one encoded value of type `ty` at the front of `reader`, appending its key bytes.
fn walk(
    ty: &AlgebraicType,
    typespace: &Typespace,
    reader: &mut Reader<'_>,
    key: &mut Key,
) -> Result<(), DecodeError> {
    use AlgebraicType as T;
    let shape = Shape::of(ty, typespace);
    if let Some(width) = shape.width() {
        push_fixed(shape, reader.take(width)?, key);
        return Ok(());
    }
    match typespace.resolve(ty).ok_or(DecodeError::UnresolvedRef)? {
        T::String => push_str(reader.read_len_prefixed()?, key),
        T::Array(element) => {
            for _ in 0..reader.read_len()? {
                key.push(0x01);
                walk(element, typespace, reader, key)?;
            }
            key.push(0x00);
        }
        T::FixedArray(element, len) => {
            for _ in 0..*len {
                walk(element, typespace, reader, key)?;
            }
        }
        T::Option(inner) => {
            let tag = reader.take(1)?[0];
            key.push(tag);
            if tag == 1 {
                walk(inner, typespace, reader, key)?;
            }
        }
        T::Result(ok, err) => {
            let tag = reader.take(1)?[0];
            key.push(tag);
            walk(if tag == 0 { ok } else { err }, typespace, reader, key)?;
        }
        T::Product(fields) => {
            for field in fields {
                walk(&field.ty, typespace, reader, key)?;
            }
        }
        T::Sum(variants) => {
            let tag = reader.take(1)?[0];
            key.push(tag);
            let variant = Field::variant(variants, tag)?;
            walk(&variant.ty, typespace, reader, key)?;
        }
        // The fixed-width types were handled above; `Ref`s resolve for checked types.
        _ => return Err(DecodeError::UnresolvedRef),
    }
    Ok(())
}
