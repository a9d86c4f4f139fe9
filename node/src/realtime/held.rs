//! What each identity holds of the live queries: its distinct queries, and what they make
//! every commit cost.
//!
//! A client chooses its queries, and every commit to a table checks the rows it changed
//! against the queries over that table that the rows' values do not rule out. A query's cost
//! per row is one read and one per comparison of its condition ([`BoundQuery::cost`]): a
//! client holding fifteen queries of a thousand `OR` terms each made every commit check fifteen
//! thousand comparisons a row, for it alone. So an identity, all its connections together, may
//! hold at most [`SubscriptionLimits::queries_per_identity`] distinct queries costing at most
//! [`SubscriptionLimits::cost_per_identity`] together. A query held by several of its query
//! sets (or connections) is evaluated once a commit, and counted once.

use super::SubscriptionLimits;
use std::collections::HashMap;
use wasmod_abi::Identity;
use wasmod_subscription::{BoundQuery, QueryId, Subscriptions};

/// The distinct queries of every identity that holds some.
#[derive(Debug, Default)]
pub(super) struct Held {
    identities: HashMap<Identity, Holdings>,
}

/// One identity's distinct queries.
#[derive(Debug, Default)]
struct Holdings {
    /// Each query, with how many of the identity's query sets hold it and its cost.
    queries: HashMap<QueryId, Holding>,
    /// The sum of the queries' costs.
    cost: usize,
}

#[derive(Debug)]
struct Holding {
    sets: usize,
    cost: usize,
}

impl Held {
    /// Forgets every identity's queries (a new build's registry numbers them anew).
    pub(super) fn clear(&mut self) {
        self.identities.clear();
    }

    /// Whether `identity` may take a query set of `queries` on top of what it holds: `Err`
    /// with the refusal, naming the limit, if it would hold more distinct queries, or queries
    /// costing more, than `limits` allow. Queries it holds already are not counted again.
    pub(super) fn admits(
        &self,
        identity: Identity,
        queries: &[BoundQuery],
        subscriptions: &Subscriptions,
        limits: &SubscriptionLimits,
    ) -> Result<(), String> {
        let holdings = self.identities.get(&identity);
        let (mut new, mut new_cost) = (0, 0);
        for query in queries {
            let held = subscriptions.id(query).is_some_and(|id| {
                holdings.is_some_and(|holdings| holdings.queries.contains_key(&id))
            });
            if !held {
                new += 1;
                new_cost += query.cost();
            }
        }
        let (holding, cost) =
            holdings.map_or((0, 0), |holdings| (holdings.queries.len(), holdings.cost));
        let most = limits.queries_per_identity;
        if holding + new > most {
            return Err(format!(
                "this identity holds {holding} distinct queries and the query set adds {new}, \
                 more than the {most} it may (--max-queries-per-identity)"
            ));
        }
        let most = limits.cost_per_identity;
        if cost + new_cost > most {
            return Err(format!(
                "this identity's queries cost {cost} reads a row and the query set's new ones \
                 {new_cost} more (a read for the row and one for each comparison of a \
                 condition), more than the {most} it may (--max-query-cost-per-identity): \
                 subscribe to fewer or simpler queries"
            ));
        }
        Ok(())
    }

    /// Counts `queries` (registered in `subscriptions`), of a query set of `identity`'s,
    /// among the queries it holds.
    pub(super) fn hold(
        &mut self,
        identity: Identity,
        queries: &[QueryId],
        subscriptions: &Subscriptions,
    ) {
        let holdings = self.identities.entry(identity).or_default();
        for &query in queries {
            let holding = holdings.queries.entry(query).or_insert_with(|| {
                let cost = subscriptions.query(query).map_or(0, BoundQuery::cost);
                holdings.cost += cost;
                Holding { sets: 0, cost }
            });
            holding.sets += 1;
        }
    }

    /// Undoes [`Held::hold`] for a query set that ends.
    pub(super) fn release(&mut self, identity: Identity, queries: &[QueryId]) {
        let Some(holdings) = self.identities.get_mut(&identity) else {
            return;
        };
        for query in queries {
            if let Some(holding) = holdings.queries.get_mut(query) {
                holding.sets -= 1;
                if holding.sets == 0 {
                    holdings.cost -= holding.cost;
                    holdings.queries.remove(query);
                }
            }
        }
        if holdings.queries.is_empty() {
            self.identities.remove(&identity);
        }
    }
}
