//! Where the registry lists its queries, so that a commit finds the ones it can affect
//! without looking at the others.
//!
//! - A query of one table that requires `column = v` is listed under its table, its column
//!   and `v` ([`TableRoutes::pinned`]); a changed row reaches the queries of its own value.
//! - A join that requires `side.column = v` belongs to a [`Family`]: the joins of one target,
//!   one join and one pinned column, which differ only by `v`. The family is listed under both
//!   of its tables; a commit computes, once per family, the values whose queries it may
//!   affect (`eval::affected_values`), and evaluates only the queries of those values.
//! - Every other query is listed under each table it reads ([`TableRoutes::unpinned`]).

use crate::column::RowLayout;
use crate::plan::{Bytes, JoinPlan, Pin, Side};
use std::collections::HashMap;
use wasmod_datastore::{Row, TableChanges};

/// Identifies one distinct query of a [`Subscriptions`](crate::Subscriptions), for as long as
/// it has subscribers (then the registry may give the id to another query): what the routes
/// list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QueryId(pub(crate) u32);

impl QueryId {
    /// The id as a number, for maps and logs.
    pub fn get(self) -> u32 {
        self.0
    }
}

pub(crate) type Hasher = foldhash::fast::RandomState;

/// Queries listed under one column, by the value they require.
pub(crate) type ByValue = HashMap<Bytes, Vec<QueryId>, Hasher>;

/// Joins that differ only by the value they require of one column.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Family {
    pub(crate) target: u32,
    pub(crate) join: JoinPlan,
    pub(crate) side: Side,
    pub(crate) column: u16,
}

impl Family {
    /// The family of the joins of `target` with `join` that `pin` routes.
    pub(crate) fn of(target: u32, join: &JoinPlan, pin: &Pin<'_>) -> Self {
        Self {
            target,
            join: join.clone(),
            side: pin.side,
            column: pin.column,
        }
    }
}

/// The queries listed under one table.
pub(crate) struct TableRoutes {
    pub(crate) layout: RowLayout,
    /// Queries of this table alone that require `column = value`, by column, then by value.
    pub(crate) pinned: Vec<(u16, ByValue)>,
    /// The families of joins that read this table.
    pub(crate) families: Vec<Family>,
    /// Every other query that reads this table.
    pub(crate) unpinned: Vec<QueryId>,
}

/// The rows of one changed table that were routed to one query by value.
#[derive(Default)]
pub(crate) struct Routed<'r> {
    pub(crate) inserted: Vec<&'r Row>,
    pub(crate) deleted: Vec<&'r Row>,
}

impl TableRoutes {
    /// No queries yet, of a table whose rows have layout `layout`.
    pub(crate) fn new(layout: RowLayout) -> Self {
        Self {
            layout,
            pinned: Vec::new(),
            families: Vec::new(),
            unpinned: Vec::new(),
        }
    }

    /// Whether no query is listed here any more.
    pub(crate) fn is_empty(&self) -> bool {
        self.pinned.is_empty() && self.families.is_empty() && self.unpinned.is_empty()
    }

    /// Lists query `id` under `column = value`.
    pub(crate) fn pin(&mut self, column: u16, value: &Bytes, id: QueryId) {
        let position = match self.pinned.iter().position(|(pinned, _)| *pinned == column) {
            Some(position) => position,
            None => {
                self.pinned.push((column, ByValue::default()));
                self.pinned.len() - 1
            }
        };
        list(&mut self.pinned[position].1, value, id);
    }

    /// Undoes [`TableRoutes::pin`].
    pub(crate) fn unpin(&mut self, column: u16, value: &Bytes, id: QueryId) {
        if let Some((_, by_value)) = self.pinned.iter_mut().find(|(pinned, _)| *pinned == column) {
            unlist(by_value, value, id);
        }
        self.pinned.retain(|(_, by_value)| !by_value.is_empty());
    }

    /// The changed rows of `changes`, grouped by the pinned queries they are routed to.
    pub(crate) fn by_value<'r>(
        &self,
        changes: &'r TableChanges,
    ) -> HashMap<QueryId, Routed<'r>, Hasher> {
        let mut routed: HashMap<QueryId, Routed<'r>, Hasher> = HashMap::default();
        for (column, by_value) in &self.pinned {
            let mut send = |row: &'r Row, inserted: bool| {
                let value = self.layout.column(row, usize::from(*column));
                let ids = value.and_then(|value| by_value.get(value));
                for &id in ids.into_iter().flatten() {
                    let rows = routed.entry(id).or_default();
                    match inserted {
                        true => rows.inserted.push(row),
                        false => rows.deleted.push(row),
                    }
                }
            };
            changes.inserted.iter().for_each(|row| send(row, true));
            changes.deleted.iter().for_each(|row| send(row, false));
        }
        routed
    }
}

/// Lists query `id` under `value`.
pub(crate) fn list(by_value: &mut ByValue, value: &Bytes, id: QueryId) {
    by_value.entry(value.clone()).or_default().push(id);
}

/// Undoes [`list`], forgetting the value when no query is left under it.
pub(crate) fn unlist(by_value: &mut ByValue, value: &Bytes, id: QueryId) {
    if let Some(ids) = by_value.get_mut(value) {
        forget(ids, id);
        if ids.is_empty() {
            by_value.remove(value);
        }
    }
}

/// Removes `item` from `items` (in any order).
pub(crate) fn forget<T: PartialEq>(items: &mut Vec<T>, item: T) {
    if let Some(position) = items.iter().position(|listed| *listed == item) {
        items.swap_remove(position);
    }
}
