//! The registry of live queries, and the evaluation of a commit over all of them.
//!
//! Three things keep a commit's evaluation proportional to what it changed, not to how many
//! queries there are:
//!
//! - **Dedup.** Identical queries (equal [`BoundQuery`]s, however they were written) are one
//!   entry with a count of subscribers, evaluated once per commit.
//! - **Routing by table.** Each query is listed under the tables it reads; a commit looks only
//!   at the lists of the tables it changed.
//! - **Routing by value.** A query whose filter requires `column = v` (alone or `AND`ed with
//!   more conditions; `v` may be `:sender`, bound) is listed by `v` (see [`crate::routes`]).
//!   For a query of one table, each changed row reaches only the queries of the value it has:
//!   a commit that touches one row of a table with 100,000 such queries on distinct values
//!   evaluates one (two for an update that changes the value). For joins, the commit computes
//!   the values it may affect once per family of joins that differ only by `v`, and evaluates
//!   the queries of those values.

use crate::catalog::Catalog;
use crate::error::QueryError;
use crate::eval::{affected_values, filter_changes, join_delta, Delta, Later, Layouts, State};
use crate::plan::{Bytes, Plan};
use crate::query::BoundQuery;
use crate::routes::{forget, list, unlist, ByValue, Family, Hasher, QueryId, TableRoutes};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use wasmod_datastore::{Row, Tables, TxData};

/// The deltas of one commit: each query whose rows it changed, by increasing id, with its
/// delta, or the error its evaluation met (a query checked against another module's tables
/// than the ones it is evaluated on).
pub type Deltas = Vec<(QueryId, Result<Delta, QueryError>)>;

/// The live queries of one module, each with its count of subscribers.
///
/// The caller maps [`QueryId`]s to its subscribers and encodes each query's delta once; this
/// registry only returns rows.
pub struct Subscriptions {
    catalog: Arc<Catalog>,
    /// The queries, by id; `None` for a free id.
    queries: Vec<Option<Entry>>,
    free: Vec<u32>,
    ids: HashMap<BoundQuery, QueryId, Hasher>,
    /// Where each table's queries are listed, by table id.
    tables: HashMap<u32, TableRoutes, Hasher>,
    /// The joins routed by value, by family.
    families: HashMap<Family, ByValue, Hasher>,
    evaluations: u64,
}

struct Entry {
    query: BoundQuery,
    subscribers: usize,
}

impl Subscriptions {
    /// No queries yet, of the module whose tables `catalog` describes.
    pub fn new(catalog: Arc<Catalog>) -> Self {
        Self {
            catalog,
            queries: Vec::new(),
            free: Vec::new(),
            ids: HashMap::default(),
            tables: HashMap::default(),
            families: HashMap::default(),
            evaluations: 0,
        }
    }

    /// Adds a subscriber of `query`, and returns the query's id: the same id for every
    /// subscriber of an equal query.
    ///
    /// Errors: [`QueryError::OtherModule`], for a query checked against another catalog.
    pub fn add(&mut self, query: BoundQuery) -> Result<QueryId, QueryError> {
        if !Arc::ptr_eq(query.catalog(), &self.catalog) {
            return Err(QueryError::OtherModule);
        }
        if let Some(&id) = self.ids.get(&query) {
            if let Some(entry) = self.entry_mut(id) {
                entry.subscribers += 1;
            }
            return Ok(id);
        }
        let id = match self.free.pop() {
            Some(free) => QueryId(free),
            None => {
                self.queries.push(None);
                QueryId(u32::try_from(self.queries.len() - 1).unwrap_or(u32::MAX))
            }
        };
        self.route(id, &query);
        self.ids.insert(query.clone(), id);
        self.queries[id.0 as usize] = Some(Entry {
            query,
            subscribers: 1,
        });
        Ok(id)
    }

    /// Removes one subscriber of query `id`, and returns how many are left (the query is gone
    /// at zero); `None` for an id that names no query.
    pub fn remove(&mut self, id: QueryId) -> Option<usize> {
        let entry = self.entry_mut(id)?;
        entry.subscribers -= 1;
        let left = entry.subscribers;
        if left == 0 {
            let entry = self.queries[id.0 as usize].take()?;
            self.unroute(id, &entry.query);
            self.ids.remove(&entry.query);
            self.free.push(id.0);
        }
        Some(left)
    }

    /// The id of `query`, if it has subscribers.
    pub fn id(&self, query: &BoundQuery) -> Option<QueryId> {
        self.ids.get(query).copied()
    }

    /// The query `id`.
    pub fn query(&self, id: QueryId) -> Option<&BoundQuery> {
        self.entry(id).map(|entry| &entry.query)
    }

    /// How many subscribers query `id` has (0 for an id that names no query).
    pub fn subscribers(&self, id: QueryId) -> usize {
        self.entry(id).map_or(0, |entry| entry.subscribers)
    }

    /// How many distinct queries there are.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there are no queries.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// How many times a query has been evaluated on a commit, since the registry was made:
    /// each commit adds the number of queries it could affect, which is what routing keeps
    /// small.
    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }

    /// Evaluates the commit whose changes are `changes` over every query it can affect;
    /// `tables` are the tables right after that commit, with no later commit applied (see
    /// [`Subscriptions::evaluate_batch`] otherwise).
    ///
    /// Returns each query whose rows changed, by increasing id, with its delta, or the error
    /// that its evaluation met.
    pub fn evaluate(&mut self, changes: &TxData, tables: &Tables) -> Deltas {
        self.evaluate_in(
            changes,
            State {
                tables,
                later: &Later::default(),
            },
        )
    }

    /// Evaluates the commits `commits`, in commit order, when `tables` are the tables right
    /// after the last of them: the deltas of each commit, in the same order.
    ///
    /// This is for an evaluator that runs off the writer's lock: when it takes a read
    /// transaction, the commits published before are exactly the ones applied to the tables it
    /// sees, and it evaluates all of them under that one transaction. Joins look their partners
    /// up in the tables as they were right after each commit (the later commits' changes
    /// undone on the fly); queries of one table do not read the tables at all.
    pub fn evaluate_batch(&mut self, commits: &[&TxData], tables: &Tables) -> Vec<Deltas> {
        // The later commits' changes are kept only for the tables a join reads: a resume over
        // thousands of commits to other tables (after a crash, one per connection left open)
        // then costs their routing alone.
        let joined = self.joined_tables();
        let mut later = Later::default();
        let mut deltas = Vec::with_capacity(commits.len());
        for changes in commits.iter().rev() {
            let state = State {
                tables,
                later: &later,
            };
            deltas.push(self.evaluate_in(changes, state));
            later.prepend(changes, |table| joined.contains(&table));
        }
        deltas.reverse();
        deltas
    }

    /// The tables the joins among the queries read: each one's own and its partner's.
    fn joined_tables(&self) -> HashSet<u32, Hasher> {
        self.queries
            .iter()
            .flatten()
            .filter_map(|entry| {
                let join = entry.query.plan().join.as_ref()?;
                Some([entry.query.table(), join.other])
            })
            .flatten()
            .collect()
    }

    /// [`Subscriptions::evaluate`] in the tables `state`.
    fn evaluate_in(&mut self, changes: &TxData, state: State<'_>) -> Deltas {
        let mut evaluated: HashSet<QueryId, Hasher> = HashSet::default();
        let mut families: HashSet<&Family, Hasher> = HashSet::default();
        let mut results = Vec::new();
        for table in &changes.tables {
            let Some(routes) = self.tables.get(&table.table) else {
                continue;
            };
            for (id, routed) in routes.by_value(table) {
                evaluated.insert(id);
                results.push((id, self.single(id, routed.inserted, routed.deleted)));
            }
            for family in routes
                .families
                .iter()
                .filter(|family| families.insert(family))
            {
                let ids = match self.family_candidates(family, changes, state) {
                    Ok(ids) => ids,
                    Err(error) => {
                        let every = self
                            .families
                            .get(family)
                            .into_iter()
                            .flat_map(|by_value| by_value.values().flatten());
                        results.extend(every.map(|&id| (id, Err(error.clone()))));
                        continue;
                    }
                };
                for id in ids {
                    if evaluated.insert(id) {
                        results.push((id, self.join(id, changes, state)));
                    }
                }
            }
            for &id in &routes.unpinned {
                if !evaluated.insert(id) {
                    continue;
                }
                let delta = match self.entry(id) {
                    Some(entry) if entry.query.plan().join.is_some() => {
                        self.join(id, changes, state)
                    }
                    _ => self.single(id, &table.inserted, &table.deleted),
                };
                results.push((id, delta));
            }
        }
        self.evaluations += evaluated.len() as u64;
        results.retain(|(_, delta)| delta.as_ref().map_or(true, |delta| !delta.is_empty()));
        results.sort_by_key(|(id, _)| *id);
        results
    }

    /// The queries of `family` that the commit `changes` may affect.
    fn family_candidates(
        &self,
        family: &Family,
        changes: &TxData,
        state: State<'_>,
    ) -> Result<Vec<QueryId>, QueryError> {
        let Some(by_value) = self.families.get(family) else {
            return Ok(Vec::new());
        };
        let layouts = Layouts::of(&self.catalog, family.target, Some(&family.join))
            .ok_or_else(QueryError::not_in_catalog)?;
        let pin = (family.side, family.column);
        let values = affected_values(family.target, &family.join, pin, &layouts, changes, state)?;
        Ok(values
            .iter()
            .filter_map(|value| by_value.get(value))
            .flatten()
            .copied()
            .collect())
    }

    /// The delta of the one-table query `id` from its table's changed rows `inserted` and
    /// `deleted`.
    fn single<'r>(
        &self,
        id: QueryId,
        inserted: impl IntoIterator<Item = &'r Row>,
        deleted: impl IntoIterator<Item = &'r Row>,
    ) -> Result<Delta, QueryError> {
        let plan = self.plan(id)?;
        let layouts =
            Layouts::of(&self.catalog, plan.target, None).ok_or_else(QueryError::not_in_catalog)?;
        Ok(filter_changes(plan, &layouts, inserted, deleted))
    }

    /// The delta of the join `id` in the commit `changes`, after which the tables are `state`.
    fn join(&self, id: QueryId, changes: &TxData, state: State<'_>) -> Result<Delta, QueryError> {
        let plan = self.plan(id)?;
        let join = plan.join.as_ref().ok_or_else(QueryError::not_in_catalog)?;
        let layouts = Layouts::of(&self.catalog, plan.target, Some(join))
            .ok_or_else(QueryError::not_in_catalog)?;
        join_delta(plan, join, &layouts, changes, state)
    }

    fn plan(&self, id: QueryId) -> Result<&Plan<Bytes>, QueryError> {
        self.entry(id)
            .map(|entry| &**entry.query.plan())
            .ok_or_else(QueryError::not_in_catalog)
    }

    fn entry(&self, id: QueryId) -> Option<&Entry> {
        self.queries.get(id.0 as usize)?.as_ref()
    }

    fn entry_mut(&mut self, id: QueryId) -> Option<&mut Entry> {
        self.queries.get_mut(id.0 as usize)?.as_mut()
    }

    /// Lists query `id` where commits find it (see [`crate::routes`]).
    fn route(&mut self, id: QueryId, query: &BoundQuery) {
        let plan = query.plan();
        match (&plan.join, plan.pin()) {
            (None, Some(pin)) => {
                if let Some(routes) = self.routes(plan.target) {
                    routes.pin(pin.column, pin.value, id);
                }
            }
            (Some(join), Some(pin)) => {
                let family = Family::of(plan.target, join, &pin);
                if !self.families.contains_key(&family) {
                    for table in plan.tables() {
                        if let Some(routes) = self.routes(table) {
                            routes.families.push(family.clone());
                        }
                    }
                }
                list(self.families.entry(family).or_default(), pin.value, id);
            }
            (_, None) => {
                for table in plan.tables() {
                    if let Some(routes) = self.routes(table) {
                        routes.unpinned.push(id);
                    }
                }
            }
        }
    }

    /// The routes of table `table`, made if it has none yet; `None` for a table the catalog
    /// does not have.
    fn routes(&mut self, table: u32) -> Option<&mut TableRoutes> {
        let layout = &self.catalog.table(table)?.layout;
        Some(
            self.tables
                .entry(table)
                .or_insert_with(|| TableRoutes::new(layout.clone())),
        )
    }

    /// Undoes [`Subscriptions::route`].
    fn unroute(&mut self, id: QueryId, query: &BoundQuery) {
        let plan = query.plan();
        match (&plan.join, plan.pin()) {
            (None, Some(pin)) => {
                if let Some(routes) = self.tables.get_mut(&plan.target) {
                    routes.unpin(pin.column, pin.value, id);
                }
            }
            (Some(join), Some(pin)) => {
                let family = Family::of(plan.target, join, &pin);
                let Some(by_value) = self.families.get_mut(&family) else {
                    return;
                };
                unlist(by_value, pin.value, id);
                if by_value.is_empty() {
                    self.families.remove(&family);
                    for table in plan.tables() {
                        if let Some(routes) = self.tables.get_mut(&table) {
                            forget(&mut routes.families, family.clone());
                        }
                    }
                }
            }
            (_, None) => {
                for table in plan.tables() {
                    if let Some(routes) = self.tables.get_mut(&table) {
                        forget(&mut routes.unpinned, id);
                    }
                }
            }
        }
        for table in plan.tables() {
            if self.tables.get(&table).is_some_and(TableRoutes::is_empty) {
                self.tables.remove(&table);
            }
        }
    }
}
