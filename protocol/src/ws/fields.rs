//! How the JSON encoding writes what serde would write otherwise than the value mapping
//! (`docs/json.md`) does, so that messages read like the values they carry: timestamps as
//! microseconds since the Unix epoch (a number for any date between 1685 and 2255), results
//! as `{"ok": ..}` or `{"err": ..}`, and entry-point kinds, which have no serde impls, as
//! their word (`"reducer"`, `"anonymous view"`). Identities and connection ids are hex
//! ([`crate::hex`]).

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

/// A `Result` as `{"ok": value}` or `{"err": error}`: `#[serde(with = "result")]`.
pub(super) mod result {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// The two shapes, named as the value mapping names them.
    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Tagged<T, E> {
        Ok(T),
        Err(E),
    }

    pub(in crate::ws) fn serialize<T: Serialize, E: Serialize, S: Serializer>(
        result: &Result<T, E>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match result {
            Ok(value) => Tagged::<&T, &E>::Ok(value).serialize(serializer),
            Err(error) => Tagged::<&T, &E>::Err(error).serialize(serializer),
        }
    }

    pub(in crate::ws) fn deserialize<'de, T, E, D>(
        deserializer: D,
    ) -> Result<Result<T, E>, D::Error>
    where
        T: Deserialize<'de>,
        E: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Ok(match Tagged::deserialize(deserializer)? {
            Tagged::Ok(value) => Ok(value),
            Tagged::Err(error) => Err(error),
        })
    }
}
