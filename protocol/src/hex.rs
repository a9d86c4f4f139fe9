//! Identities and connection ids in JSON messages: hex strings, as the value mapping writes
//! them (`docs/json.md`). Used as `#[serde(with = "crate::hex")]`.

use serde::{Deserialize, Deserializer, Serializer};
use std::borrow::Cow;
use wasmod_abi::{ConnectionId, Identity};

/// A value written as hex digits.
pub(crate) trait Hex: Sized {
    /// What the digits are, for errors: `an identity (64 hex digits)`.
    const EXPECTED: &'static str;
    /// The value as lower-case hex digits.
    fn to_hex(&self) -> String;
    /// The value of `text`, in either case.
    fn from_hex(text: &str) -> Option<Self>;
}

impl Hex for Identity {
    const EXPECTED: &'static str = "an identity (64 hex digits)";
    fn to_hex(&self) -> String {
        Identity::to_hex(*self)
    }
    fn from_hex(text: &str) -> Option<Self> {
        Identity::from_hex(text)
    }
}

impl Hex for ConnectionId {
    const EXPECTED: &'static str = "a connection id (32 hex digits)";
    fn to_hex(&self) -> String {
        ConnectionId::to_hex(*self)
    }
    fn from_hex(text: &str) -> Option<Self> {
        ConnectionId::from_hex(text)
    }
}

/// Writes `value` as hex digits.
pub(crate) fn serialize<T: Hex, S: Serializer>(
    value: &T,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&value.to_hex())
}

/// Reads a value from hex digits.
pub(crate) fn deserialize<'de, T: Hex, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<T, D::Error> {
    let text = Cow::<'de, str>::deserialize(deserializer)?;
    T::from_hex(&text).ok_or_else(|| {
        serde::de::Error::custom(format!("expected {}, found {text:?}", T::EXPECTED))
    })
}
