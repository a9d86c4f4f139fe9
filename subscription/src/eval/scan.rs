//! Finding the rows a plan may return through an index instead of every row of a table.
//!
//! The datastore reads an index with an encoded scan (`docs/abi.md`: a prefix of key values,
//! then a lower and an upper bound). A filter whose top-level conditions include
//! `column = v` on the first column of an index becomes the prefix `[v]`; failing that,
//! `column < v`, `column >= v` and the like become bounds (a lower and an upper one on the
//! same column together). Everything else reads the whole table. The filter is still
//! evaluated on every row the scan returns: the scan only narrows.

use crate::catalog::TableInfo;
use crate::column::RowLayout;
use crate::error::QueryError;
use crate::plan::{Bytes, Comparison, Filter, JoinPlan, Side};
use crate::sql::CompareOp;
use wasmod_datastore::{Row, Tables};

/// An encoded scan of one index.
pub(crate) struct IndexScan {
    index: u32,
    bytes: Vec<u8>,
}

/// A bound's tag in an encoded scan.
const UNBOUNDED: u8 = 0;
const INCLUDED: u8 = 1;
const EXCLUDED: u8 = 2;

impl IndexScan {
    /// The rows of `index` whose first column equals the encoded `value`.
    pub(crate) fn equal(index: u32, value: &[u8]) -> Self {
        let mut bytes = Vec::with_capacity(6 + value.len());
        bytes.extend_from_slice(&1u32.to_le_bytes());
        bytes.extend_from_slice(value);
        bytes.extend_from_slice(&[UNBOUNDED, UNBOUNDED]);
        Self { index, bytes }
    }

    /// The rows of `index` whose first column lies between the bounds.
    fn between(
        index: u32,
        lower: Option<&Comparison<Bytes>>,
        upper: Option<&Comparison<Bytes>>,
    ) -> Self {
        let mut bytes = 0u32.to_le_bytes().to_vec();
        for bound in [lower, upper] {
            match bound {
                None => bytes.push(UNBOUNDED),
                Some(comparison) => {
                    let included = matches!(comparison.op, CompareOp::Le | CompareOp::Ge);
                    bytes.push(if included { INCLUDED } else { EXCLUDED });
                    bytes.extend_from_slice(&comparison.value);
                }
            }
        }
        Self { index, bytes }
    }

    /// The best scan of `table` (on side `side` of the plan) that `filter` allows, if any.
    pub(crate) fn choose(
        table: &TableInfo,
        side: Side,
        filter: Option<&Filter<Bytes>>,
    ) -> Option<Self> {
        let indexed: Vec<(&Comparison<Bytes>, u32)> = filter?
            .conjuncts()
            .iter()
            .filter_map(|part| match part {
                Filter::Compare(comparison) if comparison.side == side => {
                    let index = table.columns.get(usize::from(comparison.column))?.index?;
                    Some((comparison, index))
                }
                _ => None,
            })
            .collect();
        if let Some((equal, index)) = indexed.iter().find(|(c, _)| c.op == CompareOp::Eq) {
            return Some(Self::equal(*index, &equal.value));
        }
        let (first, index) = indexed.iter().find(|(c, _)| c.op != CompareOp::Ne)?;
        let on_column = |ops: [CompareOp; 2]| {
            indexed
                .iter()
                .map(|(comparison, _)| *comparison)
                .find(|c| c.column == first.column && ops.contains(&c.op))
        };
        let lower = on_column([CompareOp::Gt, CompareOp::Ge]);
        let upper = on_column([CompareOp::Lt, CompareOp::Le]);
        Some(Self::between(*index, lower, upper))
    }
}

/// The rows of `table` that `scan` selects, or every row without one.
pub(crate) fn rows<'t>(
    tables: &'t Tables,
    table: u32,
    scan: Option<&IndexScan>,
) -> Result<Box<dyn Iterator<Item = &'t Row> + 't>, QueryError> {
    let refused = |error: wasmod_datastore::Error| QueryError::Datastore(error.to_string());
    Ok(match scan {
        Some(scan) => Box::new(
            tables
                .index_rows(table, scan.index, &scan.bytes)
                .map_err(refused)?,
        ),
        None => Box::new(tables.rows(table).map_err(refused)?),
    })
}

/// The rows of the join's other table whose join column equals that of the target row
/// `target` (none if `target` cannot be read).
pub(crate) fn partners<'t>(
    tables: &'t Tables,
    join: &JoinPlan,
    target_layout: &RowLayout,
    target: &[u8],
) -> Result<Box<dyn Iterator<Item = &'t Row> + 't>, QueryError> {
    match target_layout.column(target, usize::from(join.target_column)) {
        Some(value) => rows(
            tables,
            join.other,
            Some(&IndexScan::equal(join.other_index, value)),
        ),
        None => Ok(Box::new(std::iter::empty())),
    }
}
