//! A replica: a database in memory whose commits are another database's, applied in the
//! order and with the offsets they had there (an edge node's copy of a primary's tables).
//!
//! A replica starts from a snapshot (every row at an offset) and then takes the primary's
//! commits one by one with [`Database::apply_replicated`]: each goes through the same
//! publication as a local commit (observers, then the feed), with the primary's offset and
//! metadata, so that whatever follows the feed (the server's subscription evaluation) works on
//! a replica unchanged. Nothing else may commit to a replica: its offsets are the primary's.

use super::{Commit, Database};
use crate::tx::TxData;
use crate::SchemaError;
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use wasmod_abi::ModuleDef;

/// Why a replica could not be made or take a commit.
#[derive(Debug)]
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
        Ok(database)
    }

    /// Applies the primary's `commit`, which must be the next ([`Database::next_offset`]), and
    /// publishes it as a local commit is, with its offset and metadata; returns it as
    /// published. Fails, changing nothing, if it is out of order or does not fit.
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
        Ok(tx.commit_with(|changes| {
            self.next_offset.store(commit.offset + 1, Ordering::Relaxed);
            let commit = Arc::new(Commit {
                offset: commit.offset,
                meta: commit.meta,
                changes,
            });
            self.publish(&commit);
            commit
        }))
    }
}
