//! The built-in value types every module sees: who called, over which connection, and when.

use crate::encoding::{Decode, DecodeError, Encode, Layout, Reader};

/// The identity of a caller: 32 opaque bytes, stable across connections.
///
/// Travels as four little-endian `u64` words through the dispatch exports, and as its 32 bytes
/// in the encoding.
#[derive(
    Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, bytemuck::Pod, bytemuck::Zeroable,
)]
#[repr(transparent)]
pub struct Identity([u8; 32]);

impl Identity {
    /// The all-zero identity, used for calls made by the host itself (for example `init`).
    pub const ZERO: Self = Self([0; 32]);

    /// An identity from its bytes.
    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The identity's bytes.
    pub const fn to_bytes(self) -> [u8; 32] {
        self.0
    }

    /// An identity from the four words the dispatch exports receive.
    pub fn from_words(words: [u64; 4]) -> Self {
        let mut bytes = [0; 32];
        for (chunk, word) in bytes.chunks_exact_mut(8).zip(words) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        Self(bytes)
    }

    /// The four words the dispatch exports receive.
    pub fn to_words(self) -> [u64; 4] {
        let mut words = [0; 4];
        for (word, chunk) in words.iter_mut().zip(self.0.chunks_exact(8)) {
            *word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        }
        words
    }

    /// A lower-case hexadecimal rendering of the 32 bytes.
    pub fn to_hex(self) -> String {
        hex(&self.0)
    }

    /// The identity whose bytes are the 64 hexadecimal digits `text` (either case), if it is
    /// exactly that.
    pub fn from_hex(text: &str) -> Option<Self> {
        from_hex(text).map(Self)
    }
}

impl core::fmt::Debug for Identity {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Identity({})", self.to_hex())
    }
}

impl core::fmt::Display for Identity {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// Identifies one connection of a client: 16 opaque bytes.
#[derive(
    Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, bytemuck::Pod, bytemuck::Zeroable,
)]
#[repr(transparent)]
pub struct ConnectionId([u8; 16]);

impl ConnectionId {
    /// No connection: calls made by the host itself.
    pub const ZERO: Self = Self([0; 16]);

    /// A connection id from its bytes.
    pub const fn from_bytes(bytes: [u8; 16]) -> Self {
        Self(bytes)
    }

    /// The connection id's bytes.
    pub const fn to_bytes(self) -> [u8; 16] {
        self.0
    }

    /// A connection id from the two words the dispatch exports receive.
    pub fn from_words(words: [u64; 2]) -> Self {
        Self((u128::from(words[0]) | (u128::from(words[1]) << 64)).to_le_bytes())
    }

    /// The two words the dispatch exports receive.
    pub fn to_words(self) -> [u64; 2] {
        let value = u128::from_le_bytes(self.0);
        [value as u64, (value >> 64) as u64]
    }

    /// A lower-case hexadecimal rendering of the 16 bytes.
    pub fn to_hex(self) -> String {
        hex(&self.0)
    }

    /// The connection id whose bytes are the 32 hexadecimal digits `text` (either case), if
    /// it is exactly that.
    pub fn from_hex(text: &str) -> Option<Self> {
        from_hex(text).map(Self)
    }
}

impl core::fmt::Debug for ConnectionId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "ConnectionId({})", self.to_hex())
    }
}

/// A point in time: microseconds since the Unix epoch.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    bytemuck::Pod,
    bytemuck::Zeroable,
)]
#[repr(transparent)]
pub struct Timestamp(i64);

impl Timestamp {
    /// The Unix epoch.
    pub const UNIX_EPOCH: Self = Self(0);

    /// A timestamp from microseconds since the Unix epoch.
    pub const fn from_micros_since_unix_epoch(micros: i64) -> Self {
        Self(micros)
    }

    /// Microseconds since the Unix epoch.
    pub const fn to_micros_since_unix_epoch(self) -> i64 {
        self.0
    }

    /// The current time, read from the system clock (native code only: a module gets its
    /// time from its context).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn now() -> Self {
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Self(i64::try_from(since_epoch.as_micros()).unwrap_or(i64::MAX))
    }

    /// This timestamp moved forward by `micros` microseconds, saturating.
    pub const fn plus_micros(self, micros: i64) -> Self {
        Self(self.0.saturating_add(micros))
    }
}

/// `N` bytes from exactly `2 * N` hexadecimal digits.
fn from_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.as_bytes();
    if digits.len() != 2 * N {
        return None;
    }
    let mut bytes = [0; N];
    for (byte, pair) in bytes.iter_mut().zip(digits.chunks_exact(2)) {
        let high = char::from(pair[0]).to_digit(16)?;
        let low = char::from(pair[1]).to_digit(16)?;
        *byte = (high * 16 + low) as u8;
    }
    Some(bytes)
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(DIGITS[usize::from(byte >> 4)] as char);
        out.push(DIGITS[usize::from(byte & 0xf)] as char);
    }
    out
}

macro_rules! impl_byte_newtype {
    ($($ty:ident),*) => {$(
        impl Encode for $ty {
            #[inline]
            fn encode(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.0);
            }

            #[inline]
            fn encoded_len(&self) -> usize {
                self.0.len()
            }
        }

        impl Decode for $ty {
            // SAFETY: a transparent wrapper of a byte array (bytemuck's `Pod` derive checks it).
            const LAYOUT: Layout = unsafe { Layout::plain() };

            #[inline]
            fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
                reader.take_array().map(Self)
            }
        }
    )*};
}

impl_byte_newtype!(Identity, ConnectionId);

impl Encode for Timestamp {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        self.0.encode(out);
    }

    #[inline]
    fn encoded_len(&self) -> usize {
        self.0.encoded_len()
    }
}

impl Decode for Timestamp {
    // SAFETY: a transparent wrapper of an `i64` (bytemuck's `Pod` derive checks it).
    const LAYOUT: Layout = i64::LAYOUT;

    #[inline]
    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        i64::decode(reader).map(Self)
    }
}

#[cfg(test)]
mod tests {
    use super::{ConnectionId, Identity};

    #[test]
    fn hex_round_trips_and_refuses_what_is_not_exactly_the_digits() {
        let mut bytes = [0; 32];
        for (byte, value) in bytes.iter_mut().zip(0u8..) {
            *byte = value.wrapping_mul(37);
        }
        let identity = Identity::from_bytes(bytes);
        let text = identity.to_hex();
        assert_eq!(text.len(), 64);
        assert_eq!(Identity::from_hex(&text), Some(identity));
        assert_eq!(Identity::from_hex(&text.to_uppercase()), Some(identity));
        assert_eq!(Identity::from_hex(&text[..62]), None, "too short");
        assert_eq!(Identity::from_hex(&format!("{text}00")), None, "too long");
        assert_eq!(Identity::from_hex(&text.replacen('0', "g", 1)), None);
        assert_eq!(Identity::from_hex(&"é".repeat(32)), None, "not ASCII");

        let id = ConnectionId::from_bytes([0xab; 16]);
        assert_eq!(id.to_hex(), "ab".repeat(16));
        assert_eq!(ConnectionId::from_hex(&id.to_hex()), Some(id));
        assert_eq!(ConnectionId::from_hex(&text), None, "an identity's length");
    }
}
