//! Auto-increment sequences: one per `auto_inc` column.
//!
//! A row inserted with `0` in such a column gets the sequence's next value, written into the
//! row's bytes in place (the column keeps its width, so nothing else moves). Sequences start at
//! `1`. A row inserted with an explicit positive value at or past the sequence moves the
//! sequence past it, so that later generated values cannot collide with it. Once the column's
//! type has no larger value, the sequence is exhausted.

use wasmod_abi::{AlgebraicType, Value};

/// The integer type of an auto-increment column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IntKind {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    I128,
    U128,
}

impl IntKind {
    /// The kind of an integer type; `None` for any other type.
    pub(crate) fn of(ty: &AlgebraicType) -> Option<Self> {
        Some(match ty {
            AlgebraicType::I8 => Self::I8,
            AlgebraicType::U8 => Self::U8,
            AlgebraicType::I16 => Self::I16,
            AlgebraicType::U16 => Self::U16,
            AlgebraicType::I32 => Self::I32,
            AlgebraicType::U32 => Self::U32,
            AlgebraicType::I64 => Self::I64,
            AlgebraicType::U64 => Self::U64,
            AlgebraicType::I128 => Self::I128,
            AlgebraicType::U128 => Self::U128,
            _ => return None,
        })
    }

    /// The encoded width in bytes.
    fn width(self) -> usize {
        match self {
            Self::I8 | Self::U8 => 1,
            Self::I16 | Self::U16 => 2,
            Self::I32 | Self::U32 => 4,
            Self::I64 | Self::U64 => 8,
            Self::I128 | Self::U128 => 16,
        }
    }

    /// The largest value of the type.
    fn max(self) -> u128 {
        match self {
            Self::I8 => i8::MAX as u128,
            Self::U8 => u8::MAX.into(),
            Self::I16 => i16::MAX as u128,
            Self::U16 => u16::MAX.into(),
            Self::I32 => i32::MAX as u128,
            Self::U32 => u32::MAX.into(),
            Self::I64 => i64::MAX as u128,
            Self::U64 => u64::MAX.into(),
            Self::I128 => i128::MAX as u128,
            Self::U128 => u128::MAX,
        }
    }

    /// The value `n` (at most [`IntKind::max`]) as a [`Value`] of this type.
    fn value(self, n: u128) -> Value {
        // `n <= self.max()`, so every conversion is exact.
        match self {
            Self::I8 => Value::I8(n as i8),
            Self::U8 => Value::U8(n as u8),
            Self::I16 => Value::I16(n as i16),
            Self::U16 => Value::U16(n as u16),
            Self::I32 => Value::I32(n as i32),
            Self::U32 => Value::U32(n as u32),
            Self::I64 => Value::I64(n as i64),
            Self::U64 => Value::U64(n as u64),
            Self::I128 => Value::I128(n as i128),
            Self::U128 => Value::U128(n),
        }
    }
}

/// An integer value as a `u128`; `None` for a negative one (or a value that is no integer).
fn non_negative(value: &Value) -> Option<u128> {
    match *value {
        Value::I8(n) => u128::try_from(n).ok(),
        Value::U8(n) => Some(n.into()),
        Value::I16(n) => u128::try_from(n).ok(),
        Value::U16(n) => Some(n.into()),
        Value::I32(n) => u128::try_from(n).ok(),
        Value::U32(n) => Some(n.into()),
        Value::I64(n) => u128::try_from(n).ok(),
        Value::U64(n) => Some(n.into()),
        Value::I128(n) => u128::try_from(n).ok(),
        Value::U128(n) => Some(n),
        _ => None,
    }
}

/// The sequence has no value left to give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Exhausted;

/// The state of one sequence: the value it gives next, `None` once exhausted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sequence {
    next: Option<u128>,
}

impl Sequence {
    /// A fresh sequence, starting at 1.
    pub(crate) fn new() -> Self {
        Self { next: Some(1) }
    }

    /// What the column's value `current` becomes, if the sequence must fill it in: `Ok(None)`
    /// for an explicit value, `Ok(Some(generated))` for `0`. The sequence itself is not moved:
    /// see [`Sequence::observe`].
    pub(crate) fn fill(&self, kind: IntKind, current: &Value) -> Result<Option<Value>, Exhausted> {
        if non_negative(current) != Some(0) {
            return Ok(None);
        }
        self.next.map(|n| Some(kind.value(n))).ok_or(Exhausted)
    }

    /// Moves the sequence past `value`, the column's value in a row now stored.
    pub(crate) fn observe(&mut self, kind: IntKind, value: &Value) {
        let (Some(used), Some(next)) = (non_negative(value), self.next) else {
            return;
        };
        if used >= next {
            self.next = used.checked_add(1).filter(|n| *n <= kind.max());
        }
    }
}

/// Writes the integer `value` of kind `kind` into `row` at `offset`, in place.
pub(crate) fn write_back(row: &mut [u8], offset: usize, kind: IntKind, value: &Value) {
    let width = kind.width();
    let bytes = value.to_bytes();
    row[offset..offset + width].copy_from_slice(&bytes[..width]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sequence_counts_from_one_and_skips_explicit_values() {
        let mut sequence = Sequence::new();
        let kind = IntKind::U8;
        assert_eq!(sequence.fill(kind, &Value::U8(0)), Ok(Some(Value::U8(1))));
        assert_eq!(sequence.fill(kind, &Value::U8(9)), Ok(None));
        sequence.observe(kind, &Value::U8(1));
        assert_eq!(sequence.fill(kind, &Value::U8(0)), Ok(Some(Value::U8(2))));
        sequence.observe(kind, &Value::U8(10));
        assert_eq!(sequence.fill(kind, &Value::U8(0)), Ok(Some(Value::U8(11))));
        sequence.observe(kind, &Value::U8(5));
        assert_eq!(sequence.fill(kind, &Value::U8(0)), Ok(Some(Value::U8(11))));
    }

    #[test]
    fn a_sequence_is_exhausted_at_the_type_maximum() {
        let mut sequence = Sequence::new();
        let kind = IntKind::I8;
        sequence.observe(kind, &Value::I8(-5));
        assert_eq!(sequence.fill(kind, &Value::I8(0)), Ok(Some(Value::I8(1))));
        sequence.observe(kind, &Value::I8(126));
        assert_eq!(sequence.fill(kind, &Value::I8(0)), Ok(Some(Value::I8(127))));
        sequence.observe(kind, &Value::I8(127));
        assert_eq!(sequence.fill(kind, &Value::I8(0)), Err(Exhausted));

        let mut wide = Sequence::new();
        wide.observe(IntKind::U128, &Value::U128(u128::MAX));
        assert_eq!(wide.fill(IntKind::U128, &Value::U128(0)), Err(Exhausted));
    }

    #[test]
    fn write_back_keeps_the_width() {
        let mut row = [0xaa, 0, 0, 0, 0, 0xbb];
        write_back(&mut row, 1, IntKind::I32, &Value::I32(0x0102_0304));
        assert_eq!(row, [0xaa, 4, 3, 2, 1, 0xbb]);
    }
}
