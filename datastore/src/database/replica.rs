//! A replica: a database in memory whose commits are another database's, applied in the
//! order and with the offsets they had there (an edge node's copy of a primary's tables).
//!
//! A replica starts from a snapshot (every row at an offset) and then takes the primary's
//! commits one by one with [`Database::apply_replicated`]: each goes through the same
//! publication as a local commit (observers, then the feed), with the primary's offset and
//! metadata, so that whatever follows the feed (the server's subscription evaluation) works on
//! a replica unchanged. Nothing else may commit to a replica: its offsets are the primary's.
//!
//! A replica that lost its place in the primary's commits (they are no longer anywhere it can
//! read them) starts again from a newer snapshot with [`Database::resync`], which changes its
//! tables to the snapshot's rows in one commit: the rows the snapshot no longer has deleted,
//! the new ones inserted. Whatever follows the feed sees that commit like any other, so live
//! queries are brought up to date by the difference alone, neither emptied nor sent twice.

use super::{Commit, CommitMeta, Database};
use crate::row::Row;
use crate::tx::{TableChanges, TxData};
use crate::SchemaError;
use std::collections::HashSet;
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use wasmod_abi::ModuleDef;

/// Why a replica could not be made or take a commit.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReplicaError {
    /// The module's tables cannot be made (see [`Database::in_memory`]).
    Schema(SchemaError),
    /// The commit is not the next one: commits are applied in offset order, none missing.
    OutOfOrder {
        /// The offset the replica needs next.
        expected: u64,
        /// The offset it was given.
        given: u64,
    },
    /// The changes do not fit the replica's tables (a deleted row is missing, an inserted row
    /// clashes or is malformed): the replica does not hold what the primary held. Nothing was
    /// changed.
    DoesNotApply {
        /// The commit's offset (for a snapshot, its offset).
        offset: u64,
        /// What did not fit.
        reason: String,
    },
    /// A standby's log did not take the commit (it failed earlier, or the record is too
    /// large for it). Nothing was changed.
    Log {
        /// The commit's offset.
        offset: u64,
        /// Why.
        reason: String,
    },
    /// The snapshot is older than what the replica holds: it would undo commits.
    Behind {
        /// The snapshot's offset.
        snapshot: u64,
        /// The offset the replica needs next.
        next: u64,
    },
}

impl fmt::Display for ReplicaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Schema(error) => write!(f, "{error}"),
            Self::OutOfOrder { expected, given } => {
                write!(f, "commit {given} is not the next one ({expected} is)")
            }
            Self::DoesNotApply { offset, reason } => {
                write!(f, "commit {offset} does not apply to the replica: {reason}")
            }
            Self::Log { offset, reason } => {
                write!(f, "commit {offset} could not be logged: {reason}")
            }
            Self::Behind { snapshot, next } => write!(
                f,
                "the snapshot at offset {snapshot} is older than the replica, which needs {next} next"
            ),
        }
    }
}

impl std::error::Error for ReplicaError {}

impl Database {
    /// A replica of `module`'s tables, in memory, holding `rows` (every row of every table,
    /// system tables included, as one transaction inserting them) as of offset `offset`: its
    /// next commit is the primary's commit `offset`. Publishes nothing.
    pub fn replica(module: &ModuleDef, offset: u64, rows: &TxData) -> Result<Self, ReplicaError> {
        let database = Self::in_memory(module).map_err(ReplicaError::Schema)?;
        let mut tx = database.begin_mut();
        tx.apply(rows).map_err(|error| ReplicaError::DoesNotApply {
            offset,
            reason: error.message().to_owned(),
        })?;
        tx.commit();
        database.next_offset.store(offset, Ordering::Relaxed);
        Ok(Self {
            replica: true,
            ..database
        })
    }

    /// Applies the primary's `commit`, which must be the next ([`Database::next_offset`]), and
    /// publishes it as a local commit is, with its offset and metadata; returns it as
    /// published. A standby ([`Database::is_standby`]) also logs it, at the same offset (its
    /// log's durability is the primary's replica's: nothing waits on it). Fails, changing
    /// nothing, if it is out of order, does not fit, or the log refuses it.
    pub fn apply_replicated(&self, commit: Commit) -> Result<Arc<Commit>, ReplicaError> {
        // The writer's place is held from here: the next offset cannot move.
        let mut tx = self.begin_mut();
        let expected = self.next_offset();
        if commit.offset != expected {
            return Err(ReplicaError::OutOfOrder {
                expected,
                given: commit.offset,
            });
        }
        tx.apply(&commit.changes)
            .map_err(|error| ReplicaError::DoesNotApply {
                offset: commit.offset,
                reason: error.message().to_owned(),
            })?;
        tx.try_commit_with(|changes| {
            if let Some(log) = &self.log {
                let logged = log.append(&changes).map_err(|error| ReplicaError::Log {
                    offset: commit.offset,
                    reason: error.to_string(),
                })?;
                // The log's offsets and the database's are one count; a gap between them would
                // be a bug, and logging further would write commits under the wrong offsets.
                if logged.offset() != Some(commit.offset) {
                    return Err(ReplicaError::Log {
                        offset: commit.offset,
                        reason: format!(
                            "the local log would have logged it as {:?}",
                            logged.offset()
                        ),
                    });
                }
            }
            self.next_offset.store(commit.offset + 1, Ordering::Relaxed);
            let commit = Arc::new(Commit {
                offset: commit.offset,
                meta: commit.meta,
                changes,
            });
            self.publish(&commit);
            Ok(commit)
        })
    }

    /// Makes the replica hold `rows` (every row of every table, as [`Database::replica`]
    /// takes them) as of offset `offset`, which must not be older than what it holds, and
    /// publishes the difference as one commit at offset `offset - 1` with the host's
    /// metadata ([`CommitMeta::host`]); its next commit is then the primary's commit `offset`.
    /// Returns that commit, or `None` if the replica already held exactly these rows. Fails,
    /// changing nothing, if the snapshot is older or does not fit.
    pub fn resync(&self, offset: u64, rows: &TxData) -> Result<Option<Arc<Commit>>, ReplicaError> {
        let mut tx = self.begin_mut();
        let next = self.next_offset();
        if offset < next {
            return Err(ReplicaError::Behind {
                snapshot: offset,
                next,
            });
        }
        let difference = {
            let held: &crate::Tables = &tx;
            let tables = (0..self.datastore().table_count() as u32)
                .filter_map(|table| {
                    let now: HashSet<&Row> = held.rows(table).ok()?.collect();
                    let then: HashSet<&Row> = rows
                        .table(table)
                        .map(|changes| changes.inserted.iter().collect())
                        .unwrap_or_default();
                    let changes = TableChanges {
                        table,
                        inserted: then.difference(&now).map(|row| Row::clone(row)).collect(),
                        deleted: now.difference(&then).map(|row| Row::clone(row)).collect(),
                    };
                    (!changes.inserted.is_empty() || !changes.deleted.is_empty()).then_some(changes)
                })
                .collect();
            TxData { tables }
        };
        tx.apply(&difference)
            .map_err(|error| ReplicaError::DoesNotApply {
                offset,
                reason: error.message().to_owned(),
            })?;
        Ok(tx.commit_with(|changes| {
            self.next_offset.store(offset, Ordering::Relaxed);
            if changes.is_empty() {
                return None;
            }
            let commit = Arc::new(Commit {
                offset: offset.saturating_sub(1),
                meta: CommitMeta::host(),
                changes,
            });
            self.publish(&commit);
            Some(commit)
        }))
    }
}
