//! Reading one column of an encoded row, and comparing it with a literal, without decoding the
//! row.
//!
//! A predicate needs one or two columns of a row, and a subscription evaluates predicates on
//! every changed row of every commit, so rows are not turned into [`Value`]s: the column's
//! bytes are found in place (see [`RowLayout`]) and compared as bytes with the literal, which
//! is kept in the same encoding (`docs/abi.md`). Equal values have equal encodings, so `=` and
//! `!=` are byte comparisons for every type; order comparisons read the numbers they need.

use std::cmp::Ordering;
use std::sync::Arc;
use wasmod_abi::{AlgebraicType, Reader, Typespace, Value};

/// The types a query can compare with a literal, by how their encodings compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Scalar {
    /// `bool`: one byte.
    Bool,
    /// An unsigned integer of this many bytes, little-endian.
    Unsigned(usize),
    /// A signed integer (or a `Timestamp`) of this many bytes, little-endian.
    Signed(usize),
    /// A float of this many bytes; ordered by `total_cmp`, as indexes order floats.
    Float(usize),
    /// `Identity`: 32 bytes, compared as they are.
    Identity,
    /// `ConnectionId`: 16 bytes, compared as they are.
    ConnectionId,
    /// `String`: a `u32` length, then UTF-8 compared bytewise (Rust's `str` order).
    String,
}

impl Scalar {
    /// The scalar kind of `ty`, if queries can compare it.
    pub(crate) fn of(ty: &AlgebraicType, typespace: &Typespace) -> Option<Self> {
        use AlgebraicType as T;
        Some(match typespace.resolve(ty)? {
            T::Bool => Self::Bool,
            T::U8 => Self::Unsigned(1),
            T::U16 => Self::Unsigned(2),
            T::U32 => Self::Unsigned(4),
            T::U64 => Self::Unsigned(8),
            T::U128 => Self::Unsigned(16),
            T::I8 => Self::Signed(1),
            T::I16 => Self::Signed(2),
            T::I32 => Self::Signed(4),
            T::I64 | T::Timestamp => Self::Signed(8),
            T::I128 => Self::Signed(16),
            T::F32 => Self::Float(4),
            T::F64 => Self::Float(8),
            T::Identity => Self::Identity,
            T::ConnectionId => Self::ConnectionId,
            T::String => Self::String,
            _ => return None,
        })
    }

    /// How `column` compares with `literal`, both encodings of values of this kind.
    pub(crate) fn compare(self, column: &[u8], literal: &[u8]) -> Ordering {
        match self {
            Self::Unsigned(_) => unsigned(column).cmp(&unsigned(literal)),
            Self::Signed(width) => signed(column, width).cmp(&signed(literal, width)),
            Self::Float(4) => f32_of(column).total_cmp(&f32_of(literal)),
            Self::Float(_) => f64_of(column).total_cmp(&f64_of(literal)),
            Self::String => column
                .get(4..)
                .unwrap_or_default()
                .cmp(literal.get(4..).unwrap_or_default()),
            Self::Bool | Self::Identity | Self::ConnectionId => column.cmp(literal),
        }
    }
}

/// A little-endian unsigned integer of at most 16 bytes.
fn unsigned(bytes: &[u8]) -> u128 {
    let mut word = [0; 16];
    let len = bytes.len().min(16);
    word[..len].copy_from_slice(&bytes[..len]);
    u128::from_le_bytes(word)
}

/// A little-endian signed integer of `width` bytes (at most 16), sign-extended.
fn signed(bytes: &[u8], width: usize) -> i128 {
    let shift = 128 - 8 * width.clamp(1, 16) as u32;
    ((unsigned(bytes) << shift) as i128) >> shift
}

fn f32_of(bytes: &[u8]) -> f32 {
    f32::from_le_bytes(bytes.try_into().unwrap_or_default())
}

fn f64_of(bytes: &[u8]) -> f64 {
    f64::from_le_bytes(bytes.try_into().unwrap_or_default())
}

/// How one column's value is laid out, as far as finding where the next one starts needs.
#[derive(Clone, Debug)]
enum Width {
    /// Always this many bytes.
    Fixed(usize),
    /// A `u32` length, then that many bytes (strings).
    Prefixed,
    /// Anything else, walked with [`Value::skip`].
    Walked(AlgebraicType),
}

/// Where the columns of one table's rows lie: finds a column's bytes in an encoded row.
///
/// The columns before the first one of variable width start at the same offset in every row;
/// a column after it is found by walking from there.
#[derive(Clone, Debug)]
pub(crate) struct RowLayout {
    widths: Vec<Width>,
    /// The offset of each column that every row has at the same place (a prefix of columns).
    offsets: Vec<usize>,
    typespace: Arc<Typespace>,
}

impl RowLayout {
    /// The layout of rows whose columns have types `columns`.
    pub(crate) fn new<'a>(
        columns: impl IntoIterator<Item = &'a AlgebraicType>,
        typespace: &Arc<Typespace>,
    ) -> Self {
        let widths: Vec<Width> = columns
            .into_iter()
            .map(|ty| width_of(ty, typespace))
            .collect();
        let mut offsets = vec![0];
        for width in &widths {
            let Width::Fixed(bytes) = width else { break };
            offsets.push(offsets.last().copied().unwrap_or_default() + bytes);
        }
        Self {
            widths,
            offsets,
            typespace: typespace.clone(),
        }
    }

    /// The bytes of column `column` of the encoded row `row`; `None` if the row is too short
    /// or malformed (a stored row never is).
    pub(crate) fn column<'r>(&self, row: &'r [u8], column: usize) -> Option<&'r [u8]> {
        let width = self.widths.get(column)?;
        let known = column.min(self.offsets.len() - 1);
        let mut reader = Reader::new(row.get(self.offsets[known]..)?);
        for skipped in &self.widths[known..column] {
            self.read(skipped, &mut reader)?;
        }
        self.read(width, &mut reader)
    }

    /// Reads one value of width `width` from `reader`, and returns its bytes.
    fn read<'r>(&self, width: &Width, reader: &mut Reader<'r>) -> Option<&'r [u8]> {
        let rest = reader.rest();
        match width {
            Width::Fixed(bytes) => reader.take(*bytes).ok()?,
            Width::Prefixed => reader.read_len_prefixed().ok()?,
            Width::Walked(ty) => {
                Value::skip(ty, &self.typespace, reader).ok()?;
                rest
            }
        };
        Some(&rest[..rest.len() - reader.remaining()])
    }
}

fn width_of(ty: &AlgebraicType, typespace: &Typespace) -> Width {
    match Scalar::of(ty, typespace) {
        Some(Scalar::Bool) => Width::Fixed(1),
        Some(Scalar::Unsigned(bytes) | Scalar::Signed(bytes) | Scalar::Float(bytes)) => {
            Width::Fixed(bytes)
        }
        Some(Scalar::Identity) => Width::Fixed(32),
        Some(Scalar::ConnectionId) => Width::Fixed(16),
        Some(Scalar::String) => Width::Prefixed,
        None => Width::Walked(ty.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_abi::encoding::to_vec;

    #[test]
    fn columns_are_found_after_fixed_and_variable_ones() {
        use AlgebraicType as T;
        let typespace = Arc::new(Typespace::default());
        let types = [
            T::U16,
            T::String,
            T::Option(Box::new(T::U32)),
            T::I64,
            T::String,
        ];
        let layout = RowLayout::new(&types, &typespace);
        let mut row = to_vec(&7u16);
        row.extend(to_vec(&"hi".to_string()));
        row.extend(to_vec(&Some(9u32)));
        row.extend(to_vec(&-3i64));
        row.extend(to_vec(&"end".to_string()));
        assert_eq!(layout.column(&row, 0), Some(&7u16.to_le_bytes()[..]));
        assert_eq!(layout.column(&row, 1), Some(&to_vec(&"hi".to_string())[..]));
        assert_eq!(layout.column(&row, 2), Some(&to_vec(&Some(9u32))[..]));
        assert_eq!(layout.column(&row, 3), Some(&(-3i64).to_le_bytes()[..]));
        assert_eq!(
            layout.column(&row, 4),
            Some(&to_vec(&"end".to_string())[..])
        );
        assert_eq!(layout.column(&row, 5), None);
        assert_eq!(layout.column(&row[..5], 3), None, "a short row");
    }

    #[test]
    fn comparisons_follow_the_values() {
        let i = |value: i16| value.to_le_bytes();
        assert_eq!(Scalar::Signed(2).compare(&i(-2), &i(1)), Ordering::Less);
        assert_eq!(
            Scalar::Signed(2).compare(&i(300), &i(-300)),
            Ordering::Greater
        );
        let u = |value: u32| value.to_le_bytes();
        assert_eq!(
            Scalar::Unsigned(4).compare(&u(256), &u(255)),
            Ordering::Greater
        );
        let f = |value: f64| value.to_le_bytes();
        assert_eq!(Scalar::Float(8).compare(&f(-1.5), &f(0.25)), Ordering::Less);
        let s = |text: &str| to_vec(&text.to_string());
        assert_eq!(Scalar::String.compare(&s("b"), &s("ab")), Ordering::Greater);
        assert_eq!(Scalar::String.compare(&s("ab"), &s("ab")), Ordering::Equal);
    }
}
