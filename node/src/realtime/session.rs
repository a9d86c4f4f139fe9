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
//!
//! A session also keeps the connection's `WaitFor` requests that wait for a commit the task
//! has not evaluated yet, at most [`MAX_WAITS`]: they are answered as soon as it has, after
//! the updates of that commit.

use super::limits::MAX_WAITS;
use super::outbox::Outbox;
use crate::memory::Charge;
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::Semaphore;
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
    sets: BTreeMap<u32, QuerySet>,
    /// How many queries its sets hold together, kept as they change so that the counters
    /// cost nothing per set.
    queries: usize,
    /// Its `WaitFor` requests still waiting, in the order they came.
    waits: Vec<Wait>,
    /// Its turns of requests to the evaluation task: its reader takes one for each request
    /// it sends ([`MAX_REQUESTS_QUEUED`](super::limits::MAX_REQUESTS_QUEUED)), the task gives
    /// it back once the request is handled.
    queued: Arc<Semaphore>,
}

/// A `WaitFor` request still waiting for its commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    /// The request's id.
    pub request_id: u32,
    /// The offset it waits for.
    pub offset: u64,
}

/// A connection already has [`MAX_WAITS`] `WaitFor` requests waiting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooManyWaits;

/// One query set of a connection.
#[derive(Debug)]
pub struct QuerySet {
    /// The queries as the client wrote them, without repeats (one text per distinct query),
    /// in the order it sent them; each the node's one copy of it ([`super::texts`]).
    pub texts: Vec<Arc<str>>,
    /// The queries in the registry, one per text.
    pub queries: Vec<QueryId>,
    /// What the texts are charged to the connection's holder: held, never read, and given
    /// back when the set ends (dropped).
    pub _charge: Charge,
}

impl Session {
    /// A connection of `identity` without query sets, whose messages go to `outbox`, and
    /// whose reader takes a turn of `queued` for each request it sends.
    pub fn new(identity: Identity, outbox: Outbox, queued: Arc<Semaphore>) -> Self {
        Self {
            identity,
            outbox,
            sets: BTreeMap::new(),
            queries: 0,
            waits: Vec::new(),
            queued,
        }
    }

    /// Gives back the turn of a request handled.
    pub fn handled(&self) {
        self.queued.add_permits(1);
    }

    /// Keeps `wait` until its commit is evaluated, unless [`MAX_WAITS`] are waiting already.
    pub fn wait(&mut self, wait: Wait) -> Result<(), TooManyWaits> {
        if self.waits.len() >= MAX_WAITS {
            return Err(TooManyWaits);
        }
        self.waits.push(wait);
        Ok(())
    }

    /// Whether some `WaitFor` request waits.
    pub fn is_waiting(&self) -> bool {
        !self.waits.is_empty()
    }

    /// Takes the waits for offsets below `next` (the next commit not yet evaluated), in the
    /// order they came.
    pub fn reached(&mut self, next: u64) -> Vec<Wait> {
        let (reached, waiting) = self.waits.iter().partition(|wait| wait.offset < next);
        self.waits = waiting;
        reached
    }

    /// Its query sets, by id.
    pub fn sets(&self) -> &BTreeMap<u32, QuerySet> {
        &self.sets
    }

    /// How many queries its query sets hold, together.
    pub fn queries(&self) -> usize {
        self.queries
    }

    /// Adds query set `id` (replacing one of that id).
    pub fn insert(&mut self, id: u32, set: QuerySet) {
        self.queries += set.queries.len();
        if let Some(old) = self.sets.insert(id, set) {
            self.queries -= old.queries.len();
        }
    }

    /// Ends query set `id`, and returns it.
    pub fn remove(&mut self, id: u32) -> Option<QuerySet> {
        let set = self.sets.remove(&id)?;
        self.queries -= set.queries.len();
        Some(set)
    }

    /// Binds every query set again with `bind`, which gives a set's new queries from it, or
    /// why it cannot carry on: those end. Returns the ids of the sets that ended, with why.
    pub fn rebind(
        &mut self,
        mut bind: impl FnMut(&QuerySet) -> Result<Vec<QueryId>, String>,
    ) -> Vec<(u32, String)> {
        let mut ended = Vec::new();
        self.sets.retain(|&id, set| match bind(set) {
            Ok(queries) => {
                set.queries = queries;
                true
            }
            Err(reason) => {
                ended.push((id, reason));
                false
            }
        });
        self.queries = self.sets.values().map(|set| set.queries.len()).sum();
        ended
    }

    /// Its query sets, by id, as the connection ends.
    pub fn into_sets(self) -> BTreeMap<u32, QuerySet> {
        self.sets
    }
}
