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

/// Part of a batch of records: the frames of the transactions `first..next`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part<'a> {
    /// The first transaction's offset.
    pub first: u64,
    /// The offset after the last one.
    pub next: u64,
    /// Their frames.
    pub records: &'a [u8],
}

/// `records`, the frames of the transactions `first..next` as [`Replica::hold`] is given them,
/// cut between frames into parts of at most `limit` bytes each (a frame larger on its own is a
/// part of its own): for a replica whose messages are bounded. Each part comes with the offsets
/// it holds. `Err` if the frames are malformed.
pub fn split_records(
    records: &[u8],
    limit: usize,
    first: u64,
    next: u64,
) -> Result<Vec<Part<'_>>, String> {
    let mut parts = Vec::new();
    let (mut start, mut part_first, mut offset, mut at) = (0, first, first, 0);
    loop {
        let end = match frame::read(records, at) {
            frame::Frame::Record { end, .. } => end,
            frame::Frame::End => break,
            frame::Frame::Bad(reason) => {
                return Err(format!("a record to replicate is bad: {reason}"))
            }
        };
        if end - start > limit && at > start {
            parts.push(Part {
                first: part_first,
                next: offset,
                records: &records[start..at],
            });
            (start, part_first) = (at, offset);
        }
        (at, offset) = (end, offset + 1);
    }
    if offset != next {
        return Err(format!(
            "the records to replicate hold transactions {first}..{offset}, not {first}..{next}"
        ));
    }
    if at > start || parts.is_empty() {
        parts.push(Part {
            first: part_first,
            next,
            records: &records[start..],
        });
    }
    Ok(parts)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tx::TableChanges;
    use crate::Row;

    /// The frames of transactions `first..first + count`, each with a row of `row_bytes`.
    fn records(first: u64, count: u64, row_bytes: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for offset in first..first + count {
            let changes = TxData {
                tables: vec![TableChanges {
                    table: 0,
                    inserted: vec![Row::from(vec![offset as u8; row_bytes])],
                    deleted: Vec::new(),
                }],
            };
            let mut payload = Vec::new();
            record::encode(&mut payload, offset, &changes);
            assert!(frame::write(&mut out, &payload));
        }
        out
    }

    #[test]
    fn a_batch_is_split_between_records_within_the_limit() {
        let batch = records(10, 5, 100);
        let whole = split_records(&batch, batch.len(), 10, 15).unwrap();
        assert_eq!(
            whole,
            vec![Part {
                first: 10,
                next: 15,
                records: &batch[..]
            }]
        );

        let frame = batch.len() / 5;
        let parts = split_records(&batch, 2 * frame, 10, 15).unwrap();
        let spans: Vec<(u64, u64)> = parts.iter().map(|part| (part.first, part.next)).collect();
        assert_eq!(spans, [(10, 12), (12, 14), (14, 15)]);
        let joined: Vec<u8> = parts
            .iter()
            .flat_map(|part| part.records.to_vec())
            .collect();
        assert_eq!(joined, batch);
        for part in parts {
            let offsets: Vec<u64> = decode_records(part.records)
                .unwrap()
                .iter()
                .map(|(offset, _)| *offset)
                .collect();
            assert_eq!(offsets, (part.first..part.next).collect::<Vec<_>>());
        }

        let alone = split_records(&batch, 10, 10, 15).unwrap();
        assert_eq!(alone.len(), 5, "a record larger than the limit goes alone");
    }

    #[test]
    fn records_that_do_not_match_their_offsets_are_refused() {
        let batch = records(0, 3, 8);
        assert!(split_records(&batch, 1 << 20, 0, 4).is_err());
        assert!(split_records(&batch[..batch.len() - 1], 1 << 20, 0, 3).is_err());
    }
}
