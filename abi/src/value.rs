//! Dynamic values: an encoded value read against its [`AlgebraicType`] at run time.
//!
//! Modules know their types statically and use [`Encode`](crate::Encode) and
//! [`Decode`]. A host does not: it learns the types from the module description,
//! and must still check rows, extract index keys and compare them. [`Value`] is that dynamic
//! form. Its encoding ([`Value::encode`]) is byte for byte the static encoding of the same
//! value, and its order ([`Ord`]) is the order index keys are sorted in.
//!
//! Decoding ([`Value::decode`], [`Value::skip`]) treats both the bytes and the type as hostile:
//! it never panics, never recurses deeper than [`MAX_DEPTH`] levels, and never allocates more
//! than the input could hold.

use crate::elements::{array_elements, zero_sized_elements, Budget};
use crate::encoding::{Decode, DecodeError, Reader};
use crate::schema::{AlgebraicType, Field, Typespace};
use crate::types::{ConnectionId, Identity, Timestamp};
use core::cmp::Ordering;

/// How deeply compound values (arrays, options, results, products, sums) may nest: the static
/// decoders' [`MAX_DEPTH`](crate::encoding::MAX_DEPTH).
///
/// Deeper input is refused with [`DecodeError::TooDeep`], so that a hostile value or type
/// cannot exhaust the host's stack.
pub const MAX_DEPTH: usize = crate::encoding::MAX_DEPTH as usize;

pub use crate::elements::MAX_ZERO_SIZED_ELEMENTS;

/// A value of any [`AlgebraicType`].
///
/// A fixed-size array (`[T; N]`) is a [`Value::Product`] of its elements: both are encoded as
/// their items concatenated, without a count.
///
/// Values are totally ordered: first by variant (in declaration order), then by content.
/// Floats compare with [`f64::total_cmp`] (so `-0.0 < +0.0`, and NaNs are ordered by their
/// bits), arrays and products lexicographically, `None` before `Some`, `Ok` before `Err`, and
/// sums by tag, then payload. Equality agrees with the order: two floats are equal when their
/// bits are.
#[derive(Clone, Debug)]
pub enum Value {
    /// A `bool`.
    Bool(bool),
    /// An `i8`.
    I8(i8),
    /// A `u8`.
    U8(u8),
    /// An `i16`.
    I16(i16),
    /// A `u16`.
    U16(u16),
    /// An `i32`.
    I32(i32),
    /// A `u32`.
    U32(u32),
    /// An `i64`.
    I64(i64),
    /// A `u64`.
    U64(u64),
    /// An `i128`.
    I128(i128),
    /// A `u128`.
    U128(u128),
    /// An `f32`.
    F32(f32),
    /// An `f64`.
    F64(f64),
    /// A string.
    String(String),
    /// An identity.
    Identity(Identity),
    /// A connection id.
    ConnectionId(ConnectionId),
    /// A timestamp.
    Timestamp(Timestamp),
    /// A counted sequence.
    Array(Vec<Value>),
    /// An option.
    Option(Option<Box<Value>>),
    /// A result.
    Result(Result<Box<Value>, Box<Value>>),
    /// The fields of a product (or the items of a fixed-size array), in order.
    Product(Vec<Value>),
    /// One variant of a sum.
    Sum {
        /// The variant's position.
        tag: u8,
        /// Its payload.
        value: Box<Value>,
    },
}

impl Value {
    /// Decodes one value of type `ty` from the front of `reader`, following
    /// [`AlgebraicType::Ref`]s into `typespace`.
    ///
    /// Errors: whatever the static decoders report for malformed bytes, plus [`DecodeError::TooDeep`],
    /// [`DecodeError::UnresolvedRef`], [`DecodeError::LengthOverflow`] (see
    /// [`MAX_ZERO_SIZED_ELEMENTS`]) and [`DecodeError::TooManyElements`] (more elements than
    /// [`max_elements`](crate::elements::max_elements) of the bytes the value takes, or of the
    /// bytes left, which bounds the work).
    pub fn decode(
        ty: &AlgebraicType,
        typespace: &Typespace,
        reader: &mut Reader<'_>,
    ) -> Result<Value, DecodeError> {
        walk_counted::<Build>(ty, typespace, reader)
    }

    /// Checks that one value of type `ty` is at the front of `reader` and moves past it,
    /// without building it. Accepts exactly what [`Value::decode`] accepts.
    pub fn skip(
        ty: &AlgebraicType,
        typespace: &Typespace,
        reader: &mut Reader<'_>,
    ) -> Result<(), DecodeError> {
        walk_counted::<Check>(ty, typespace, reader)
    }

    /// Appends the value's encoding to `out`: the same bytes as the static encoding.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Self::Bool(value) => out.push(u8::from(*value)),
            Self::I8(value) => out.extend_from_slice(&value.to_le_bytes()),
            Self::U8(value) => out.push(*value),
            Self::I16(value) => out.extend_from_slice(&value.to_le_bytes()),
            Self::U16(value) => out.extend_from_slice(&value.to_le_bytes()),
            Self::I32(value) => out.extend_from_slice(&value.to_le_bytes()),
            Self::U32(value) => out.extend_from_slice(&value.to_le_bytes()),
            Self::I64(value) => out.extend_from_slice(&value.to_le_bytes()),
            Self::U64(value) => out.extend_from_slice(&value.to_le_bytes()),
            Self::I128(value) => out.extend_from_slice(&value.to_le_bytes()),
            Self::U128(value) => out.extend_from_slice(&value.to_le_bytes()),
            Self::F32(value) => out.extend_from_slice(&value.to_le_bytes()),
            Self::F64(value) => out.extend_from_slice(&value.to_le_bytes()),
            Self::String(text) => {
                encode_len(text.len(), out);
                out.extend_from_slice(text.as_bytes());
            }
            Self::Identity(identity) => out.extend_from_slice(&identity.to_bytes()),
            Self::ConnectionId(id) => out.extend_from_slice(&id.to_bytes()),
            Self::Timestamp(time) => {
                out.extend_from_slice(&time.to_micros_since_unix_epoch().to_le_bytes())
            }
            Self::Array(items) => {
                encode_len(items.len(), out);
                items.iter().for_each(|item| item.encode(out));
            }
            Self::Option(None) => out.push(0),
            Self::Option(Some(value)) => encode_tagged(1, value, out),
            Self::Result(Ok(value)) => encode_tagged(0, value, out),
            Self::Result(Err(error)) => encode_tagged(1, error, out),
            Self::Product(fields) => fields.iter().for_each(|field| field.encode(out)),
            Self::Sum { tag, value } => encode_tagged(*tag, value, out),
        }
    }

    /// The value's encoding, in a new vector.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }

    /// The position of the variant, which orders values of different variants.
    fn rank(&self) -> u8 {
        match self {
            Self::Bool(_) => 0,
            Self::I8(_) => 1,
            Self::U8(_) => 2,
            Self::I16(_) => 3,
            Self::U16(_) => 4,
            Self::I32(_) => 5,
            Self::U32(_) => 6,
            Self::I64(_) => 7,
            Self::U64(_) => 8,
            Self::I128(_) => 9,
            Self::U128(_) => 10,
            Self::F32(_) => 11,
            Self::F64(_) => 12,
            Self::String(_) => 13,
            Self::Identity(_) => 14,
            Self::ConnectionId(_) => 15,
            Self::Timestamp(_) => 16,
            Self::Array(_) => 17,
            Self::Option(_) => 18,
            Self::Result(_) => 19,
            Self::Product(_) => 20,
            Self::Sum { .. } => 21,
        }
    }
}

/// Writes a `u32` count the way the static encoding does (saturating; see `encoding::impls`).
fn encode_len(len: usize, out: &mut Vec<u8>) {
    let len = u32::try_from(len).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_le_bytes());
}

fn encode_tagged(tag: u8, value: &Value, out: &mut Vec<u8>) {
    out.push(tag);
    value.encode(out);
}

impl Ord for Value {
    fn cmp(&self, other: &Self) -> Ordering {
        use Value as V;
        match (self, other) {
            (V::Bool(a), V::Bool(b)) => a.cmp(b),
            (V::I8(a), V::I8(b)) => a.cmp(b),
            (V::U8(a), V::U8(b)) => a.cmp(b),
            (V::I16(a), V::I16(b)) => a.cmp(b),
            (V::U16(a), V::U16(b)) => a.cmp(b),
            (V::I32(a), V::I32(b)) => a.cmp(b),
            (V::U32(a), V::U32(b)) => a.cmp(b),
            (V::I64(a), V::I64(b)) => a.cmp(b),
            (V::U64(a), V::U64(b)) => a.cmp(b),
            (V::I128(a), V::I128(b)) => a.cmp(b),
            (V::U128(a), V::U128(b)) => a.cmp(b),
            (V::F32(a), V::F32(b)) => a.total_cmp(b),
            (V::F64(a), V::F64(b)) => a.total_cmp(b),
            (V::String(a), V::String(b)) => a.cmp(b),
            (V::Identity(a), V::Identity(b)) => a.cmp(b),
            (V::ConnectionId(a), V::ConnectionId(b)) => a.cmp(b),
            (V::Timestamp(a), V::Timestamp(b)) => a.cmp(b),
            (V::Array(a), V::Array(b)) | (V::Product(a), V::Product(b)) => a.cmp(b),
            (V::Option(a), V::Option(b)) => a.cmp(b),
            (V::Result(a), V::Result(b)) => a.cmp(b),
            (V::Sum { tag: a, value: x }, V::Sum { tag: b, value: y }) => {
                a.cmp(b).then_with(|| x.cmp(y))
            }
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Value {}

impl core::hash::Hash for Value {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        // Equal values have equal encodings and ranks; floats are equal exactly when their
        // bits (hence their encodings) are.
        state.write_u8(self.rank());
        state.write(&self.to_bytes());
    }
}

macro_rules! impl_from {
    ($($ty:ty => $variant:ident),* $(,)?) => {$(
        impl From<$ty> for Value {
            fn from(value: $ty) -> Self {
                Self::$variant(value)
            }
        }
    )*};
}

impl_from!(
    bool => Bool, i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32,
    i64 => I64, u64 => U64, i128 => I128, u128 => U128, f32 => F32, f64 => F64,
    String => String, Identity => Identity, ConnectionId => ConnectionId,
    Timestamp => Timestamp,
);

impl From<&str> for Value {
    fn from(value: &str) -> Self {
        Self::String(value.to_owned())
    }
}

/// What a walk over an encoded value produces: the value ([`Build`]) or nothing ([`Check`]).
///
/// One walker serves both, so that checking a row and decoding its key columns accept exactly
/// the same bytes.
trait Output: Sized {
    type Out;
    fn leaf(value: Value) -> Self::Out;
    fn string(text: &str) -> Self::Out;
    fn array(items: Vec<Self::Out>) -> Self::Out;
    fn product(items: Vec<Self::Out>) -> Self::Out;
    fn option(value: Option<Self::Out>) -> Self::Out;
    fn result(value: Result<Self::Out, Self::Out>) -> Self::Out;
    fn sum(tag: u8, value: Self::Out) -> Self::Out;
}

/// Builds a [`Value`].
struct Build;

impl Output for Build {
    type Out = Value;
    fn leaf(value: Value) -> Value {
        value
    }
    fn string(text: &str) -> Value {
        Value::String(text.to_owned())
    }
    fn array(items: Vec<Value>) -> Value {
        Value::Array(items)
    }
    fn product(items: Vec<Value>) -> Value {
        Value::Product(items)
    }
    fn option(value: Option<Value>) -> Value {
        Value::Option(value.map(Box::new))
    }
    fn result(value: Result<Value, Value>) -> Value {
        Value::Result(value.map(Box::new).map_err(Box::new))
    }
    fn sum(tag: u8, value: Value) -> Value {
        Value::Sum {
            tag,
            value: Box::new(value),
        }
    }
}

/// Builds nothing: a `Vec<()>` never allocates.
struct Check;

impl Output for Check {
    type Out = ();
    fn leaf(_: Value) {}
    fn string(_: &str) {}
    fn array(_: Vec<()>) {}
    fn product(_: Vec<()>) {}
    fn option(_: Option<()>) {}
    fn result(_: Result<(), ()>) {}
    fn sum(_: u8, _: ()) {}
}

/// Walks one value with a [`Budget`] of elements for the bytes left, then checks the elements
/// visited against the bytes the value took.
fn walk_counted<O: Output>(
    ty: &AlgebraicType,
    typespace: &Typespace,
    reader: &mut Reader<'_>,
) -> Result<O::Out, DecodeError> {
    let start = reader.remaining();
    let mut budget = Budget::for_input(start);
    let out = walk_one::<O>(ty, typespace, reader, 0, &mut budget)?;
    budget.finish(start - reader.remaining())?;
    Ok(out)
}

/// Counts one value against `budget`, then walks it.
fn walk_one<O: Output>(
    ty: &AlgebraicType,
    typespace: &Typespace,
    reader: &mut Reader<'_>,
    depth: usize,
    budget: &mut Budget,
) -> Result<O::Out, DecodeError> {
    budget.take(1)?;
    walk::<O>(ty, typespace, reader, depth, budget)
}

/// Walks one value that is counted already. A container counts its items, fields or payload
/// against `budget` before it walks them: all of an array's items at once, so that a leaf
/// costs no count of its own.
fn walk<O: Output>(
    ty: &AlgebraicType,
    typespace: &Typespace,
    reader: &mut Reader<'_>,
    depth: usize,
    budget: &mut Budget,
) -> Result<O::Out, DecodeError> {
    use AlgebraicType as T;
    let leaf = |value: Value| Ok(O::leaf(value));
    match typespace.resolve(ty).ok_or(DecodeError::UnresolvedRef)? {
        T::Bool => leaf(Value::Bool(bool::decode(reader)?)),
        T::I8 => leaf(Value::I8(i8::decode(reader)?)),
        T::U8 => leaf(Value::U8(u8::decode(reader)?)),
        T::I16 => leaf(Value::I16(i16::decode(reader)?)),
        T::U16 => leaf(Value::U16(u16::decode(reader)?)),
        T::I32 => leaf(Value::I32(i32::decode(reader)?)),
        T::U32 => leaf(Value::U32(u32::decode(reader)?)),
        T::I64 => leaf(Value::I64(i64::decode(reader)?)),
        T::U64 => leaf(Value::U64(u64::decode(reader)?)),
        T::I128 => leaf(Value::I128(i128::decode(reader)?)),
        T::U128 => leaf(Value::U128(u128::decode(reader)?)),
        T::F32 => leaf(Value::F32(f32::decode(reader)?)),
        T::F64 => leaf(Value::F64(f64::decode(reader)?)),
        T::Identity => leaf(Value::Identity(Identity::decode(reader)?)),
        T::ConnectionId => leaf(Value::ConnectionId(ConnectionId::decode(reader)?)),
        T::Timestamp => leaf(Value::Timestamp(Timestamp::decode(reader)?)),
        T::String => {
            let bytes = reader.read_len_prefixed()?;
            let text = core::str::from_utf8(bytes).map_err(|_| DecodeError::InvalidUtf8)?;
            Ok(O::string(text))
        }
        T::Array(element) => {
            let depth = deeper(depth)?;
            let len = reader.read_len()?;
            let items = walk_items::<O>(element, len, typespace, reader, depth, budget)?;
            Ok(O::array(items))
        }
        T::FixedArray(element, len) => {
            let depth = deeper(depth)?;
            let len = usize::try_from(*len).map_err(|_| DecodeError::LengthOverflow)?;
            let items = walk_items::<O>(element, len, typespace, reader, depth, budget)?;
            Ok(O::product(items))
        }
        T::Option(inner) => {
            let depth = deeper(depth)?;
            match read_tag(reader)? {
                0 => Ok(O::option(None)),
                1 => Ok(O::option(Some(walk_one::<O>(
                    inner, typespace, reader, depth, budget,
                )?))),
                tag => Err(DecodeError::InvalidTag {
                    tag,
                    type_name: "Option",
                }),
            }
        }
        T::Result(ok, err) => {
            let depth = deeper(depth)?;
            match read_tag(reader)? {
                0 => Ok(O::result(Ok(walk_one::<O>(
                    ok, typespace, reader, depth, budget,
                )?))),
                1 => Ok(O::result(Err(walk_one::<O>(
                    err, typespace, reader, depth, budget,
                )?))),
                tag => Err(DecodeError::InvalidTag {
                    tag,
                    type_name: "Result",
                }),
            }
        }
        T::Product(fields) => {
            let depth = deeper(depth)?;
            budget.take(fields.len())?;
            let items = fields
                .iter()
                .map(|field| walk::<O>(&field.ty, typespace, reader, depth, budget))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(O::product(items))
        }
        T::Sum(variants) => {
            let depth = deeper(depth)?;
            let tag = read_tag(reader)?;
            let variant = Field::variant(variants, tag)?;
            Ok(O::sum(
                tag,
                walk_one::<O>(&variant.ty, typespace, reader, depth, budget)?,
            ))
        }
        T::Ref(_) => Err(DecodeError::UnresolvedRef),
    }
}

/// Walks `len` consecutive values of type `element`.
fn walk_items<O: Output>(
    element: &AlgebraicType,
    len: usize,
    typespace: &Typespace,
    reader: &mut Reader<'_>,
    depth: usize,
    budget: &mut Budget,
) -> Result<Vec<O::Out>, DecodeError> {
    match zero_sized_elements(element, typespace, depth)? {
        Some(nested) if array_elements(len, nested) > MAX_ZERO_SIZED_ELEMENTS => {
            return Err(DecodeError::LengthOverflow);
        }
        Some(_) => {}
        // Every element takes at least one byte: the input cannot hold them all.
        None if len > reader.remaining() => {
            return Err(DecodeError::UnexpectedEnd {
                needed: len,
                remaining: reader.remaining(),
            });
        }
        None => {}
    }
    budget.take(len)?;
    let mut items = Vec::with_capacity(len.min(reader.remaining()));
    for _ in 0..len {
        items.push(walk::<O>(element, typespace, reader, depth, budget)?);
    }
    Ok(items)
}

fn read_tag(reader: &mut Reader<'_>) -> Result<u8, DecodeError> {
    u8::decode(reader)
}

fn deeper(depth: usize) -> Result<usize, DecodeError> {
    if depth >= MAX_DEPTH {
        Err(DecodeError::TooDeep)
    } else {
        Ok(depth + 1)
    }
}
