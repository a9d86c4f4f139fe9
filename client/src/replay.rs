//! [`Replay`]: a client cache that the application feeds server messages itself, with no
//! connection.
//!
//! A connected [`Client`](crate::Client) reads its messages from its socket. Some messages
//! come another way: recorded from a session (to see again what a client saw, or to load a
//! page's state without a server), relayed by another part of the application (a worker
//! that owns the socket, another tab), or written down as the test vectors that the Rust and
//! the JavaScript clients both decode (`client/vectors/`). A `Replay` applies such messages,
//! each a binary frame as the server sends it (compressed or not), to a cache of its own,
//! exactly as the connection task applies them (`apply.rs`): the same row callbacks, in the
//! same order, and the same updates paired by primary key.
//!
//! What it does not do is the connection's side: it sends nothing, so it subscribes nothing
//! itself. The query sets are those the messages name: a `SubscribeApplied` brings one's
//! rows (with the `SubscribeRows` parts before it), a `TransactionUpdate` changes the query
//! sets applied so far, and a `SubscriptionError` releases one. Calls' answers change nothing;
//! [`Replay::apply`] returns every message decoded, for the application to read them.

use crate::apply::{self, RowsPart};
use crate::cache::{Cache, PrimaryKey};
use crate::json::JsonModule;
use crate::socket::MAX_MESSAGE;
use crate::sync::RwLock;
use crate::table::Listeners;
use crate::HashMap;
use crate::{Error, TableHandle};
use bytes::Bytes;
use std::sync::Arc;
use wasmod_abi::Decode;
use wasmod_protocol::ws::compression::Decompressor;
use wasmod_protocol::ws::{BinaryServerMessage, ServerMessage};

/// A client cache fed server messages by the application; see the [module](self).
pub struct Replay {
    cache: Arc<RwLock<Cache>>,
    listeners: Arc<Listeners>,
    /// Decompresses frames, with its state kept from one to the next.
    decompressor: Decompressor,
    /// The query sets the messages named so far.
    query_sets: HashMap<u32, ReplayedQuerySet>,
}

/// A query set as the messages replayed so far describe it.
#[derive(Default)]
struct ReplayedQuerySet {
    /// Whether its rows are in the cache (a `SubscribeApplied` came).
    applied: bool,
    /// The parts of its rows received ahead of its `SubscribeApplied`.
    parts: Vec<RowsPart>,
}

impl Replay {
    /// An empty cache of `module`'s tables: their primary keys pair deletes and inserts into
    /// updates. An error if a table's primary key is not a field of its row type.
    pub fn new(module: &JsonModule) -> Result<Self, Error> {
        let mut cache = Cache::new();
        for table in module.tables() {
            let (Some(row_type), Some(column)) =
                (module.row_type(table), module.primary_key(table))
            else {
                continue;
            };
            let key = PrimaryKey::named(row_type, module.typespace().clone(), column).ok_or_else(
                || {
                    Error::Protocol(format!(
                        "table `{table}`'s primary key `{column}` is not a field of its row type"
                    ))
                },
            )?;
            cache.set_primary_key(table, key);
        }
        Ok(Self {
            cache: Arc::new(RwLock::new(cache)),
            listeners: Arc::new(Listeners::default()),
            decompressor: Decompressor::new(MAX_MESSAGE as u64),
            query_sets: HashMap::default(),
        })
    }

    /// Table `name` of the cache, read as rows of type `T`, with its row callbacks.
    pub fn table<T: Decode + 'static>(&self, name: &str) -> TableHandle<T> {
        TableHandle::new(name, self.cache.clone(), self.listeners.clone())
    }

    /// Decodes `frame` (a binary server message, after its compression byte), applies it to
    /// the cache, runs its row callbacks, and returns it. A frame that is not a message is an
    /// [`Error::Protocol`] and changes nothing.
    pub fn apply(&mut self, frame: &[u8]) -> Result<BinaryServerMessage, Error> {
        let message = BinaryServerMessage::from_frame(
            &Bytes::copy_from_slice(frame),
            &mut self.decompressor,
        )?;
        match &message {
            ServerMessage::SubscribeRows {
                query_set_id,
                tables,
                deletes,
            } => {
                self.query_sets
                    .entry(*query_set_id)
                    .or_default()
                    .parts
                    .push(RowsPart {
                        tables: tables.clone(),
                        deletes: deletes.clone(),
                    });
            }
            ServerMessage::SubscribeApplied {
                query_set_id,
                tables,
                deletes,
                resumed,
                ..
            } => {
                let query_set = self.query_sets.entry(*query_set_id).or_default();
                query_set.applied = true;
                let mut parts = std::mem::take(&mut query_set.parts);
                parts.push(RowsPart {
                    tables: tables.clone(),
                    deletes: deletes.clone(),
                });
                apply::query_set_rows(
                    &self.cache,
                    &self.listeners,
                    *query_set_id,
                    &parts,
                    *resumed,
                );
            }
            ServerMessage::TransactionUpdate(update) => {
                let mut changes = update.changes.clone();
                changes.retain(|change| {
                    self.query_sets
                        .get(&change.query_set_id)
                        .is_some_and(|query_set| query_set.applied)
                });
                apply::transaction(&self.cache, &self.listeners, &changes);
            }
            ServerMessage::SubscriptionError { query_set_id, .. } => {
                self.release(*query_set_id);
            }
            _ => {}
        }
        Ok(message)
    }

    /// Forgets query set `query_set_id` (the server dropped it), releasing its rows.
    fn release(&mut self, query_set_id: u32) {
        if self.query_sets.remove(&query_set_id).is_some() {
            apply::release(&self.cache, &self.listeners, query_set_id);
        }
    }

    /// The encoded rows of table `table` the cache holds now, in no particular order.
    pub fn rows(&self, table: &str) -> Vec<Vec<u8>> {
        self.cache.read().rows(table).map(<[u8]>::to_vec).collect()
    }

    /// The cache and the row callbacks, for the browser's JavaScript API, which reads rows
    /// by their encoding.
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn tables(&self) -> (&Arc<RwLock<Cache>>, &Arc<Listeners>) {
        (&self.cache, &self.listeners)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_abi::encoding::to_vec;
    use wasmod_abi::{
        AlgebraicType, ConnectionId, EntryKind, Identity, ModuleDef, TableDef, Timestamp, Typespace,
    };
    use wasmod_protocol::description::{describe, Tables};
    use wasmod_protocol::ws::{
        EntryPointName, QuerySetUpdate, RowList, TableRows, TableUpdate, TransactionUpdate,
        UpdateStatus,
    };

    /// A replay of a module with one table `t (id: u32, name: String)` keyed by `id`.
    fn replay() -> Replay {
        let mut typespace = Typespace::default();
        let mut table = TableDef::of_columns(
            &mut typespace,
            "t::Row",
            "t",
            &[("id", AlgebraicType::U32), ("name", AlgebraicType::String)],
        );
        table.primary_key = Some(0);
        let def = ModuleDef {
            typespace,
            tables: vec![table],
            ..ModuleDef::default()
        };
        let module = JsonModule::new(&describe(&def, Tables::PublicOnly)).expect("a module");
        Replay::new(&module).expect("a replay")
    }

    fn rows(rows: &[(u32, &str)]) -> RowList {
        let encoded: Vec<Vec<u8>> = rows
            .iter()
            .map(|&(id, name)| to_vec(&(id, name.to_owned())))
            .collect();
        RowList::from_rows(encoded.iter().map(Vec::as_slice)).expect("small")
    }

    fn insert(query_set_id: u32, row: (u32, &str)) -> Vec<u8> {
        ServerMessage::TransactionUpdate(TransactionUpdate {
            offset: 2,
            timestamp: Timestamp::from_micros_since_unix_epoch(0),
            caller_identity: Identity::ZERO,
            caller_connection_id: ConnectionId::ZERO,
            entry_point: EntryPointName {
                kind: EntryKind::Reducer,
                name: "add".into(),
            },
            status: UpdateStatus::Committed,
            request_id: None,
            changes: vec![QuerySetUpdate {
                query_set_id,
                tables: vec![TableUpdate {
                    table: "t".into(),
                    inserts: rows(&[row]),
                    deletes: rows(&[]),
                }],
            }],
        })
        .to_bytes()
    }

    #[test]
    fn changes_to_a_query_set_not_applied_yet_are_ignored() {
        let mut replay = replay();
        replay.apply(&insert(1, (1, "early"))).expect("a message");
        assert!(replay.rows("t").is_empty(), "query set 1 is not applied");

        let applied = ServerMessage::SubscribeApplied {
            query_set_id: 1,
            offset: 1,
            tables: vec![TableRows {
                table: "t".into(),
                rows: rows(&[(2, "kept")]),
            }],
            deletes: vec![],
            resumed: false,
        };
        replay.apply(&applied.to_bytes()).expect("a message");
        replay.apply(&insert(1, (3, "later"))).expect("a message");
        replay
            .apply(&insert(9, (4, "elsewhere")))
            .expect("a message");
        let mut held = replay.rows("t");
        held.sort();
        assert_eq!(
            held,
            vec![
                to_vec(&(2u32, "kept".to_owned())),
                to_vec(&(3u32, "later".to_owned()))
            ]
        );
        assert!(matches!(replay.apply(&[]), Err(Error::Protocol(_))));
        assert_eq!(replay.rows("t").len(), 2, "a bad frame changes nothing");
    }
}
