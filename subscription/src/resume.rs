//! Catching a client up: what a client that held some queries' rows as of an earlier commit
//! must apply to hold them as of now.
//!
//! A client that reconnects after a short absence still holds its rows; sending it every row
//! again costs as much as its first subscription. When the commits it missed are still at hand,
//! [`changes_since`] evaluates its queries over those commits incrementally (as
//! [`Subscriptions::evaluate_batch`] does for an evaluator that fell behind: joins look their
//! partners up as of each commit) and nets the deltas: a row inserted and deleted again in
//! the meantime is in neither list, so the client applies exactly the difference between the
//! two states.

use crate::budget::{Budget, BudgetError};
use crate::error::QueryError;
use crate::eval::Delta;
use crate::query::BoundQuery;
use crate::registry::Subscriptions;
use crate::routes::QueryId;
use std::collections::{BTreeMap, HashMap, HashSet};
use wasmod_datastore::{Row, Tables, TxData};

/// [`changes_since`], drawing first on `budget` for what catching up reads: each row a commit
/// inserted into or deleted from a table a query reads costs that query's
/// [`BoundQuery::cost`] (a read, and one for each comparison of its condition), as checking it
/// against the query does. Counted before anything is evaluated, so that catching up refused
/// for its cost ([`BudgetError::Reads`], the budget left as it was) has cost only the
/// counting. A join's lookups of partners are not counted: the rows changed are.
pub fn changes_since_within(
    queries: &[BoundQuery],
    commits: &[&TxData],
    tables: &Tables,
    budget: &mut Budget,
) -> Result<Vec<Delta>, BudgetError> {
    budget.read(catching_up_reads(queries, commits))?;
    Ok(changes_since(queries, commits, tables)?)
}

/// What checking the rows `commits` changed against `queries` reads
/// ([`changes_since_within`]).
fn catching_up_reads(queries: &[BoundQuery], commits: &[&TxData]) -> usize {
    let mut changed: HashMap<u32, usize> = HashMap::new();
    for table in commits.iter().flat_map(|commit| &commit.tables) {
        let rows = changed.entry(table.table).or_default();
        *rows = rows.saturating_add(table.inserted.len() + table.deleted.len());
    }
    queries
        .iter()
        .map(|query| {
            let rows = query
                .plan()
                .tables()
                .map(|table| changed.get(&table).copied().unwrap_or(0))
                .fold(0, usize::saturating_add);
            rows.saturating_mul(query.cost())
        })
        .fold(0, usize::saturating_add)
}

/// The net change of each of `queries` over `commits` (in commit order), when `tables` are
/// the tables right after the last of them: per query, in the order given, the rows its result
/// holds now and did not before the first commit (`inserted`), and those it held then and does
/// not now (`deleted`), each list in the rows' byte order.
///
/// Fails with the first error of an evaluation (or [`QueryError::OtherModule`] if the queries
/// are of different modules' catalogs).
pub fn changes_since(
    queries: &[BoundQuery],
    commits: &[&TxData],
    tables: &Tables,
) -> Result<Vec<Delta>, QueryError> {
    let Some(first) = queries.first() else {
        return Ok(Vec::new());
    };
    let mut registry = Subscriptions::new(first.catalog().clone());
    let ids = queries
        .iter()
        .map(|query| registry.add(query.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    // Only the commits to a table some query reads can change a result, and leaving out the
    // others changes no lookup a join makes in the tables as of a commit. After a crash a
    // client resumes over one commit per connection the crash left open, mostly to tables
    // its queries do not read.
    let read: HashSet<u32> = queries
        .iter()
        .flat_map(|query| {
            [
                Some(query.table()),
                query.plan().join.as_ref().map(|join| join.other),
            ]
        })
        .flatten()
        .collect();
    let commits: Vec<&TxData> = commits
        .iter()
        .copied()
        .filter(|commit| {
            commit
                .tables
                .iter()
                .any(|table| read.contains(&table.table))
        })
        .collect();
    let mut counts: HashMap<QueryId, BTreeMap<Row, i64>> = HashMap::new();
    for deltas in registry.evaluate_batch(&commits, tables) {
        for (id, delta) in deltas {
            let delta = delta?;
            let rows = counts.entry(id).or_default();
            for row in delta.inserted {
                *rows.entry(row).or_default() += 1;
            }
            for row in delta.deleted {
                *rows.entry(row).or_default() -= 1;
            }
        }
    }
    Ok(ids
        .iter()
        .map(|id| {
            let mut net = Delta::default();
            for (row, count) in counts.get(id).into_iter().flatten() {
                match count.signum() {
                    1 => net.inserted.push(row.clone()),
                    -1 => net.deleted.push(row.clone()),
                    _ => {}
                }
            }
            net
        })
        .collect())
}
