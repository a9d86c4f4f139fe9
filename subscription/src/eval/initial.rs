//! Evaluating a plan from scratch against the committed tables: a subscription's initial rows,
//! and one-off queries.

use super::scan::{self, IndexScan};
use super::{passes, Layouts, Rows};
use crate::catalog::Catalog;
use crate::error::QueryError;
use crate::plan::{Bytes, JoinPlan, Plan, Side};
use std::collections::HashSet;
use wasmod_datastore::{Row, Tables};

/// Every row `plan` returns from `tables`, each once.
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
) -> Result<Vec<Row>, QueryError> {
    let (Some(target), Some(layouts)) = (
        catalog.table(plan.target),
        Layouts::of(catalog, plan.target, plan.join.as_ref()),
    ) else {
        return Err(QueryError::not_in_catalog());
    };
    let filter = plan.filter.as_ref();
    let target_scan = IndexScan::choose(target, Side::Target, filter);
    let Some(join) = &plan.join else {
        return Ok(scan::rows(tables, plan.target, target_scan.as_ref())?
            .filter(|row| passes(plan, &Rows::one(layouts.target, row)))
            .cloned()
            .collect());
    };
    let other = catalog
        .table(join.other)
        .ok_or_else(QueryError::not_in_catalog)?;
    match (target_scan, IndexScan::choose(other, Side::Other, filter)) {
        (None, Some(other_scan)) => from_other(plan, join, &layouts, tables, &other_scan),
        (target_scan, _) => from_target(plan, join, &layouts, tables, target_scan.as_ref()),
    }
}

/// The rows of the join `plan` found from its target table's rows (through `target_scan`).
fn from_target(
    plan: &Plan<Bytes>,
    join: &JoinPlan,
    layouts: &Layouts<'_>,
    tables: &Tables,
    target_scan: Option<&IndexScan>,
) -> Result<Vec<Row>, QueryError> {
    let mut found = Vec::new();
    for row in scan::rows(tables, plan.target, target_scan)? {
        let mut partners = scan::partners(tables, join, layouts.target, row)?;
        if partners.any(|partner| {
            passes(
                plan,
                &Rows::pair((layouts.target, row), (layouts.other, partner)),
            )
        }) {
            found.push(row.clone());
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
) -> Result<Vec<Row>, QueryError> {
    let mut found: HashSet<Row, foldhash::fast::RandomState> = HashSet::default();
    for partner in scan::rows(tables, join.other, Some(other_scan))? {
        let Some(value) = layouts
            .other
            .column(partner, usize::from(join.other_column))
        else {
            continue;
        };
        let by_value = IndexScan::equal(join.target_index, value);
        for row in scan::rows(tables, plan.target, Some(&by_value))? {
            let pair = Rows::pair((layouts.target, row), (layouts.other, partner));
            if !found.contains(row) && passes(plan, &pair) {
                found.insert(row.clone());
            }
        }
    }
    Ok(found.into_iter().collect())
}
