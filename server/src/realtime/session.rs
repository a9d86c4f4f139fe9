//! A connection's query sets, as the evaluation task keeps them.
//!
//! A query set is what one `Subscribe` asked for: its queries, each a [`QueryId`] of the
//! shared registry (equal queries of different clients are one id). The evaluation task
//! groups connections by their query sets ([`super::groups`]) and maps each id back to the
//! groups that hold it, so that a query's delta reaches exactly its subscribers.

use super::outbox::Outbox;
use std::collections::BTreeMap;
use wasmod_subscription::QueryId;

/// One connection, for the evaluation task.
#[derive(Debug)]
pub struct Session {
    /// Where its messages go.
    pub outbox: Outbox,
    /// Its query sets by id, each with its queries.
    pub sets: BTreeMap<u32, Vec<QueryId>>,
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
