//! Plans: a checked query in a normal form that names tables and columns by position.
//!
//! Two queries that mean the same thing should be one plan, so that many clients' identical
//! subscriptions are evaluated once: aliases and the order of the join's tables disappear
//! (the join is always seen from the table whose rows it returns), literals are their encoded
//! bytes, `literal op column` is `column op literal`, and nested `AND`s and `OR`s are
//! flattened, sorted and deduplicated. Plans compare and hash structurally.
//!
//! A plan is generic over its literals: a [`Query`](crate::Query)'s may still hold the
//! `:sender` parameter ([`Operand::Sender`]); binding it gives a plan of plain bytes, which is
//! the only kind that is evaluated.

use crate::column::Scalar;
use crate::sql::CompareOp;

/// Which table of the query a column belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Side {
    /// The table whose rows the query returns.
    Target,
    /// The other table of a join.
    Other,
}

/// The encoded bytes of a literal.
pub(crate) type Bytes = Box<[u8]>;

/// A literal of a query that may not be bound yet.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Operand {
    /// A value, encoded.
    Value(Bytes),
    /// `:sender`, the subscriber's identity.
    Sender,
}

/// `column op value`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Comparison<V> {
    pub(crate) side: Side,
    pub(crate) column: u16,
    pub(crate) op: CompareOp,
    /// How the column's values compare (determined by the column; kept here for evaluation).
    pub(crate) scalar: Scalar,
    pub(crate) value: V,
}

/// A condition on a row (or on a pair of rows, for a join).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Filter<V> {
    /// Every one holds (at least two, none of them an `And`).
    And(Vec<Filter<V>>),
    /// At least one holds (at least two, none of them an `Or`).
    Or(Vec<Filter<V>>),
    /// One comparison.
    Compare(Comparison<V>),
}

/// `JOIN other ON target.target_column = other.other_column`, both columns first in an index.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct JoinPlan {
    pub(crate) other: u32,
    pub(crate) target_column: u16,
    pub(crate) other_column: u16,
    /// An index of the target table whose first column is `target_column`.
    pub(crate) target_index: u32,
    /// An index of the other table whose first column is `other_column`.
    pub(crate) other_index: u32,
}

/// A checked query: the rows of `target` (that have a partner in the join) that pass `filter`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Plan<V> {
    pub(crate) target: u32,
    pub(crate) join: Option<JoinPlan>,
    pub(crate) filter: Option<Filter<V>>,
}

impl<V: Ord> Filter<V> {
    /// The normal form: an `And` inside an `And` (or an `Or` inside an `Or`) merged into it,
    /// the parts of every group sorted, duplicates removed, and a group left with one part
    /// replaced by it.
    pub(crate) fn normalized(self) -> Self {
        match self {
            Self::And(parts) => Self::group(parts, Self::And, |part| match part {
                Self::And(inner) => Ok(inner),
                other => Err(other),
            }),
            Self::Or(parts) => Self::group(parts, Self::Or, |part| match part {
                Self::Or(inner) => Ok(inner),
                other => Err(other),
            }),
            compare @ Self::Compare(_) => compare,
        }
    }

    /// The normal form of the group `rebuild(parts)`, whose parts of the same kind `same`
    /// opens (`Ok` with their own parts).
    fn group(
        parts: Vec<Self>,
        rebuild: fn(Vec<Self>) -> Self,
        same: fn(Self) -> Result<Vec<Self>, Self>,
    ) -> Self {
        let mut flat = Vec::with_capacity(parts.len());
        for part in parts.into_iter().map(Self::normalized) {
            match same(part) {
                Ok(inner) => flat.extend(inner),
                Err(other) => flat.push(other),
            }
        }
        flat.sort();
        flat.dedup();
        match <[Self; 1]>::try_from(flat) {
            Ok([only]) => only,
            Err(flat) => rebuild(flat),
        }
    }

    /// The conditions that must all hold: the parts of a top-level `And`, or the comparison
    /// that is the whole filter.
    pub(crate) fn conjuncts(&self) -> &[Self] {
        match self {
            Self::And(parts) => parts,
            Self::Compare(_) => std::slice::from_ref(self),
            Self::Or(_) => &[],
        }
    }

    /// The same filter with each value replaced by `bind(value)`.
    pub(crate) fn map<W>(&self, bind: &impl Fn(&V) -> W) -> Filter<W> {
        match self {
            Self::And(parts) => Filter::And(parts.iter().map(|part| part.map(bind)).collect()),
            Self::Or(parts) => Filter::Or(parts.iter().map(|part| part.map(bind)).collect()),
            Self::Compare(comparison) => Filter::Compare(Comparison {
                side: comparison.side,
                column: comparison.column,
                op: comparison.op,
                scalar: comparison.scalar,
                value: bind(&comparison.value),
            }),
        }
    }

    /// The same filter with every comparison on side `side` (a table's own filter, which is
    /// written on the target side, for the other table of a join).
    pub(crate) fn on_side(&self, side: Side) -> Self
    where
        V: Clone,
    {
        match self {
            Self::And(parts) => Self::And(parts.iter().map(|part| part.on_side(side)).collect()),
            Self::Or(parts) => Self::Or(parts.iter().map(|part| part.on_side(side)).collect()),
            Self::Compare(comparison) => Self::Compare(Comparison {
                side,
                ..comparison.clone()
            }),
        }
    }

    /// How many comparisons the filter has: what checking it on one row may cost.
    pub(crate) fn comparisons(&self) -> usize {
        match self {
            Self::And(parts) | Self::Or(parts) => parts.iter().map(Self::comparisons).sum(),
            Self::Compare(_) => 1,
        }
    }

    /// Whether any value satisfies `test`.
    pub(crate) fn any_value(&self, test: &impl Fn(&V) -> bool) -> bool {
        match self {
            Self::And(parts) | Self::Or(parts) => parts.iter().any(|part| part.any_value(test)),
            Self::Compare(comparison) => test(&comparison.value),
        }
    }
}

impl Filter<Operand> {
    /// Whether the filter compares with `:sender`, which binding replaces.
    pub(crate) fn uses_sender(&self) -> bool {
        self.any_value(&|value| *value == Operand::Sender)
    }
}

impl<V: Ord> Plan<V> {
    /// What checking one row against the plan costs, in reads: one for the row, and one for
    /// each comparison of its filter (its tables' visibility filters included). A commit's
    /// evaluation and a first evaluation both pay it per row they check.
    pub(crate) fn cost(&self) -> usize {
        1 + self.filter.as_ref().map_or(0, Filter::comparisons)
    }

    /// The same plan with each value replaced by `bind(value)`, normalized again (binding can
    /// make two parts equal).
    pub(crate) fn map<W: Ord>(&self, bind: &impl Fn(&V) -> W) -> Plan<W> {
        Plan {
            target: self.target,
            join: self.join.clone(),
            filter: self
                .filter
                .as_ref()
                .map(|filter| filter.map(bind).normalized()),
        }
    }

    /// The tables the plan reads: its target, and the other table of its join if that is
    /// another table.
    pub(crate) fn tables(&self) -> impl Iterator<Item = u32> + '_ {
        let other = self
            .join
            .as_ref()
            .map(|join| join.other)
            .filter(|&other| other != self.target);
        std::iter::once(self.target).chain(other)
    }
}

/// A comparison `side.column = value` that every pair of rows a plan returns satisfies (a
/// top-level conjunct of its filter): what the registry routes the query by.
pub(crate) struct Pin<'a> {
    pub(crate) side: Side,
    pub(crate) column: u16,
    pub(crate) value: &'a Bytes,
}

impl Plan<Bytes> {
    /// The plan's first top-level equality, if it has one.
    pub(crate) fn pin(&self) -> Option<Pin<'_>> {
        self.filter
            .as_ref()?
            .conjuncts()
            .iter()
            .find_map(|part| match part {
                Filter::Compare(Comparison {
                    side,
                    column,
                    op: CompareOp::Eq,
                    value,
                    ..
                }) => Some(Pin {
                    side: *side,
                    column: *column,
                    value,
                }),
                _ => None,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compare(column: u16, value: u8) -> Filter<Bytes> {
        Filter::Compare(Comparison {
            side: Side::Target,
            column,
            op: CompareOp::Eq,
            scalar: Scalar::Unsigned(1),
            value: Box::new([value]),
        })
    }

    #[test]
    fn normalizing_sorts_flattens_and_deduplicates() {
        let one = Filter::And(vec![
            compare(1, 1),
            Filter::And(vec![compare(0, 2), compare(1, 1)]),
        ]);
        let other = Filter::And(vec![compare(0, 2), compare(1, 1)]);
        assert_eq!(one.normalized(), other.normalized());
        let same = Filter::Or(vec![compare(3, 3), compare(3, 3)]);
        assert_eq!(same.normalized(), compare(3, 3));
    }
}
