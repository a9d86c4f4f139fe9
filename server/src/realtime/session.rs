//! A connection's query sets, as the evaluation task keeps them.
//!
//! A query set is what one `Subscribe` asked for: its queries, each a [`QueryId`] of the
//! shared registry (equal queries of different clients are one id). The evaluation task
//! groups connections by their query sets ([`super::groups`]) and maps each id back to the
//! groups that hold it, so that a query's delta reaches exactly its subscribers.
//!
//! A set also keeps the SQL texts it was subscribed with, and the session the identity of its
//! connection: when a new build of the module is published, the task binds every set again
//! against the new build's tables from them ([`super::fanout`]).

use super::groups::{self, Signature};
use super::outbox::Outbox;
use std::collections::BTreeMap;
use wasmod_abi::Identity;
use wasmod_subscription::QueryId;

/// One connection, for the evaluation task.
#[derive(Debug)]
pub struct Session {
    /// Who the connection is: what `:sender` stands for in its queries.
    pub identity: Identity,
    /// Where its messages go.
    pub outbox: Outbox,
    /// Its query sets by id.
    pub sets: BTreeMap<u32, QuerySet>,
}

/// One query set of a connection.
#[derive(Debug)]
pub struct QuerySet {
    /// The queries as the client wrote them, in the order it sent them.
    pub texts: Vec<String>,
    /// The queries in the registry, one per text.
    pub queries: Vec<QueryId>,
}

impl Session {
    /// A connection of `identity` without query sets, whose messages go to `outbox`.
    pub fn new(identity: Identity, outbox: Outbox) -> Self {
        Self {
            identity,
            outbox,
            sets: BTreeMap::new(),
        }
    }

    /// What the connection is subscribed to, for grouping it.
    pub fn signature(&self) -> Signature {
        groups::signature(
            self.sets
                .iter()
                .map(|(&id, set)| (id, set.queries.as_slice())),
        )
    }
}
