//! One entry of the replication stream, as the primary writes it and edges read it.
//!
//! # Ids say offsets
//!
//! Entry ids are Redis stream ids `<ms>-<seq>` chosen by the primary, not by Redis:
//!
//! - the commit at offset `n` is `n-1`;
//! - a resynchronisation marker before the commit at offset `n` is `n-0` (it sorts just before
//!   that commit). It says: the commits before `n` are not in the stream (Redis lost them, or
//!   the primary could no longer read them from its log): bootstrap from a snapshot.
//!
//! So a reader that applied offset `n` knows the next entry must be `(n+1)-1`; anything else
//! (a later commit, or the first entry being past what it holds because `MAXLEN` trimmed the
//! stream) is a gap it detects from the ids alone, and the primary learns from the stream's
//! last id which offset the stream needs next, after a restart of either side.
//!
//! # Fields
//!
//! | field | value |
//! |---|---|
//! | `kind` | `commit` or `resync` |
//! | `changes` | the commit's offset and `TxData`, in the commit log's record encoding ([`durability::encode_changes`]) |
//! | `timestamp` | the commit's timestamp, microseconds since the Unix epoch, `i64` little-endian |
//! | `caller` | the caller's identity, 32 bytes |
//! | `connection` | the caller's connection id, 16 bytes |
//! | `entry_kind`, `entry_name` | the entry point that made it (absent for the host's own commits) |
//!
//! A commit refilled from the log after Redis was down has [`CommitMeta::recovered`]'s
//! metadata: the log keeps only the changes.

use redis::streams::StreamId;
use std::collections::HashMap;
use std::sync::Arc;
use wasmod_abi::{ConnectionId, EntryKind, Identity, Timestamp};
use wasmod_host::datastore::durability;
use wasmod_host::datastore::{Commit, CommitMeta, EntryPoint};

/// An entry of the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamEntry {
    /// A durable commit of the primary.
    Commit(Arc<Commit>),
    /// The commits before `offset` are not in the stream: readers bootstrap again.
    Resync {
        /// The offset of the first commit that may follow in the stream.
        offset: u64,
    },
}

/// The sequence part of a commit's id.
const COMMIT_SEQ: u64 = 1;
/// The sequence part of a marker's id.
const RESYNC_SEQ: u64 = 0;

impl StreamEntry {
    /// The entry's stream id (see the module docs).
    pub fn id(&self) -> String {
        match self {
            Self::Commit(commit) => format!("{}-{COMMIT_SEQ}", commit.offset),
            Self::Resync { offset } => format!("{offset}-{RESYNC_SEQ}"),
        }
    }

    /// The offset the stream needs after this entry.
    pub fn next_offset(&self) -> u64 {
        match self {
            Self::Commit(commit) => commit.offset + 1,
            Self::Resync { offset } => *offset,
        }
    }

    /// The entry's fields, in the order they are written.
    pub fn fields(&self) -> Vec<(&'static str, Vec<u8>)> {
        let Self::Commit(commit) = self else {
            return vec![("kind", b"resync".to_vec())];
        };
        let meta = &commit.meta;
        let mut fields = vec![
            ("kind", b"commit".to_vec()),
            (
                "changes",
                durability::encode_changes(commit.offset, &commit.changes),
            ),
            (
                "timestamp",
                meta.timestamp
                    .to_micros_since_unix_epoch()
                    .to_le_bytes()
                    .to_vec(),
            ),
            ("caller", meta.caller.to_bytes().to_vec()),
            ("connection", meta.connection_id.to_bytes().to_vec()),
        ];
        if let Some(entry) = &meta.entry {
            fields.push(("entry_kind", entry.kind.as_str().as_bytes().to_vec()));
            fields.push(("entry_name", entry.name.as_bytes().to_vec()));
        }
        fields
    }

    /// The entry with id `id` and `fields`; `Err` says what does not fit the format.
    pub fn decode(id: &str, fields: &HashMap<String, Vec<u8>>) -> Result<Self, String> {
        let (offset, seq) = parse_id(id)?;
        let field = |name: &str| {
            fields
                .get(name)
                .map(Vec::as_slice)
                .ok_or_else(|| format!("entry {id}: the field `{name}` is missing"))
        };
        match (field("kind")?, seq) {
            (b"resync", RESYNC_SEQ) => Ok(Self::Resync { offset }),
            (b"commit", COMMIT_SEQ) => {
                let (recorded, changes) = durability::decode_changes(field("changes")?)
                    .map_err(|reason| format!("entry {id}: the changes: {reason}"))?;
                if recorded != offset {
                    return Err(format!(
                        "entry {id}: its changes are those of offset {recorded}"
                    ));
                }
                let fixed = |name: &str| -> Result<&[u8], String> { field(name) };
                let timestamp = i64::from_le_bytes(array(id, "timestamp", fixed("timestamp")?)?);
                let meta = CommitMeta {
                    timestamp: Timestamp::from_micros_since_unix_epoch(timestamp),
                    caller: Identity::from_bytes(array(id, "caller", fixed("caller")?)?),
                    connection_id: ConnectionId::from_bytes(array(
                        id,
                        "connection",
                        fixed("connection")?,
                    )?),
                    entry: entry_point(id, fields)?,
                };
                Ok(Self::Commit(Arc::new(Commit {
                    offset,
                    meta,
                    changes,
                })))
            }
            (kind, _) => Err(format!(
                "entry {id}: kind `{}` does not go with this id",
                String::from_utf8_lossy(kind)
            )),
        }
    }
}

impl StreamEntry {
    /// The entry as Redis returned it (`XRANGE`, `XREAD`).
    pub fn from_stream(entry: &StreamId) -> Result<Self, String> {
        let fields = entry
            .map
            .iter()
            .map(|(name, value)| {
                redis::from_redis_value::<Vec<u8>>(value.clone())
                    .map(|bytes| (name.clone(), bytes))
                    .map_err(|error| format!("entry {}: field `{name}`: {error}", entry.id))
            })
            .collect::<Result<HashMap<_, _>, _>>()?;
        Self::decode(&entry.id, &fields)
    }
}

/// The offset the stream needs after its entry with id `id` (its last).
pub fn next_offset_after(id: &str) -> Result<u64, String> {
    match parse_id(id)? {
        (offset, COMMIT_SEQ) => Ok(offset + 1),
        (offset, _) => Ok(offset),
    }
}

/// The offset and sequence of an id `<offset>-<seq>` of ours.
fn parse_id(id: &str) -> Result<(u64, u64), String> {
    let parsed = id
        .split_once('-')
        .and_then(|(offset, seq)| Some((offset.parse().ok()?, seq.parse().ok()?)));
    match parsed {
        Some((offset, seq)) if seq == COMMIT_SEQ || seq == RESYNC_SEQ => Ok((offset, seq)),
        _ => Err(format!(
            "`{id}` is not the id of a commit or a marker (<offset>-1, <offset>-0)"
        )),
    }
}

/// `bytes` as a fixed-size field `name` of entry `id`.
fn array<const N: usize>(id: &str, name: &str, bytes: &[u8]) -> Result<[u8; N], String> {
    bytes
        .try_into()
        .map_err(|_| format!("entry {id}: `{name}` is {} bytes, not {N}", bytes.len()))
}

/// The entry point of a commit entry, if it names one.
fn entry_point(id: &str, fields: &HashMap<String, Vec<u8>>) -> Result<Option<EntryPoint>, String> {
    let (Some(kind), Some(name)) = (fields.get("entry_kind"), fields.get("entry_name")) else {
        return Ok(None);
    };
    let kind = EntryKind::ALL
        .into_iter()
        .find(|known| known.as_str().as_bytes() == kind.as_slice())
        .ok_or_else(|| format!("entry {id}: unknown entry kind"))?;
    let name = std::str::from_utf8(name)
        .map_err(|_| format!("entry {id}: the entry point's name is not UTF-8"))?;
    Ok(Some(EntryPoint::new(kind, name)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_host::datastore::{TableChanges, TxData};

    fn map(entry: &StreamEntry) -> HashMap<String, Vec<u8>> {
        entry
            .fields()
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value))
            .collect()
    }

    fn commit(offset: u64, entry: Option<EntryPoint>) -> StreamEntry {
        StreamEntry::Commit(Arc::new(Commit {
            offset,
            meta: CommitMeta {
                timestamp: Timestamp::from_micros_since_unix_epoch(1_700_000_000_123_456),
                caller: Identity::from_bytes([9; 32]),
                connection_id: ConnectionId::from_bytes([4; 16]),
                entry,
            },
            changes: TxData {
                tables: vec![TableChanges {
                    table: 2,
                    inserted: vec![b"row".to_vec().into()],
                    deleted: Vec::new(),
                }],
            },
        }))
    }

    #[test]
    fn entries_round_trip_through_their_id_and_fields() {
        for entry in [
            commit(41, Some(EntryPoint::new(EntryKind::Reducer, "send"))),
            commit(0, None),
            StreamEntry::Resync { offset: 7 },
        ] {
            assert_eq!(
                StreamEntry::decode(&entry.id(), &map(&entry)),
                Ok(entry.clone())
            );
            assert_eq!(next_offset_after(&entry.id()), Ok(entry.next_offset()));
        }
        assert_eq!(commit(41, None).id(), "41-1");
        assert_eq!(StreamEntry::Resync { offset: 42 }.id(), "42-0");
    }

    #[test]
    fn entries_that_do_not_fit_are_refused() {
        let good = commit(5, None);
        // Another offset's id, a marker's id, a foreign id.
        for id in ["6-1", "5-0", "5-2", "1700000000000-0x", "5"] {
            assert!(StreamEntry::decode(id, &map(&good)).is_err(), "{id}");
        }
        for missing in ["kind", "changes", "caller", "connection", "timestamp"] {
            let mut fields = map(&good);
            fields.remove(missing);
            assert!(StreamEntry::decode("5-1", &fields).is_err(), "{missing}");
        }
        let mut short = map(&good);
        short.insert("caller".into(), vec![1; 31]);
        assert!(StreamEntry::decode("5-1", &short).is_err());
    }
}
