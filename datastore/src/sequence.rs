//! Auto-increment sequences: one per `auto_inc` column.
//!
//! A row inserted with `0` in such a column gets the sequence's next value, written into the
//! row's bytes in place (the column keeps its width, so nothing else moves). Sequences start at
//! `1`. A row inserted with an explicit positive value at or past the sequence moves the
//! sequence past it, so that later generated values cannot collide with it. Once the column's
//! type has no larger value, the sequence is exhausted.

use wasmod_abi::AlgebraicType;

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

    /// Whether the type is signed.
    fn signed(self) -> bool {
        matches!(
            self,
            Self::I8 | Self::I16 | Self::I32 | Self::I64 | Self::I128
        )
    }
}

/// The integer encoded in `bytes` (little-endian, of kind `kind`) as a `u128`; `None` if it is
/// negative (or `bytes` is not as wide as the type).
fn non_negative(kind: IntKind, bytes: &[u8]) -> Option<u128> {
    let width = kind.width();
    if bytes.len() != width || (kind.signed() && bytes[width - 1] & 0x80 != 0) {
        return None;
    }
    let mut wide = [0; 16];
    wide[..width].copy_from_slice(bytes);
    Some(u128::from_le_bytes(wide))
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

    /// What the column's value, encoded as `current`, becomes if the sequence must fill it in:
    /// `Ok(None)` for an explicit value, `Ok(Some(generated))` for `0`. The sequence itself is
    /// not moved: see [`Sequence::observe`].
    pub(crate) fn fill(&self, kind: IntKind, current: &[u8]) -> Result<Option<u128>, Exhausted> {
        if non_negative(kind, current) != Some(0) {
            return Ok(None);
        }
        self.next.map(Some).ok_or(Exhausted)
    }

    /// The value the sequence gives next; `None` once exhausted.
    pub(crate) fn next(&self) -> Option<u128> {
        self.next
    }

    /// Moves the sequence on to `next` (`None`: exhausted), if that is further than it is.
    pub(crate) fn raise(&mut self, next: Option<u128>) {
        match (self.next, next) {
            (Some(current), Some(next)) if next > current => self.next = Some(next),
            (Some(_), None) => self.next = None,
            _ => {}
        }
    }

    /// Moves the sequence past the column's value, encoded as `value`, in a row now stored.
    pub(crate) fn observe(&mut self, kind: IntKind, value: &[u8]) {
        let (Some(used), Some(next)) = (non_negative(kind, value), self.next) else {
            return;
        };
        if used >= next {
            self.next = used.checked_add(1).filter(|n| *n <= kind.max());
        }
    }
}

/// Writes `value` (at most the largest value of `kind`) into `row` at `offset`, in place, as
/// an integer of kind `kind`.
pub(crate) fn write_back(row: &mut [u8], offset: usize, kind: IntKind, value: u128) {
    let width = kind.width();
    row[offset..offset + width].copy_from_slice(&value.to_le_bytes()[..width]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sequence_counts_from_one_and_skips_explicit_values() {
        let mut sequence = Sequence::new();
        let kind = IntKind::U8;
        assert_eq!(sequence.fill(kind, &[0]), Ok(Some(1)));
        assert_eq!(sequence.fill(kind, &[9]), Ok(None));
        sequence.observe(kind, &[1]);
        assert_eq!(sequence.fill(kind, &[0]), Ok(Some(2)));
        sequence.observe(kind, &[10]);
        assert_eq!(sequence.fill(kind, &[0]), Ok(Some(11)));
        sequence.observe(kind, &[5]);
        assert_eq!(sequence.fill(kind, &[0]), Ok(Some(11)));
    }

    #[test]
    fn a_sequence_is_exhausted_at_the_type_maximum() {
        let mut sequence = Sequence::new();
        let kind = IntKind::I8;
        sequence.observe(kind, &(-5i8).to_le_bytes());
        assert_eq!(sequence.fill(kind, &[0]), Ok(Some(1)));
        sequence.observe(kind, &[126]);
        assert_eq!(sequence.fill(kind, &[0]), Ok(Some(127)));
        sequence.observe(kind, &[127]);
        assert_eq!(sequence.fill(kind, &[0]), Err(Exhausted));

        let mut wide = Sequence::new();
        wide.observe(IntKind::U128, &u128::MAX.to_le_bytes());
        assert_eq!(wide.fill(IntKind::U128, &[0; 16]), Err(Exhausted));
    }

    #[test]
    fn a_sequence_is_raised_only_forward() {
        let mut sequence = Sequence::new();
        sequence.raise(Some(7));
        assert_eq!(sequence.next(), Some(7));
        sequence.raise(Some(3));
        assert_eq!(sequence.next(), Some(7));
        sequence.raise(None);
        assert_eq!(sequence.next(), None);
        sequence.raise(Some(9));
        assert_eq!(sequence.next(), None, "an exhausted sequence stays so");
    }

    #[test]
    fn signed_values_are_read_with_their_sign() {
        let kind = IntKind::I32;
        assert_eq!(non_negative(kind, &(-1i32).to_le_bytes()), None);
        assert_eq!(
            non_negative(kind, &i32::MAX.to_le_bytes()),
            Some(i32::MAX as u128)
        );
        assert_eq!(
            non_negative(IntKind::U32, &u32::MAX.to_le_bytes()),
            Some(u32::MAX.into())
        );
    }

    #[test]
    fn write_back_keeps_the_width() {
        let mut row = [0xaa, 0, 0, 0, 0, 0xbb];
        write_back(&mut row, 1, IntKind::I32, 0x0102_0304);
        assert_eq!(row, [0xaa, 4, 3, 2, 1, 0xbb]);
    }
}
