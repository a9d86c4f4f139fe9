//! Checking a parsed query against the module's tables, into a [`Plan`].
//!
//! Everything a client can get wrong is found here, before any row is read: tables that do not
//! exist or are private, columns that do not exist or are ambiguous, literals of the wrong
//! type, joins on columns without an index. Names are resolved to positions, so that
//! evaluation never looks a name up. The plan is restricted to the rows the tables'
//! visibility filters let a client see ([`crate::visibility`]).

use crate::catalog::{Catalog, ColumnInfo, TableInfo};
use crate::error::QueryError;
use crate::literal;
use crate::plan::{Comparison, Filter, JoinPlan, Operand, Plan, Side};
use crate::sql::{ColumnName, Condition, SelectSyntax, TableName};

/// A table of the query under the name the query calls it.
struct Scope<'a> {
    /// The alias, or the table's name.
    name: &'a str,
    id: u32,
    table: &'a TableInfo,
}

/// The tables of a query, by side.
struct Scopes<'a> {
    target: Scope<'a>,
    other: Option<Scope<'a>>,
}

/// A column resolved: its side, position and description.
struct Resolved<'a> {
    side: Side,
    column: u16,
    info: &'a ColumnInfo,
    /// `qualifier.column`, for messages.
    written: String,
}

/// Checks `query` against `catalog`.
pub(crate) fn validate(
    catalog: &Catalog,
    query: &SelectSyntax,
) -> Result<Plan<Operand>, QueryError> {
    let from = scope(catalog, &query.from)?;
    let Some(join) = &query.join else {
        if let Some(qualifier) = &query.projection {
            if qualifier != from.name {
                return Err(QueryError::UnknownQualifier(qualifier.clone()));
            }
        }
        let scopes = Scopes {
            target: from,
            other: None,
        };
        return Ok(Plan {
            target: scopes.target.id,
            join: None,
            filter: restricted(&scopes, filter(&scopes, query.filter.as_ref())?),
        });
    };
    let joined = scope(catalog, &join.table)?;
    if from.name == joined.name {
        return Err(QueryError::Unsupported(format!(
            "joining two tables both called `{}` (give one an alias)",
            from.name
        )));
    }
    let Some(qualifier) = &query.projection else {
        return Err(QueryError::Unsupported(
            "SELECT * over a join (select `table.*` of the table whose rows it returns)".into(),
        ));
    };
    let (target, other) = if *qualifier == from.name {
        (from, joined)
    } else if *qualifier == joined.name {
        (joined, from)
    } else {
        return Err(QueryError::UnknownQualifier(qualifier.clone()));
    };
    let other_id = other.id;
    let scopes = Scopes {
        target,
        other: Some(other),
    };
    let join = join_plan(&scopes, other_id, &join.left, &join.right)?;
    Ok(Plan {
        target: scopes.target.id,
        join: Some(join),
        filter: restricted(&scopes, filter(&scopes, query.filter.as_ref())?),
    })
}

/// The filter of table `table` (whose id is `id`) alone, over its own columns: a visibility
/// filter, as [`crate::visibility`] checks it.
pub(crate) fn table_filter(
    id: u32,
    table: &TableInfo,
    condition: &Condition,
) -> Result<Filter<Operand>, QueryError> {
    let scopes = Scopes {
        target: Scope {
            name: &table.name,
            id,
            table,
        },
        other: None,
    };
    Ok(convert(&scopes, condition)?.normalized())
}

/// The query's filter `query` ANDed with the visibility filters of the tables it reads (the
/// other table's taken to its side of the join), so that it returns only rows the reader may
/// see, and finds partners only among them.
fn restricted(scopes: &Scopes<'_>, query: Option<Filter<Operand>>) -> Option<Filter<Operand>> {
    let target = scopes.target.table.visibility.clone();
    let other = scopes
        .other
        .as_ref()
        .and_then(|other| other.table.visibility.as_ref())
        .map(|filter| filter.on_side(Side::Other));
    let mut parts: Vec<Filter<Operand>> = [query, target, other].into_iter().flatten().collect();
    match parts.len() {
        0 | 1 => parts.pop(),
        _ => Some(Filter::And(parts).normalized()),
    }
}

/// The public table `table` names.
fn scope<'a>(catalog: &'a Catalog, table: &'a TableName) -> Result<Scope<'a>, QueryError> {
    let (id, info) = catalog
        .find(&table.name)
        .ok_or_else(|| QueryError::UnknownTable(table.name.clone()))?;
    if !info.public {
        return Err(QueryError::PrivateTable(table.name.clone()));
    }
    Ok(Scope {
        name: table.alias.as_deref().unwrap_or(&table.name),
        id,
        table: info,
    })
}

impl Scopes<'_> {
    fn by_side(&self, side: Side) -> Option<&Scope<'_>> {
        match side {
            Side::Target => Some(&self.target),
            Side::Other => self.other.as_ref(),
        }
    }

    /// The column `name` refers to.
    fn resolve(&self, name: &ColumnName) -> Result<Resolved<'_>, QueryError> {
        let sides = [Side::Target, Side::Other];
        let in_scope = sides
            .into_iter()
            .filter_map(|side| Some((side, self.by_side(side)?)));
        let candidates: Vec<(Side, &Scope<'_>)> = match &name.qualifier {
            Some(qualifier) => {
                let named: Vec<_> = in_scope
                    .filter(|(_, scope)| scope.name == qualifier)
                    .collect();
                if named.is_empty() {
                    return Err(QueryError::UnknownQualifier(qualifier.clone()));
                }
                named
            }
            None => in_scope.collect(),
        };
        let mut found = candidates.iter().filter_map(|(side, scope)| {
            let (column, info) = scope.table.column(&name.name)?;
            Some(Resolved {
                side: *side,
                column,
                info,
                written: format!("{}.{}", scope.name, name.name),
            })
        });
        match (found.next(), found.next()) {
            (Some(resolved), None) => Ok(resolved),
            (Some(_), Some(_)) => Err(QueryError::AmbiguousColumn(name.name.clone())),
            (None, _) => Err(QueryError::UnknownColumn {
                column: name.name.clone(),
                tables: candidates
                    .iter()
                    .map(|(_, scope)| scope.name.to_owned())
                    .collect(),
            }),
        }
    }
}

/// The join of `scopes` (whose other table has id `other_table`) on `left = right`.
fn join_plan(
    scopes: &Scopes<'_>,
    other_table: u32,
    left: &ColumnName,
    right: &ColumnName,
) -> Result<JoinPlan, QueryError> {
    let (left, right) = (scopes.resolve(left)?, scopes.resolve(right)?);
    let (target, other) = match (left.side, right.side) {
        (Side::Target, Side::Other) => (left, right),
        (Side::Other, Side::Target) => (right, left),
        _ => {
            return Err(QueryError::Join(format!(
                "ON compares `{}` with `{}`: it must compare a column of each table",
                left.written, right.written
            )))
        }
    };
    if target.info.type_name != other.info.type_name || target.info.scalar.is_none() {
        return Err(QueryError::Join(format!(
            "`{}` ({}) and `{}` ({}) are not of one comparable type",
            target.written, target.info.type_name, other.written, other.info.type_name
        )));
    }
    let index = |resolved: &Resolved<'_>| {
        resolved.info.index.ok_or_else(|| {
            QueryError::Join(format!(
                "`{}` is not indexed (it must be the first column of an index)",
                resolved.written
            ))
        })
    };
    Ok(JoinPlan {
        other: other_table,
        target_column: target.column,
        other_column: other.column,
        target_index: index(&target)?,
        other_index: index(&other)?,
    })
}

fn filter(
    scopes: &Scopes<'_>,
    condition: Option<&Condition>,
) -> Result<Option<Filter<Operand>>, QueryError> {
    condition
        .map(|condition| Ok(convert(scopes, condition)?.normalized()))
        .transpose()
}

fn convert(scopes: &Scopes<'_>, condition: &Condition) -> Result<Filter<Operand>, QueryError> {
    Ok(match condition {
        Condition::And(parts) => Filter::And(convert_all(scopes, parts)?),
        Condition::Or(parts) => Filter::Or(convert_all(scopes, parts)?),
        Condition::Compare {
            column,
            op,
            literal,
        } => {
            let resolved = scopes.resolve(column)?;
            let info = resolved.info;
            let scalar = info.scalar.ok_or_else(|| QueryError::NotComparable {
                column: info.name.clone(),
                ty: info.type_name.clone(),
            })?;
            let value =
                literal::encode(scalar, literal).map_err(|problem| QueryError::Literal {
                    column: info.name.clone(),
                    ty: info.type_name.clone(),
                    problem,
                })?;
            Filter::Compare(Comparison {
                side: resolved.side,
                column: resolved.column,
                op: *op,
                scalar,
                value,
            })
        }
    })
}

fn convert_all(
    scopes: &Scopes<'_>,
    conditions: &[Condition],
) -> Result<Vec<Filter<Operand>>, QueryError> {
    conditions
        .iter()
        .map(|condition| convert(scopes, condition))
        .collect()
}
