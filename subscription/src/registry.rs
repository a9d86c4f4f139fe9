//! The registry of live queries, and the evaluation of a commit over all of them.
//!
//! Three things keep a commit's evaluation proportional to what it changed, not to how many
//! queries there are:
//!
//! - **Dedup.** Identical queries (equal [`BoundQuery`]s, however they were written) are one
//!   entry with a count of subscribers, evaluated once per commit.
//! - **Routing by table.** Each query is listed under the tables it reads; a commit looks only
//!   at the lists of the tables it changed.
//! - **Routing by value.** A query of one table whose filter requires `column = v` (alone or
//!   `AND`ed with more conditions; `v` may be `:sender`, bound) is listed under
//!   `(table, column, v)` instead: for each changed row, the registry reads the row's
//!   `column`, looks the value up, and evaluates only the queries listed under it. A commit
//!   that touches one row of a table with 100,000 such queries on distinct values evaluates one
//!   (two for an update that changes the value).
//!
//! Joins are routed by table only (under both of their tables).

use crate::catalog::Catalog;
use crate::column::RowLayout;
use crate::error::QueryError;
use crate::eval::{filter_changes, join_delta, not_in_catalog, Delta, Later, Layouts, State};
use crate::plan::{Bytes, Plan};
use crate::query::BoundQuery;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use wasmod_datastore::{Row, TableChanges, Tables, TxData};

type Hasher = foldhash::fast::RandomState;

/// The deltas of one commit: each query whose rows it changed, by increasing id, with its
/// delta, or the error its evaluation met (a query checked against another module's tables
/// than the ones it is evaluated on).
pub type Deltas = Vec<(QueryId, Result<Delta, QueryError>)>;

/// Identifies one distinct query of a [`Subscriptions`], for as long as it has subscribers
/// (then the id may be given to another query).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QueryId(u32);

impl QueryId {
    /// The id as a number, for maps and logs.
    pub fn get(self) -> u32 {
        self.0
    }
}

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
    evaluations: u64,
}

struct Entry {
    query: BoundQuery,
    subscribers: usize,
}

/// Queries listed under one column, by the value they require.
type ByValue = HashMap<Bytes, Vec<QueryId>, Hasher>;

/// The queries listed under one table.
struct TableRoutes {
    layout: RowLayout,
    /// Queries of this table alone that require `column = value`, by column, then by value.
    pinned: Vec<(u16, ByValue)>,
    /// Every other query that reads this table.
    unpinned: Vec<QueryId>,
}

/// The rows of one changed table that were routed to one query by value.
#[derive(Default)]
struct Routed<'r> {
    inserted: Vec<&'r Row>,
    deleted: Vec<&'r Row>,
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
        let mut later = Later::default();
        let mut deltas = Vec::with_capacity(commits.len());
        for changes in commits.iter().rev() {
            let state = State {
                tables,
                later: &later,
            };
            deltas.push(self.evaluate_in(changes, state));
            later.prepend(changes);
        }
        deltas.reverse();
        deltas
    }

    /// [`Subscriptions::evaluate`] in the tables `state`.
    fn evaluate_in(&mut self, changes: &TxData, state: State<'_>) -> Deltas {
        let mut results = Vec::new();
        let mut evaluated: HashSet<QueryId, Hasher> = HashSet::default();
        for table in &changes.tables {
            let Some(routes) = self.tables.get(&table.table) else {
                continue;
            };
            for (id, routed) in routes.by_value(table) {
                evaluated.insert(id);
                let delta = self.single(id, routed.inserted, routed.deleted);
                results.push((id, delta));
            }
            for &id in &routes.unpinned {
                if !evaluated.insert(id) {
                    continue;
                }
                let delta = match self.entry(id) {
                    Some(entry) if entry.query.plan().join.is_some() => {
                        self.join(&entry.query, changes, state)
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

    /// The delta of the one-table query `id` from its table's changed rows `inserted` and
    /// `deleted`.
    fn single<'r>(
        &self,
        id: QueryId,
        inserted: impl IntoIterator<Item = &'r Row>,
        deleted: impl IntoIterator<Item = &'r Row>,
    ) -> Result<Delta, QueryError> {
        let entry = self.entry(id).ok_or_else(not_in_catalog)?;
        let plan = entry.query.plan();
        let layouts = Layouts::of(&self.catalog, plan).ok_or_else(not_in_catalog)?;
        Ok(filter_changes(plan, &layouts, inserted, deleted))
    }

    fn join(
        &self,
        query: &BoundQuery,
        changes: &TxData,
        state: State<'_>,
    ) -> Result<Delta, QueryError> {
        let plan = query.plan();
        let layouts = Layouts::of(&self.catalog, plan).ok_or_else(not_in_catalog)?;
        match &plan.join {
            Some(join) => join_delta(plan, join, &layouts, changes, state),
            None => Err(not_in_catalog()),
        }
    }

    fn entry(&self, id: QueryId) -> Option<&Entry> {
        self.queries.get(id.0 as usize)?.as_ref()
    }

    fn entry_mut(&mut self, id: QueryId) -> Option<&mut Entry> {
        self.queries.get_mut(id.0 as usize)?.as_mut()
    }

    /// Lists query `id` under the tables (or the value) that route commits to it.
    fn route(&mut self, id: QueryId, query: &BoundQuery) {
        let plan = query.plan();
        let pin = plan.pin();
        for table in routed_tables(plan, pin.is_some()) {
            let Some(info) = self.catalog.table(table) else {
                continue;
            };
            let routes = self.tables.entry(table).or_insert_with(|| TableRoutes {
                layout: info.layout.clone(),
                pinned: Vec::new(),
                unpinned: Vec::new(),
            });
            match pin {
                Some((column, value)) => routes.pin(column, value, id),
                None => routes.unpinned.push(id),
            }
        }
    }

    /// Undoes [`Subscriptions::route`].
    fn unroute(&mut self, id: QueryId, query: &BoundQuery) {
        let plan = query.plan();
        let pin = plan.pin();
        for table in routed_tables(plan, pin.is_some()) {
            let Some(routes) = self.tables.get_mut(&table) else {
                continue;
            };
            match pin {
                Some((column, value)) => routes.unpin(column, value, id),
                None => forget(&mut routes.unpinned, id),
            }
            if routes.pinned.is_empty() && routes.unpinned.is_empty() {
                self.tables.remove(&table);
            }
        }
    }
}

/// The tables a query is listed under: its target alone if it is routed by value, else every
/// table it reads.
fn routed_tables(plan: &Plan<Bytes>, by_value: bool) -> Vec<u32> {
    match by_value {
        true => vec![plan.target],
        false => plan.tables().collect(),
    }
}

/// Removes `id` from `ids`.
fn forget(ids: &mut Vec<QueryId>, id: QueryId) {
    if let Some(position) = ids.iter().position(|listed| *listed == id) {
        ids.swap_remove(position);
    }
}

impl TableRoutes {
    /// Lists query `id` under `column = value`.
    fn pin(&mut self, column: u16, value: &Bytes, id: QueryId) {
        let position = match self.pinned.iter().position(|(pinned, _)| *pinned == column) {
            Some(position) => position,
            None => {
                self.pinned.push((column, HashMap::default()));
                self.pinned.len() - 1
            }
        };
        self.pinned[position]
            .1
            .entry(value.clone())
            .or_default()
            .push(id);
    }

    /// Undoes [`TableRoutes::pin`].
    fn unpin(&mut self, column: u16, value: &Bytes, id: QueryId) {
        let Some((_, by_value)) = self.pinned.iter_mut().find(|(pinned, _)| *pinned == column)
        else {
            return;
        };
        if let Some(ids) = by_value.get_mut(value) {
            forget(ids, id);
            if ids.is_empty() {
                by_value.remove(value);
            }
        }
        self.pinned.retain(|(_, by_value)| !by_value.is_empty());
    }

    /// The changed rows of `changes`, grouped by the pinned queries they are routed to.
    fn by_value<'r>(&self, changes: &'r TableChanges) -> HashMap<QueryId, Routed<'r>, Hasher> {
        let mut routed: HashMap<QueryId, Routed<'r>, Hasher> = HashMap::default();
        for (column, by_value) in &self.pinned {
            let mut send = |row: &'r Row, inserted: bool| {
                let value = self.layout.column(row, usize::from(*column));
                for &id in value
                    .and_then(|value| by_value.get(value))
                    .into_iter()
                    .flatten()
                {
                    let rows = routed.entry(id).or_default();
                    match inserted {
                        true => rows.inserted.push(row),
                        false => rows.deleted.push(row),
                    }
                }
            };
            changes.inserted.iter().for_each(|row| send(row, true));
            changes.deleted.iter().for_each(|row| send(row, false));
        }
        routed
    }
}
