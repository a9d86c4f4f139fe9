//! Index keys as byte strings whose lexicographic order is the order of the values.
//!
//! An index compares keys on every step of every search, so a key is not a list of
//! [`Value`](wasmod_abi::Value)s but bytes built once from the row's encoding, compared with
//! plain byte comparisons. The encoding of a value of each type (see [`encode`]) is chosen so
//! that, for two values `a` and `b` of the same type:
//!
//! - `bytes(a) < bytes(b)` exactly when `a < b` in the [`Value`](wasmod_abi::Value) order,
//!   and the bytes are equal exactly when the values are;
//! - no value's bytes are a proper prefix of another value's bytes (the encoding is
//!   *prefix-free*), so a reader knows where a value ends.
//!
//! | type | key bytes |
//! |---|---|
//! | `bool` | one byte, `0` or `1` |
//! | unsigned integers | big-endian |
//! | signed integers, `Timestamp` | big-endian with the sign bit flipped |
//! | floats | big-endian bits; negatives with every bit flipped, others with the sign bit flipped (the order of [`f64::total_cmp`]: `-NaN < -inf < -0.0 < +0.0 < +inf < +NaN`) |
//! | `Identity`, `ConnectionId` | their bytes, unchanged |
//! | `String` | its UTF-8 bytes with each `00` written `00 FF`, then the terminator `00 00` |
//! | `Vec<T>` | `01` before each element, then `00` |
//! | `[T; N]`, products | the fields, concatenated |
//! | `Option<T>` | `00` for `None`; `01` then the value for `Some` |
//! | `Result<T, E>`, sums | the tag byte, then the payload |
//!
//! Because every part is prefix-free and order-preserving, concatenating them is too: a key of
//! several columns is its columns' bytes one after the other, and it sorts like the tuple of
//! values. It also means that the keys whose first `k` columns are fixed are exactly the keys
//! starting with those columns' bytes, which is what makes prefix and range scans byte ranges
//! (see [`Key::successor`]).
//!
//! Keys of up to [`INLINE`] bytes, which covers most keys of numbers and short strings (plus
//! the row id that a non-unique index appends), are stored inline without allocating.

mod encode;
#[cfg(test)]
mod tests;

pub(crate) use encode::{fixed_word, push_encoded, Shape};

use std::cmp::Ordering;

/// The longest key stored inline.
pub(crate) const INLINE: usize = 24;

/// An index key: bytes compared lexicographically.
#[derive(Clone)]
pub(crate) enum Key {
    /// At most [`INLINE`] bytes; the bytes past `len` are zero.
    Inline {
        /// How many of `bytes` are the key.
        len: u8,
        /// The key, then zeros.
        bytes: [u8; INLINE],
    },
    /// More than [`INLINE`] bytes.
    Heap(Vec<u8>),
}

impl Key {
    /// The empty key.
    pub(crate) const fn new() -> Self {
        Self::Inline {
            len: 0,
            bytes: [0; INLINE],
        }
    }

    /// A key holding `bytes`.
    pub(crate) fn from_slice(bytes: &[u8]) -> Self {
        let mut key = Self::new();
        key.extend(bytes);
        key
    }

    /// The key's bytes.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        match self {
            Self::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Self::Heap(bytes) => bytes,
        }
    }

    /// Appends one byte.
    pub(crate) fn push(&mut self, byte: u8) {
        self.extend(&[byte]);
    }

    /// Appends `more`.
    pub(crate) fn extend(&mut self, more: &[u8]) {
        match self {
            Self::Inline { len, bytes } => {
                let start = usize::from(*len);
                let end = start + more.len();
                if end <= INLINE {
                    bytes[start..end].copy_from_slice(more);
                    // `end <= INLINE`, which fits in a `u8`.
                    *len = end as u8;
                } else {
                    let mut heap = Vec::with_capacity(end.max(2 * INLINE));
                    heap.extend_from_slice(&bytes[..start]);
                    heap.extend_from_slice(more);
                    *self = Self::Heap(heap);
                }
            }
            Self::Heap(bytes) => bytes.extend_from_slice(more),
        }
    }

    /// The smallest key greater than every key that starts with this one; `None` if there is
    /// none (the key is empty or all `FF`).
    ///
    /// So the keys starting with `k` are those in `k..k.successor()`.
    pub(crate) fn successor(&self) -> Option<Self> {
        let bytes = self.as_bytes();
        let last = bytes.iter().rposition(|&byte| byte != 0xff)?;
        let mut next = Self::from_slice(&bytes[..=last]);
        match &mut next {
            Self::Inline { bytes, .. } => bytes[last] += 1,
            Self::Heap(bytes) => bytes[last] += 1,
        }
        Some(next)
    }
}

impl Default for Key {
    fn default() -> Self {
        Self::new()
    }
}

/// The inline bytes as big-endian words: comparing the words compares the bytes.
fn words(bytes: &[u8; INLINE]) -> [u64; INLINE / 8] {
    std::array::from_fn(|i| {
        let mut word = [0; 8];
        word.copy_from_slice(&bytes[8 * i..8 * i + 8]);
        u64::from_be_bytes(word)
    })
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            // Zero padding sorts a key before its extensions, exactly like the shorter slice;
            // keys equal up to the padding differ by their length.
            (Self::Inline { len: a, bytes: x }, Self::Inline { len: b, bytes: y }) => {
                words(x).cmp(&words(y)).then(a.cmp(b))
            }
            _ => self.as_bytes().cmp(other.as_bytes()),
        }
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Key {}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key(")?;
        for byte in self.as_bytes() {
            write!(f, "{byte:02x}")?;
        }
        write!(f, ")")
    }
}
