//! Migrations: moving the rows of one build's tables into the tables of a newer build.
//!
//! One check and one copy serve every place where a new build meets old data: a data
//! directory opened by a new build (`durability`'s upgrade), `wasmod build --data` (the check
//! alone, read-only) and a new build published to a running server (the copy of the tables in
//! memory). [`Migration::plan`] compares the two descriptions table by table, by name:
//!
//! - **compatible**: every stored table is still there, with its columns in the same order,
//!   names and types (named types compared by structure, not by position), and possibly new
//!   columns **at the end**, each with a default ([`ColumnDef::default`], from
//!   `#[default(expr)]`). New tables, new or removed indexes, a changed primary key, new entry
//!   points, a changed visibility filter or schedule are fine.
//! - **incompatible**: a table removed, a column removed, renamed, retyped, moved, added in the
//!   middle or added without a default. Every problem is named with its table and column and
//!   with what would make the build compatible.
//!
//! [`Migration::carry_over`] then copies the rows: a row is its columns' encodings one after
//! the other, so a row of the new table is the stored row followed by the new columns'
//! defaults. Inserting the rows builds the new indexes and checks the new unique ones, so
//! data that breaks a new unique index is refused there, naming the index.
//!
//! [`ColumnDef::default`]: wasmod_abi::ColumnDef::default

use crate::tx::SequenceState;
use crate::Datastore;
use std::fmt;
pub use wasmod_abi::schema::same_encoding;
use wasmod_abi::{ColumnDef, ModuleDef, TableDef};

/// How the rows of an older build's tables become rows of a newer build's.
#[derive(Clone, Debug)]
pub struct Migration {
    /// The newer build's description.
    new: ModuleDef,
    /// Each stored table, where it goes and what its rows get appended.
    moves: Vec<TableMove>,
    /// What changes, for people: one line each.
    changes: Vec<String>,
}

/// Where one stored table's rows go.
#[derive(Clone, Debug)]
struct TableMove {
    /// The table's id in the older description.
    from: u32,
    /// Its id in the newer one.
    to: u32,
    /// The encoded defaults of the columns added at the end, in column order.
    appended: Vec<u8>,
}

/// Why a newer build cannot take an older build's data: every problem found, each naming its
/// table (and column) and what would make it work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Incompatible {
    /// The problems, one sentence each.
    pub problems: Vec<String>,
}

impl fmt::Display for Incompatible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.problems.join("; "))
    }
}

impl std::error::Error for Incompatible {}

impl Migration {
    /// Compares the tables of `old` (what the data was written for) with those of `new`, and
    /// says how the rows move, or every reason they cannot.
    pub fn plan(old: &ModuleDef, new: &ModuleDef) -> Result<Self, Incompatible> {
        let mut problems = Vec::new();
        let mut moves = Vec::new();
        let mut changes = Vec::new();
        for (from, table) in old.tables.iter().enumerate() {
            let Some(to) = new.tables.iter().position(|t| t.name == table.name) else {
                problems.push(format!(
                    "table `{}` was removed: a new build must keep every stored table (its rows would be lost); keep the table, even if nothing uses it",
                    table.name
                ));
                continue;
            };
            let next = &new.tables[to];
            let before = problems.len();
            check_stored_columns(old, table, new, next, &mut problems);
            let appended = appended_defaults(table, next, &mut problems, &mut changes);
            if problems.len() == before {
                index_changes(table, next, &mut changes);
                moves.push(TableMove {
                    from: from as u32,
                    to: to as u32,
                    appended,
                });
            }
        }
        for table in &new.tables {
            if !old.tables.iter().any(|t| t.name == table.name) {
                changes.push(format!("table `{}` is added", table.name));
            }
        }
        if problems.is_empty() {
            Ok(Self {
                new: new.clone(),
                moves,
                changes,
            })
        } else {
            Err(Incompatible { problems })
        }
    }

    /// What the migration changes, one line each (`table `x` is added`, ...); empty when the
    /// stored tables are taken as they are.
    pub fn changes(&self) -> &[String] {
        &self.changes
    }

    /// Whether a stored row becomes another row in the newer build (a table gained columns):
    /// false when every stored row is carried over as the same bytes, so that rows read
    /// before the migration are still the newer build's rows.
    pub fn reencodes_rows(&self) -> bool {
        self.moves.iter().any(|moved| !moved.appended.is_empty())
    }

    /// The newer build's description, which [`carry_over`](Self::carry_over) creates tables
    /// for.
    pub fn target(&self) -> &ModuleDef {
        &self.new
    }

    /// A new datastore for the newer build holding every row of `before` (a datastore of the
    /// older build's tables), each with the defaults of the added columns, and the older
    /// tables' sequences (so generated ids are not given again). Refused, with `before`
    /// untouched, if the rows break a unique index of the new tables.
    pub fn carry_over(&self, before: &Datastore) -> Result<Datastore, Incompatible> {
        let refused = |problem: String| Incompatible {
            problems: vec![problem],
        };
        let after = Datastore::new(&self.new)
            .map_err(|error| refused(format!("the new build's tables are invalid: {error}")))?;
        let read = before.begin_read();
        let mut tx = after.begin_mut();
        let mut scratch = Vec::new();
        for moved in &self.moves {
            for row in read.scan(moved.from).unwrap_or_default() {
                scratch.clear();
                scratch.extend_from_slice(&row);
                scratch.extend_from_slice(&moved.appended);
                tx.insert(moved.to, &mut scratch).map_err(|error| {
                    refused(format!(
                        "table `{}`: the stored rows do not fit the new table: {}",
                        self.new.tables[moved.to as usize].name,
                        error.message()
                    ))
                })?;
            }
        }
        let sequences: Vec<SequenceState> = read
            .sequences()
            .into_iter()
            .filter_map(|state| {
                let moved = self.moves.iter().find(|moved| moved.from == state.table)?;
                Some(SequenceState {
                    table: moved.to,
                    ..state
                })
            })
            .collect();
        tx.raise_sequences(&sequences).map_err(|error| {
            refused(format!(
                "the sequences do not fit the new tables: {}",
                error.message()
            ))
        })?;
        tx.commit();
        Ok(after)
    }
}

/// Checks that the columns of `table` (in `old`) are the first columns of `next` (in `new`),
/// in order, with the same names and types.
fn check_stored_columns(
    old: &ModuleDef,
    table: &TableDef,
    new: &ModuleDef,
    next: &TableDef,
    problems: &mut Vec<String>,
) {
    let name = &table.name;
    let position_in =
        |columns: &[ColumnDef], column: &str| columns.iter().position(|c| c.name == column);
    let mut missing = false;
    for (position, was) in table.columns.iter().enumerate() {
        match position_in(&next.columns, &was.name) {
            None => {
                missing = true;
                let replaced_by = next
                    .columns
                    .get(position)
                    .filter(|is| position_in(&table.columns, &is.name).is_none());
                problems.push(match replaced_by {
                    Some(is) => format!(
                        "table `{name}`: column `{}` was renamed to `{}`: a stored column keeps its name (rename the field back; add the new name as a new column at the end, with `#[default(..)]`)",
                        was.name, is.name
                    ),
                    None => format!(
                        "table `{name}`: column `{}` was removed: a stored column cannot be removed (its values would be lost); keep the field",
                        was.name
                    ),
                });
            }
            Some(at) => {
                let is = &next.columns[at];
                if !same_encoding(&old.typespace, &was.ty, &new.typespace, &is.ty) {
                    problems.push(format!(
                        "table `{name}`: column `{}` changed type: a stored column keeps its type (add a column of the new type at the end, with `#[default(..)]`, instead)",
                        was.name
                    ));
                }
            }
        }
    }
    if missing {
        return;
    }
    let moved = table
        .columns
        .iter()
        .zip(&next.columns)
        .position(|(was, is)| was.name != is.name);
    if let Some(position) = moved {
        let is = &next.columns[position];
        let was = &table.columns[position];
        problems.push(if position_in(&table.columns, &is.name).is_none() {
            format!(
                "table `{name}`: column `{}` was added in the middle, before `{}`: add new columns at the end of the table",
                is.name, was.name
            )
        } else {
            format!(
                "table `{name}`: the columns were reordered (`{}` is now where `{}` was): keep the stored columns in their order and add new columns at the end",
                is.name, was.name
            )
        });
    }
}

/// The encoded defaults of the columns `next` has after those of `table`; each such column
/// must have a default (that it is a value of the column's type is checked with the rest of
/// the description, when its tables are created).
fn appended_defaults(
    table: &TableDef,
    next: &TableDef,
    problems: &mut Vec<String>,
    changes: &mut Vec<String>,
) -> Vec<u8> {
    let name = &table.name;
    let mut appended = Vec::new();
    for column in next.columns.iter().skip(table.columns.len()) {
        let Some(default) = &column.default else {
            problems.push(format!(
                "table `{name}`: column `{}` was added without a default: add `#[default(..)]` to it, so the stored rows get a value",
                column.name
            ));
            continue;
        };
        appended.extend_from_slice(default);
        changes.push(format!(
            "table `{name}`: column `{}` is added; the stored rows get its default",
            column.name
        ));
    }
    appended
}

/// The indexes added, removed or changed from `table` to `next`, by name.
fn index_changes(table: &TableDef, next: &TableDef, changes: &mut Vec<String>) {
    let name = &table.name;
    for index in &next.indexes {
        match table.indexes.iter().find(|was| was.name == index.name) {
            None => changes.push(format!("table `{name}`: index `{}` is added", index.name)),
            Some(was) if was != index => {
                changes.push(format!("table `{name}`: index `{}` changes", index.name));
            }
            Some(_) => {}
        }
    }
    for index in &table.indexes {
        if !next.indexes.iter().any(|is| is.name == index.name) {
            changes.push(format!("table `{name}`: index `{}` is removed", index.name));
        }
    }
}
