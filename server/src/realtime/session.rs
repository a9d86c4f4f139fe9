//! A connection's query sets, as the evaluation task keeps them.
//!
//! A query set is what one `Subscribe` asked for: its queries, each a [`QueryId`] of the
//! shared registry (equal queries of different clients are one id). The evaluation task maps
//! each id back to the query sets that hold it ([`Subscribers`]), so that a query's delta
//! reaches exactly its subscribers.

use super::outbox::Outbox;
use std::collections::{BTreeMap, HashMap, HashSet};
use wasmod_abi::ConnectionId;
use wasmod_subscription::QueryId;

/// One connection, for the evaluation task.
#[derive(Debug)]
pub struct Session {
    /// Where its messages go.
    pub outbox: Outbox,
    /// Its query sets by id, each with its queries.
    pub sets: BTreeMap<u32, Vec<QueryId>>,
}

/// One query set of one connection.
pub type SetKey = (ConnectionId, u32);

/// Who subscribes to each query: the query sets that hold it.
#[derive(Debug, Default)]
pub struct Subscribers {
    by_query: HashMap<QueryId, HashSet<SetKey>>,
}

impl Session {
    /// A connection without query sets, whose messages go to `outbox`.
    pub fn new(outbox: Outbox) -> Self {
        Self {
            outbox,
            sets: BTreeMap::new(),
        }
    }
}

impl Subscribers {
    /// Records that the query set `set` holds query `query`.
    pub fn add(&mut self, query: QueryId, set: SetKey) {
        self.by_query.entry(query).or_default().insert(set);
    }

    /// Forgets that the query set `set` holds query `query`.
    pub fn remove(&mut self, query: QueryId, set: SetKey) {
        if let Some(sets) = self.by_query.get_mut(&query) {
            sets.remove(&set);
            if sets.is_empty() {
                self.by_query.remove(&query);
            }
        }
    }

    /// The query sets that hold query `query`.
    pub fn of(&self, query: QueryId) -> impl Iterator<Item = SetKey> + '_ {
        self.by_query.get(&query).into_iter().flatten().copied()
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.by_query.clear();
    }
}
