//! Evaluating plans: from scratch against the committed tables, and incrementally from one
//! commit's changes.
//!
//! Both read the rows in place: a filter asks for the columns it compares
//! ([`crate::column::RowLayout`]), and rows are handed out as the datastore's shared
//! [`Row`]s, never copied. Rows are found through indexes wherever the plan allows
//! ([`scan`]): an equality or a bound on an indexed column, and the join's columns, which
//! validation made sure are indexed.

mod delta;
mod initial;
mod scan;
mod state;

pub(crate) use delta::{affected_values, filter_changes, join_delta};
pub(crate) use initial::evaluate;
pub(crate) use state::{Later, State};

use crate::catalog::Catalog;
use crate::column::RowLayout;
use crate::plan::{Bytes, Filter, JoinPlan, Plan, Side};
use wasmod_datastore::Row;

/// What one commit changed in the rows of one query.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Delta {
    /// Rows that the query returns now and did not before.
    pub inserted: Vec<Row>,
    /// Rows that the query returned before and does not now.
    pub deleted: Vec<Row>,
}

impl Delta {
    /// Whether the commit changed nothing the query returns.
    pub fn is_empty(&self) -> bool {
        self.inserted.is_empty() && self.deleted.is_empty()
    }
}

/// The rows a filter is evaluated on: one row of the target table, or a pair for a join.
#[derive(Clone, Copy)]
pub(crate) struct Rows<'a> {
    target: (&'a RowLayout, &'a [u8]),
    other: Option<(&'a RowLayout, &'a [u8])>,
}

impl<'a> Rows<'a> {
    /// One row of the target table.
    pub(crate) fn one(layout: &'a RowLayout, row: &'a [u8]) -> Self {
        Self {
            target: (layout, row),
            other: None,
        }
    }

    /// A row of the target table and one of the other table of a join.
    pub(crate) fn pair(
        target: (&'a RowLayout, &'a [u8]),
        other: (&'a RowLayout, &'a [u8]),
    ) -> Self {
        Self {
            target,
            other: Some(other),
        }
    }

    fn column(&self, side: Side, column: u16) -> Option<&'a [u8]> {
        let (layout, row) = match side {
            Side::Target => self.target,
            Side::Other => self.other?,
        };
        layout.column(row, usize::from(column))
    }
}

impl Filter<Bytes> {
    /// Whether the rows satisfy the filter. A column that cannot be read (a row that does not
    /// decode, which stored rows never are) satisfies no comparison.
    pub(crate) fn matches(&self, rows: &Rows<'_>) -> bool {
        match self {
            Self::And(parts) => parts.iter().all(|part| part.matches(rows)),
            Self::Or(parts) => parts.iter().any(|part| part.matches(rows)),
            Self::Compare(comparison) => rows
                .column(comparison.side, comparison.column)
                .is_some_and(|bytes| {
                    let ordering = comparison.scalar.compare(bytes, &comparison.value);
                    comparison.op.holds(ordering)
                }),
        }
    }
}

/// Whether the plan's filter (if any) holds for `rows`.
pub(crate) fn passes(plan: &Plan<Bytes>, rows: &Rows<'_>) -> bool {
    plan.filter
        .as_ref()
        .is_none_or(|filter| filter.matches(rows))
}

/// The layouts of a plan's tables: its target's, and its join's other table's.
pub(crate) struct Layouts<'a> {
    pub(crate) target: &'a RowLayout,
    pub(crate) other: &'a RowLayout,
}

impl<'a> Layouts<'a> {
    /// The layouts of the tables of a plan of `target` with the join `join`; `None` if
    /// `catalog` does not have them (the plan was checked against another module).
    pub(crate) fn of(catalog: &'a Catalog, target: u32, join: Option<&JoinPlan>) -> Option<Self> {
        let target = &catalog.table(target)?.layout;
        let other = match join {
            Some(join) => &catalog.table(join.other)?.layout,
            None => target,
        };
        Some(Self { target, other })
    }
}
