//! Module upgrades: serving a new build of a module over the data of an older one.
//!
//! The log directory keeps the tables' description it was written for (`tables.def`: the
//! typespace and tables, encoded). When a module opens the log with a different description,
//! the two are compared table by table, by name:
//!
//! - **compatible**: every stored table is still there with the same columns (names and
//!   types, named types compared by structure, not by position). New tables, new or removed
//!   indexes, new entry points are fine. The data is recovered as the old module wrote it,
//!   copied into the new tables (new indexes are built, and new unique ones checked, on the
//!   way), and written as a snapshot for the new description, which then replaces the old log;
//! - **incompatible**: a table removed, a column added, removed, renamed or retyped, or data
//!   that breaks a new unique index. The start is refused with the table and the reason, and
//!   nothing is changed.
//!
//! The steps are ordered so a crash at any point is finished on the next start: the new
//! snapshot is renamed into place first (from then on the upgrade is decided), then the old
//! log is removed, then the new description is recorded.

use super::{recovery, segment, snapshot, DurabilityError, Options};
use crate::tx::SequenceState;
use crate::Datastore;
use std::fs;
use std::path::Path;
use wasmod_abi::encoding::{from_slice, to_vec};
use wasmod_abi::{AlgebraicType, ModuleDef, Typespace};

/// The file holding the description the log is written for.
const FILE: &str = "tables.def";

/// Makes the log in `dir` one for `def` (whose tables hash to `schema`): records the
/// description on first use, and carries the data over from an older compatible one.
pub(crate) fn prepare(
    dir: &Path,
    def: &ModuleDef,
    schema: [u8; 32],
    options: &Options,
) -> Result<(), DurabilityError> {
    let file = dir.join(FILE);
    let stored = match fs::read(&file) {
        Ok(bytes) => from_slice::<ModuleDef>(&bytes).map_err(|error| DurabilityError::Corrupt {
            file: file.clone(),
            offset: 0,
            reason: format!("the stored description does not decode: {error}"),
        })?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return record(dir, def);
        }
        Err(error) => return Err(DurabilityError::io(&file, "reading the description", error)),
    };
    if segment::schema_hash(&stored) == schema {
        return Ok(());
    }
    if snapshot::latest_schema(dir)? != Some(schema) {
        let mapping =
            compatible(&stored, def).map_err(|reason| DurabilityError::Incompatible { reason })?;
        carry_over(dir, &stored, def, schema, &mapping, options)?;
    }
    // The upgrade's snapshot is in place: the old log is covered by it.
    for (_, path) in segment::list(dir)? {
        fs::remove_file(&path)
            .map_err(|error| DurabilityError::io(&path, "removing the old log", error))?;
    }
    tracing::info!(target: "wasmod::durability", "the tables were upgraded to the new description");
    record(dir, def)
}

/// Records `def`'s tables as the ones the log is written for.
fn record(dir: &Path, def: &ModuleDef) -> Result<(), DurabilityError> {
    let tables = ModuleDef {
        typespace: def.typespace.clone(),
        tables: def.tables.clone(),
        ..ModuleDef::default()
    };
    snapshot::write_atomically(dir, &dir.join(FILE), &to_vec(&tables))
}

/// Recovers the old data and writes it as a snapshot for `new`.
fn carry_over(
    dir: &Path,
    old: &ModuleDef,
    new: &ModuleDef,
    schema: [u8; 32],
    mapping: &[(u32, u32)],
    options: &Options,
) -> Result<(), DurabilityError> {
    let before = Datastore::new(old).map_err(DurabilityError::Schema)?;
    // The new schema starts from a snapshot: no transaction before it is kept.
    let replayed = recovery::replay(dir, segment::schema_hash(old), &before, &Options::default())?;
    let after = Datastore::new(new).map_err(DurabilityError::Schema)?;
    {
        let read = before.begin_read();
        let mut tx = after.begin_mut();
        let mut scratch = Vec::new();
        for &(from, to) in mapping {
            for row in read.scan(from).unwrap_or_default() {
                scratch.clear();
                scratch.extend_from_slice(&row);
                tx.insert(to, &mut scratch)
                    .map_err(|error| DurabilityError::Incompatible {
                        reason: format!(
                            "table `{}`: the existing rows do not fit the new table: {}",
                            new.tables[to as usize].name,
                            error.message()
                        ),
                    })?;
            }
        }
        let sequences: Vec<SequenceState> = read
            .sequences()
            .into_iter()
            .filter_map(|state| {
                let (_, to) = mapping.iter().find(|(from, _)| *from == state.table)?;
                Some(SequenceState {
                    table: *to,
                    ..state
                })
            })
            .collect();
        tx.raise_sequences(&sequences)
            .map_err(|error| DurabilityError::Incompatible {
                reason: format!(
                    "the sequences do not fit the new tables: {}",
                    error.message()
                ),
            })?;
        tx.commit();
    }
    let state = snapshot::contents(&after.begin_read(), after.table_count());
    snapshot::write(dir, schema, replayed.next, &state, options)?;
    Ok(())
}

/// The new id of each stored table, or why the new description cannot take the data.
fn compatible(old: &ModuleDef, new: &ModuleDef) -> Result<Vec<(u32, u32)>, String> {
    let mut mapping = Vec::new();
    for (from, table) in old.tables.iter().enumerate() {
        let Some(to) = new.tables.iter().position(|t| t.name == table.name) else {
            return Err(format!("table `{}` was removed", table.name));
        };
        let next = &new.tables[to];
        if table.columns.len() != next.columns.len() {
            return Err(format!(
                "table `{}` had {} columns and now has {}",
                table.name,
                table.columns.len(),
                next.columns.len()
            ));
        }
        for (column, (was, is)) in table.columns.iter().zip(&next.columns).enumerate() {
            if was.name != is.name {
                return Err(format!(
                    "table `{}`: column {column} was `{}` and is now `{}`",
                    table.name, was.name, is.name
                ));
            }
            if !same_type(&old.typespace, &was.ty, &new.typespace, &is.ty, 0) {
                return Err(format!(
                    "table `{}`: column `{}` changed type",
                    table.name, was.name
                ));
            }
        }
        mapping.push((from as u32, to as u32));
    }
    Ok(mapping)
}

/// Whether `a` in `old` and `b` in `new` encode alike, named types resolved (to a bounded
/// depth, so a recursive type cannot loop).
fn same_type(
    old: &Typespace,
    a: &AlgebraicType,
    new: &Typespace,
    b: &AlgebraicType,
    depth: u32,
) -> bool {
    use AlgebraicType as T;
    if depth > 64 {
        return false;
    }
    let resolve = |space: &Typespace, ty: &AlgebraicType| match ty {
        T::Ref(index) => space.types.get(*index as usize).map(|def| def.ty.clone()),
        other => Some(other.clone()),
    };
    let (Some(a), Some(b)) = (resolve(old, a), resolve(new, b)) else {
        return false;
    };
    let same = |x: &AlgebraicType, y: &AlgebraicType| same_type(old, x, new, y, depth + 1);
    match (&a, &b) {
        (T::Ref(_), _) | (_, T::Ref(_)) => same(&a, &b),
        (T::Array(x), T::Array(y)) | (T::Option(x), T::Option(y)) => same(x, y),
        (T::FixedArray(x, n), T::FixedArray(y, m)) => n == m && same(x, y),
        (T::Result(x, e), T::Result(y, f)) => same(x, y) && same(e, f),
        (T::Product(xs), T::Product(ys)) | (T::Sum(xs), T::Sum(ys)) => {
            xs.len() == ys.len()
                && xs
                    .iter()
                    .zip(ys)
                    .all(|(x, y)| x.name == y.name && same(&x.ty, &y.ty))
        }
        _ => a == b,
    }
}
