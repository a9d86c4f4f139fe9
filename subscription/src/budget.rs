//! A bound on what one evaluation from scratch may cost, checked row by row as it runs.
//!
//! A subscription's initial rows are read under a read transaction of the module's tables,
//! during which no commit can happen; they are held (a pointer each) until they are sent. A
//! client chooses what to subscribe to, so both costs are the client's to choose: a query of
//! a large table reads every row, and a thousand of them read it a thousand times. Checking
//! the cost once the rows are gathered would come too late (the read transaction has been
//! held, the rows allocated), so the evaluation counts as it goes and stops at the first row
//! beyond its [`Budget`]: a refusal costs at most the budget, whatever the query.

use crate::error::QueryError;
use std::fmt;

/// What an evaluation may still read and return: reads of the tables, and rows in its result.
/// Several evaluations may draw on one budget (the queries of one query set, say).
///
/// A read is one row found (through a scan or an index, a join's partners included), and one
/// more for each comparison of the query's filter checked on it, so that what a budget of
/// reads bounds is the evaluation's time whatever the query: a row of a query of 1,000 `OR`
/// terms costs 1,001 reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    reads: usize,
    rows: usize,
}

/// Why an evaluation within a [`Budget`] stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BudgetError {
    /// The query could not be evaluated.
    Query(QueryError),
    /// It would read more rows than the budget has left.
    Reads,
    /// It would return more rows than the budget has left.
    Rows,
}

impl Budget {
    /// A budget of `reads` reads and `rows` rows returned.
    pub fn new(reads: usize, rows: usize) -> Self {
        Self { reads, rows }
    }

    /// No bound: for evaluations whose cost is bounded elsewhere.
    pub fn unlimited() -> Self {
        Self::new(usize::MAX, usize::MAX)
    }

    /// How many reads are left.
    pub fn reads(&self) -> usize {
        self.reads
    }

    /// How many rows may still be returned.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Counts `reads` reads (a row, and the comparisons checked on it).
    pub(crate) fn read(&mut self, reads: usize) -> Result<(), BudgetError> {
        self.reads = self.reads.checked_sub(reads).ok_or(BudgetError::Reads)?;
        Ok(())
    }

    /// Counts one row returned.
    pub(crate) fn keep(&mut self) -> Result<(), BudgetError> {
        self.rows = self.rows.checked_sub(1).ok_or(BudgetError::Rows)?;
        Ok(())
    }
}

impl From<QueryError> for BudgetError {
    fn from(error: QueryError) -> Self {
        Self::Query(error)
    }
}

impl fmt::Display for BudgetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Query(error) => error.fmt(f),
            Self::Reads => f.write_str("the query reads more than it may"),
            Self::Rows => f.write_str("the query returns more rows than it may"),
        }
    }
}

impl std::error::Error for BudgetError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_counts_down_to_zero_then_refuses() {
        let mut budget = Budget::new(4, 1);
        assert_eq!(budget.read(1), Ok(()));
        assert_eq!(budget.keep(), Ok(()));
        assert_eq!(budget.read(3), Ok(()));
        assert_eq!(budget.read(1), Err(BudgetError::Reads));
        assert_eq!(budget.keep(), Err(BudgetError::Rows));
        assert_eq!((budget.reads(), budget.rows()), (0, 0));
    }
}
