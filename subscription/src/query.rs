//! The public face of one query: parsed and checked ([`Query`]), then bound to a subscriber
//! ([`BoundQuery`]), which is what is evaluated and deduplicated.

use crate::budget::{Budget, BudgetError};
use crate::catalog::Catalog;
use crate::error::QueryError;
use crate::eval;
use crate::plan::{Bytes, Filter, Operand, Plan};
use crate::{sql, validate};
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;
use wasmod_abi::Identity;
use wasmod_datastore::{Row, Tables};

/// A query of the subset, parsed and checked against a module's tables, that may still use
/// the parameter `:sender`.
#[derive(Clone, Debug)]
pub struct Query {
    catalog: Arc<Catalog>,
    plan: Plan<Operand>,
}

impl Query {
    /// Parses `text` and checks it against `catalog`'s tables, restricted to the rows their
    /// visibility filters let a client see (the filters are ANDed into the query).
    ///
    /// Errors: [`QueryError`], naming what is wrong (not SQL, outside the subset, an unknown
    /// or private table, an unknown column, a literal of the wrong type, a join on a column
    /// without an index).
    pub fn parse(catalog: &Arc<Catalog>, text: &str) -> Result<Self, QueryError> {
        let syntax = sql::parse(text)?;
        let plan = validate::validate(catalog, &syntax)?;
        Ok(Self {
            catalog: catalog.clone(),
            plan,
        })
    }

    /// Whether the query uses `:sender` (in its own condition, or in the visibility filter of
    /// a table it reads), so that subscribers with different identities get different queries.
    pub fn uses_sender(&self) -> bool {
        self.plan.filter.as_ref().is_some_and(Filter::uses_sender)
    }

    /// The query for the subscriber `sender`: `:sender` replaced by its identity.
    pub fn bind(&self, sender: Identity) -> BoundQuery {
        let plan = self.plan.map(&binder(sender));
        BoundQuery {
            catalog: self.catalog.clone(),
            plan: Arc::new(plan),
        }
    }

    /// The id of the table whose rows the query returns.
    pub fn table(&self) -> u32 {
        self.plan.target
    }

    /// The ids of the tables the query reads: the one whose rows it returns, then the other
    /// table of its join, if it has one.
    pub fn tables(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::once(self.plan.target).chain(self.plan.join.as_ref().map(|join| join.other))
    }
}

/// What binds the operands of a plan or filter for the subscriber `sender`.
fn binder(sender: Identity) -> impl Fn(&Operand) -> Bytes {
    let sender: Bytes = Box::new(sender.to_bytes());
    move |operand| match operand {
        Operand::Value(bytes) => bytes.clone(),
        Operand::Sender => sender.clone(),
    }
}

/// `filter` for the reader `sender`: `:sender` replaced by its identity, normalized again.
pub(crate) fn bind_filter(filter: &Filter<Operand>, sender: Identity) -> Filter<Bytes> {
    filter.map(&binder(sender)).normalized()
}

/// A query with nothing left to bind: evaluated, deduplicated, subscribed to.
///
/// Two bound queries are equal (and hash alike) when they mean the same thing, however they
/// were written: `SELECT * FROM t WHERE a = 1 AND b = 2` and
/// `SELECT t.* FROM t WHERE (2 = b) AND a = 1` are one query.
#[derive(Clone, Debug)]
pub struct BoundQuery {
    catalog: Arc<Catalog>,
    plan: Arc<Plan<Bytes>>,
}

impl BoundQuery {
    /// Every row the query returns from `tables` (a module's committed tables), each once, in
    /// no particular order: a subscription's initial rows, or a one-off query's answer.
    pub fn evaluate(&self, tables: &Tables) -> Result<Vec<Row>, QueryError> {
        self.evaluate_within(tables, &mut Budget::unlimited())
            .map_err(|error| match error {
                BudgetError::Query(error) => error,
                // An unlimited budget runs out only past `usize::MAX` rows.
                BudgetError::Reads | BudgetError::Rows => {
                    QueryError::Datastore("more rows than memory holds".to_owned())
                }
            })
    }

    /// [`BoundQuery::evaluate`], drawing on `budget` for every row it reads and returns: it
    /// stops at the first row beyond the budget ([`BudgetError::Reads`],
    /// [`BudgetError::Rows`]), so that a query refused for its cost has cost at most the
    /// budget. What it drew stays drawn, for the next query on the same budget.
    pub fn evaluate_within(
        &self,
        tables: &Tables,
        budget: &mut Budget,
    ) -> Result<Vec<Row>, BudgetError> {
        eval::evaluate(&self.catalog, &self.plan, tables, budget)
    }

    /// The id of the table whose rows the query returns.
    pub fn table(&self) -> u32 {
        self.plan.target
    }

    /// What checking one row against the query costs: one, and one for each comparison of its
    /// condition, its tables' visibility filters included (`a = 1 OR a = 2` costs 3). It is the
    /// measure of what a subscriber may make each commit cost (a read of a
    /// [`Budget`](crate::Budget) is the same unit).
    pub fn cost(&self) -> usize {
        self.plan.cost()
    }

    /// A hash of the normalized query that is the same in every process and on every run of
    /// one build (a fixed seed; a new version of this crate or of `foldhash` may change it), for
    /// caches, metrics and logs. Equality is still decided by comparing queries.
    pub fn fingerprint(&self) -> u64 {
        foldhash::fast::FixedState::with_seed(FINGERPRINT_SEED).hash_one(&self.plan)
    }

    pub(crate) fn plan(&self) -> &Arc<Plan<Bytes>> {
        &self.plan
    }

    pub(crate) fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }
}

/// The seed of [`BoundQuery::fingerprint`]: fixed, so that fingerprints are stable.
const FINGERPRINT_SEED: u64 = 0x7761_736d_6f64_7371;

/// Queries of different catalogs (modules) are different queries, whatever their plans.
impl PartialEq for BoundQuery {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.catalog, &other.catalog) && self.plan == other.plan
    }
}

impl Eq for BoundQuery {}

impl Hash for BoundQuery {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.plan.hash(state);
    }
}
