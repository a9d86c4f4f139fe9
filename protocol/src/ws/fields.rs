//! How the JSON encoding writes the ABI's types that have no serde impls of their own:
//! timestamps as microseconds since the Unix epoch (as the value mapping writes them, a number
//! for any date between 1685 and 2255), entry-point kinds as their word (`"reducer"`,
//! `"anonymous view"`). Identities and connection ids are hex ([`crate::hex`]).

/// A [`Timestamp`](wasmod_abi::Timestamp) as microseconds: `#[serde(with = "micros")]`.
pub(super) mod micros {
    use serde::{Deserialize, Deserializer, Serializer};
    use wasmod_abi::Timestamp;

    pub(in crate::ws) fn serialize<S: Serializer>(
        time: &Timestamp,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_i64(time.to_micros_since_unix_epoch())
    }

    pub(in crate::ws) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Timestamp, D::Error> {
        i64::deserialize(deserializer).map(Timestamp::from_micros_since_unix_epoch)
    }
}

/// An [`EntryKind`](wasmod_abi::EntryKind) as its word: `#[serde(with = "entry_kind")]`.
pub(super) mod entry_kind {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::borrow::Cow;
    use wasmod_abi::EntryKind;

    pub(in crate::ws) fn serialize<S: Serializer>(
        kind: &EntryKind,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(kind.as_str())
    }

    pub(in crate::ws) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<EntryKind, D::Error> {
        let word = Cow::<'de, str>::deserialize(deserializer)?;
        EntryKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == word)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown entry-point kind `{word}`")))
    }
}
