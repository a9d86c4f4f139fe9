//! The evaluation task: one per server. It owns the registry of live queries and the feed of
//! commits, and turns each commit into the updates of the connections it concerns.
//!
//! # A round
//!
//! The task sleeps until a commit or a request comes, then, on a blocking thread:
//!
//! 1. takes a read transaction of its build's tables ([`Build::datastore`]): no commit can
//!    happen to them while it is held, and every commit they include has been published to
//!    the feed (publishing happens under the writer's lock);
//! 2. drains the feed: exactly the commits the tables include and the task has not seen
//!    (and, once a newer build took over, some of that build's: see "A new build");
//! 3. opens the connections that asked (before the commits, so that a connection's own
//!    reducer commits always find it), then evaluates the commits with
//!    [`Subscriptions::evaluate_batch`], which looks join partners up as of each commit;
//! 4. turns each query's delta into shared rows once ([`QueryRows`]), gathers them per group
//!    of connections with the same query sets ([`Groups`]), and queues one [`SharedUpdate`]
//!    per commit and group to every member (the caller's own marked so, for its writer to
//!    join with its answer): the work and the allocations grow with the queries and groups
//!    a commit affects, not with the connections, which get one push each;
//! 5. keeps the commits in the window of recent commits ([`ResumeWindow`]);
//! 6. under the same read transaction, subscribes and unsubscribes: a new query set's
//!    initial rows are the tables as of the last commit drained (or, for a client that
//!    resumes from an offset the window covers, the net changes of the commits since it),
//!    taken as the rows' pointers ([`Snapshot`]) for the connection's writer to encode, and
//!    its updates start with the next one;
//! 7. releases the transaction and, with a commit log, waits until the last commit is
//!    durable: only then are the round's messages queued ([`Outgoing`]), so that no client
//!    sees a commit a crash could still lose.
//!
//! # A new build
//!
//! When a new build of the module is published (`wasmod publish`), its tables take over in a
//! new datastore from commit `offset` on ([`Database::replace`]), and the swap tells the task
//! so ([`Request::Rebuilt`]) before anything commits to them: every commit of the new build
//! reaches the feed after the request is in the task's queue. The task owns the build it
//! evaluates with (its description, its tables as queries see them, its tables), so a round
//! that drains a `Rebuilt` goes in two steps: the commits before `offset` and the requests
//! before the `Rebuilt`, with the old build and its tables (which keep the old build's last
//! state); then the switch; then the rest, with the new build and a read transaction of its
//! tables.
//!
//! A new build whose tables store rows as the old one's keeps the datastore: the tables then
//! serve both builds, and the first step's read transaction may include the new build's first
//! commits. The step evaluates them too (the batch must end where the tables do), but queues
//! only the old build's updates; the next step evaluates the new build's commits again with
//! its own queries. A subscription of the old build taken in such a step is refused (its rows
//! as of the old build's last commit are no longer there to read). Switching:
//!
//! - binds every connection's query sets again against the new build, from their SQL texts
//!   and the connection's identity ([`super::rebind`]). A set whose tables are the same in
//!   both builds (row types that encode alike, the same visibility filter) carries on without
//!   a message: its rows are the same bytes. Any other ends with a `SubscriptionError` that
//!   says why and to subscribe again; the connection stays open;
//! - starts the window of recent commits afresh at `offset`: a client that applied an earlier
//!   commit holds the old build's rows, and resumes with the full rows;
//! - refuses, from then on, a subscription bound against an older build's tables (it raced
//!   the swap) with a `SubscriptionError` that says to subscribe again.
//!
//! Every update and snapshot carries the description of the build it was made with, and is
//! encoded with it ([`super::writer`]): a pre-swap update still queued is encoded with the old
//! build's row types.
//!
//! # Falling behind
//!
//! The feed holds [`FEED_CAPACITY`](wasmod_host::datastore::FEED_CAPACITY) commits for the
//! task; if it falls a whole ring behind ([`FeedError::Lagged`]), the missed commits' changes
//! are gone, and no connection's view can be trusted. The task then closes every connection
//! ([`close::RESYNC`]: reconnect and subscribe again) and starts afresh. Resending every
//! subscriber's full rows instead would need the protocol to say "replace what you hold",
//! which it does not yet.

use super::broadcast::SharedUpdate;
use super::close::{self, Close};
use super::groups::{GroupId, Groups};
use super::limits::FANOUT_REQUESTS;
use super::outbox::{Outbound, Outbox, Update};
use super::outgoing::Outgoing;
use super::rebind;
use super::rows::QueryRows;
use super::session::{QuerySet, Session};
use super::snapshot::Snapshot;
use super::stats::{Dropped, Registry, Stats};
use super::window::{ResumeWindow, WindowBounds};
use crate::build::Build;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{mpsc, watch};
use wasmod_abi::{ConnectionId, EntryKind, Identity};
use wasmod_host::datastore::{Commit, CommitReceiver, Database, FeedError, Row, Tables};
use wasmod_subscription::{BoundQuery, Deltas, QueryId, Subscriptions};

/// What connections ask of the evaluation task.
#[derive(Debug)]
pub enum Request {
    /// A connection opened: its messages go to `outbox`.
    Open {
        /// The connection.
        connection: ConnectionId,
        /// Who it is: what `:sender` stands for in its queries.
        identity: Identity,
        /// Its outbound queue.
        outbox: Outbox,
    },
    /// Subscribe the connection to `queries` as query set `query_set_id`.
    Subscribe(Subscribing),
    /// End the connection's query set `query_set_id`.
    Unsubscribe {
        /// The connection.
        connection: ConnectionId,
        /// The query set.
        query_set_id: u32,
    },
    /// The connection closed: forget it and its query sets.
    Close {
        /// The connection.
        connection: ConnectionId,
    },
    /// A new build has taken over the module's tables ([`super::Realtime::rebuilt`]).
    Rebuilt {
        /// The new build.
        build: Arc<Build>,
        /// The offset of its first commit: every earlier one was an older build's.
        offset: u64,
    },
}

/// The evaluation task's state, moved onto a blocking thread for each round.
pub struct Evaluator {
    /// The build whose commits the task is evaluating: their description and their tables.
    build: Arc<Build>,
    database: Arc<Database>,
    subscriptions: Subscriptions,
    sessions: HashMap<ConnectionId, Session>,
    groups: Groups,
    window: ResumeWindow,
    stats: Arc<Stats>,
    /// Whether connections or query sets came or went since the counters were last told.
    resized: bool,
    outgoing: Outgoing,
    requests: mpsc::Receiver<Request>,
}

/// What woke the task.
enum Wake {
    Commit(Result<Arc<Commit>, FeedError>),
    Request(Request),
}

impl Evaluator {
    /// An evaluator of the commits of `database`, whose tables `build` serves now, keeping
    /// the recent commits that `resume` bounds for clients that resume; and the sender of its
    /// requests.
    pub fn new(
        build: Arc<Build>,
        database: Arc<Database>,
        resume: WindowBounds,
        stats: Arc<Stats>,
    ) -> (mpsc::Sender<Request>, Self) {
        let (sender, requests) = mpsc::channel(FANOUT_REQUESTS);
        let recovered = database.take_recovered();
        let start = recovered
            .first()
            .map_or(database.next_offset(), |commit| commit.offset);
        let mut window = ResumeWindow::new(resume, start, database.offsets_are_durable());
        if database.recovery().is_some_and(|report| report.upgraded) {
            // The rows clients hold from before this start are an older build's.
            window.restart(start);
        }
        for commit in &recovered {
            window.push(commit);
        }
        let evaluator = Self {
            window,
            stats,
            resized: false,
            outgoing: Outgoing::new(database.log().is_some()),
            subscriptions: Subscriptions::new(build.catalog.clone()),
            build,
            database,
            sessions: HashMap::new(),
            groups: Groups::default(),
            requests,
        };
        (sender, evaluator)
    }

    /// Runs rounds until the server shuts down, the database closes or every requester has
    /// gone.
    pub async fn run(mut self, mut shutdown: watch::Receiver<bool>) {
        let mut feed = self.database.feed().subscribe();
        loop {
            let wake = tokio::select! {
                commit = feed.recv() => Wake::Commit(commit),
                request = self.requests.recv() => match request {
                    Some(request) => Wake::Request(request),
                    None => break,
                },
                () = super::stopped(&mut shutdown) => break,
            };
            if matches!(wake, Wake::Commit(Err(FeedError::Closed))) {
                break;
            }
            let round = tokio::task::spawn_blocking(move || {
                self.round(&mut feed, Some(wake));
                (self, feed)
            });
            match round.await {
                Ok(state) => (self, feed) = state,
                Err(error) => {
                    tracing::error!("the subscription evaluation failed: {error}");
                    return;
                }
            }
        }
        tracing::debug!("the subscription evaluation task has stopped");
    }

    /// One round over the requests and commits waiting (on `feed`), without waiting for
    /// more: what the task does each time it wakes, for code that drives the evaluator by
    /// hand (the fanout benchmark). Call it outside an async runtime.
    pub fn catch_up(&mut self, feed: &mut CommitReceiver) {
        self.round(feed, None);
    }

    /// One round (see the module docs), starting from what woke the task: one step per build
    /// whose commits or requests it drains.
    fn round(&mut self, feed: &mut CommitReceiver, wake: Option<Wake>) {
        let mut commits = Vec::new();
        let mut requests = VecDeque::new();
        match wake {
            Some(Wake::Commit(result)) => self.receive(result, &mut commits),
            Some(Wake::Request(request)) => requests.push_back(request),
            None => {}
        }
        let last = loop {
            let tables = self.build.datastore.begin_read();
            // Under the read transaction, only a newer build's commits can move it: those
            // come after its `Rebuilt`, which the drain below then finds.
            let next_offset = self.database.next_offset();
            loop {
                match feed.try_recv() {
                    Err(FeedError::Empty | FeedError::Closed) => break,
                    result => self.receive(result, &mut commits),
                }
            }
            while let Ok(request) = self.requests.try_recv() {
                requests.push_back(request);
            }
            // This build's requests: up to its `Rebuilt`, which is handled last.
            let mut step = Vec::with_capacity(requests.len());
            let mut rebuilt = None;
            while let Some(request) = requests.pop_front() {
                if let Request::Rebuilt { build, offset } = &request {
                    let kept = Arc::ptr_eq(&build.datastore, &self.build.datastore);
                    rebuilt = Some((*offset, kept));
                }
                step.push(request);
                if rebuilt.is_some() {
                    break;
                }
            }
            let read = match rebuilt {
                None => Read::alone(&tables, next_offset),
                // The new build's commits go to other tables: these end with the old build's.
                Some((offset, false)) => Read::alone(&tables, next_offset.min(offset)),
                // The new build kept the tables: they may hold its first commits already.
                Some((offset, true)) => Read {
                    tables: &tables,
                    next_offset,
                    newer_from: offset.min(next_offset),
                },
            };
            let included = commits.partition_point(|commit| commit.offset < read.next_offset);
            self.step(&read, &commits[..included], step);
            commits.drain(..commits.partition_point(|commit| commit.offset < read.newer_from));
            let last = read.next_offset.checked_sub(1);
            drop(tables);
            if rebuilt.is_none() {
                break last;
            }
        };
        self.release(last);
        if std::mem::take(&mut self.resized) {
            self.stats.registry(self.registry());
        }
    }

    /// One build's part of a round, over the tables `read`: opens the connections that
    /// asked, evaluates `commits` (every commit the tables include that the task has not
    /// seen) and queues the updates of those of its build, then handles the other
    /// `requests`, in order (the last may switch to a newer build).
    fn step(&mut self, read: &Read<'_>, commits: &[Arc<Commit>], requests: Vec<Request>) {
        let (opened, requests): (Vec<_>, Vec<_>) = requests
            .into_iter()
            .partition(|request| matches!(request, Request::Open { .. }));
        for request in opened {
            self.handle(request, read);
        }
        if !commits.is_empty() {
            let changes: Vec<_> = commits.iter().map(|commit| &commit.changes).collect();
            let started = Instant::now();
            let deltas = self.subscriptions.evaluate_batch(&changes, read.tables);
            self.stats.evaluated(commits.len(), started.elapsed());
            // A newer build's commits were evaluated only because the tables include them;
            // they are its to publish, in the next step.
            for (commit, deltas) in commits.iter().zip(deltas) {
                if commit.offset < read.newer_from {
                    self.publish(commit, deltas);
                    self.window.push(commit);
                }
            }
        }
        for request in requests {
            self.handle(request, read);
        }
    }

    /// Evaluates with `build` from now on, whose commits start at `offset`: every
    /// connection's query sets are bound again against its tables, those it cannot carry on
    /// end with a message, and the window of recent commits starts afresh (see the module
    /// docs).
    fn rebuild(&mut self, build: Arc<Build>, offset: u64) {
        self.resized = true;
        let old = std::mem::replace(&mut self.build, build);
        tracing::info!(
            build = self.build.number,
            offset,
            "the subscriptions follow a new build of the module"
        );
        self.subscriptions = Subscriptions::new(self.build.catalog.clone());
        self.groups.clear();
        self.window.restart(offset);
        for (&connection, session) in &mut self.sessions {
            let mut ended = Vec::new();
            for (&query_set_id, set) in &mut session.sets {
                let added = rebind::rebind(&old, &self.build, session.identity, &set.texts)
                    .and_then(|queries| add_all(&mut self.subscriptions, queries));
                match added {
                    Ok(queries) => set.queries = queries,
                    Err(reason) => ended.push((query_set_id, rebind::ended(query_set_id, &reason))),
                }
            }
            for (query_set_id, message) in ended {
                session.sets.remove(&query_set_id);
                let error = Outbound::SubscriptionError {
                    query_set_id,
                    message,
                };
                self.outgoing.send(connection, &session.outbox, error);
            }
            self.groups
                .regroup(connection, session.signature(), &session.outbox);
        }
    }

    /// Sends the round's held messages once commit `last` (the last one the round's tables
    /// include) is durable, and forgets the connections whose queue overflowed.
    fn release(&mut self, last: Option<u64>) {
        if self.outgoing.holds() {
            let durable = last.map_or(Ok(()), |last| self.database.durable(last).wait());
            match durable {
                Ok(()) => self.outgoing.release(&self.sessions),
                Err(error) => {
                    self.outgoing.discard();
                    tracing::error!("the commit log failed: closing every connection: {error}");
                    let reason = format!("the server's commit log failed: {error}");
                    self.close_everyone(Close::new(close::INTERNAL, reason));
                }
            }
        }
        for connection in self.outgoing.take_overflowed() {
            self.forget(connection);
        }
    }

    /// The sizes of the registry, for the counters.
    fn registry(&self) -> Registry {
        let sets = self
            .sessions
            .values()
            .flat_map(|session| session.sets.values());
        Registry {
            connections: self.sessions.len(),
            query_sets: sets.clone().count(),
            subscribed_queries: sets.map(|set| set.queries.len()).sum(),
            distinct_queries: self.subscriptions.len(),
        }
    }

    /// Adds a commit received from the feed to `commits`; a lag forgets them and every
    /// connection.
    fn receive(&mut self, result: Result<Arc<Commit>, FeedError>, commits: &mut Vec<Arc<Commit>>) {
        match result {
            Ok(commit) => commits.push(commit),
            Err(FeedError::Lagged { missed }) => {
                commits.clear();
                self.resynchronise(missed);
            }
            Err(FeedError::Closed | FeedError::Empty) => {}
        }
    }

    /// Queues commit `commit`'s update to every connection whose query sets `deltas` changed
    /// (one update per group, shared by its members), and to the connection whose reducer
    /// call made it.
    fn publish(&mut self, commit: &Arc<Commit>, deltas: Deltas) {
        let mut changes: HashMap<GroupId, BTreeMap<u32, Vec<Arc<QueryRows>>>> = HashMap::new();
        for (query, delta) in deltas {
            let delta = match delta {
                Ok(delta) => delta,
                Err(error) => {
                    tracing::error!(
                        query = query.get(),
                        "a query could not be evaluated: {error}"
                    );
                    continue;
                }
            };
            let Some(table) = self.subscriptions.query(query).map(BoundQuery::table) else {
                continue;
            };
            let rows = match self.rows(table, &delta.inserted, &delta.deleted) {
                Ok(rows) => rows,
                Err(error) => {
                    tracing::error!(query = query.get(), "a query's delta is not sent: {error}");
                    continue;
                }
            };
            for (group, set) in self.groups.of(query) {
                let sets = changes.entry(group).or_default();
                sets.entry(set).or_default().push(rows.clone());
            }
        }
        let caller = commit.meta.connection_id;
        let own = self.called_reducer(commit) && self.sessions.contains_key(&caller);
        let caller_reached = self
            .groups
            .group_of(caller)
            .is_some_and(|group| changes.contains_key(&group));
        let mut delivered = 0;
        for (group, sets) in changes {
            let update = Arc::new(SharedUpdate::new(
                self.build.module.clone(),
                commit.clone(),
                sets.into_iter().collect(),
            ));
            for (connection, outbox) in self.groups.members(group) {
                let update = Update {
                    shared: update.clone(),
                    own: own && connection == caller,
                };
                delivered += 1;
                self.outgoing
                    .send(connection, outbox, Outbound::Update(update));
            }
        }
        if own && !caller_reached {
            if let Some(session) = self.sessions.get(&caller) {
                let update = Update {
                    shared: Arc::new(SharedUpdate::new(
                        self.build.module.clone(),
                        commit.clone(),
                        Vec::new(),
                    )),
                    own: true,
                };
                delivered += 1;
                self.outgoing
                    .send(caller, &session.outbox, Outbound::Update(update));
            }
        }
        self.stats.updates(delivered);
    }

    /// Whether a client's reducer call made `commit` (not a lifecycle reducer, which the host
    /// calls, nor a procedure's transaction): its caller's connection then waits for it.
    fn called_reducer(&self, commit: &Commit) -> bool {
        let Some(entry) = &commit.meta.entry else {
            return false;
        };
        entry.kind == EntryKind::Reducer
            && self
                .build
                .module
                .reducers
                .iter()
                .any(|reducer| *reducer.name == *entry.name && reducer.lifecycle.is_none())
    }

    /// Handles one request, with the tables `read`.
    fn handle(&mut self, request: Request, read: &Read<'_>) {
        self.resized = true;
        match request {
            Request::Open {
                connection,
                identity,
                outbox,
            } => {
                self.sessions
                    .insert(connection, Session::new(identity, outbox));
            }
            Request::Subscribe(set) => self.subscribe(set, read),
            Request::Unsubscribe {
                connection,
                query_set_id,
            } => self.unsubscribe(connection, query_set_id),
            Request::Close { connection } => self.forget(connection),
            Request::Rebuilt { build, offset } => self.rebuild(build, offset),
        }
    }

    /// Subscribes a connection to a query set, all or nothing, and queues its rows (in the
    /// tables `read`): the changes since the client's `resume_from` if the window still holds
    /// every commit after it, all of them otherwise.
    fn subscribe(&mut self, subscribing: Subscribing, read: &Read<'_>) {
        let Subscribing {
            connection,
            query_set_id,
            texts,
            queries,
            build,
            resume_from,
        } = subscribing;
        let Some(session) = self.sessions.get(&connection) else {
            return;
        };
        let outbox = session.outbox.clone();
        let refuse = |outgoing: &mut Outgoing, message: String| {
            let error = Outbound::SubscriptionError {
                query_set_id,
                message,
            };
            outgoing.send(connection, &outbox, error);
        };
        if session.sets.contains_key(&query_set_id) {
            let message = format!("query set {query_set_id} is already subscribed");
            return refuse(&mut self.outgoing, message);
        }
        // Bound against an older build's tables, or this build's while the tables already
        // hold a newer build's commits: its rows as of this build's last commit are gone.
        if build != self.build.number || read.newer_from < read.next_offset {
            return refuse(&mut self.outgoing, rebind::raced(query_set_id));
        }
        let tables = read.tables;
        let missed = resume_from.and_then(|applied| self.window.since(applied));
        let offset = read.next_offset.saturating_sub(1);
        let module = self.build.module.clone();
        let mut snapshot = Snapshot::new(module, query_set_id, offset, missed.is_some());
        let taken = match missed {
            Some(commits) => self.changes_since(&queries, &commits, tables, &mut snapshot),
            None => self.initial_rows(&queries, tables, &mut snapshot),
        };
        if let Err(message) = taken {
            return refuse(&mut self.outgoing, message);
        }
        let bytes = snapshot.bytes();
        if !outbox.fits(bytes) {
            let message = format!(
                "the subscription's {} rows take {bytes} bytes to hold until they are sent, \
                 more than this connection may have queued",
                snapshot.rows()
            );
            return refuse(&mut self.outgoing, message);
        }
        let queries = match add_all(&mut self.subscriptions, queries) {
            Ok(queries) => queries,
            Err(message) => return refuse(&mut self.outgoing, message),
        };
        if let Some(session) = self.sessions.get_mut(&connection) {
            session
                .sets
                .insert(query_set_id, QuerySet { texts, queries });
            self.groups
                .regroup(connection, session.signature(), &session.outbox);
        }
        let applied = Outbound::Applied(Box::new(snapshot));
        self.outgoing.send(connection, &outbox, applied);
    }

    /// Adds the rows of each of `queries` in `tables` to `snapshot`.
    fn initial_rows(
        &self,
        queries: &[BoundQuery],
        tables: &Tables,
        snapshot: &mut Snapshot,
    ) -> Result<(), String> {
        for query in queries {
            let rows = query.evaluate(tables).map_err(|error| error.to_string())?;
            snapshot.push(self.table_name(query.table()), rows, Vec::new());
        }
        Ok(())
    }

    /// Adds what `commits` changed in each of `queries` to `snapshot`: for a client that
    /// holds their rows as of just before the first of them.
    fn changes_since(
        &self,
        queries: &[BoundQuery],
        commits: &[Arc<Commit>],
        tables: &Tables,
        snapshot: &mut Snapshot,
    ) -> Result<(), String> {
        let changes: Vec<_> = commits.iter().map(|commit| &commit.changes).collect();
        let deltas = wasmod_subscription::changes_since(queries, &changes, tables)
            .map_err(|error| error.to_string())?;
        for (query, delta) in queries.iter().zip(deltas) {
            snapshot.push(
                self.table_name(query.table()),
                delta.inserted,
                delta.deleted,
            );
        }
        Ok(())
    }

    /// The name of table `table`.
    fn table_name(&self, table: u32) -> &str {
        self.build
            .module
            .tables
            .get(table as usize)
            .map_or("", |table| &table.name)
    }

    /// The rows `inserted` and `deleted` of table `table`, shared; an error if they are more
    /// than one message can carry.
    fn rows(
        &self,
        table: u32,
        inserted: &[Row],
        deleted: &[Row],
    ) -> Result<Arc<QueryRows>, String> {
        QueryRows::new(self.table_name(table), inserted, deleted)
            .map(Arc::new)
            .ok_or_else(|| "the rows are more than one message can carry (4 GiB)".to_owned())
    }

    /// Ends `connection`'s query set `query_set_id`.
    fn unsubscribe(&mut self, connection: ConnectionId, query_set_id: u32) {
        let Some(session) = self.sessions.get_mut(&connection) else {
            return;
        };
        match session.sets.remove(&query_set_id) {
            Some(set) => {
                self.groups
                    .regroup(connection, session.signature(), &session.outbox);
                for id in set.queries {
                    self.subscriptions.remove(id);
                }
            }
            None => {
                let error = Outbound::SubscriptionError {
                    query_set_id,
                    message: format!("query set {query_set_id} is not subscribed"),
                };
                self.outgoing.send(connection, &session.outbox, error);
            }
        }
    }

    /// Forgets `connection` and its query sets.
    fn forget(&mut self, connection: ConnectionId) {
        let Some(session) = self.sessions.remove(&connection) else {
            return;
        };
        self.resized = true;
        self.groups.leave(connection);
        for id in session.sets.into_values().flat_map(|set| set.queries) {
            self.subscriptions.remove(id);
        }
    }

    /// The task missed `missed` commits: every connection is closed and forgotten.
    fn resynchronise(&mut self, missed: u64) {
        tracing::warn!(
            missed,
            connections = self.sessions.len(),
            "the subscription evaluation fell behind the commit feed: closing every connection"
        );
        let reason = format!(
            "the server fell {missed} commits behind and lost this connection's updates: reconnect and subscribe again"
        );
        self.stats.dropped(Dropped::Lagged, self.sessions.len());
        self.close_everyone(Close::new(close::RESYNC, reason));
    }

    /// Closes every connection with `close`, and forgets them and their queries.
    fn close_everyone(&mut self, close: Close) {
        self.resized = true;
        for (_, session) in self.sessions.drain() {
            session.outbox.close(close.clone());
        }
        self.groups.clear();
        self.subscriptions = Subscriptions::new(self.build.catalog.clone());
    }
}

/// The tables one step of a round reads.
struct Read<'a> {
    /// The tables, under a read transaction.
    tables: &'a Tables,
    /// The offset of the first commit they do not include.
    next_offset: u64,
    /// The offset of the first commit they include that is a newer build's (a build that
    /// kept the tables, and committed to them before the transaction began); `next_offset`
    /// if none is.
    newer_from: u64,
}

impl<'a> Read<'a> {
    /// `tables`, which include the commits before `next_offset`, all of the task's build.
    fn alone(tables: &'a Tables, next_offset: u64) -> Self {
        Self {
            tables,
            next_offset,
            newer_from: next_offset,
        }
    }
}

/// A query set to subscribe ([`Request::Subscribe`]).
#[derive(Debug)]
pub struct Subscribing {
    /// The connection.
    pub connection: ConnectionId,
    /// The client's id for the query set.
    pub query_set_id: u32,
    /// The queries as the client wrote them, one per query.
    pub texts: Vec<String>,
    /// The queries, parsed, checked and bound to the connection's identity.
    pub queries: Vec<BoundQuery>,
    /// The number of the build whose tables `queries` were bound against
    /// ([`Build::number`]).
    pub build: u64,
    /// The last offset the client applied, if it is resuming.
    pub resume_from: Option<u64>,
}

/// Adds every one of `queries` to `subscriptions`, all or nothing: their ids, or why one
/// could not be added (the others are removed again).
fn add_all(
    subscriptions: &mut Subscriptions,
    queries: Vec<BoundQuery>,
) -> Result<Vec<QueryId>, String> {
    let mut added = Vec::with_capacity(queries.len());
    for query in queries {
        match subscriptions.add(query) {
            Ok(id) => added.push(id),
            Err(error) => {
                for id in added {
                    subscriptions.remove(id);
                }
                return Err(error.to_string());
            }
        }
    }
    Ok(added)
}

impl fmt::Debug for Evaluator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Evaluator")
            .field("connections", &self.sessions.len())
            .field("groups", &self.groups.len())
            .field("queries", &self.subscriptions.len())
            .finish()
    }
}
