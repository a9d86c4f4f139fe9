//! Evaluating a plan from scratch against the committed tables: a subscription's initial rows,
//! and one-off queries, within a [`Budget`] counted row by row.

use super::scan::{self, IndexScan};
use super::{passes, Layouts, Rows};
use crate::budget::{Budget, BudgetError};
use crate::catalog::Catalog;
use crate::error::QueryError;
use crate::plan::{Bytes, JoinPlan, Plan, Side};
use std::collections::HashSet;
use wasmod_datastore::{Row, Tables};

/// Every row `plan` returns from `tables`, each once, drawing on `budget` for each row read
/// (a scanned row, a join partner: one read, and one more per comparison of the filter checked
/// on it) and each row returned; the first row beyond it stops the evaluation.
///
/// The target table is read through the best index scan its filter allows, and for a join
/// each candidate row's partners are found through the other table's index on the join
/// column. A join whose filter allows a scan of the other table but not of the target (as in
/// `… JOIN b ON a.x = b.y WHERE b.z = 1`) is read the other way round: the other table's rows
/// through their scan, then their partners in the target through its index on the join column.
pub(crate) fn evaluate(
    catalog: &Catalog,
    plan: &Plan<Bytes>,
    tables: &Tables,
    budget: &mut Budget,
) -> Result<Vec<Row>, BudgetError> {
    let (Some(target), Some(layouts)) = (
        catalog.table(plan.target),
        Layouts::of(catalog, plan.target, plan.join.as_ref()),
    ) else {
        return Err(QueryError::not_in_catalog().into());
    };
    let filter = plan.filter.as_ref();
    let cost = plan.cost();
    let target_scan = IndexScan::choose(target, Side::Target, filter);
    let Some(join) = &plan.join else {
        let mut found = Vec::new();
        for row in scan::rows(tables, plan.target, target_scan.as_ref())? {
            budget.read(cost)?;
            if passes(plan, &Rows::one(layouts.target, row)) {
                budget.keep()?;
                found.push(row.clone());
            }
        }
        return Ok(found);
    };
    let other = catalog
        .table(join.other)
        .ok_or_else(QueryError::not_in_catalog)?;
    match (target_scan, IndexScan::choose(other, Side::Other, filter)) {
        (None, Some(other_scan)) => {
            from_other(plan, join, &layouts, tables, &other_scan, budget, cost)
        }
        (target_scan, _) => from_target(
            plan,
            join,
            &layouts,
            tables,
            target_scan.as_ref(),
            budget,
            cost,
        ),
    }
}

/// The rows of the join `plan` found from its target table's rows (through `target_scan`).
fn from_target(
    plan: &Plan<Bytes>,
    join: &JoinPlan,
    layouts: &Layouts<'_>,
    tables: &Tables,
    target_scan: Option<&IndexScan>,
    budget: &mut Budget,
    cost: usize,
) -> Result<Vec<Row>, BudgetError> {
    let mut found = Vec::new();
    for row in scan::rows(tables, plan.target, target_scan)? {
        budget.read(1)?;
        for partner in scan::partners(tables, join, layouts.target, row)? {
            budget.read(cost)?;
            let pair = Rows::pair((layouts.target, row), (layouts.other, partner));
            if passes(plan, &pair) {
                budget.keep()?;
                found.push(row.clone());
                break;
            }
        }
    }
    Ok(found)
}

/// The rows of the join `plan` found from its other table's rows (through `other_scan`): a
/// target row with several partners is found several times, and kept once.
fn from_other(
    plan: &Plan<Bytes>,
    join: &JoinPlan,
    layouts: &Layouts<'_>,
    tables: &Tables,
    other_scan: &IndexScan,
    budget: &mut Budget,
    cost: usize,
) -> Result<Vec<Row>, BudgetError> {
    let mut found: HashSet<Row, foldhash::fast::RandomState> = HashSet::default();
    for partner in scan::rows(tables, join.other, Some(other_scan))? {
        budget.read(1)?;
        let Some(value) = layouts
            .other
            .column(partner, usize::from(join.other_column))
        else {
            continue;
        };
        let by_value = IndexScan::equal(join.target_index, value);
        for row in scan::rows(tables, plan.target, Some(&by_value))? {
            budget.read(cost)?;
            let pair = Rows::pair((layouts.target, row), (layouts.other, partner));
            if !found.contains(row) && passes(plan, &pair) {
                budget.keep()?;
                found.insert(row.clone());
            }
        }
    }
    Ok(found.into_iter().collect())
}
