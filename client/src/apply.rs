//! What a server message's rows do to the cache and its row callbacks, wherever the message
//! came from: the connection task's socket (`connection.rs`) or the application itself
//! ([`Replay`](crate::Replay)).
//!
//! Each function applies one message's changes as one [`Batch`](crate::cache::Batch), takes
//! the cache's lock only while applying them, and then runs the row callbacks with no lock
//! held (so that they may read the cache). The bookkeeping around them (which query sets are
//! applied, which parts of rows wait for their `SubscribeApplied`) is the caller's.

use crate::cache::{Batch, Cache};
use crate::sync::RwLock;
use crate::table::Listeners;
use wasmod_protocol::ws::{QuerySetUpdate, RowList, TableRows};

/// Part of a query set's rows: rows in (or, resumed, entering) its result, and, resumed,
/// rows leaving it.
#[derive(Debug)]
pub(crate) struct RowsPart {
    /// Rows in the result (when resumed: that entered it), per table.
    pub(crate) tables: Vec<TableRows<RowList>>,
    /// When resumed, rows that left the result, per table.
    pub(crate) deletes: Vec<TableRows<RowList>>,
}

/// Applies a query set's rows, all its `parts` at once: they replace what the cache holds for
/// it, or, `resumed`, are the changes since the offset it resumed from.
pub(crate) fn query_set_rows(
    cache: &RwLock<Cache>,
    listeners: &Listeners,
    query_set_id: u32,
    parts: &[RowsPart],
    resumed: bool,
) {
    apply(cache, listeners, |batch| {
        if resumed {
            for entry in parts.iter().flat_map(|part| &part.deletes) {
                batch.delete_all(query_set_id, &entry.table, entry.rows.iter());
            }
        } else {
            batch.clear_query_set(query_set_id);
        }
        batch.open_query_set(query_set_id);
        // Each table's room made once, for the rows of all the parts.
        let mut totals: Vec<(&str, usize)> = Vec::new();
        for entry in parts.iter().flat_map(|part| &part.tables) {
            match totals.iter_mut().find(|(table, _)| *table == entry.table) {
                Some((_, rows)) => *rows += entry.rows.len(),
                None => totals.push((&entry.table, entry.rows.len())),
            }
        }
        for (table, rows) in totals {
            batch.reserve(query_set_id, table, rows);
        }
        for entry in parts.iter().flat_map(|part| &part.tables) {
            batch.insert_all(query_set_id, &entry.table, entry.rows.iter());
        }
    });
}

/// Applies a transaction's `changes` (to query sets the cache holds).
pub(crate) fn transaction(
    cache: &RwLock<Cache>,
    listeners: &Listeners,
    changes: &[QuerySetUpdate<RowList>],
) {
    apply(cache, listeners, |batch| {
        for change in changes {
            for table in &change.tables {
                batch.delete_all(change.query_set_id, &table.table, table.deletes.iter());
                batch.insert_all(change.query_set_id, &table.table, table.inserts.iter());
            }
        }
    });
}

/// Removes the rows query set `query_set_id` holds from the cache.
pub(crate) fn release(cache: &RwLock<Cache>, listeners: &Listeners, query_set_id: u32) {
    apply(cache, listeners, |batch| {
        batch.clear_query_set(query_set_id)
    });
}

/// Applies `changes` as one batch, then runs the callbacks of what they changed.
fn apply(cache: &RwLock<Cache>, listeners: &Listeners, changes: impl FnOnce(&mut Batch<'_>)) {
    let mut cache = cache.write();
    let mut batch = cache.batch();
    changes(&mut batch);
    let events = batch.finish();
    drop(cache);
    listeners.dispatch(&events);
}
