//! Recovery: loading the newest snapshot and replaying the log after it into a fresh
//! datastore on start.
//!
//! Segments are read in order (those a snapshot covers are skipped, as are records before
//! its offset), each whole (they are bounded in size), and every record is
//! checked (frame checksum, payload, consecutive offsets) before it is applied. The records
//! are applied in one transaction, deletions before insertions per record, exactly as the
//! original commits left the tables; rows carry their auto-increment values, and inserting an
//! explicit value moves the column's sequence past it, so new values do not collide.
//!
//! Damage is told apart by where it is:
//!
//! - **a torn tail**: the last segment ends in a record that is cut short or fails its
//!   checksum, and no intact record follows. A crash during a write leaves exactly this, and
//!   none of those records was acknowledged (acknowledgement waits for the sync). The tail is
//!   reported, logged and truncated off, and the log continues from there.
//! - **damage in the middle**: a bad record followed by an intact one, a bad record in a
//!   segment that is not the last, a record whose checksum matches but whose contents do not
//!   make sense. Acknowledged transactions may lie beyond it, so nothing is truncated: the
//!   start fails with the file and the offset, for an operator to look at.

use super::frame::{self, Frame};
use super::recent::Recent;
use super::segment::{self, Header, HEADER_LEN};
use super::{DurabilityError, Options, RecoveryReport, TornTail};
use crate::tx::TxData;
use crate::Datastore;
use std::collections::VecDeque;
use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The outcome of replaying a directory's log.
/// What replay does with a torn tail of the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tail {
    /// Cuts it off, so the log can be appended to (the directory is locked for writing).
    Truncate,
    /// Leaves the files as they are (a read-only look, possibly at a log being written).
    Keep,
}

pub(crate) struct Replayed {
    /// What was found.
    pub(crate) report: RecoveryReport,
    /// The last segment and its length, to append to; `None` to start a new one.
    pub(crate) tail: Option<(PathBuf, u64)>,
    /// The offset of the next transaction.
    pub(crate) next: u64,
    /// The offset of the snapshot loaded (0 for none).
    pub(crate) snapshot: u64,
    /// The last transactions replayed (see [`Recovered::recent`](super::Recovered::recent)).
    pub(crate) recent: VecDeque<(u64, TxData)>,
}

/// Replays the segments of `dir`, written for tables hashing to `schema`, into `datastore`.
pub(crate) fn replay(
    dir: &Path,
    schema: [u8; 32],
    datastore: &Datastore,
    options: &Options,
    tail_mode: Tail,
) -> Result<Replayed, DurabilityError> {
    let mut recent = Recent::new(options);
    let started = Instant::now();
    let segments = segment::list(dir)?;
    let mut tx = datastore.begin_mut();
    let snapshot = super::snapshot::latest(dir, schema)?;
    let base = snapshot.as_ref().map_or(0, |(offset, _)| *offset);
    if let Some((_, state)) = &snapshot {
        tx.apply(&state.rows)
            .and_then(|()| tx.raise_sequences(&state.sequences))
            .map_err(|error| DurabilityError::Corrupt {
                file: dir.to_owned(),
                offset: 0,
                reason: format!("the snapshot does not apply: {}", error.message()),
            })?;
    }
    let mut next = base;
    let mut torn_tail = None;
    let mut tail = None;
    let count = segments.len();
    for (index, (_, path)) in segments.iter().enumerate() {
        let last = index + 1 == count;
        // Left behind by a crash after a snapshot that covers it: all its records are older.
        if segments
            .get(index + 1)
            .is_some_and(|(start, _)| *start <= base)
        {
            continue;
        }
        let bytes =
            fs::read(path).map_err(|error| DurabilityError::io(path, "reading the log", error))?;
        if last && bytes.len() < HEADER_LEN {
            // A crash while the segment was being created: it holds no record.
            torn_tail = Some(torn(
                path,
                0,
                bytes.len(),
                "the segment header is cut short",
            ));
            if tail_mode == Tail::Truncate {
                tracing::warn!(target: "wasmod::durability", "{}: removing the segment", path.display());
                fs::remove_file(path)
                    .map_err(|error| DurabilityError::io(path, "removing a torn segment", error))?;
            }
            break;
        }
        let header = Header::parse(path, &bytes)?;
        if header.schema != schema {
            return Err(DurabilityError::SchemaMismatch { file: path.clone() });
        }
        if header.start > next {
            return Err(corrupt(
                path,
                0,
                format!(
                    "the segment starts at transaction {}, but the log before it ends at {next}",
                    header.start
                ),
            ));
        }
        let mut at = HEADER_LEN;
        loop {
            match frame::read(&bytes, at) {
                Frame::End => break,
                Frame::Record { payload, end } => {
                    let (offset, changes) = super::record::decode(payload)
                        .map_err(|reason| corrupt(path, at, reason.into()))?;
                    if offset < base {
                        // In the snapshot already (and older than any transaction kept).
                        at = end;
                        continue;
                    }
                    if offset != next {
                        return Err(corrupt(
                            path,
                            at,
                            format!("the record is transaction {offset}, expected {next}"),
                        ));
                    }
                    tx.apply(&changes).map_err(|error| {
                        corrupt(
                            path,
                            at,
                            format!("transaction {offset} does not apply: {}", error.message()),
                        )
                    })?;
                    recent.keep((offset, changes));
                    next += 1;
                    at = end;
                }
                Frame::Bad(reason) => {
                    if !last || frame::next_intact(&bytes, at + 1).is_some() {
                        return Err(corrupt(
                            path,
                            at,
                            format!("{reason}, and intact records follow"),
                        ));
                    }
                    let found = torn(path, at, bytes.len(), reason);
                    if tail_mode == Tail::Truncate {
                        cut(&found)?;
                    }
                    torn_tail = Some(found);
                    break;
                }
            }
        }
        if last {
            tail = Some((path.clone(), at as u64));
        }
    }
    tx.commit();
    Ok(Replayed {
        report: RecoveryReport {
            transactions: next,
            segments: count,
            torn_tail,
            duration: started.elapsed(),
            upgraded: false,
            rows_reencoded: false,
        },
        tail,
        next,
        snapshot: base,
        recent: recent.into_kept(),
    })
}

/// The torn tail of `path` (of `len` bytes) from `at`.
fn torn(path: &Path, at: usize, len: usize, reason: &str) -> TornTail {
    TornTail {
        file: path.to_owned(),
        offset: at as u64,
        bytes: (len - at) as u64,
        reason: reason.to_owned(),
    }
}

/// Cuts `torn` off its file, durably.
fn cut(torn: &TornTail) -> Result<(), DurabilityError> {
    tracing::warn!(target: "wasmod::durability", "{torn}: truncating it");
    let path = &torn.file;
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|error| DurabilityError::io(path, "opening a torn segment", error))?;
    file.set_len(torn.offset)
        .and_then(|()| file.sync_all())
        .map_err(|error| DurabilityError::io(path, "truncating a torn segment", error))
}

fn corrupt(path: &Path, at: usize, reason: String) -> DurabilityError {
    DurabilityError::Corrupt {
        file: path.to_owned(),
        offset: at as u64,
        reason,
    }
}
