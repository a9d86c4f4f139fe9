//! The writer: one pass over a value's bytes, guided by its type, appending JSON.
//!
//! A table of many rows rendered through a tree of values per row allocates a few nodes per
//! field before the first byte of the answer is written. Here one walk over the type reads a
//! value's bytes and writes its JSON at once.
//!
//! A struct's keys come in sorted order, as a `serde_json::Map` orders them. A struct whose
//! fields are not declared in sorted order (most are not) is written field by field, then the
//! fields' texts are put in order: the only buffering the writer does. A field name that a
//! hostile type declares twice appears once, with the last value, as in a map.
//!
//! The bytes are checked as they are read, as [`Value::decode`](crate::value::Value::decode) checks
//! them: bounds, UTF-8, bools, tags, references, and nesting (at most [`MAX_DEPTH`]
//! containers). A count of items is refused at once when neither the bytes left nor
//! [`MAX_ZERO_SIZED_ELEMENTS`] could hold it, so a forged count cannot make the writer loop,
//! and the elements written are counted against the bound on elements per byte
//! ([`crate::elements`]), so no value makes the writer work (or write) more than its bytes
//! allow. On an error, the output is left as it was before the call.

use super::{is_option, is_unit, text, variant_name, MAX_SAFE_INTEGER};
use crate::elements::Budget;
use crate::value::{MAX_DEPTH, MAX_ZERO_SIZED_ELEMENTS};
use crate::{
    AlgebraicType, ConnectionId, Decode, DecodeError, Field, Identity, Reader, Timestamp, Typespace,
};
use std::ops::Range;

/// Appends the JSON of the encoded value `bytes`, of type `ty` (resolved in `typespace`), to
/// `out`.
///
/// Errors if `bytes` is not exactly one value of `ty`; `out` is then as it was.
///
/// ```
/// use wasmod_abi::{encoding::to_vec, json::write_value, AlgebraicType, Typespace};
///
/// let ty = AlgebraicType::Array(Box::new(AlgebraicType::U64));
/// let mut out = Vec::new();
/// write_value(&mut out, &ty, &Typespace::default(), &to_vec(&vec![1u64, u64::MAX])).unwrap();
/// assert_eq!(out, br#"[1,"18446744073709551615"]"#);
/// ```
pub fn write_value(
    out: &mut Vec<u8>,
    ty: &AlgebraicType,
    typespace: &Typespace,
    bytes: &[u8],
) -> Result<(), DecodeError> {
    let start = out.len();
    let mut reader = Reader::new(bytes);
    let written = Writer {
        typespace,
        out,
        budget: Budget::for_input(bytes.len()),
    }
    .value(ty, &mut reader, 0)
    .and_then(|()| reader.finish());
    written.inspect_err(|_| out.truncate(start))
}

/// One walk: reads values from a [`Reader`] and appends their JSON to `out`.
struct Writer<'a> {
    typespace: &'a Typespace,
    out: &'a mut Vec<u8>,
    /// The elements the value may still have for its bytes.
    budget: Budget,
}

impl Writer<'_> {
    fn value(
        &mut self,
        ty: &AlgebraicType,
        reader: &mut Reader<'_>,
        depth: usize,
    ) -> Result<(), DecodeError> {
        use AlgebraicType as T;
        self.budget.visit()?;
        let typespace = self.typespace;
        match typespace.resolve(ty).ok_or(DecodeError::UnresolvedRef)? {
            T::Bool => {
                let text: &[u8] = if bool::decode(reader)? {
                    b"true"
                } else {
                    b"false"
                };
                self.out.extend_from_slice(text);
            }
            T::I8 => text::integer(self.out, i8::decode(reader)?),
            T::U8 => text::integer(self.out, u8::decode(reader)?),
            T::I16 => text::integer(self.out, i16::decode(reader)?),
            T::U16 => text::integer(self.out, u16::decode(reader)?),
            T::I32 => text::integer(self.out, i32::decode(reader)?),
            T::U32 => text::integer(self.out, u32::decode(reader)?),
            T::I64 => self.wide_signed(i64::decode(reader)?.into()),
            T::U64 => self.wide_unsigned(u64::decode(reader)?.into()),
            T::I128 => self.wide_signed(i128::decode(reader)?),
            T::U128 => self.wide_unsigned(u128::decode(reader)?),
            T::F32 => {
                // The shortest decimal that reads back as the same `f32`.
                let value = f32::decode(reader)?;
                if value.is_finite() {
                    text::finite_f32(self.out, value);
                } else {
                    self.float(f64::from(value));
                }
            }
            T::F64 => self.float(f64::decode(reader)?),
            T::String => {
                let bytes = reader.read_len_prefixed()?;
                let text = std::str::from_utf8(bytes).map_err(|_| DecodeError::InvalidUtf8)?;
                text::string(self.out, text);
            }
            T::Identity => text::string(self.out, &Identity::decode(reader)?.to_hex()),
            T::ConnectionId => text::string(self.out, &ConnectionId::decode(reader)?.to_hex()),
            T::Timestamp => {
                let micros = Timestamp::decode(reader)?.to_micros_since_unix_epoch();
                self.wide_signed(micros.into());
            }
            T::Array(element) => {
                let depth = deeper(depth)?;
                let len = reader.read_len()?;
                self.items(element, len, reader, depth)?;
            }
            T::FixedArray(element, len) => {
                let depth = deeper(depth)?;
                let len = usize::try_from(*len).map_err(|_| DecodeError::LengthOverflow)?;
                self.items(element, len, reader, depth)?;
            }
            T::Option(inner) => {
                let depth = deeper(depth)?;
                match u8::decode(reader)? {
                    0 => self.out.extend_from_slice(b"null"),
                    1 if is_option(typespace, inner) => {
                        self.tagged("some", inner, reader, depth)?;
                    }
                    1 => self.value(inner, reader, depth)?,
                    tag => {
                        return Err(DecodeError::InvalidTag {
                            tag,
                            type_name: "Option",
                        })
                    }
                }
            }
            T::Result(ok, err) => {
                let depth = deeper(depth)?;
                match u8::decode(reader)? {
                    0 => self.tagged("ok", ok, reader, depth)?,
                    1 => self.tagged("err", err, reader, depth)?,
                    tag => {
                        return Err(DecodeError::InvalidTag {
                            tag,
                            type_name: "Result",
                        })
                    }
                }
            }
            T::Product(fields) => {
                let depth = deeper(depth)?;
                let named = !fields.is_empty() && fields.iter().all(|field| field.name.is_some());
                if !named {
                    self.tuple(fields, reader, depth)?;
                } else if fields.windows(2).all(|pair| pair[0].name < pair[1].name) {
                    self.sorted_struct(fields, reader, depth)?;
                } else {
                    self.unsorted_struct(fields, reader, depth)?;
                }
            }
            T::Sum(variants) => {
                let depth = deeper(depth)?;
                let tag = u8::decode(reader)?;
                let variant = Field::variant(variants, tag)?;
                let name = variant_name(usize::from(tag), variant);
                if is_unit(typespace, &variant.ty) {
                    text::string(self.out, &name);
                } else {
                    self.tagged(&name, &variant.ty, reader, depth)?;
                }
            }
            T::Ref(_) => return Err(DecodeError::UnresolvedRef),
        }
        Ok(())
    }

    /// `len` values of type `element`, as an array.
    fn items(
        &mut self,
        element: &AlgebraicType,
        len: usize,
        reader: &mut Reader<'_>,
        depth: usize,
    ) -> Result<(), DecodeError> {
        // Each item takes at least a byte, unless its type is zero-sized, and zero-sized
        // items may repeat at most `MAX_ZERO_SIZED_ELEMENTS` times.
        if len > reader.remaining().max(MAX_ZERO_SIZED_ELEMENTS) {
            return Err(DecodeError::LengthOverflow);
        }
        self.out.push(b'[');
        for index in 0..len {
            if index > 0 {
                self.out.push(b',');
            }
            self.value(element, reader, depth)?;
        }
        self.out.push(b']');
        Ok(())
    }

    /// A tuple's fields, as an array.
    fn tuple(
        &mut self,
        fields: &[Field],
        reader: &mut Reader<'_>,
        depth: usize,
    ) -> Result<(), DecodeError> {
        self.out.push(b'[');
        for (index, field) in fields.iter().enumerate() {
            if index > 0 {
                self.out.push(b',');
            }
            self.value(&field.ty, reader, depth)?;
        }
        self.out.push(b']');
        Ok(())
    }

    /// A struct whose field names are declared in strictly increasing order: written as read.
    fn sorted_struct(
        &mut self,
        fields: &[Field],
        reader: &mut Reader<'_>,
        depth: usize,
    ) -> Result<(), DecodeError> {
        self.out.push(b'{');
        for (index, field) in fields.iter().enumerate() {
            if index > 0 {
                self.out.push(b',');
            }
            self.key(field_name(field));
            self.value(&field.ty, reader, depth)?;
        }
        self.out.push(b'}');
        Ok(())
    }

    /// Any other struct: each field's JSON is written after the output in declaration order,
    /// then copied out in key order, and the unordered texts dropped.
    fn unsorted_struct(
        &mut self,
        fields: &[Field],
        reader: &mut Reader<'_>,
        depth: usize,
    ) -> Result<(), DecodeError> {
        let start = self.out.len();
        // By name, each span inserted in its place as it is written (a binary search), rather
        // than sorted after: core's sort would add kilobytes to the browser client. Of several
        // fields with one name, the last declared comes first, and only it is kept, as in a map.
        let mut spans: Vec<(&str, Range<usize>)> = Vec::with_capacity(fields.len());
        for field in fields {
            let from = self.out.len();
            self.value(&field.ty, reader, depth)?;
            let name = field_name(field);
            let span = (name, from..self.out.len());
            match spans.last() {
                Some(&(last, _)) if last >= name => {
                    let place = spans.partition_point(|&(before, _)| before < name);
                    spans.insert(place, span);
                }
                _ => spans.push(span),
            }
        }
        let end = self.out.len();
        spans.dedup_by(|later, kept| later.0 == kept.0);
        self.out.push(b'{');
        for (position, (name, span)) in spans.into_iter().enumerate() {
            if position > 0 {
                self.out.push(b',');
            }
            self.key(name);
            self.out.extend_from_within(span);
        }
        self.out.push(b'}');
        self.out.drain(start..end);
        Ok(())
    }

    /// `{"key": value}`.
    fn tagged(
        &mut self,
        key: &str,
        ty: &AlgebraicType,
        reader: &mut Reader<'_>,
        depth: usize,
    ) -> Result<(), DecodeError> {
        self.out.push(b'{');
        self.key(key);
        self.value(ty, reader, depth)?;
        self.out.push(b'}');
        Ok(())
    }

    /// `"key":`.
    fn key(&mut self, key: &str) {
        text::string(self.out, key);
        self.out.push(b':');
    }

    /// A 64- or 128-bit signed integer: a number when exact everywhere, else a decimal string.
    fn wide_signed(&mut self, value: i128) {
        match i64::try_from(value) {
            Ok(small) if small.unsigned_abs() <= MAX_SAFE_INTEGER => text::integer(self.out, small),
            _ => text::quoted_integer(self.out, value),
        }
    }

    /// A 64- or 128-bit unsigned integer: a number when exact everywhere, else a decimal string.
    fn wide_unsigned(&mut self, value: u128) {
        match u64::try_from(value) {
            Ok(small) if small <= MAX_SAFE_INTEGER => text::integer(self.out, small),
            _ => text::quoted_integer(self.out, value),
        }
    }

    /// A number, or the name of a value JSON cannot write.
    fn float(&mut self, value: f64) {
        if value.is_finite() {
            text::finite_float(self.out, value);
        } else if value.is_nan() {
            text::string(self.out, "NaN");
        } else if value > 0.0 {
            text::string(self.out, "Infinity");
        } else {
            text::string(self.out, "-Infinity");
        }
    }
}

/// A named field's name (a struct's fields are all named).
fn field_name(field: &Field) -> &str {
    field.name.as_deref().unwrap_or_default()
}

/// One more level of nesting, or [`DecodeError::TooDeep`] past [`MAX_DEPTH`].
fn deeper(depth: usize) -> Result<usize, DecodeError> {
    if depth >= MAX_DEPTH {
        Err(DecodeError::TooDeep)
    } else {
        Ok(depth + 1)
    }
}
