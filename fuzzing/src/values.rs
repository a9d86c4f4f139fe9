//! Values of a tame type (see [`types`](crate::types)), made from a string of entropy bytes.
//!
//! The shape of a value depends on its type, so a plain strategy cannot generate it; instead
//! proptest generates the entropy (a byte vector), and [`value_of`] reads its choices from it
//! (an array's length, an option's presence, a sum's tag, a number's bytes). Once the entropy
//! runs out every choice is the smallest one, so shrinking the entropy shrinks the value.

use proptest::prelude::*;
use wasmod_abi::{AlgebraicType, ConnectionId, Identity, Timestamp, Typespace, Value};

/// How deeply counted arrays nest before they are made empty: the recursive tree type must
/// end somewhere.
const MAX_ARRAY_DEPTH: usize = 3;

/// The characters strings are made of: ASCII, what JSON escapes, and multi-byte UTF-8.
const CHARACTERS: [char; 12] = [
    'a',
    'Z',
    '0',
    ' ',
    '"',
    '\\',
    '\n',
    '\u{0}',
    '\u{7f}',
    'é',
    '€',
    '\u{1F600}',
];

/// Choices read from a byte string; zero once it is used up.
#[derive(Debug)]
pub struct Entropy<'a> {
    bytes: &'a [u8],
}

impl<'a> Entropy<'a> {
    /// Choices read from `bytes`, in order.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    /// The next byte, or `0`.
    pub fn byte(&mut self) -> u8 {
        match self.bytes.split_first() {
            Some((&first, rest)) => {
                self.bytes = rest;
                first
            }
            None => 0,
        }
    }

    /// The next `N` bytes, zeros past the end.
    pub fn array<const N: usize>(&mut self) -> [u8; N] {
        std::array::from_fn(|_| self.byte())
    }

    /// A number below `bound` (which is at least 1).
    pub fn below(&mut self, bound: usize) -> usize {
        usize::from(self.byte()) % bound.max(1)
    }

    /// A coin toss.
    pub fn flip(&mut self) -> bool {
        self.byte() & 1 == 1
    }
}

/// A value of the tame type `ty`, its choices read from `entropy`.
///
/// # Panics
///
/// If `ty` is not tame: a reference that does not resolve in `typespace`.
pub fn value_of(ty: &AlgebraicType, typespace: &Typespace, entropy: &mut Entropy<'_>) -> Value {
    build(ty, typespace, entropy, 0)
}

fn build(ty: &AlgebraicType, typespace: &Typespace, e: &mut Entropy<'_>, arrays: usize) -> Value {
    use AlgebraicType as T;
    match typespace.resolve(ty).expect("a tame type resolves") {
        T::Bool => Value::Bool(e.flip()),
        T::I8 => Value::I8(i8::from_le_bytes(e.array())),
        T::U8 => Value::U8(e.byte()),
        T::I16 => Value::I16(i16::from_le_bytes(e.array())),
        T::U16 => Value::U16(u16::from_le_bytes(e.array())),
        T::I32 => Value::I32(i32::from_le_bytes(e.array())),
        T::U32 => Value::U32(u32::from_le_bytes(e.array())),
        T::I64 => Value::I64(i64::from_le_bytes(e.array())),
        T::U64 => Value::U64(u64::from_le_bytes(e.array())),
        T::I128 => Value::I128(i128::from_le_bytes(e.array())),
        T::U128 => Value::U128(u128::from_le_bytes(e.array())),
        T::F32 => Value::F32(f32::from_le_bytes(e.array())),
        T::F64 => Value::F64(f64::from_le_bytes(e.array())),
        T::String => Value::String(string(e)),
        T::Identity => Value::Identity(Identity::from_bytes(e.array())),
        T::ConnectionId => Value::ConnectionId(ConnectionId::from_bytes(e.array())),
        T::Timestamp => Value::Timestamp(Timestamp::from_micros_since_unix_epoch(
            i64::from_le_bytes(e.array()),
        )),
        T::Array(element) => {
            let len = if arrays >= MAX_ARRAY_DEPTH {
                0
            } else {
                e.below(4)
            };
            Value::Array(items(element, len, typespace, e, arrays + 1))
        }
        T::FixedArray(element, len) => {
            Value::Product(items(element, *len as usize, typespace, e, arrays))
        }
        T::Option(inner) => Value::Option(
            e.flip()
                .then(|| Box::new(build(inner, typespace, e, arrays))),
        ),
        T::Result(ok, err) => Value::Result(if e.flip() {
            Err(Box::new(build(err, typespace, e, arrays)))
        } else {
            Ok(Box::new(build(ok, typespace, e, arrays)))
        }),
        T::Product(fields) => Value::Product(
            fields
                .iter()
                .map(|field| build(&field.ty, typespace, e, arrays))
                .collect(),
        ),
        T::Sum(variants) => {
            let tag = e.below(variants.len());
            Value::Sum {
                tag: tag as u8,
                value: Box::new(build(&variants[tag].ty, typespace, e, arrays)),
            }
        }
        T::Ref(_) => unreachable!("resolve follows references"),
    }
}

/// `len` values of type `element`.
fn items(
    element: &AlgebraicType,
    len: usize,
    typespace: &Typespace,
    e: &mut Entropy<'_>,
    arrays: usize,
) -> Vec<Value> {
    (0..len)
        .map(|_| build(element, typespace, e, arrays))
        .collect()
}

/// A string of up to five [`CHARACTERS`].
fn string(e: &mut Entropy<'_>) -> String {
    let len = e.below(6);
    (0..len)
        .map(|_| CHARACTERS[e.below(CHARACTERS.len())])
        .collect()
}

/// A tame type of [`typespace`](crate::types::typespace) and a value of it.
pub fn typed_value() -> impl Strategy<Value = (AlgebraicType, Value)> {
    (
        crate::types::tame(),
        prop::collection::vec(any::<u8>(), 0..160),
    )
        .prop_map(|(ty, entropy)| {
            let value = value_of(&ty, &crate::types::typespace(), &mut Entropy::new(&entropy));
            (ty, value)
        })
}
