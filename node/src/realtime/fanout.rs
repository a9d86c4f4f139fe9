//! The evaluation task: one per node. It owns the registry of live queries and the feed of
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
//! 5. keeps the commits in the window of recent commits ([`ResumeWindow`]), which starts with
//!    the last commits before the task began, those read back from the log included
//!    ([`Database::take_recent`], taken with the task's subscription to the feed);
//! 6. under the same read transaction, subscribes and unsubscribes: a new query set's
//!    initial rows are the tables as of the last commit drained (or, for a client that
//!    resumes from an offset the window covers, the net changes of the commits since it),
//!    taken as the rows' pointers ([`Snapshot`]) for the connection's writer to encode, and
//!    its updates start with the next one;
//! 7. releases the transaction and, with a commit log, waits until the last commit is
//!    durable: only then are the round's messages queued ([`Outgoing`]), so that no client
//!    sees a commit a crash could still lose.
//!
//! # Waiting for an offset
//!
//! A connection's `WaitFor { offset }` is a request like a subscription, handled in its place
//! among the round's requests: once the task has published every commit up to `offset` (its
//! updates queued for every connection before anything after them), it queues `CaughtUp`
//! to the connection behind them, so the client has applied everything up to `offset` when
//! it reads the answer. A wait for a commit still to come is kept in the connection's session
//! (at most [`MAX_WAITS`](super::limits::MAX_WAITS)) and answered in the step that publishes
//! that commit, after its updates.
//!
//! # Subscribing without holding commits back
//!
//! No commit can happen while the round holds its read transaction, and a new query set's
//! first rows are read under it: what clients subscribe to would otherwise decide how long
//! commits wait (a thousand subscriptions to a large table held a reducer for seconds). So
//! the first evaluations of a read transaction make at most [`SubscriptionLimits::reads`]
//! reads together (a row found, or a comparison checked on it), counted as they go
//! ([`wasmod_subscription::Budget`]): a query set that would read past what is left is put
//! off, with every request after it, to the next round, which takes a new read transaction
//! once the commits waiting have gone; one that reads more on its own is refused. A query
//! set's rows are counted against its connection's outbound bytes the same way, so that a
//! refusal has cost at most the budget. The caps on query sets per connection and distinct
//! queries per identity ([`SubscriptionLimits`]) are checked before anything is read.
//!
//! A client that resumes (`resume_from` inside the window) is sent what changed since, which
//! is read under the same transaction and draws on the same budget: each row the commits
//! since changed in a table a query reads costs the query's cost, counted before anything is
//! evaluated ([`wasmod_subscription::changes_since_within`]). A resume that costs more than a
//! whole transaction may read gets the rows as they are instead, read within the budget.
//!
//! # Fair service
//!
//! Every connection's subscriptions and waits go through this one task, so the order it takes
//! them in decides who waits. Each step orders its requests by what their identity's
//! subscriptions made the task read lately, refused ones included (`spent`, halved every
//! second), least first, each identity's own in the order they came: a client that repeats
//! expensive subscriptions goes behind everyone who does not, and a new client is served
//! within a round or two. Each connection has at most
//! [`MAX_REQUESTS_QUEUED`](super::limits::MAX_REQUESTS_QUEUED) requests waiting here; its
//! reader waits past them, so a flood waits in the flooding client's socket.
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
use super::held::Held;
use super::limits::{FANOUT_REQUESTS, MAX_WAITS};
use super::outbox::{Outbound, Outbox, Update};
use super::outgoing::Outgoing;
use super::rebind;
use super::rows::QueryRows;
use super::session::{QuerySet, Session, Wait};
use super::snapshot::Snapshot;
use super::spent::Spent;
use super::stats::{Dropped, Registry, Stats};
use super::texts::Texts;
use super::window::{ResumeWindow, WindowBounds};
use super::SubscriptionLimits;
use crate::build::Build;
use crate::memory::Charge;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fmt;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{mpsc, watch, Semaphore};
use wasmod_abi::{ConnectionId, EntryKind, Identity};
use wasmod_host::datastore::{Commit, CommitReceiver, Database, FeedError, Row, Tables};
use wasmod_protocol::errors::{ApiError, ErrorCode};
use wasmod_subscription::{BoundQuery, Budget, BudgetError, Deltas, QueryId, Subscriptions};

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
        /// Its turns of requests, one taken by its reader for each request it sends
        /// ([`MAX_REQUESTS_QUEUED`](super::limits::MAX_REQUESTS_QUEUED)).
        queued: Arc<Semaphore>,
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
    /// Answer `CaughtUp` to the connection once every update of the commits up to the wait's
    /// offset is queued for it.
    WaitFor {
        /// The connection.
        connection: ConnectionId,
        /// The request.
        wait: Wait,
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
    /// The commits, from the first after those the window started with.
    feed: CommitReceiver,
    stats: Arc<Stats>,
    /// Whether connections or query sets came or went since the counters were last told.
    resized: bool,
    outgoing: Outgoing,
    requests: mpsc::Receiver<Request>,
    limits: SubscriptionLimits,
    /// Each identity's distinct queries, and what they cost.
    held: Held,
    /// The query sets' texts, each held once.
    texts: Texts,
    /// The rows the first evaluations may still read under the round's read transaction.
    reads: usize,
    /// Requests put off to the next round, in the order they came.
    pending: VecDeque<Request>,
    /// Commits received that the tables of a round put off did not include (a newer
    /// build's), for the next round.
    carried: Vec<Arc<Commit>>,
    /// The offset of the next commit to publish: every earlier one's updates are queued.
    published: u64,
    /// The connections with `WaitFor` requests waiting for a later commit.
    waiting: HashSet<ConnectionId>,
    /// What each identity's subscriptions have read lately, refused ones included: who is
    /// served first ("Fair service").
    spent: Spent<Identity>,
}

/// What woke the task.
enum Wake {
    Commit(Result<Arc<Commit>, FeedError>),
    Request(Request),
}

impl Evaluator {
    /// An evaluator of the commits of `database`, whose tables `build` serves now, keeping
    /// the recent commits that `resume` bounds for clients that resume, and subscribing
    /// within `limits`; and the sender of its requests.
    pub fn new(
        build: Arc<Build>,
        database: Arc<Database>,
        resume: WindowBounds,
        limits: SubscriptionLimits,
        stats: Arc<Stats>,
    ) -> (mpsc::Sender<Request>, Self) {
        let (sender, requests) = mpsc::channel(FANOUT_REQUESTS);
        // The last commits before this start and the start's own (the disconnections of the
        // connections a crash left open): the clients connected at the crash resume past them.
        let recent = database.take_recent();
        let start = recent
            .commits
            .first()
            .map_or(recent.next, |commit| commit.offset);
        let mut window = ResumeWindow::new(resume, start, database.offsets_are_durable());
        if database
            .recovery()
            .is_some_and(|report| report.rows_reencoded)
        {
            // The rows clients hold from before this start are encoded as an older build's;
            // the upgrade left no earlier commit in the log, so `start` is this run's first.
            window.restart(start);
        }
        for commit in &recent.commits {
            window.push(commit);
        }
        let evaluator = Self {
            published: recent.next,
            waiting: HashSet::new(),
            feed: recent.feed,
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
            limits,
            held: Held::default(),
            texts: Texts::default(),
            reads: limits.reads,
            pending: VecDeque::new(),
            carried: Vec::new(),
            spent: Spent::new(),
        };
        (sender, evaluator)
    }

    /// Runs rounds until the node stops, the database closes or every requester has
    /// gone.
    pub async fn run(mut self, mut shutdown: watch::Receiver<bool>) {
        loop {
            let put_off = !self.pending.is_empty();
            let wake = tokio::select! {
                commit = self.feed.recv() => Some(Wake::Commit(commit)),
                request = self.requests.recv() => match request {
                    Some(request) => Some(Wake::Request(request)),
                    None => break,
                },
                () = crate::stopped(&mut shutdown) => break,
                () = std::future::ready(()), if put_off => None,
            };
            if matches!(wake, Some(Wake::Commit(Err(FeedError::Closed)))) {
                break;
            }
            let round = tokio::task::spawn_blocking(move || {
                self.round(wake);
                self
            });
            match round.await {
                Ok(state) => self = state,
                Err(error) => {
                    tracing::error!("the subscription evaluation failed: {error}");
                    return;
                }
            }
        }
        tracing::debug!("the subscription evaluation task has stopped");
    }

    /// Rounds over the requests and commits waiting, without waiting for more, until none is
    /// put off: what the task does each time it wakes, for code that drives the evaluator by
    /// hand (the fanout benchmark). Call it outside an async runtime.
    #[cfg(any(test, feature = "internals"))]
    pub fn catch_up(&mut self) {
        self.round(None);
        while !self.pending.is_empty() {
            self.round(None);
        }
    }

    /// One round (see the module docs), starting from what woke the task: one step per build
    /// whose commits or requests it drains.
    fn round(&mut self, wake: Option<Wake>) {
        self.stats.evaluation_lag().waiting();
        let mut commits = std::mem::take(&mut self.carried);
        let mut requests = std::mem::take(&mut self.pending);
        match wake {
            Some(Wake::Commit(result)) => self.receive(result, &mut commits),
            Some(Wake::Request(request)) => requests.push_back(request),
            None => {}
        }
        let last = loop {
            let tables = self.build.datastore.begin_read();
            self.reads = self.limits.reads;
            // Under the read transaction, only a newer build's commits can move it: those
            // come after its `Rebuilt`, which the drain below then finds.
            let next_offset = self.database.next_offset();
            loop {
                match self.feed.try_recv() {
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
            let finished = self.step(&read, &commits[..included], step);
            commits.drain(..commits.partition_point(|commit| commit.offset < read.newer_from));
            let last = read.next_offset.checked_sub(1);
            drop(tables);
            if !finished {
                // What the step put off goes first next round, then the rest, in order.
                self.pending.extend(requests);
                self.carried = commits;
                break last;
            }
            if rebuilt.is_none() {
                break last;
            }
        };
        self.release(last);
        if self.pending.is_empty() && self.carried.is_empty() {
            self.stats.evaluation_lag().caught_up();
        }
        if std::mem::take(&mut self.resized) {
            self.stats.registry(self.registry());
        }
    }

    /// One build's part of a round, over the tables `read`: opens the connections that
    /// asked, evaluates `commits` (every commit the tables include that the task has not
    /// seen) and queues the updates of those of its build, then handles the other
    /// `requests`, in order (the last may switch to a newer build). Returns `false` if it
    /// put a subscription off, and with it every request after it, to the next round.
    fn step(&mut self, read: &Read<'_>, commits: &[Arc<Commit>], requests: Vec<Request>) -> bool {
        let (opened, mut requests): (Vec<_>, Vec<_>) = requests
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
                    self.published = commit.offset + 1;
                }
            }
            self.answer_waits();
        }
        self.spent.decay();
        self.in_fair_order(&mut requests);
        let mut requests = requests.into_iter();
        while let Some(request) = requests.next() {
            if let Some(put_off) = self.handle(request, read) {
                self.pending.push_back(Request::Subscribe(put_off));
                self.pending.extend(requests);
                return false;
            }
        }
        true
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
        self.held.clear();
        self.window.restart(offset);
        for (&connection, session) in &mut self.sessions {
            let identity = session.identity;
            let ended = session.rebind(|set| {
                rebind::rebind(&old, &self.build, identity, &set.texts)
                    .and_then(|queries| add_all(&mut self.subscriptions, queries))
            });
            for (query_set_id, reason) in ended {
                let error = Outbound::SubscriptionError {
                    query_set_id,
                    message: rebind::ended(query_set_id, &reason),
                };
                self.outgoing.send(connection, &session.outbox, error);
            }
            for (&set, queries) in session.sets() {
                self.groups
                    .add(connection, set, &queries.queries, &session.outbox);
                self.held
                    .hold(identity, &queries.queries, &self.subscriptions);
            }
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
        let sessions = self.sessions.values();
        Registry {
            connections: self.sessions.len(),
            query_sets: sessions.clone().map(|session| session.sets().len()).sum(),
            subscribed_queries: sessions.map(Session::queries).sum(),
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

    /// Orders `requests` (one build's, but for a `Rebuilt`, which stays last) for fair
    /// service: those of the identities whose subscriptions read least lately first, each
    /// identity's in the order they came (a stable sort by identity).
    fn in_fair_order(&self, requests: &mut Vec<Request>) {
        let rebuilt = match requests.last() {
            Some(Request::Rebuilt { .. }) => requests.pop(),
            _ => None,
        };
        requests.sort_by_cached_key(|request| {
            let identity = request
                .connection()
                .and_then(|connection| self.sessions.get(&connection))
                .map(|session| session.identity);
            identity.map_or(0, |identity| self.spent.of(&identity))
        });
        requests.extend(rebuilt);
    }

    /// Handles one request, with the tables `read`; returns a subscription it put off to the
    /// next round. A request a connection's reader took a turn for gives it back once handled.
    fn handle(&mut self, request: Request, read: &Read<'_>) -> Option<Subscribing> {
        let turn = match &request {
            Request::Subscribe(Subscribing { connection, .. })
            | Request::Unsubscribe { connection, .. }
            | Request::WaitFor { connection, .. } => Some(*connection),
            _ => None,
        };
        let put_off = self.handle_request(request, read);
        if put_off.is_none() {
            if let Some(session) = turn.and_then(|connection| self.sessions.get(&connection)) {
                session.handled();
            }
        }
        put_off
    }

    fn handle_request(&mut self, request: Request, read: &Read<'_>) -> Option<Subscribing> {
        if let Request::WaitFor { connection, wait } = request {
            self.wait(connection, wait);
            return None;
        }
        self.resized = true;
        match request {
            Request::Open {
                connection,
                identity,
                outbox,
                queued,
            } => {
                self.sessions
                    .insert(connection, Session::new(identity, outbox, queued));
            }
            Request::Subscribe(set) => return self.subscribe(set, read),
            Request::Unsubscribe {
                connection,
                query_set_id,
            } => self.unsubscribe(connection, query_set_id),
            Request::Close { connection } => self.forget(connection),
            Request::Rebuilt { build, offset } => self.rebuild(build, offset),
            Request::WaitFor { .. } => {}
        }
        None
    }

    /// Answers `connection`'s `wait` if its commit is published, keeps it otherwise (or
    /// refuses it, past the connection's bound).
    fn wait(&mut self, connection: ConnectionId, wait: Wait) {
        let Some(session) = self.sessions.get_mut(&connection) else {
            return;
        };
        let answer = if wait.offset < self.published {
            caught_up(wait)
        } else if session.wait(wait).is_ok() {
            self.waiting.insert(connection);
            return;
        } else {
            Outbound::Refused {
                request_id: wait.request_id,
                offset: self.published.saturating_sub(1),
                error: Box::new(ApiError::new(
                    ErrorCode::Busy,
                    format!(
                        "more than {MAX_WAITS} WaitFor requests wait on this connection: wait \
                         for one of them first"
                    ),
                )),
            }
        };
        self.outgoing.send(connection, &session.outbox, answer);
    }

    /// Answers the waits of every connection whose commit is now published, after its
    /// updates.
    fn answer_waits(&mut self) {
        let published = self.published;
        self.waiting.retain(|connection| {
            let Some(session) = self.sessions.get_mut(connection) else {
                return false;
            };
            for wait in session.reached(published) {
                self.outgoing
                    .send(*connection, &session.outbox, caught_up(wait));
            }
            session.is_waiting()
        });
    }

    /// Subscribes a connection to a query set, all or nothing, and queues its rows (in the
    /// tables `read`): the changes since the client's `resume_from` if the window still holds
    /// every commit after it, all of them otherwise. Returns the subscription if it is put
    /// off to the next round (see the module docs, "Subscribing without holding commits
    /// back").
    fn subscribe(&mut self, subscribing: Subscribing, read: &Read<'_>) -> Option<Subscribing> {
        let connection = subscribing.connection;
        let query_set_id = subscribing.query_set_id;
        let session = self.sessions.get(&connection)?;
        let outbox = session.outbox.clone();
        let identity = session.identity;
        let refuse = |outgoing: &mut Outgoing, message: String| {
            let error = Outbound::SubscriptionError {
                query_set_id,
                message,
            };
            outgoing.send(connection, &outbox, error);
            None
        };
        if session.sets().contains_key(&query_set_id) {
            let message = format!("query set {query_set_id} is already subscribed");
            return refuse(&mut self.outgoing, message);
        }
        let most = self.limits.sets_per_connection;
        if session.sets().len() >= most {
            let message = format!(
                "this connection holds {most} query sets, the most it may \
                 (--max-query-sets-per-connection): unsubscribe one first"
            );
            return refuse(&mut self.outgoing, message);
        }
        // Bound against an older build's tables, or this build's while the tables already
        // hold a newer build's commits: its rows as of this build's last commit are gone.
        if subscribing.build != self.build.number || read.newer_from < read.next_offset {
            return refuse(&mut self.outgoing, rebind::raced(query_set_id));
        }
        if let Err(message) = self.held.admits(
            identity,
            &subscribing.queries,
            &self.subscriptions,
            &self.limits,
        ) {
            return refuse(&mut self.outgoing, message);
        }
        let tables = read.tables;
        let missed = subscribing
            .resume_from
            .and_then(|applied| self.window.since(applied));
        let offset = read.next_offset.saturating_sub(1);
        let module = &self.build.module;
        let fresh = self.reads == self.limits.reads;
        let before = self.reads;
        let rows = outbox.bounds().bytes / size_of::<Row>();
        let mut budget = Budget::new(self.reads, rows);
        let mut snapshot = Snapshot::new(module.clone(), query_set_id, offset, missed.is_some());
        let mut taken = contained(|| match &missed {
            Some(commits) => self.changes_since(
                &subscribing.queries,
                commits,
                tables,
                &mut snapshot,
                &mut budget,
            ),
            None => self.initial_rows(&subscribing.queries, tables, &mut snapshot, &mut budget),
        });
        if missed.is_some() && fresh && matches!(taken, Ok(Err(BudgetError::Reads))) {
            // Catching up would read more than a round may: the rows as they are may not.
            snapshot = Snapshot::new(module.clone(), query_set_id, offset, false);
            taken = contained(|| {
                self.initial_rows(&subscribing.queries, tables, &mut snapshot, &mut budget)
            });
        }
        self.reads = budget.reads();
        self.spent.add(identity, before - self.reads);
        let taken = match taken {
            Err(message) => Err(message),
            Ok(Err(BudgetError::Reads)) if !fresh => return Some(subscribing),
            Ok(Err(BudgetError::Reads)) => Err(format!(
                "finding the query set's rows takes more than {} reads (a read is a row, \
                 or a comparison checked on a row), more than a subscription may \
                 (--max-subscription-reads): narrow its queries with WHERE on an indexed \
                 column",
                self.limits.reads
            )),
            Ok(Err(BudgetError::Rows)) => Err(too_many_rows(outbox.bounds().bytes)),
            Ok(Err(BudgetError::Query(error))) => Err(error.to_string()),
            Ok(Ok(())) => Ok(()),
        };
        if let Err(message) = taken {
            return refuse(&mut self.outgoing, message);
        }
        let bytes = snapshot.bytes();
        if !outbox.fits(bytes) {
            let message = too_many_rows(outbox.bounds().bytes);
            return refuse(&mut self.outgoing, message);
        }
        let Subscribing {
            texts,
            queries,
            charge,
            ..
        } = subscribing;
        let queries = match add_all(&mut self.subscriptions, queries) {
            Ok(queries) => queries,
            Err(message) => return refuse(&mut self.outgoing, message),
        };
        self.held.hold(identity, &queries, &self.subscriptions);
        if let Some(session) = self.sessions.get_mut(&connection) {
            self.groups
                .add(connection, query_set_id, &queries, &session.outbox);
            let texts = self.texts.intern(texts);
            let set = QuerySet {
                texts,
                queries,
                _charge: charge,
            };
            session.insert(query_set_id, set);
        }
        let applied = Outbound::Applied(Box::new(snapshot));
        self.outgoing.send(connection, &outbox, applied);
        None
    }

    /// Adds the rows of each of `queries` in `tables` to `snapshot`, within `budget`.
    fn initial_rows(
        &self,
        queries: &[BoundQuery],
        tables: &Tables,
        snapshot: &mut Snapshot,
        budget: &mut Budget,
    ) -> Result<(), BudgetError> {
        for query in queries {
            let rows = query.evaluate_within(tables, budget)?;
            snapshot.push(self.table_name(query.table()), rows, Vec::new());
        }
        Ok(())
    }

    /// Adds what `commits` changed in each of `queries` to `snapshot`, within `budget`
    /// ([`wasmod_subscription::changes_since_within`]): for a client that holds their rows as
    /// of just before the first of them.
    fn changes_since(
        &self,
        queries: &[BoundQuery],
        commits: &[Arc<Commit>],
        tables: &Tables,
        snapshot: &mut Snapshot,
        budget: &mut Budget,
    ) -> Result<(), BudgetError> {
        let changes: Vec<_> = commits.iter().map(|commit| &commit.changes).collect();
        let deltas = wasmod_subscription::changes_since_within(queries, &changes, tables, budget)?;
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
        match session.remove(query_set_id) {
            Some(set) => {
                self.groups.remove(connection, query_set_id);
                self.held.release(session.identity, &set.queries);
                for &id in &set.queries {
                    self.subscriptions.remove(id);
                }
                self.texts.release(set.texts);
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
        self.waiting.remove(&connection);
        self.groups.leave(connection);
        let identity = session.identity;
        for set in session.into_sets().into_values() {
            self.held.release(identity, &set.queries);
            for &id in &set.queries {
                self.subscriptions.remove(id);
            }
            self.texts.release(set.texts);
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
        self.texts.prune();
        self.waiting.clear();
        self.groups.clear();
        self.held.clear();
        self.subscriptions = Subscriptions::new(self.build.catalog.clone());
    }
}

/// The answer to `wait`, once its commit is published.
fn caught_up(wait: Wait) -> Outbound {
    Outbound::CaughtUp {
        request_id: wait.request_id,
        offset: wait.offset,
    }
}

impl Request {
    /// The connection the request is of, if it is one connection's.
    fn connection(&self) -> Option<ConnectionId> {
        match self {
            Self::Open { connection, .. }
            | Self::Unsubscribe { connection, .. }
            | Self::WaitFor { connection, .. }
            | Self::Close { connection }
            | Self::Subscribe(Subscribing { connection, .. }) => Some(*connection),
            Self::Rebuilt { .. } => None,
        }
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
    /// The texts' bytes, charged to the connection's holder ([`crate::memory`]); the query
    /// set keeps it, so that a refused or ended set gives them back.
    pub charge: Charge,
}

/// Runs `evaluate`, the evaluation of one client's query set, so that a panic in it (a bug:
/// no query should reach one) is that client's `SubscriptionError` rather than the end of
/// every connection's updates, which this one task evaluates. The evaluation only reads the
/// evaluator (`&self`) and writes what the caller drops on an error, so nothing is left half
/// done. (A binary built with `panic = "abort"` ends instead: `wasmod serve` is built to
/// unwind, the workspace's `tools` profile.)
fn contained<T>(evaluate: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(evaluate)).map_err(|panic| {
        let reason = panic
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("a panic without a message");
        tracing::error!(reason, "evaluating a query set panicked; it is refused");
        "evaluating the query set failed in the server (its log says why)".to_owned()
    })
}

/// The refusal of a query set whose rows are more than a connection whose outbound queue
/// holds `bytes` bytes may hold (a pointer each) until they are sent.
fn too_many_rows(bytes: usize) -> String {
    let rows = bytes / size_of::<Row>();
    format!(
        "the subscription's rows are more than {rows}, which take more than the {bytes} bytes \
         (16 a row) this connection may have queued until they are sent (--outbound-bytes): \
         narrow its queries with WHERE"
    )
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{ClientMemory, Holder};
    use crate::realtime::limits::MAX_REQUESTS_QUEUED;
    use crate::realtime::outbox::{self, Bounds, OutboxReceiver};
    use wasmod_abi::{AlgebraicType, ModuleDef, TableDef, Value};
    use wasmod_host::datastore::CommitMeta;
    use wasmod_subscription::{Catalog, Query};

    /// A charge under no ceiling, for a test's query set.
    fn unbounded_charge() -> Charge {
        ClientMemory::new(usize::MAX)
            .charge(Holder::default(), 0)
            .expect("no ceiling")
    }

    const MESSAGES: &str = "SELECT * FROM message";

    /// A table `message (id u64, text string)` and an evaluator of its commits, driven by
    /// hand one round at a time.
    struct Harness {
        database: Arc<Database>,
        build: Arc<Build>,
        requests: mpsc::Sender<Request>,
        evaluator: Evaluator,
        /// The commit log's directory, for a harness whose clients resume.
        _log: Option<tempfile::TempDir>,
    }

    impl Harness {
        /// `rows` messages, and an evaluator whose first evaluations read at most `reads`
        /// rows under one read transaction.
        fn new(rows: u64, reads: usize) -> Self {
            Self::with_log(rows, reads, None)
        }

        /// [`Harness::new`] over a commit log, with a window of 64 recent commits for the
        /// clients that resume.
        fn resuming(rows: u64, reads: usize) -> Self {
            let log = tempfile::tempdir().expect("a directory");
            Self::with_log(rows, reads, Some(log))
        }

        fn with_log(rows: u64, reads: usize, log: Option<tempfile::TempDir>) -> Self {
            let mut module = ModuleDef::default();
            let table = TableDef::of_columns(
                &mut module.typespace,
                "Message",
                "message",
                &[("id", AlgebraicType::U64), ("text", AlgebraicType::String)],
            );
            module.tables.push(table);
            let module = Arc::new(module);
            let database = match &log {
                None => Database::in_memory(&module).expect("a valid module"),
                Some(dir) => {
                    Database::open(dir.path(), &module, Default::default()).expect("a commit log")
                }
            };
            let database = Arc::new(database);
            let catalog = Arc::new(Catalog::new(&module).expect("no visibility filters"));
            let build = Arc::new(Build::new(0, module, catalog, database.datastore()));
            let mut limits =
                crate::realtime::Settings::from(&crate::NodeConfig::default()).subscriptions;
            limits.reads = reads;
            let commits = if log.is_some() { 64 } else { 0 };
            let resume = WindowBounds {
                commits,
                bytes: 1 << 20,
            };
            let stats = Arc::new(Stats::default());
            let (requests, evaluator) =
                Evaluator::new(build.clone(), database.clone(), resume, limits, stats);
            let harness = Self {
                database,
                build,
                requests,
                evaluator,
                _log: log,
            };
            for id in 0..rows {
                harness.commit(id);
            }
            harness
        }

        /// Commits message `id`; returns its offset.
        fn commit(&self, id: u64) -> u64 {
            let mut tx = self.database.begin_mut();
            let row = Value::Product(vec![Value::U64(id), Value::String(format!("m{id}"))]);
            tx.insert(0, &mut row.to_bytes()).expect("inserted");
            let committed = self.database.commit(tx, CommitMeta::host());
            committed
                .expect("committed")
                .commit
                .expect("a change")
                .offset
        }

        /// Opens connection `n` of identity `n / 10` (connections 1 to 9 are one identity's),
        /// whose outbound queue holds `bytes` bytes of rows.
        fn open(&self, n: u8, bytes: usize) -> OutboxReceiver {
            let bounds = Bounds {
                messages: 64,
                bytes,
            };
            let (outbox, received) = outbox::channel(bounds, Arc::default());
            self.ask(Request::Open {
                connection: ConnectionId::from_bytes([n; 16]),
                identity: Identity::from_bytes([n / 10; 32]),
                outbox,
                queued: Arc::new(Semaphore::new(MAX_REQUESTS_QUEUED)),
            });
            received
        }

        /// Asks to subscribe connection `n` to `MESSAGES` as query set 1.
        fn subscribe(&self, n: u8) {
            self.resume(n, None);
        }

        /// Asks to subscribe connection `n` to `MESSAGES` as query set 1, resuming from
        /// `resume_from`.
        fn resume(&self, n: u8, resume_from: Option<u64>) {
            self.subscribe_set(n, 1, resume_from);
        }

        /// Asks to subscribe connection `n` to `MESSAGES` as query set `query_set_id`,
        /// resuming from `resume_from`.
        fn subscribe_set(&self, n: u8, query_set_id: u32, resume_from: Option<u64>) {
            let query = Query::parse(&self.build.catalog, MESSAGES).expect("a query");
            self.ask(Request::Subscribe(Subscribing {
                connection: ConnectionId::from_bytes([n; 16]),
                query_set_id,
                texts: vec![MESSAGES.to_owned()],
                queries: vec![query.bind(Identity::ZERO)],
                build: self.build.number,
                resume_from,
                charge: unbounded_charge(),
            }));
        }

        fn ask(&self, request: Request) {
            self.requests.try_send(request).expect("room for a request");
        }

        /// One round; whether it put something off for the next.
        fn round(&mut self) -> bool {
            self.evaluator.round(None);
            !self.evaluator.pending.is_empty()
        }
    }

    #[test]
    fn a_panic_evaluating_a_query_set_is_that_sets_error() {
        assert_eq!(contained(|| 7), Ok(7));
        let refused = contained(|| -> u32 { panic!("a bug") }).expect_err("refused");
        assert!(refused.contains("failed in the server"), "{refused}");
    }

    /// The snapshots (their offsets and rows), refusals and updates `received` holds.
    fn received(received: &mut OutboxReceiver) -> (Vec<(u64, usize)>, Vec<String>, usize) {
        let (mut applied, mut refused, mut updates) = (Vec::new(), Vec::new(), 0);
        while let Some(message) = received.try_recv() {
            match message {
                Outbound::Applied(snapshot) => applied.push((snapshot.offset, snapshot.rows())),
                Outbound::SubscriptionError { message, .. } => refused.push(message),
                Outbound::Update(_) => updates += 1,
                Outbound::Identity(_)
                | Outbound::OneOff { .. }
                | Outbound::CaughtUp { .. }
                | Outbound::Refused { .. } => {}
            }
        }
        (applied, refused, updates)
    }

    /// What `received` holds, in order, in a word each: `update`, `applied`,
    /// `caught up <request> <offset>`, `refused <request> <code>`, or `other`.
    fn in_order(received: &mut OutboxReceiver) -> Vec<String> {
        std::iter::from_fn(|| received.try_recv())
            .map(|message| match message {
                Outbound::Update(_) => "update".to_owned(),
                Outbound::Applied(_) => "applied".to_owned(),
                Outbound::CaughtUp { request_id, offset } => {
                    format!("caught up {request_id} {offset}")
                }
                Outbound::Refused {
                    request_id, error, ..
                } => format!("refused {request_id} {}", error.code.as_str()),
                _ => "other".to_owned(),
            })
            .collect()
    }

    impl Harness {
        /// Asks for connection `n` to be told once it has every update up to `offset`.
        fn wait_for(&self, n: u8, request_id: u32, offset: u64) {
            self.ask(Request::WaitFor {
                connection: ConnectionId::from_bytes([n; 16]),
                wait: Wait { request_id, offset },
            });
        }
    }

    /// A wait for a published commit is answered in its round; one for a commit to come, in
    /// the round that publishes it, after its update; a wait for a later commit stays.
    #[test]
    fn waits_are_answered_after_the_updates_of_their_commit() {
        let mut harness = Harness::new(3, 100);
        let mut queue = harness.open(1, 1 << 20);
        harness.subscribe(1);
        harness.round();
        assert_eq!(in_order(&mut queue), ["applied"]);
        harness.wait_for(1, 7, 2);
        harness.wait_for(1, 8, 3);
        harness.wait_for(1, 9, 4);
        harness.round();
        assert_eq!(
            in_order(&mut queue),
            ["caught up 7 2"],
            "offset 2 is published"
        );
        assert_eq!(harness.commit(3), 3);
        harness.round();
        assert_eq!(in_order(&mut queue), ["update", "caught up 8 3"]);
        assert_eq!(harness.commit(4), 4);
        harness.round();
        assert_eq!(in_order(&mut queue), ["update", "caught up 9 4"]);
        assert!(harness.evaluator.waiting.is_empty(), "nothing waits");
    }

    /// A connection with no query set still hears of commits it does not see, and a
    /// connection holds at most `MAX_WAITS` waits; a closed one holds none.
    #[test]
    fn waits_are_bounded_per_connection_and_forgotten_with_it() {
        let mut harness = Harness::new(1, 100);
        let mut queue = harness.open(1, 1 << 20);
        for request_id in 0..=MAX_WAITS as u32 {
            harness.wait_for(1, request_id, 1);
        }
        harness.round();
        let refused = format!("refused {MAX_WAITS} busy");
        assert_eq!(in_order(&mut queue), [refused]);
        harness.commit(1);
        harness.round();
        let answered = in_order(&mut queue);
        assert_eq!(answered.len(), MAX_WAITS, "{answered:?}");
        assert_eq!(answered[0], "caught up 0 1");

        harness.wait_for(1, 99, 10);
        harness.round();
        assert_eq!(harness.evaluator.waiting.len(), 1);
        harness.ask(Request::Close {
            connection: ConnectionId::from_bytes([1; 16]),
        });
        harness.round();
        assert!(harness.evaluator.waiting.is_empty(), "forgotten with it");
    }

    /// Three subscriptions that read 6 rows each, under a limit of 10 reads a transaction:
    /// one per round, and a commit between two rounds goes through (the second snapshot has
    /// it), rather than all three under one read transaction.
    #[test]
    fn a_read_transaction_reads_at_most_the_limit_and_the_rest_waits_for_the_next() {
        let mut harness = Harness::new(6, 10);
        let mut queues: Vec<_> = (1..=3).map(|n| harness.open(n, 1 << 20)).collect();
        for n in 1..=3 {
            harness.subscribe(n);
        }
        assert!(harness.round(), "two subscriptions wait");
        assert_eq!(received(&mut queues[0]), (vec![(5, 6)], vec![], 0));
        assert_eq!(received(&mut queues[1]), (vec![], vec![], 0));
        let offset = harness.commit(6);
        assert!(harness.round(), "one subscription waits");
        assert_eq!(received(&mut queues[0]), (vec![], vec![], 1), "the commit");
        assert_eq!(received(&mut queues[1]), (vec![(offset, 7)], vec![], 0));
        assert_eq!(received(&mut queues[2]), (vec![], vec![], 0));
        assert!(!harness.round(), "nothing waits");
        assert_eq!(received(&mut queues[2]), (vec![(offset, 7)], vec![], 0));
    }

    /// Three clients resuming over five commits of one row each, under a limit of 10 reads a
    /// transaction: catching up reads as the first evaluation does (issue 38: it escaped the
    /// budget, and 100 resuming clients held commits for 14.7 s).
    #[test]
    fn catching_up_draws_on_the_reads_of_the_round_and_the_rest_waits_for_the_next() {
        let mut harness = Harness::resuming(6, 10);
        let from = harness.commit(6);
        for id in 7..12 {
            harness.commit(id);
        }
        assert!(!harness.round(), "the commits drained");
        let mut queues: Vec<_> = (1..=3).map(|n| harness.open(n, 1 << 20)).collect();
        for n in 1..=3 {
            harness.resume(n, Some(from));
        }
        assert!(harness.round(), "one resuming client waits");
        for queue in &mut queues[..2] {
            let (applied, refused, _) = received(queue);
            assert_eq!((applied.len(), refused.len()), (1, 0), "{refused:?}");
            assert_eq!(applied[0].1, 5, "the rows of the five commits since");
        }
        assert_eq!(received(&mut queues[2]), (vec![], vec![], 0));
        assert!(!harness.round(), "nothing waits");
        assert_eq!(received(&mut queues[2]).0.len(), 1);
    }

    /// One identity's five subscriptions of 6 reads each, under a limit of 10 reads a round,
    /// then another identity's: the other is served in the second round, ahead of the four
    /// put off (issue 38: one socket's 2,500 subscriptions held another's for 66 s).
    #[test]
    fn the_identity_that_read_least_lately_is_served_first() {
        let mut harness = Harness::new(6, 10);
        let mut heavy = harness.open(1, 1 << 20);
        let mut light = harness.open(10, 1 << 20);
        for set in 1..=5 {
            harness.subscribe_set(1, set, None);
        }
        harness.subscribe(10);
        assert!(harness.round());
        assert_eq!(received(&mut heavy).0.len(), 1);
        assert!(harness.round());
        assert_eq!(
            received(&mut light).0.len(),
            1,
            "served in the second round"
        );
        assert_eq!(received(&mut heavy).0.len(), 0);
        while harness.round() {}
        assert_eq!(received(&mut heavy).0.len(), 4, "then the rest, in order");
    }

    /// Catching up over more changes than a round may read: the client gets the rows as
    /// they are instead, read within the budget.
    #[test]
    fn catching_up_that_costs_more_than_a_round_may_read_sends_the_rows_instead() {
        let mut harness = Harness::resuming(2, 4);
        let from = harness.commit(2);
        for id in 3..8 {
            harness.commit(id);
        }
        harness.round();
        let delete = |harness: &Harness, id: u64| {
            let mut tx = harness.database.begin_mut();
            let row = Value::Product(vec![Value::U64(id), Value::String(format!("m{id}"))]);
            tx.delete_rows(0, &row.to_bytes()).expect("deleted");
            let committed = harness.database.commit(tx, CommitMeta::host());
            committed
                .expect("committed")
                .durable
                .wait()
                .expect("durable");
        };
        for id in 3..8 {
            delete(&harness, id);
        }
        harness.round();
        let mut queue = harness.open(1, 1 << 20);
        harness.resume(1, Some(from));
        assert!(!harness.round(), "nothing put off");
        let (applied, refused, _) = received(&mut queue);
        assert_eq!(refused, Vec::<String>::new());
        assert_eq!(applied.len(), 1);
        assert_eq!(applied[0].1, 3, "the three rows there are, not ten changes");
    }

    #[test]
    fn a_query_set_that_reads_more_than_the_limit_on_its_own_is_refused() {
        let mut harness = Harness::new(6, 5);
        let mut queue = harness.open(1, 1 << 20);
        harness.subscribe(1);
        assert!(!harness.round(), "refused, not put off");
        let (applied, refused, _) = received(&mut queue);
        assert!(applied.is_empty());
        assert_eq!(refused.len(), 1);
        assert!(
            refused[0].contains("--max-subscription-reads"),
            "{refused:?}"
        );
    }

    #[test]
    fn a_query_set_whose_rows_overflow_the_queue_is_refused() {
        let mut harness = Harness::new(6, 100);
        let mut queue = harness.open(1, 5 * size_of::<Row>());
        harness.subscribe(1);
        harness.round();
        let (applied, refused, _) = received(&mut queue);
        assert!(applied.is_empty());
        assert!(refused[0].contains("--outbound-bytes"), "{refused:?}");
    }
}
