//! Mutations of valid encodings: the inputs that reach a decoder's deepest paths.
//!
//! Each [`Mutation`] picks its position as a fraction of the input ([`Mutation::apply`] maps
//! it onto whatever length the input has by then), so that one generated list of mutations
//! applies to inputs of any length and shrinks towards the start of the input.

use proptest::prelude::*;

/// The 32-bit values a length or count field is overwritten with: around the limits the
/// decoders check (the input's length, 2^16, 2^31, 2^32 - 1).
const HUGE: [u32; 6] = [
    u32::MAX,
    u32::MAX - 1,
    1 << 31,
    1 << 24,
    (1 << 16) + 1,
    1 << 16,
];

/// One change to an encoding.
#[derive(Clone, Debug)]
pub enum Mutation {
    /// Flips bit `bit` of the byte at `at`.
    FlipBit {
        /// Where, as a fraction of the length.
        at: u16,
        /// Which bit.
        bit: u8,
    },
    /// Sets the byte at `at` to `value`.
    SetByte {
        /// Where, as a fraction of the length.
        at: u16,
        /// The new byte.
        value: u8,
    },
    /// Overwrites a likely length or count field (four bytes whose value is no larger than
    /// the input) with a little-endian huge value: a length or a count that claims far more
    /// than the input holds.
    HugeLength {
        /// Where, as a fraction of the length.
        at: u16,
        /// Which of the huge values.
        which: u8,
    },
    /// Adds `delta` (wrapping) to a likely length or count field: a length off by a little.
    NudgeLength {
        /// Where, as a fraction of the length.
        at: u16,
        /// What to add.
        delta: i8,
    },
    /// Cuts the input at `at`.
    Truncate {
        /// Where, as a fraction of the length.
        at: u16,
    },
    /// Inserts `byte` at `at`.
    Insert {
        /// Where, as a fraction of the length.
        at: u16,
        /// The byte inserted.
        byte: u8,
    },
    /// Removes up to `len` bytes at `at`.
    Remove {
        /// Where, as a fraction of the length.
        at: u16,
        /// How many bytes.
        len: u8,
    },
    /// Repeats up to `len` bytes at `at` right after themselves.
    Duplicate {
        /// Where, as a fraction of the length.
        at: u16,
        /// How many bytes.
        len: u8,
    },
}

impl Mutation {
    /// Applies the mutation to `bytes`. Positions past the end (of an empty input) leave it
    /// as it is, except that an insertion into an empty input makes it one byte long.
    pub fn apply(&self, bytes: &mut Vec<u8>) {
        let position = |at: u16, len: usize| usize::from(at) * len / (usize::from(u16::MAX) + 1);
        let len = bytes.len();
        match *self {
            Self::FlipBit { at, bit } if len > 0 => bytes[position(at, len)] ^= 1 << (bit % 8),
            Self::SetByte { at, value } if len > 0 => bytes[position(at, len)] = value,
            Self::HugeLength { at, which } => {
                let value = HUGE[usize::from(which) % HUGE.len()];
                let field = length_field(bytes, at);
                overwrite_u32(bytes, field, |_| value);
            }
            Self::NudgeLength { at, delta } => {
                let field = length_field(bytes, at);
                overwrite_u32(bytes, field, |old| {
                    old.wrapping_add_signed(i32::from(delta))
                });
            }
            Self::Truncate { at } => bytes.truncate(position(at, len)),
            Self::Insert { at, byte } => bytes.insert(position(at, len + 1), byte),
            Self::Remove { at, len: count } if len > 0 => {
                let start = position(at, len);
                let end = (start + usize::from(count).max(1)).min(len);
                bytes.drain(start..end);
            }
            Self::Duplicate { at, len: count } if len > 0 => {
                let start = position(at, len);
                let end = (start + usize::from(count).max(1)).min(len);
                let copy = bytes[start..end].to_vec();
                bytes.splice(end..end, copy);
            }
            _ => {}
        }
    }
}

/// The offset of a likely length or count field, picked by `at` among the offsets where
/// the little-endian `u32` is no larger than the input (a random offset would rarely hit
/// one exactly); a position picked by `at` if there is none.
fn length_field(bytes: &[u8], at: u16) -> usize {
    let plausible: Vec<usize> = bytes
        .windows(4)
        .enumerate()
        .filter(|(_, word)| {
            u32::from_le_bytes([word[0], word[1], word[2], word[3]]) as usize <= bytes.len()
        })
        .map(|(offset, _)| offset)
        .collect();
    match plausible.len() {
        0 => usize::from(at) * bytes.len() / (usize::from(u16::MAX) + 1),
        count => plausible[usize::from(at) % count],
    }
}

/// Replaces the little-endian `u32` at `at` (clamped so that it fits) by `new(old)`; inputs
/// shorter than four bytes are left as they are.
fn overwrite_u32(bytes: &mut [u8], at: usize, new: impl FnOnce(u32) -> u32) {
    let start = at.min(bytes.len().saturating_sub(4));
    let Some(word) = bytes.get_mut(start..start + 4) else {
        return;
    };
    let old = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
    word.copy_from_slice(&new(old).to_le_bytes());
}

/// Any one mutation.
pub fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<u16>(), any::<u8>()).prop_map(|(at, bit)| Mutation::FlipBit { at, bit }),
        (any::<u16>(), any::<u8>()).prop_map(|(at, value)| Mutation::SetByte { at, value }),
        (any::<u16>(), any::<u8>()).prop_map(|(at, which)| Mutation::HugeLength { at, which }),
        (any::<u16>(), any::<i8>()).prop_map(|(at, delta)| Mutation::NudgeLength { at, delta }),
        any::<u16>().prop_map(|at| Mutation::Truncate { at }),
        (any::<u16>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Insert { at, byte }),
        (any::<u16>(), 1..16u8).prop_map(|(at, len)| Mutation::Remove { at, len }),
        (any::<u16>(), 1..16u8).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
    ]
}

/// One to four mutations, applied in order.
pub fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    proptest::collection::vec(mutation(), 1..=4)
}

/// `bytes` with every one of `mutations` applied, in order.
pub fn mutate(bytes: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for mutation in mutations {
        mutation.apply(&mut out);
    }
    out
}
