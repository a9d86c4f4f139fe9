//! Evaluating a plan from scratch against the committed tables: a subscription's initial rows,
//! and one-off queries.

use super::scan::{self, IndexScan};
use super::{passes, Layouts, Rows};
use crate::catalog::Catalog;
use crate::error::QueryError;
use crate::plan::{Bytes, Plan, Side};
use wasmod_datastore::{Row, Tables};

/// Every row `plan` returns from `tables`, each once.
///
/// The target table is read through the best index scan its filter allows; for a join, each
/// candidate row's partners are found through the other table's index on the join column.
pub(crate) fn evaluate(
    catalog: &Catalog,
    plan: &Plan<Bytes>,
    tables: &Tables,
) -> Result<Vec<Row>, QueryError> {
    let (Some(target), Some(layouts)) = (catalog.table(plan.target), Layouts::of(catalog, plan))
    else {
        return Err(not_in_catalog());
    };
    let index_scan = IndexScan::choose(target, Side::Target, plan.filter.as_ref());
    let candidates = scan::rows(tables, plan.target, index_scan.as_ref())?;
    let Some(join) = &plan.join else {
        return Ok(candidates
            .filter(|row| passes(plan, &Rows::one(layouts.target, row)))
            .cloned()
            .collect());
    };
    let mut found = Vec::new();
    for row in candidates {
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

/// The error of a plan whose tables the catalog does not have.
pub(crate) fn not_in_catalog() -> QueryError {
    QueryError::Datastore("the query names a table the module does not have".to_owned())
}
