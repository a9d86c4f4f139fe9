//! Evaluating one commit incrementally: what it changed in a query's rows, from the commit's
//! changes and the tables as they are right after it, without reading whole tables.
//!
//! **One table.** A row enters the query's result exactly when it was inserted and passes the
//! filter, and leaves it exactly when it was deleted and passed it: the commit's changes are
//! net (a row is never both inserted and deleted), so filtering them is the whole delta.
//!
//! **A join** returns the rows `a` of the target table `A` that have at least one partner `b`
//! in the other table `B` (`a.x = b.y` and the filter holds for the pair): a set, however many
//! partners a row has. A commit changes `A` by `ΔA+` (inserted) and `ΔA-` (deleted), and `B` by
//! `ΔB+` and `ΔB-`; the tables right after it are `A'` and `B'` (read through
//! [`State`], which corrects the tables at hand when later commits are applied to them already).
//! A row's membership can
//! change only if the row itself changed, or one of its possible partners did, so the
//! candidates are
//!
//! ```text
//! ΔA+  ∪  ΔA-  ∪  { a ∈ A' : a.x = b.y for some b ∈ ΔB+ ∪ ΔB- }   (through A's index on x)
//! ```
//!
//! (a row of `A` that had a changed partner and is gone now is in `ΔA-`). For each candidate,
//! with its partners in `B'` found through `B`'s index on `y`:
//!
//! ```text
//! in result after  = a ∈ A'   and  some partner in B'
//! in result before = a ∈ A    and  some partner in B = (B' \ ΔB+) ∪ ΔB-
//! a ∈ A' : a ∉ ΔA-            a ∈ A : a ∈ ΔA-, or a ∈ A' and a ∉ ΔA+
//! ```
//!
//! and the row is inserted into the result if it is in it only after, deleted if only before.
//! This holds when the commit changes both tables, and for a table joined with itself (then
//! `ΔA` and `ΔB` are the same changes). The work is proportional to the changed rows and their
//! partners, never to the tables' sizes.

use super::state::State;
use super::{passes, Delta, Layouts, Rows};
use crate::error::QueryError;
use crate::plan::{Bytes, JoinPlan, Plan, Side};
use std::collections::{HashMap, HashSet};
use wasmod_datastore::{Row, TxData};

type Hasher = foldhash::fast::RandomState;

/// The rows among `inserted` and `deleted` (changes of the plan's one table) that pass the
/// plan's filter.
pub(crate) fn filter_changes<'r>(
    plan: &Plan<Bytes>,
    layouts: &Layouts<'_>,
    inserted: impl IntoIterator<Item = &'r Row>,
    deleted: impl IntoIterator<Item = &'r Row>,
) -> Delta {
    Delta {
        inserted: passing(plan, layouts, inserted),
        deleted: passing(plan, layouts, deleted),
    }
}

fn passing<'r>(
    plan: &Plan<Bytes>,
    layouts: &Layouts<'_>,
    rows: impl IntoIterator<Item = &'r Row>,
) -> Vec<Row> {
    rows.into_iter()
        .filter(|row| passes(plan, &Rows::one(layouts.target, row)))
        .cloned()
        .collect()
}

/// Whether a candidate row of the target table is in it after the commit, and before.
#[derive(Clone, Copy)]
struct Membership {
    after: bool,
    before: bool,
}

/// One commit's changes to the two tables of a join (the same changes twice for a table
/// joined with itself), with what the rules look up in them.
struct JoinChanges<'c> {
    target_inserted: &'c [Row],
    target_deleted: &'c [Row],
    other_inserted: &'c [Row],
    other_deleted: &'c [Row],
    /// `ΔB+`, by bytes.
    new_partners: HashSet<&'c [u8], Hasher>,
    /// `ΔB-`, by join value.
    gone_partners: HashMap<&'c [u8], Vec<&'c Row>, Hasher>,
}

impl<'c> JoinChanges<'c> {
    fn new(target: u32, join: &JoinPlan, layouts: &Layouts<'_>, changes: &'c TxData) -> Self {
        let changed = |table: u32| {
            changes.table(table).map_or((&[][..], &[][..]), |table| {
                (&table.inserted[..], &table.deleted[..])
            })
        };
        let (target_inserted, target_deleted) = changed(target);
        let (other_inserted, other_deleted) = changed(join.other);
        let mut gone_partners: HashMap<&[u8], Vec<&Row>, Hasher> = HashMap::default();
        for row in other_deleted {
            if let Some(value) = layouts.other.column(row, usize::from(join.other_column)) {
                gone_partners.entry(value).or_default().push(row);
            }
        }
        Self {
            target_inserted,
            target_deleted,
            other_inserted,
            other_deleted,
            new_partners: other_inserted.iter().map(|row| &**row).collect(),
            gone_partners,
        }
    }
}

/// The rows of the target whose membership the commit may have changed (see the module docs),
/// with whether each is in the target table after the commit and before.
fn candidates(
    target: u32,
    join: &JoinPlan,
    layouts: &Layouts<'_>,
    changes: &JoinChanges<'_>,
    state: State<'_>,
) -> Result<HashMap<Row, Membership, Hasher>, QueryError> {
    let mut candidates: HashMap<Row, Membership, Hasher> = HashMap::default();
    for row in changes.target_inserted {
        let membership = Membership {
            after: true,
            before: false,
        };
        candidates.insert(row.clone(), membership);
    }
    for row in changes.target_deleted {
        let membership = Membership {
            after: false,
            before: true,
        };
        candidates.insert(row.clone(), membership);
    }
    let inserted: HashSet<&[u8], Hasher> =
        changes.target_inserted.iter().map(|row| &**row).collect();
    for partner in changes.other_inserted.iter().chain(changes.other_deleted) {
        let Some(value) = layouts
            .other
            .column(partner, usize::from(join.other_column))
        else {
            continue;
        };
        let rows = state.rows_with(
            target,
            join.target_index,
            layouts.target,
            join.target_column,
            value,
        )?;
        for row in rows {
            candidates.entry(row.clone()).or_insert(Membership {
                after: true,
                before: !inserted.contains(&**row),
            });
        }
    }
    Ok(candidates)
}

/// What the commit `changes` changed in the rows of the join `plan`, whose join is `join`;
/// `state` is the tables right after the commit. See the module docs for the rules.
pub(crate) fn join_delta(
    plan: &Plan<Bytes>,
    join: &JoinPlan,
    layouts: &Layouts<'_>,
    changes: &TxData,
    state: State<'_>,
) -> Result<Delta, QueryError> {
    let changes = JoinChanges::new(plan.target, join, layouts, changes);
    let mut delta = Delta::default();
    for (row, membership) in candidates(plan.target, join, layouts, &changes, state)? {
        let Some(value) = layouts.target.column(&row, usize::from(join.target_column)) else {
            continue;
        };
        let pair = |partner: &[u8]| {
            passes(
                plan,
                &Rows::pair((layouts.target, &row), (layouts.other, partner)),
            )
        };
        let partners = || {
            state.rows_with(
                join.other,
                join.other_index,
                layouts.other,
                join.other_column,
                value,
            )
        };
        let after = membership.after && partners()?.any(|partner| pair(partner));
        let before = membership.before
            && (partners()?
                .any(|partner| !changes.new_partners.contains(&**partner) && pair(partner))
                || changes
                    .gone_partners
                    .get(value)
                    .is_some_and(|gone| gone.iter().any(|partner| pair(partner))));
        match (before, after) {
            (false, true) => delta.inserted.push(row),
            (true, false) => delta.deleted.push(row),
            _ => {}
        }
    }
    Ok(delta)
}

/// The values of `pin` (a column of one side of the join `join` of `target`) for which a
/// query of this join that requires `pin = value` may have a delta in this commit: a query
/// whose value is not among them has none, so it need not be evaluated.
///
/// A row's membership changes only if the row is a candidate (see [`candidates`]) and, for
/// the row to be in the result before or after, the pair with the partner that makes it so
/// must have the value: for a pin on the target, the candidates' values; for a pin on the
/// other table, the values of the changed partners and of every partner (after the commit, or
/// deleted by it) of the changed target rows.
pub(crate) fn affected_values(
    target: u32,
    join: &JoinPlan,
    pin: (Side, u16),
    layouts: &Layouts<'_>,
    changes: &TxData,
    state: State<'_>,
) -> Result<HashSet<Bytes, Hasher>, QueryError> {
    let changes = JoinChanges::new(target, join, layouts, changes);
    let (side, column) = pin;
    let value_of = |layout: &crate::column::RowLayout, row: &[u8]| {
        layout.column(row, usize::from(column)).map(Bytes::from)
    };
    let mut values = HashSet::default();
    if side == Side::Target {
        let candidates = candidates(target, join, layouts, &changes, state)?;
        values.extend(
            candidates
                .keys()
                .filter_map(|row| value_of(layouts.target, row)),
        );
        return Ok(values);
    }
    let changed_partners = changes.other_inserted.iter().chain(changes.other_deleted);
    values.extend(changed_partners.filter_map(|row| value_of(layouts.other, row)));
    for row in changes.target_inserted.iter().chain(changes.target_deleted) {
        let Some(value) = layouts.target.column(row, usize::from(join.target_column)) else {
            continue;
        };
        let partners = state.rows_with(
            join.other,
            join.other_index,
            layouts.other,
            join.other_column,
            value,
        )?;
        let gone = changes
            .gone_partners
            .get(value)
            .into_iter()
            .flatten()
            .copied();
        values.extend(
            partners
                .chain(gone)
                .filter_map(|row| value_of(layouts.other, row)),
        );
    }
    Ok(values)
}
