//! Module upgrades: serving a new build of a module over the data of an older one.
//!
//! The log directory keeps the tables' description it was written for (`tables.def`: a magic,
//! then the description in its own versioned encoding, [`wasmod_abi::description::encode`]).
//! When a module opens the log with a description whose stored data differs
//! ([`segment::schema_hash`]), the two are compared by [`Migration::plan`]: new tables, new or
//! removed indexes and new columns at the end with a default are compatible; the data is
//! recovered as the old module wrote it, carried over into the new tables
//! ([`Migration::carry_over`]: stored rows get the new columns' defaults, new indexes are
//! built and new unique ones checked), and written as a snapshot for the new description,
//! which then replaces the old log. Anything else refuses the start, naming the table, the
//! column and the change, and nothing is changed.
//!
//! [`check`] runs the same comparison and carry-over in memory without writing anything, for
//! `wasmod build --data` and for a server that is asked to swap builds.
//!
//! The steps are ordered so a crash at any point is finished on the next start: the new
//! snapshot is renamed into place first (from then on the upgrade is decided), then the old
//! log is removed, then the new description is recorded.

use super::recovery::{self, Tail};
use super::{segment, snapshot, DurabilityError, Options};
use crate::migrate::{Incompatible, Migration};
use crate::Datastore;
use std::fmt;
use std::fs;
use std::path::Path;
use wasmod_abi::{description, ModuleDef};

/// The file holding the description the log is written for.
const FILE: &str = "tables.def";
/// The first bytes of `tables.def`. Files written before the description had a version
/// (wasmod before description format 2) start with the typespace instead.
const MAGIC: &[u8; 8] = b"WASMODTD";

/// What opening a data directory with a new build will do, as [`check`] finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpgradeCheck {
    /// The directory holds no data yet: it will be created for the new build.
    Empty,
    /// The directory holds data written for the same tables: nothing to upgrade.
    Unchanged,
    /// The data will be carried over into the new build's tables.
    Upgrade {
        /// How many rows are carried over.
        rows: u64,
        /// What changes, one line each.
        changes: Vec<String>,
    },
}

impl fmt::Display for UpgradeCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str(
                "the data directory holds no data yet: it will be created for this build",
            ),
            Self::Unchanged => {
                f.write_str("the data directory was written for these tables: nothing to upgrade")
            }
            Self::Upgrade { rows, changes } => {
                write!(
                    f,
                    "the data directory will be upgraded on start: {rows} stored rows carried over"
                )?;
                for change in changes {
                    write!(f, "\n  {change}")?;
                }
                Ok(())
            }
        }
    }
}

/// Checks, without changing any file, whether the build described by `def` can serve the data
/// in `dir`, and says what its start will do: the same comparison and carry-over as the
/// upgrade, in memory. The directory may be in use by a running server; a torn tail of its log
/// is left as it is (and its transaction not counted).
pub fn check(dir: &Path, def: &ModuleDef) -> Result<UpgradeCheck, DurabilityError> {
    let Some(stored) = stored(dir)? else {
        return Ok(UpgradeCheck::Empty);
    };
    if segment::schema_hash(&stored) == segment::schema_hash(def) {
        return Ok(UpgradeCheck::Unchanged);
    }
    let migration = plan(&stored, def)?;
    let (before, _) = recover(dir, &stored, Tail::Keep)?;
    let after = migration.carry_over(&before).map_err(incompatible)?;
    let read = after.begin_read();
    let rows = (0..after.table_count() as u32)
        .map(|table| read.row_count(table).unwrap_or_default())
        .sum();
    Ok(UpgradeCheck::Upgrade {
        rows,
        changes: migration.changes().to_vec(),
    })
}

/// What [`prepare`] did to the stored data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Prepared {
    /// Nothing: the directory was new, or written for the same tables.
    Unchanged,
    /// Carried it over into the new tables, each stored row encoded as it was.
    Alike,
    /// Carried it over, the rows of some table with new columns.
    Reencoded,
}

/// Makes the log in `dir` one for `def` (whose tables hash to `schema`): records the
/// description on first use, and carries the data over from an older compatible one. Returns
/// whether it did, and whether the rows changed encoding doing so.
pub(crate) fn prepare(
    dir: &Path,
    def: &ModuleDef,
    schema: [u8; 32],
    options: &Options,
) -> Result<Prepared, DurabilityError> {
    let Some(stored) = stored(dir)? else {
        return record(dir, def).map(|()| Prepared::Unchanged);
    };
    // Only what the stored data depends on is hashed: a build that changes no table's
    // columns or indexes (only, say, a visibility filter) serves the data as it is.
    if segment::schema_hash(&stored) == schema {
        return Ok(Prepared::Unchanged);
    }
    // Planned again after a crash that left the carry-over done but the description not yet
    // recorded: the answer is the same, and says how the rows were carried.
    let migration = plan(&stored, def)?;
    if snapshot::latest_schema(dir)? != Some(schema) {
        carry_over(dir, &stored, &migration, schema, options)?;
    }
    // The upgrade's snapshot is in place: the old log is covered by it.
    for (_, path) in segment::list(dir)? {
        fs::remove_file(&path)
            .map_err(|error| DurabilityError::io(&path, "removing the old log", error))?;
    }
    tracing::info!(target: "wasmod::durability", "the tables were upgraded to the new description");
    record(dir, def)?;
    Ok(if migration.reencodes_rows() {
        Prepared::Reencoded
    } else {
        Prepared::Alike
    })
}

/// The description stored in `dir`, if the directory has one.
fn stored(dir: &Path) -> Result<Option<ModuleDef>, DurabilityError> {
    let file = dir.join(FILE);
    let bytes = match fs::read(&file) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(DurabilityError::io(&file, "reading the description", error)),
    };
    let unreadable = |reason: String| DurabilityError::Unreadable {
        file: file.clone(),
        reason,
    };
    let encoded = bytes.strip_prefix(MAGIC).ok_or_else(|| {
        unreadable(
            "it was written by a wasmod older than description format 2, whose stored \
             description this one cannot read: serve the directory with the wasmod that wrote \
             it, or start from a new data directory"
                .into(),
        )
    })?;
    description::decode(encoded)
        .map(Some)
        .map_err(|error| unreadable(error.to_string()))
}

/// Records `def`'s tables as the ones the log is written for.
pub(crate) fn record(dir: &Path, def: &ModuleDef) -> Result<(), DurabilityError> {
    let tables = ModuleDef {
        typespace: def.typespace.clone(),
        tables: def.tables.clone(),
        ..ModuleDef::default()
    };
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&description::encode(&tables));
    snapshot::write_atomically(dir, &dir.join(FILE), &bytes)
}

/// How the data written for `stored` moves to `def`'s tables, or why it cannot.
fn plan(stored: &ModuleDef, def: &ModuleDef) -> Result<Migration, DurabilityError> {
    Migration::plan(stored, def).map_err(incompatible)
}

fn incompatible(error: Incompatible) -> DurabilityError {
    DurabilityError::Incompatible {
        reason: error.to_string(),
    }
}

/// The data in `dir`, written for `stored`, in a new datastore; and the offset of the next
/// transaction.
fn recover(
    dir: &Path,
    stored: &ModuleDef,
    tail: Tail,
) -> Result<(Datastore, u64), DurabilityError> {
    let before = Datastore::new(stored).map_err(DurabilityError::Schema)?;
    // The new schema starts from a snapshot: no transaction before it is kept.
    let replayed = recovery::replay(
        dir,
        segment::schema_hash(stored),
        &before,
        &Options::default(),
        tail,
    )?;
    Ok((before, replayed.next))
}

/// Recovers the old data and writes it, carried over, as a snapshot for the new description.
fn carry_over(
    dir: &Path,
    stored: &ModuleDef,
    migration: &Migration,
    schema: [u8; 32],
    options: &Options,
) -> Result<(), DurabilityError> {
    let (before, next) = recover(dir, stored, Tail::Truncate)?;
    let after = migration.carry_over(&before).map_err(incompatible)?;
    let state = snapshot::contents(&after.begin_read(), after.table_count());
    snapshot::write(dir, schema, next, &state, options)?;
    Ok(())
}
