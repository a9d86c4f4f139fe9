//! Transactions: one writer at a time, readers of committed state, rollback by undo log.
//!
//! The design is the simplest one that is correct and fast for short transactions: the tables
//! live behind one `RwLock`. A [`MutTx`] holds the write lock for its whole life and changes the
//! tables in place, so its reads see its own writes, nobody else sees them, and a second writer
//! (or a reader) waits until it commits or rolls back. A [`ReadTx`] holds the read lock, so it
//! sees one committed state. Both own their guard (through `Arc`), so a host can keep a
//! transaction in a struct across calls without borrowing the [`Datastore`](crate::Datastore).
//! A thread that holds a transaction must not open another one: the lock is not reentrant.
//!
//! Rolling back needs little bookkeeping, because row ids grow with each insert and are never
//! reused: a transaction remembers, per table, the next id when it began, the sequences'
//! states, and the rows it deleted that existed before it. Undoing is removing every row from
//! the starting id on and putting the deleted rows back under their ids. The same facts give
//! the [`TxData`] of a commit. Dropping a [`MutTx`] without committing rolls it back.

use crate::error::Error;
use crate::row::{split_rows, Row, RowHasher, RowId};
use crate::scan::parse_scan;
use crate::schema::{IndexSchema, Schema, TableSchema};
use crate::sequence::Sequence;
use crate::table::Table;
use parking_lot::{ArcRwLockReadGuard, ArcRwLockWriteGuard, RawRwLock};
use std::collections::HashSet;
use std::ops::Deref;
use std::sync::Arc;
use wasmod_abi::{Errno, Typespace};

/// The tables as a transaction sees them: the read operations of both kinds of transaction.
#[derive(Debug)]
pub struct Tables {
    schema: Arc<Schema>,
    tables: Vec<Table>,
}

impl Tables {
    /// Empty tables for `schema`.
    pub(crate) fn new(schema: Arc<Schema>) -> Self {
        let tables = schema
            .tables
            .iter()
            .map(|table| Table::new(table, &schema.typespace))
            .collect();
        Self { schema, tables }
    }

    /// How many rows table `table` has. Errors: `NO_SUCH_TABLE`.
    pub fn row_count(&self, table: u32) -> Result<u64, Error> {
        let (_, state) = self.table(table)?;
        Ok(state.len() as u64)
    }

    /// Every row of table `table`, oldest first. Errors: `NO_SUCH_TABLE`.
    pub fn scan(&self, table: u32) -> Result<Vec<Row>, Error> {
        Ok(self.rows(table)?.cloned().collect())
    }

    /// The rows of table `table` that the encoded index scan `scan` selects in index `index`,
    /// in index order. Errors: `NO_SUCH_TABLE`, `NO_SUCH_INDEX`, `BAD_ENCODING`.
    pub fn index_scan(&self, table: u32, index: u32, scan: &[u8]) -> Result<Vec<Row>, Error> {
        Ok(self.index_rows(table, index, scan)?.cloned().collect())
    }

    /// Every row of table `table`, oldest first, borrowed: [`Tables::scan`] without a handle
    /// per row, for a caller that copies the bytes anyway. Errors: `NO_SUCH_TABLE`.
    pub fn rows(&self, table: u32) -> Result<impl Iterator<Item = &Row> + '_, Error> {
        let (_, state) = self.table(table)?;
        Ok(state.rows())
    }

    /// The rows of table `table` whose position is `start` or later, each with its position,
    /// oldest first. A row's position is its id: it grows with each insert (an update gives
    /// the new row a new one) and is never reused, so a reader that pages through a table by
    /// position, resuming after the last position it saw, sees every row that stayed put
    /// exactly once however the table changes in between. Errors: `NO_SUCH_TABLE`.
    pub fn rows_from(
        &self,
        table: u32,
        start: u64,
    ) -> Result<impl Iterator<Item = (u64, &Row)> + '_, Error> {
        let (_, state) = self.table(table)?;
        Ok(state
            .rows_with_ids_from(RowId(start))
            .map(|(id, row)| (id.0, row)))
    }

    /// The rows [`Tables::index_scan`] selects, borrowed. Errors: `NO_SUCH_TABLE`,
    /// `NO_SUCH_INDEX`, `BAD_ENCODING`.
    pub fn index_rows(
        &self,
        table: u32,
        index: u32,
        scan: &[u8],
    ) -> Result<impl Iterator<Item = &Row> + '_, Error> {
        let (schema, state) = self.table(table)?;
        let (index, index_schema) = index_of(schema, index)?;
        let range = parse_scan(schema, index_schema, &self.schema.typespace, scan)?;
        Ok(state.rows_in(index, &range))
    }

    /// Where every auto-increment sequence of every table stands.
    pub(crate) fn sequences(&self) -> Vec<SequenceState> {
        (0..)
            .zip(&self.tables)
            .flat_map(|(table, state)| {
                (0..)
                    .zip(&state.sequences)
                    .map(move |(sequence, at)| SequenceState {
                        table,
                        sequence,
                        next: at.next(),
                    })
            })
            .collect()
    }

    fn table(&self, table: u32) -> Result<(&TableSchema, &Table), Error> {
        let id = table as usize;
        match (self.schema.tables.get(id), self.tables.get(id)) {
            (Some(schema), Some(state)) => Ok((schema, state)),
            _ => Err(no_such_table(table, self.tables.len())),
        }
    }
}

/// A transaction that only reads: it sees the committed state as of when it began.
pub struct ReadTx {
    guard: ArcRwLockReadGuard<RawRwLock, Tables>,
}

impl ReadTx {
    pub(crate) fn new(guard: ArcRwLockReadGuard<RawRwLock, Tables>) -> Self {
        Self { guard }
    }
}

impl Deref for ReadTx {
    type Target = Tables;
    fn deref(&self) -> &Tables {
        &self.guard
    }
}

/// What a transaction changed, per table: exactly what a subscription or a commit log needs.
///
/// The changes are net: a row inserted then deleted in the same transaction appears nowhere,
/// and a row deleted then inserted again with the same bytes neither. An update is a deletion
/// of the old row plus an insertion of the new one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TxData {
    /// The tables that changed, by increasing id.
    pub tables: Vec<TableChanges>,
}

impl TxData {
    /// Whether the transaction changed nothing.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// The changes to table `table`, if it changed.
    pub fn table(&self, table: u32) -> Option<&TableChanges> {
        self.tables.iter().find(|changes| changes.table == table)
    }

    /// The bytes of the rows inserted and deleted: what keeping the changes costs, near
    /// enough.
    pub fn row_bytes(&self) -> usize {
        self.tables
            .iter()
            .flat_map(|table| table.inserted.iter().chain(&table.deleted))
            .map(|row| row.len())
            .sum()
    }
}

/// The rows one transaction inserted into and deleted from one table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableChanges {
    /// The table's id.
    pub table: u32,
    /// The rows now present that were not before, oldest first.
    pub inserted: Vec<Row>,
    /// The rows present before that are not any more.
    pub deleted: Vec<Row>,
}

/// Where one auto-increment sequence stands: what a snapshot keeps, since the rows alone
/// do not say which values were given to rows since deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SequenceState {
    /// The table.
    pub(crate) table: u32,
    /// The sequence's position among the table's (its auto-increment columns, in order).
    pub(crate) sequence: u32,
    /// The value it gives next; `None` once exhausted.
    pub(crate) next: Option<u128>,
}

/// What a [`MutTx`] remembers about one table to roll back or report its changes.
struct TableLog {
    /// The table's next row id when the transaction began: later ids are its inserts.
    start: RowId,
    /// The sequences when the transaction began.
    sequences: Vec<Sequence>,
    /// Rows that existed before the transaction and that it deleted.
    deleted: Vec<(RowId, Row)>,
}

impl TableLog {
    /// The log of a table the transaction is about to change for the first time.
    fn begin(state: &Table) -> Self {
        Self {
            start: RowId(state.next_row_id),
            sequences: state.sequences.clone(),
            deleted: Vec::new(),
        }
    }

    /// Remembers that the transaction removed row `id`, `row`, if it existed before.
    fn removed(&mut self, id: RowId, row: Row) {
        if id < self.start {
            self.deleted.push((id, row));
        }
    }
}

/// A transaction that reads and writes. It has the tables to itself until it is committed
/// ([`MutTx::commit`]) or rolled back ([`MutTx::rollback`], or dropping it).
pub struct MutTx {
    guard: ArcRwLockWriteGuard<RawRwLock, Tables>,
    /// The logs of the tables the transaction changed, by table id, made on first change: a
    /// transaction costs nothing per table it does not touch.
    logs: Vec<(usize, TableLog)>,
    open: bool,
}

impl Deref for MutTx {
    type Target = Tables;
    fn deref(&self) -> &Tables {
        &self.guard
    }
}

impl MutTx {
    pub(crate) fn new(guard: ArcRwLockWriteGuard<RawRwLock, Tables>) -> Self {
        Self {
            guard,
            logs: Vec::new(),
            open: true,
        }
    }

    /// Inserts the encoded row `row` into table `table`.
    ///
    /// Auto-increment columns that are `0` in `row` get their sequence's next value, written
    /// back into `row` in place. Inserting a row equal to one the table has is a no-op (a table
    /// is a set of rows). Errors, with nothing changed (`row` included): `NO_SUCH_TABLE`,
    /// `BAD_ENCODING` (a malformed row, or trailing bytes), `UNIQUE_VIOLATION`,
    /// `SEQUENCE_EXHAUSTED`.
    pub fn insert(&mut self, table: u32, row: &mut [u8]) -> Result<(), Error> {
        self.parts(table)?.state.insert(row)
    }

    /// Replaces the row of table `table` whose key in unique index `index` equals that of the
    /// encoded row `row`, by `row`.
    ///
    /// The row is taken as given: auto-increment columns are not filled in. The new row is the
    /// newest of the table: a full scan, oldest first, finds it last. Errors, with nothing
    /// changed: `NO_SUCH_TABLE`, `NO_SUCH_INDEX` (no such index, or the index is not unique),
    /// `BAD_ENCODING`, `NO_SUCH_ROW` (no row has the key), `UNIQUE_VIOLATION` (the new row
    /// clashes with another row in another unique index).
    pub fn update_by_unique(&mut self, table: u32, index: u32, row: &[u8]) -> Result<(), Error> {
        let Parts {
            schema, state, log, ..
        } = self.parts(table)?;
        let (index, index_schema) = index_of(schema, index)?;
        if !index_schema.unique {
            return Err(Error::new(
                Errno::NO_SUCH_INDEX,
                format!(
                    "table `{}`: index `{}` is not unique, so it cannot select the row to update",
                    schema.def.name, index_schema.name
                ),
            ));
        }
        if let Some((id, old)) = state.update(index, row)? {
            log.removed(id, old);
        }
        Ok(())
    }

    /// Deletes the rows of table `table` that the encoded index scan `scan` selects in index
    /// `index`, and returns how many it deleted. Errors, with nothing changed:
    /// `NO_SUCH_TABLE`, `NO_SUCH_INDEX`, `BAD_ENCODING`.
    pub fn delete_by_index_scan(
        &mut self,
        table: u32,
        index: u32,
        scan: &[u8],
    ) -> Result<u32, Error> {
        let Parts {
            typespace,
            schema,
            state,
            log,
        } = self.parts(table)?;
        let (index, index_schema) = index_of(schema, index)?;
        let range = parse_scan(schema, index_schema, typespace, scan)?;
        let ids: Vec<RowId> = state.ids_in(index, &range).collect();
        Ok(count_u32(
            ids.into_iter().filter(|&id| delete(state, log, id)).count(),
        ))
    }

    /// Deletes the rows of table `table` equal to any of the concatenated encoded rows `rows`,
    /// and returns how many it deleted (rows not in the table are skipped). Errors, with
    /// nothing changed: `NO_SUCH_TABLE`, `BAD_ENCODING` (any row malformed).
    pub fn delete_rows(&mut self, table: u32, rows: &[u8]) -> Result<u32, Error> {
        let Parts {
            typespace,
            schema,
            state,
            log,
        } = self.parts(table)?;
        let rows = split_rows(schema, typespace, rows)?;
        let deleted = rows.into_iter().filter(|row| match state.find(row) {
            Some(id) => delete(state, log, id),
            None => false,
        });
        Ok(count_u32(deleted.count()))
    }

    /// Deletes every row of table `table` and returns how many there were. Errors:
    /// `NO_SUCH_TABLE`.
    pub fn clear(&mut self, table: u32) -> Result<u64, Error> {
        let Parts { state, log, .. } = self.parts(table)?;
        let ids: Vec<RowId> = state.ids().collect();
        Ok(ids.into_iter().filter(|&id| delete(state, log, id)).count() as u64)
    }

    /// Makes the transaction's changes visible to everyone, and returns them.
    pub fn commit(self) -> TxData {
        self.commit_with(|changes| changes)
    }

    /// Commits like [`MutTx::commit`], handing the changes to `publish` before the tables are
    /// released, and returns what `publish` returned: what it does happens in commit order
    /// (the [`Database`](crate::Database) appends the record to the commit log and publishes
    /// the commit here).
    pub fn commit_with<R>(self, publish: impl FnOnce(TxData) -> R) -> R {
        match self.try_commit_with(|changes| Ok::<R, std::convert::Infallible>(publish(changes))) {
            Ok(published) => published,
            Err(never) => match never {},
        }
    }

    /// Commits like [`MutTx::commit_with`] if `publish` returns `Ok`; if it returns `Err`, rolls
    /// the transaction back instead (nobody saw its changes: the tables were held throughout)
    /// and returns the error. The [`Database`](crate::Database) refuses a commit this way when
    /// its log cannot take the record.
    pub fn try_commit_with<R, E>(
        mut self,
        publish: impl FnOnce(TxData) -> Result<R, E>,
    ) -> Result<R, E> {
        let mut logs = std::mem::take(&mut self.logs);
        logs.sort_by_key(|(id, _)| *id);
        let changes = self.changes(&logs);
        let published = publish(changes);
        match published {
            Ok(_) => self.open = false,
            // Dropping the transaction, still open, undoes it with the logs given back.
            Err(_) => self.logs = logs,
        }
        published
    }

    /// Applies changes another transaction made (deletions, then insertions, per table), as
    /// recovery replays a commit log. Rows keep their auto-increment values, and sequences move
    /// past them. Errors: the changes do not fit these tables (a deleted row is missing, an
    /// inserted row is malformed or clashes).
    pub(crate) fn apply(&mut self, changes: &TxData) -> Result<(), Error> {
        let mut scratch = Vec::new();
        for table in &changes.tables {
            let Parts {
                schema, state, log, ..
            } = self.parts(table.table)?;
            for row in &table.deleted {
                let found = state.find(row).is_some_and(|id| delete(state, log, id));
                if !found {
                    return Err(Error::new(
                        Errno::NO_SUCH_ROW,
                        format!("table `{}` has no row to delete", schema.def.name),
                    ));
                }
            }
            for row in &table.inserted {
                scratch.clear();
                scratch.extend_from_slice(row);
                state.insert(&mut scratch)?;
            }
        }
        Ok(())
    }

    /// Moves each sequence `states` names on to where it says, if that is further (recovery
    /// from a snapshot, an upgrade). Errors: `NO_SUCH_TABLE`, or `BAD_ENCODING` for a sequence
    /// the table does not have.
    pub(crate) fn raise_sequences(&mut self, states: &[SequenceState]) -> Result<(), Error> {
        for at in states {
            let Parts { schema, state, .. } = self.parts(at.table)?;
            let sequence = state
                .sequences
                .get_mut(at.sequence as usize)
                .ok_or_else(|| {
                    Error::new(
                        Errno::BAD_ENCODING,
                        format!(
                            "table `{}` has no auto-increment sequence number {}",
                            schema.def.name, at.sequence
                        ),
                    )
                })?;
            sequence.raise(at.next);
        }
        Ok(())
    }

    /// The net changes the tables' `logs` (sorted by table id) describe.
    fn changes(&self, logs: &[(usize, TableLog)]) -> TxData {
        let tables = logs
            .iter()
            .filter_map(|(id, log)| {
                let id = *id;
                let state = &self.guard.tables[id];
                let mut inserted: Vec<Row> = state.rows_from(log.start).cloned().collect();
                let mut deleted: Vec<Row> =
                    log.deleted.iter().map(|(_, row)| row.clone()).collect();
                if !inserted.is_empty() && !deleted.is_empty() {
                    // A table is a set, so each list holds a given row at most once.
                    let gone: HashSet<&[u8], RowHasher> =
                        deleted.iter().map(|row| &**row).collect();
                    let back: HashSet<Row, RowHasher> = inserted
                        .iter()
                        .filter(|row| gone.contains(&***row))
                        .cloned()
                        .collect();
                    if !back.is_empty() {
                        inserted.retain(|row| !back.contains(row));
                        deleted.retain(|row| !back.contains(row));
                    }
                }
                let changed = !inserted.is_empty() || !deleted.is_empty();
                changed.then_some(TableChanges {
                    table: id as u32,
                    inserted,
                    deleted,
                })
            })
            .collect();
        TxData { tables }
    }

    /// Undoes every change of the transaction. Dropping it does the same.
    pub fn rollback(self) {}

    fn parts(&mut self, table: u32) -> Result<Parts<'_>, Error> {
        let Self { guard, logs, .. } = self;
        let Tables { schema, tables } = &mut **guard;
        let count = tables.len();
        let id = table as usize;
        let (Some(table_schema), Some(state)) = (schema.tables.get(id), tables.get_mut(id)) else {
            return Err(no_such_table(table, count));
        };
        let position = match logs.iter().position(|(logged, _)| *logged == id) {
            Some(position) => position,
            None => {
                logs.push((id, TableLog::begin(state)));
                logs.len() - 1
            }
        };
        Ok(Parts {
            typespace: &schema.typespace,
            schema: table_schema,
            state,
            log: &mut logs[position].1,
        })
    }
}

impl Drop for MutTx {
    fn drop(&mut self) {
        if !self.open {
            return;
        }
        for (id, log) in self.logs.drain(..) {
            let state = &mut self.guard.tables[id];
            state.truncate(log.start);
            state.restore(log.deleted);
            state.sequences = log.sequences;
            state.next_row_id = log.start.0;
        }
    }
}

/// What the operations of a [`MutTx`] work on in one table.
struct Parts<'a> {
    typespace: &'a Typespace,
    schema: &'a TableSchema,
    state: &'a mut Table,
    log: &'a mut TableLog,
}

/// Deletes row `id`, logging it if it existed before the transaction; whether it existed.
fn delete(state: &mut Table, log: &mut TableLog, id: RowId) -> bool {
    let Some(row) = state.remove(id) else {
        return false;
    };
    log.removed(id, row);
    true
}

/// A count of rows for the ABI's `u32` out-parameters (a table never holds 2^32 rows in
/// memory, but saturate rather than wrap if one does).
fn count_u32(count: usize) -> u32 {
    u32::try_from(count).unwrap_or(u32::MAX)
}

fn no_such_table(table: u32, count: usize) -> Error {
    Error::new(
        Errno::NO_SUCH_TABLE,
        format!("no table has id {table} (the module has {count})"),
    )
}

fn index_of(schema: &TableSchema, index: u32) -> Result<(usize, &IndexSchema), Error> {
    let position = index as usize;
    schema
        .indexes
        .get(position)
        .map(|found| (position, found))
        .ok_or_else(|| {
            Error::new(
                Errno::NO_SUCH_INDEX,
                format!(
                    "table `{}` has no index with id {index} (it has {})",
                    schema.def.name,
                    schema.indexes.len()
                ),
            )
        })
}
