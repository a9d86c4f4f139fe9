//! A database: one module's tables, their commit log, and the ordered stream of its commits.
//!
//! Every change to the tables must reach the commit log, the subscribers of live queries and
//! (later) replicas, in commit order and exactly once, whatever made it: a reducer, a lifecycle
//! reducer, a transaction a procedure or an HTTP handler opened, the host's own bookkeeping.
//! So there is one place where a transaction commits, [`Database::commit`], and it does, while
//! the transaction still holds the tables (so that the order is the commit order):
//!
//! 1. the commit log appends the record, which gives the commit its offset;
//! 2. the [`Commit`] (offset, [`CommitMeta`], net changes) is handed to each
//!    [`CommitObserver`], in the order they were added, then to the [`feed`](Database::feed);
//! 3. the tables are released, and the caller gets the commit and the wait for its durability.
//!
//! Observers run under the writer's lock and must be quick (queue the commit, count it);
//! subscribers of the feed do their work on their own threads, in commit order. Nothing
//! accumulates when nobody listens: with no subscriber a commit is dropped as soon as the
//! caller lets go of it. The one exception is bounded: with a commit log, the last few commits
//! are kept from opening until the server takes them ([`Database::take_recent`]), so that the
//! clients connected when the last run crashed can resume past what the start itself commits.
//!
//! A replica ([`Database::replica`], in `replica`) takes another database's commits instead, in
//! their order and with their offsets, through the same publication.
//!
//! The database also keeps which connections are open ([`connections`](self) module), in a
//! system table written in the same transactions as the lifecycle reducers, so that a crash
//! cannot make `client_disconnected` run twice or never.

mod commit;
mod connections;
mod feed;
mod replace;
mod replica;

pub use commit::{Commit, CommitMeta, EntryPoint};
pub use connections::{CONNECTION_TABLE, SYSTEM_PREFIX};
pub use feed::{CommitFeed, CommitReceiver, FeedError, FEED_CAPACITY};
pub use replace::{ReplaceError, Replaced};
pub use replica::ReplicaError;

use crate::durability::recent::Recent;
use crate::durability::{self, Durability, DurabilityError, RecoveryReport, Ticket};
use crate::tx::{MutTx, ReadTx};
use crate::{Datastore, Error, SchemaError};
use parking_lot::{Mutex, RwLock};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use wasmod_abi::{ConnectionId, Identity, ModuleDef};

/// Sees every commit of a [`Database`], in commit order, while the commit still holds the
/// tables. Keep it quick: every writer waits for it.
pub trait CommitObserver: Send + Sync {
    /// Called once per commit, in offset order.
    fn observe(&self, commit: &Arc<Commit>);
}

/// A module's tables with their commit log and commit pipeline.
pub struct Database {
    /// The tables; replaced whole when a new build of the module takes over
    /// ([`Database::replace`]).
    datastore: RwLock<Arc<Datastore>>,
    log: Option<Durability>,
    recovery: Option<RecoveryReport>,
    observers: RwLock<Vec<Arc<dyn CommitObserver>>>,
    feed: CommitFeed,
    /// The offset of the next commit: with a log, the number of transactions it holds.
    next_offset: AtomicU64,
    /// How many of the stored tables are the module's; the system tables follow (the
    /// connections table first).
    module_tables: AtomicU32,
    /// The last commits, those recovery replayed and those made since opening, until
    /// [`Database::take_recent`]; `None` after, and for a database that keeps none.
    recent: Mutex<Option<Recent<Arc<Commit>>>>,
    /// Whether the commits are another database's ([`Database::replica`]).
    replica: bool,
    /// Whether the database is a standby: its log is replicated and it has not been promoted
    /// ([`Database::promote`]); it takes only [`Database::apply_replicated`]'s commits.
    standby: AtomicBool,
}

/// The last commits and the feed of the later ones, as [`Database::take_recent`] hands them
/// over.
#[derive(Debug)]
pub struct RecentCommits {
    /// The commits kept, oldest first: an unbroken run of offsets that ends just before
    /// `next`, possibly empty.
    pub commits: Vec<Arc<Commit>>,
    /// The offset of the next commit: the first that `feed` delivers.
    pub next: u64,
    /// A subscription to the feed, made with no commit in between.
    pub feed: CommitReceiver,
}

/// A transaction's commit, as [`Database::commit`] returns it.
#[derive(Debug)]
#[must_use = "a commit is not durable until its ticket's wait returns Ok"]
pub struct Committed {
    /// The commit as it was published; `None` if the transaction changed nothing.
    pub commit: Option<Arc<Commit>>,
    /// The wait for the commit's durability (ready at once without a log).
    pub durable: Ticket,
}

impl Database {
    /// The tables of `module`, empty and in memory only.
    ///
    /// Fails like [`Datastore::new`], and if a table's name starts with the reserved
    /// [`SYSTEM_PREFIX`].
    pub fn in_memory(module: &ModuleDef) -> Result<Self, SchemaError> {
        let stored = stored_tables(module)?;
        let datastore = Datastore::new(&stored)?;
        Ok(Self::new(module, datastore, None, None))
    }

    /// The tables of `module`, recovered from the commit log in `dir` (created if missing),
    /// with later commits logged there as `options` say. See [`durability::open`].
    ///
    /// With [`durability::Mode::Replicated`] the database opens as a standby: it takes the
    /// commits of the primary it follows ([`Database::apply_replicated`], logged with their
    /// offsets) and refuses its own ([`DurabilityError::Standby`]) until
    /// [`Database::promote`].
    pub fn open(
        dir: &Path,
        module: &ModuleDef,
        options: durability::Options,
    ) -> Result<Self, DurabilityError> {
        let stored = stored_tables(module).map_err(DurabilityError::Schema)?;
        let recovered = durability::open(dir, &stored, options)?;
        let mut recent = Recent::new(&options);
        for (offset, changes) in recovered.recent {
            recent.keep(Arc::new(Commit {
                offset,
                meta: CommitMeta::recovered(),
                changes,
            }));
        }
        let database = Self::new(
            module,
            recovered.datastore,
            Some(recovered.durability),
            Some(recovered.report),
        );
        *database.recent.lock() = Some(recent);
        database.standby.store(
            options.mode == durability::Mode::Replicated,
            Ordering::Relaxed,
        );
        Ok(database)
    }

    /// What [`Database::open`] of `dir` for `module` would do to the stored tables (the
    /// module's and the system tables), found without changing, locking or creating anything:
    /// [`durability::check`] of the tables stored for `module`.
    pub fn check(
        dir: &Path,
        module: &ModuleDef,
    ) -> Result<durability::UpgradeCheck, DurabilityError> {
        let stored = stored_tables(module).map_err(DurabilityError::Schema)?;
        durability::check(dir, &stored)
    }

    fn new(
        module: &ModuleDef,
        datastore: Datastore,
        log: Option<Durability>,
        recovery: Option<RecoveryReport>,
    ) -> Self {
        let module_tables = AtomicU32::new(module.tables.len() as u32);
        let next_offset = log.as_ref().map_or(0, Durability::transactions);
        Self {
            datastore: RwLock::new(Arc::new(datastore)),
            log,
            recovery,
            observers: RwLock::new(Vec::new()),
            feed: CommitFeed::new(FEED_CAPACITY),
            next_offset: AtomicU64::new(next_offset),
            module_tables,
            recent: Mutex::new(None),
            replica: false,
            standby: AtomicBool::new(false),
        }
    }

    /// The tables, the module's and the system's: those of the build that serves them now
    /// (a later [`Database::replace`] does not change the ones returned here).
    pub fn datastore(&self) -> Arc<Datastore> {
        self.datastore.read().clone()
    }

    /// Begins a transaction that reads the committed state (see [`Datastore::begin_read`]).
    pub fn begin_read(&self) -> ReadTx {
        self.datastore.read().begin_read()
    }

    /// Begins the transaction that may write (see [`Datastore::begin_mut`]); commit it with
    /// [`Database::commit`], so that it is logged and published.
    pub fn begin_mut(&self) -> MutTx {
        self.datastore.read().begin_mut()
    }

    /// Whether table id `table` is one of the host's own (the connections table), which
    /// modules and clients do not see.
    pub fn is_system_table(&self, table: u32) -> bool {
        table >= self.module_tables()
    }

    /// The offset the next commit will have: the number of commits so far (with a log, over
    /// the database's life). It does not move while a read transaction is open, so under one it
    /// tells which commits the tables include.
    pub fn next_offset(&self) -> u64 {
        self.next_offset.load(Ordering::Relaxed)
    }

    /// How many of the tables are the module's: ids `0..module_tables()`.
    pub fn module_tables(&self) -> u32 {
        self.module_tables.load(Ordering::Acquire)
    }

    /// What recovery found; `None` for a database in memory.
    pub fn recovery(&self) -> Option<&RecoveryReport> {
        self.recovery.as_ref()
    }

    /// The wait for the published commit at `offset` to be durable (and every earlier one
    /// with it); ready at once without a log. For a subscriber of the feed that must not show
    /// a commit before a crash could no longer lose it.
    pub fn durable(&self, offset: u64) -> Ticket {
        self.log
            .as_ref()
            .map_or_else(Ticket::ready, |log| log.ticket(offset))
    }

    /// The last commits, for whoever takes them first (the server's window of commits that
    /// clients resume from), with a subscription to the feed that delivers every later one:
    /// nothing missed between the two, nothing twice.
    ///
    /// With a commit log, the database keeps the last commits recovery replayed (with metadata
    /// [`CommitMeta::recovered`]: the log keeps only the changes) and then those it commits
    /// itself until this is called, as many as [`durability::Options::recent_commits`] and
    /// [`durability::Options::recent_bytes`] allow. A start after a crash commits before
    /// anyone serves (it disconnects the connections the crash left open); the clients
    /// that were connected need those commits to resume. None the second time, and none for a
    /// database in memory or a replica.
    pub fn take_recent(&self) -> RecentCommits {
        // The writer's place: no commit is being published meanwhile.
        let writer = self.begin_mut();
        let commits = self
            .recent
            .lock()
            .take()
            .map(|recent| recent.into_kept().into())
            .unwrap_or_default();
        let recent = RecentCommits {
            commits,
            next: self.next_offset(),
            feed: self.feed.subscribe(),
        };
        writer.rollback();
        recent
    }

    /// Whether offsets name the same commits across restarts of this process: with a commit
    /// log, and on a replica (its offsets are the primary's). A client may resume from an
    /// offset only then.
    pub fn offsets_are_durable(&self) -> bool {
        self.log.is_some() || self.replica
    }

    /// Whether this is a replica of another database's commits ([`Database::replica`]):
    /// nothing but [`Database::apply_replicated`] and [`Database::resync`] may change it.
    pub fn is_replica(&self) -> bool {
        self.replica
    }

    /// Whether this is a standby that has not been promoted: it takes only the commits it is
    /// given ([`Database::apply_replicated`]), and [`Database::commit`] refuses the rest.
    pub fn is_standby(&self) -> bool {
        self.standby.load(Ordering::Acquire)
    }

    /// Makes a standby the primary: from its next commit on it takes commits of its own, each
    /// acknowledged once `replica` holds it (see [`durability::Replica`]). Call it once the
    /// standby has applied every commit the replica held, and with no other writer left (the
    /// engine behind `replica` fences the one before). Fails if the database is no standby or
    /// its log has failed.
    pub fn promote(&self, replica: Arc<dyn durability::Replica>) -> Result<(), DurabilityError> {
        let (Some(log), true) = (&self.log, self.is_standby()) else {
            return Err(DurabilityError::Failed(
                "only a standby with a replicated log can be promoted".into(),
            ));
        };
        // The writer's place: no commit is being applied meanwhile.
        let writer = self.begin_mut();
        log.replicate_to(replica)?;
        self.standby.store(false, Ordering::Release);
        writer.rollback();
        Ok(())
    }

    /// The commit log, if the database has one.
    pub fn log(&self) -> Option<&Durability> {
        self.log.as_ref()
    }

    /// Adds `observer` after those already added: it sees every later commit.
    pub fn add_observer(&self, observer: Arc<dyn CommitObserver>) {
        self.observers.write().push(observer);
    }

    /// The broadcast point of the commits: subscribe to it to receive every later commit.
    pub fn feed(&self) -> &CommitFeed {
        &self.feed
    }

    /// Commits `tx`, made as `meta` says: logs it, publishes it, and returns it with the
    /// wait for its durability. Acknowledge it to nobody before [`Ticket::wait`] returns `Ok`.
    ///
    /// Errors: the log refused the record ([`DurabilityError::Failed`]: it failed earlier), or
    /// the database is a standby ([`DurabilityError::Standby`]) and `tx` changed something.
    /// The transaction is then rolled back, unpublished: nobody saw its changes.
    pub fn commit(&self, tx: MutTx, meta: CommitMeta) -> Result<Committed, DurabilityError> {
        let committed = tx.try_commit_with(|changes| {
            if changes.is_empty() {
                return Ok(Committed {
                    commit: None,
                    durable: Ticket::ready(),
                });
            }
            if self.is_standby() {
                return Err(DurabilityError::Standby);
            }
            let durable = match &self.log {
                Some(log) => log.append(&changes)?,
                None => Ticket::ready(),
            };
            // Under the writer's lock: offsets are given in commit order.
            let offset = self.next_offset.fetch_add(1, Ordering::Relaxed);
            let commit = Arc::new(Commit {
                offset,
                meta,
                changes,
            });
            self.publish(&commit);
            Ok(Committed {
                commit: Some(commit),
                durable,
            })
        })?;
        if committed.commit.is_some() {
            if let Some(log) = &self.log {
                log.snapshot_if_due(&self.datastore());
            }
        }
        Ok(committed)
    }

    /// Why the commit log failed, if the database has one and it did: the database then
    /// refuses every commit, and what readers see may include commits that a restart loses
    /// (those not yet durable when the log failed).
    pub fn log_failure(&self) -> Option<String> {
        self.log.as_ref().and_then(Durability::failure)
    }

    /// Hands `commit` to the observers, in the order they were added, then to the feed. Call it
    /// under the writer's lock, in offset order.
    fn publish(&self, commit: &Arc<Commit>) {
        if let Some(recent) = self.recent.lock().as_mut() {
            recent.keep(commit.clone());
        }
        for observer in self.observers.read().iter() {
            observer.observe(commit);
        }
        self.feed.observe(commit);
    }

    /// Records, in `tx`, that `identity` is connected over `connection_id` (commit `tx` for it
    /// to count). Errors: `UNIQUE_VIOLATION` if that connection is recorded already.
    pub fn record_connection(
        &self,
        tx: &mut MutTx,
        identity: Identity,
        connection_id: ConnectionId,
    ) -> Result<(), Error> {
        connections::record(tx, self.module_tables(), identity, connection_id)
    }

    /// Forgets, in `tx`, connection `connection_id` of `identity`; whether it was recorded
    /// (a connection is disconnected once: `false` says it already was).
    pub fn forget_connection(
        &self,
        tx: &mut MutTx,
        identity: Identity,
        connection_id: ConnectionId,
    ) -> Result<bool, Error> {
        connections::forget(tx, self.module_tables(), identity, connection_id)
    }

    /// Every connection recorded as open, oldest first. Right after [`Database::open`], these
    /// are the connections a crash (or a stop without disconnecting them) left open.
    pub fn recorded_connections(&self) -> Vec<(Identity, ConnectionId)> {
        connections::recorded(&self.begin_read(), self.module_tables())
    }
}

/// The tables stored for `module`: its own, then the system tables; refuses a module table in
/// the reserved namespace.
fn stored_tables(module: &ModuleDef) -> Result<ModuleDef, SchemaError> {
    if let Some(table) = module
        .tables
        .iter()
        .find(|table| table.name.starts_with(SYSTEM_PREFIX))
    {
        return Err(SchemaError::new(format!(
            "table `{}`: names starting with `{SYSTEM_PREFIX}` are reserved for the host",
            table.name
        )));
    }
    Ok(connections::stored_tables(module))
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("datastore", &self.datastore())
            .field("log", &self.log)
            .field("feed", &self.feed)
            .finish_non_exhaustive()
    }
}
