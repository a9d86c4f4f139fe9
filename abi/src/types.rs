//! The built-in value types every module sees: who called, over which connection, and when;
//! and the spans of time and schedules that scheduled reducers are given.

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

impl core::ops::Add<TimeDuration> for Timestamp {
    type Output = Timestamp;

    /// This timestamp moved by `duration` (backwards for a negative one), saturating at the
    /// ends of the `i64` range rather than overflowing.
    fn add(self, duration: TimeDuration) -> Timestamp {
        self.plus_micros(duration.to_micros())
    }
}

impl Timestamp {
    /// The time from `earlier` to this timestamp (negative if `earlier` is later), saturating.
    pub const fn duration_since(self, earlier: Timestamp) -> TimeDuration {
        TimeDuration::from_micros(self.0.saturating_sub(earlier.0))
    }
}

/// A span of time in microseconds, signed: what separates two [`Timestamp`]s, and the period
/// of a repeating schedule ([`ScheduleAt::Interval`]).
///
/// It converts from [`std::time::Duration`] (saturating at `i64::MAX` microseconds, about
/// 292,000 years, and truncating below a microsecond) and back (refusing a negative span).
///
/// ```
/// use std::time::Duration;
/// use wasmod_abi::{TimeDuration, Timestamp};
///
/// let hour = TimeDuration::from(Duration::from_secs(3600));
/// assert_eq!(hour.to_micros(), 3_600_000_000);
/// let start = Timestamp::from_micros_since_unix_epoch(1_000);
/// assert_eq!((start + hour).duration_since(start), hour);
/// assert_eq!(Duration::try_from(hour), Ok(Duration::from_secs(3600)));
/// assert!(Duration::try_from(TimeDuration::from_micros(-1)).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, crate::SchemaType)]
#[wasmod(crate = crate)]
pub struct TimeDuration {
    micros: i64,
}

impl TimeDuration {
    /// No time at all.
    pub const ZERO: Self = Self { micros: 0 };

    /// A span of `micros` microseconds.
    pub const fn from_micros(micros: i64) -> Self {
        Self { micros }
    }

    /// The span in microseconds.
    pub const fn to_micros(self) -> i64 {
        self.micros
    }

    /// Whether the span is longer than zero.
    pub const fn is_positive(self) -> bool {
        self.micros > 0
    }
}

impl From<std::time::Duration> for TimeDuration {
    /// The duration's whole microseconds, saturating at `i64::MAX`.
    fn from(duration: std::time::Duration) -> Self {
        Self::from_micros(i64::try_from(duration.as_micros()).unwrap_or(i64::MAX))
    }
}

impl TryFrom<TimeDuration> for std::time::Duration {
    type Error = NegativeDuration;

    /// The span as a [`std::time::Duration`]; a negative span has none.
    fn try_from(duration: TimeDuration) -> Result<Self, NegativeDuration> {
        u64::try_from(duration.micros)
            .map(std::time::Duration::from_micros)
            .map_err(|_| NegativeDuration(duration))
    }
}

/// A negative [`TimeDuration`], which no [`std::time::Duration`] can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NegativeDuration(pub TimeDuration);

impl core::fmt::Display for NegativeDuration {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "a negative span of time ({} µs) is not a std::time::Duration",
            self.0.micros
        )
    }
}

impl std::error::Error for NegativeDuration {}

/// When the host calls a scheduled reducer with a row of its schedule table: the type of the
/// table's schedule column (`#[table(scheduled(reducer))]`).
///
/// ```
/// use std::time::Duration;
/// use wasmod_abi::{ScheduleAt, TimeDuration, Timestamp};
///
/// let once = ScheduleAt::Time(Timestamp::from_micros_since_unix_epoch(1_700_000_000_000_000));
/// let hourly = ScheduleAt::from(Duration::from_secs(3600));
/// assert_eq!(hourly, ScheduleAt::Interval(TimeDuration::from_micros(3_600_000_000)));
/// assert_ne!(once, hourly);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, crate::SchemaType)]
#[wasmod(crate = crate)]
pub enum ScheduleAt {
    /// Once, at this time (at once if it has passed); the host deletes the row after the call.
    Time(Timestamp),
    /// Repeatedly, every period (the first call one period after the row is inserted); the row
    /// stays until it is deleted.
    Interval(TimeDuration),
}

impl From<Timestamp> for ScheduleAt {
    fn from(time: Timestamp) -> Self {
        Self::Time(time)
    }
}

impl From<TimeDuration> for ScheduleAt {
    fn from(period: TimeDuration) -> Self {
        Self::Interval(period)
    }
}

impl From<std::time::Duration> for ScheduleAt {
    fn from(period: std::time::Duration) -> Self {
        Self::Interval(period.into())
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
    use super::{ConnectionId, Identity, ScheduleAt, TimeDuration, Timestamp};
    use crate::encoding::{from_slice, to_vec};
    use std::time::Duration;

    #[test]
    fn durations_convert_saturating_and_refuse_negative_spans() {
        assert_eq!(
            TimeDuration::from(Duration::from_nanos(1_999)).to_micros(),
            1
        );
        assert_eq!(TimeDuration::from(Duration::MAX).to_micros(), i64::MAX);
        assert!(Duration::try_from(TimeDuration::from_micros(-5)).is_err());
        assert_eq!(
            Duration::try_from(TimeDuration::from_micros(7)),
            Ok(Duration::from_micros(7))
        );
        let late = Timestamp::from_micros_since_unix_epoch(i64::MAX - 1);
        assert_eq!(
            (late + TimeDuration::from_micros(10)).to_micros_since_unix_epoch(),
            i64::MAX,
            "adding saturates"
        );
        let start = Timestamp::from_micros_since_unix_epoch(100);
        assert_eq!(
            (start + TimeDuration::from_micros(-30)).to_micros_since_unix_epoch(),
            70
        );
        assert_eq!(
            start.duration_since(Timestamp::from_micros_since_unix_epoch(250)),
            TimeDuration::from_micros(-150)
        );
    }

    #[test]
    fn schedules_encode_as_a_tag_then_microseconds() {
        let at = ScheduleAt::Time(Timestamp::from_micros_since_unix_epoch(0x0102));
        let bytes = to_vec(&at);
        assert_eq!(bytes, [0, 2, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(from_slice::<ScheduleAt>(&bytes), Ok(at));
        let every = ScheduleAt::Interval(TimeDuration::from_micros(-1));
        let bytes = to_vec(&every);
        assert_eq!(bytes, [1, 255, 255, 255, 255, 255, 255, 255, 255]);
        assert_eq!(from_slice::<ScheduleAt>(&bytes), Ok(every));
        assert!(from_slice::<ScheduleAt>(&[2, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
    }

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
