//! Replicated durability: a commit counts as durable once a replica outside this process (a
//! quorum of a consensus engine, for the node) holds it, not once a local disk does.
//!
//! In [`Mode::Replicated`](super::Mode::Replicated) the flusher hands each batch of records,
//! framed exactly as the log's files hold them, to the [`Replica`] set with
//! [`Durability::replicate_to`](super::Durability::replicate_to), and only once the replica
//! holds the batch does it write the batch to the local log and mark it durable. The local copy
//! is written second on purpose: the local log then never holds a record the replica refused,
//! so a primary whose append was refused (deposed: another took its place) keeps a log that is
//! a prefix of the replicated one, and only its memory ran ahead, which a restart from the log
//! forgets. Locally the records are not synced (but when a segment fills): the replica is what
//! makes them durable, and a local tail lost in a crash is read again from it.
//!
//! Until a replica is set, a replicated log is a standby's copy of commits the replica already
//! holds: it writes what it is given ([`Database::apply_replicated`]) without syncing, and the
//! [`Database`] refuses commits of its own.
//!
//! [`Database`]: crate::Database
//! [`Database::apply_replicated`]: crate::Database::apply_replicated

use super::{frame, record};
use crate::tx::TxData;

/// Where a replicated log's records must be held before their commits are acknowledged.
pub trait Replica: Send + Sync {
    /// Holds the records of the transactions at offsets `first..next`, `records` being their
    /// frames as the log writes them ([`decode_records`] reads them back); returns once they
    /// are held, or why they are not. The flusher calls it with one batch at a time, in
    /// order, and waits: every commit of the batch waits with it (group commit).
    ///
    /// An `Err` fails the log: the batch is not written locally, its commits and every later
    /// one are refused, and only a new start (from the local log, which holds none of them)
    /// serves again. Return one only once the batch can no longer be held (the writer was
    /// deposed, or the replica cannot be reached for longer than a commit may wait): an
    /// outcome the replica may still decide must be retried here, not reported.
    fn hold(&self, first: u64, next: u64, records: &[u8]) -> Result<(), String>;
}

/// The transactions in `records`, frames as [`Replica::hold`] is given them: offsets and
/// changes, in order. `Err` says what is malformed (a bad checksum, a frame cut short).
pub fn decode_records(records: &[u8]) -> Result<Vec<(u64, TxData)>, &'static str> {
    let mut transactions = Vec::new();
    let mut at = 0;
    loop {
        match frame::read(records, at) {
            frame::Frame::Record { payload, end } => {
                transactions.push(record::decode(payload)?);
                at = end;
            }
            frame::Frame::End => return Ok(transactions),
            frame::Frame::Bad(reason) => return Err(reason),
        }
    }
}
