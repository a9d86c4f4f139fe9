//! A newer build of the module taking over a database that is in use: `wasmod publish`.
//!
//! The new build's tables are compared with the old build's as at an upgrade on start
//! ([`Migration::plan`]: the same rules, the same messages), the rows are carried over into a
//! new datastore in memory ([`Migration::carry_over`]), the commit log, if there is one, is
//! moved to the new tables ([`Durability::rebase`](crate::durability::Durability::rebase):
//! a snapshot of the new datastore, then new segments), and the new datastore takes the old
//! one's place. Offsets go on where they were: the first commit of the new build follows the
//! last of the old one.
//!
//! A build whose tables store their rows as the old build's do (only entry points, filters,
//! schedules or `public` changed) keeps the datastore and the log as they are, as a start over
//! the directory would.
//!
//! Whoever holds the old datastore ([`Database::datastore`] before the replacement) keeps a
//! consistent view of the old build's last state: nothing commits to it any more. The feed
//! goes on with the new build's commits, so its subscribers must learn of the replacement
//! (its [`Replaced::offset`]) from whoever replaced the tables, and read the tables of later
//! commits in the new datastore.

use super::{stored_tables, Database};
use crate::durability::{schema_hash, DurabilityError};
use crate::migrate::{Incompatible, Migration};
use crate::{Datastore, SchemaError};
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use wasmod_abi::ModuleDef;

/// What [`Database::replace`] did.
#[derive(Clone, Debug)]
pub struct Replaced {
    /// The new build's tables, holding the old build's rows.
    pub datastore: Arc<Datastore>,
    /// The offset of the first commit of the new build: every earlier one was the old
    /// build's.
    pub offset: u64,
    /// What changed in the tables, for people: one line each.
    pub changes: Vec<String>,
}

/// Why a new build cannot take over the database; nothing was changed unless it says so.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReplaceError {
    /// The database is a replica: its tables are its primary's.
    Replica,
    /// The new build's tables are invalid.
    Schema(SchemaError),
    /// The new build cannot take the stored rows (every reason, each naming its table).
    Incompatible(Incompatible),
    /// The commit log could not be moved to the new tables. If the log then failed
    /// ([`Database::log_failure`]), the directory belongs to the new build, whose next start
    /// finishes the move; otherwise nothing was changed.
    Log(DurabilityError),
}

impl fmt::Display for ReplaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Replica => f.write_str(
                "this database is a replica of a primary's: a new build is published to the \
                 primary",
            ),
            Self::Schema(error) => write!(f, "the new build's tables are invalid: {error}"),
            Self::Incompatible(error) => {
                write!(f, "the new build cannot take the stored data: {error}")
            }
            Self::Log(error) => write!(
                f,
                "the commit log could not be moved to the new build's tables: {error}"
            ),
        }
    }
}

impl std::error::Error for ReplaceError {}

impl Database {
    /// How the tables of `old` (the build that serves the database now) would become those
    /// of `new`, without touching anything: the check [`Database::replace`] starts with, for
    /// whoever wants to refuse a build before it waits for its turn. The rows are not looked
    /// at, so a new unique index that they break is found only by the replacement itself.
    pub fn plan_replacement(old: &ModuleDef, new: &ModuleDef) -> Result<Migration, ReplaceError> {
        let old = stored_tables(old).map_err(ReplaceError::Schema)?;
        let new = stored_tables(new).map_err(ReplaceError::Schema)?;
        Migration::plan(&old, &new).map_err(ReplaceError::Incompatible)
    }

    /// Replaces the tables of `old` (the build that serves the database now) by those of
    /// `new`, carrying every row over (see the module docs), and returns the new datastore
    /// and the offset where the new build's commits start.
    ///
    /// Call it between transactions, from the one thread that commits (a module's), so that
    /// nothing commits meanwhile. Fails with nothing changed if the builds are incompatible,
    /// the rows break a new unique index, or the snapshot for the new tables cannot be
    /// written; see [`ReplaceError::Log`] for the one failure that changes something.
    pub fn replace(&self, old: &ModuleDef, new: &ModuleDef) -> Result<Replaced, ReplaceError> {
        if self.replica {
            return Err(ReplaceError::Replica);
        }
        let migration = Self::plan_replacement(old, new)?;
        let before = self.datastore();
        if schema_hash(migration.target())
            == schema_hash(&stored_tables(old).map_err(ReplaceError::Schema)?)
        {
            // The stored rows do not depend on what changed (entry points, filters, ...): the
            // tables and the log serve the new build as they are, as at a start.
            return Ok(Replaced {
                datastore: before,
                offset: self.next_offset(),
                changes: migration.changes().to_vec(),
            });
        }
        let after = Arc::new(
            migration
                .carry_over(&before)
                .map_err(ReplaceError::Incompatible)?,
        );
        if let Some(log) = &self.log {
            log.rebase(migration.target(), &after)
                .map_err(ReplaceError::Log)?;
        }
        let offset = self.next_offset();
        *self.datastore.write() = after.clone();
        self.module_tables
            .store(new.tables.len() as u32, Ordering::Release);
        Ok(Replaced {
            datastore: after,
            offset,
            changes: migration.changes().to_vec(),
        })
    }
}
