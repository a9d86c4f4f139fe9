//! The primary's publisher: one task that appends every durable commit to the replication
//! stream, off the commit path.
//!
//! Commits never wait for it. It takes commits from the database's feed into a bounded
//! [`Backlog`], waits (on a blocking thread) until the newest is durable, and writes the
//! durable ones with `XADD <stream> MAXLEN ~ <max_len> <offset>-1 …`, a pipeline of up to
//! [`BATCH`] entries at a time. The stream's own last id says which offset it needs next, so
//! the publisher keeps no state of its own across a reconnection or a restart: it reads the
//! stream's tail, then writes from there.
//!
//! When Redis is down or slow (every exchange has a timeout), the primary keeps serving: the
//! publisher counts the failure, logs the backlog (at most every [`WARN_EVERY`]), and retries
//! every [`PublishSettings::retry`]. Commits keep arriving in the backlog, whose oldest are
//! dropped past its capacity; once Redis answers again, the missing commits are read back
//! from the commit log ([`Durability::read`](wasmod_host::datastore::durability::Durability::read)),
//! and those the log no longer has (a snapshot covered them) are replaced by a
//! resynchronisation marker: edges that needed them bootstrap again. A Redis that lost the
//! stream (restarted without persistence) is refilled the same way, with at most `max_len`
//! of the latest commits.

use super::address::StreamAddress;
use super::backlog::Backlog;
use super::entry::{next_offset_after, StreamEntry};
use super::link::{last_id, Link};
use super::stats::PublishStats;
use redis::aio::MultiplexedConnection;
use redis::RedisError;
use std::fmt;
use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use wasmod_abi::Timestamp;
use wasmod_host::datastore::{Commit, CommitMeta, CommitReceiver, Database, FeedError};

/// The most entries written in one pipeline.
pub const BATCH: u64 = 256;

/// The stream's bound by default (`--publish-max-len`).
pub const DEFAULT_MAX_LEN: u64 = 100_000;

/// The commits held in memory by default (`--publish-backlog`).
pub const DEFAULT_BACKLOG: usize = 10_000;

/// How often a publisher that cannot reach Redis logs its backlog.
pub const WARN_EVERY: Duration = Duration::from_secs(10);

/// How the primary publishes its commits.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PublishSettings {
    /// The stream.
    pub address: StreamAddress,
    /// The stream's bound: each `XADD` trims it to about this many entries (`MAXLEN ~`).
    pub max_len: u64,
    /// The most commits held in memory while Redis is behind.
    pub backlog: usize,
    /// The longest one exchange with Redis (connecting, reading, writing) may take.
    pub timeout: Duration,
    /// How long to wait before trying Redis again after a failure.
    pub retry: Duration,
    /// The token edges present to the snapshot endpoint
    /// ([`SNAPSHOT_PATH`](super::SNAPSHOT_PATH)); without one, it answers `not_found`.
    pub edge_token: Option<String>,
}

impl PublishSettings {
    /// The defaults for `address`: a stream of about [`DEFAULT_MAX_LEN`] entries,
    /// [`DEFAULT_BACKLOG`] commits in memory, exchanges of at most 2 s, retries every 500 ms,
    /// no edge token.
    pub fn new(address: StreamAddress) -> Self {
        Self {
            address,
            max_len: DEFAULT_MAX_LEN,
            backlog: DEFAULT_BACKLOG,
            timeout: Duration::from_secs(2),
            retry: Duration::from_millis(500),
            edge_token: None,
        }
    }
}

/// Why an exchange with Redis failed.
#[derive(Debug)]
enum Failure {
    Redis(RedisError),
    Stream(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Redis(error) => write!(f, "{error}"),
            Self::Stream(reason) => f.write_str(reason),
        }
    }
}

impl From<RedisError> for Failure {
    fn from(error: RedisError) -> Self {
        Self::Redis(error)
    }
}

/// The publisher task's state.
pub struct Publisher {
    database: Arc<Database>,
    settings: PublishSettings,
    stats: Arc<PublishStats>,
    feed: CommitReceiver,
    backlog: Backlog,
    link: Link,
    /// The offset the stream needs next, once its tail has been read.
    next: Option<u64>,
    /// Every commit below this offset is durable.
    durable: u64,
    /// Whether the commit log failed: nothing after it becomes durable.
    log_failed: bool,
    /// When the failures began, and when they were last logged.
    failing: Option<(Instant, Instant)>,
}

impl fmt::Debug for Publisher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Publisher")
            .field("address", &self.settings.address)
            .field("next", &self.next)
            .field("durable", &self.durable)
            .field("backlog", &self.backlog.len())
            .finish()
    }
}

impl Publisher {
    /// A publisher of `database`'s commits as `settings` say. It receives every commit from
    /// now on; [`Publisher::run`] starts publishing. Fails if the address is not one the
    /// Redis client accepts.
    pub fn new(database: Arc<Database>, settings: PublishSettings) -> io::Result<Self> {
        let link = Link::new(&settings.address, settings.timeout, settings.timeout)?;
        let feed = database.feed().subscribe();
        let durable = database
            .log()
            .map_or(database.next_offset(), |log| log.durable_transactions());
        let stats = Arc::new(PublishStats::default());
        stats.durable.store(durable, Ordering::Relaxed);
        Ok(Self {
            backlog: Backlog::new(settings.backlog),
            database,
            settings,
            stats,
            feed,
            link,
            next: None,
            durable,
            log_failed: false,
            failing: None,
        })
    }

    /// The counters, for `/metrics`.
    pub fn stats(&self) -> Arc<PublishStats> {
        self.stats.clone()
    }

    /// Publishes until `shutdown` turns `true` or the database closes.
    pub async fn run(mut self, mut shutdown: watch::Receiver<bool>) {
        tracing::info!(stream = %self.settings.address, "publishing commits");
        loop {
            if *shutdown.borrow() || !self.catch_up() {
                break;
            }
            let going = match self.publish_some().await {
                Ok(true) => true,
                Ok(false) => self.wait_for_commits(&mut shutdown).await,
                Err(failure) => {
                    self.failed(&failure);
                    self.pause(&mut shutdown).await
                }
            };
            self.count();
            if !going {
                break;
            }
        }
        tracing::debug!("the publisher has stopped");
    }

    /// Learns how far the commits are durable and takes the commits waiting in the feed,
    /// under a read transaction: every commit the tables include is in the feed by then, so
    /// every durable commit is in the backlog (with its metadata) unless the feed lagged.
    /// `false` once the database is closed.
    fn catch_up(&mut self) -> bool {
        let _tables = self.database.begin_read();
        let durable = self
            .database
            .log()
            .map_or(self.database.next_offset(), |log| {
                log.durable_transactions()
            });
        self.durable = self.durable.max(durable);
        self.drain()
    }

    /// Takes the commits waiting in the feed; `false` once the database is closed.
    fn drain(&mut self) -> bool {
        loop {
            match self.feed.try_recv() {
                Ok(commit) => self.keep(commit),
                Err(FeedError::Lagged { .. }) => {}
                Err(FeedError::Empty) => return true,
                Err(FeedError::Closed) => return false,
            }
        }
    }

    /// Keeps the commit the feed gave while waiting; `false` once the feed has closed (a
    /// lag or an empty feed leaves nothing to keep).
    fn received(&mut self, commit: Result<Arc<Commit>, FeedError>) -> bool {
        match commit {
            Ok(commit) => self.keep(commit),
            Err(FeedError::Closed) => return false,
            Err(FeedError::Lagged { .. } | FeedError::Empty) => {}
        }
        true
    }

    fn keep(&mut self, commit: Arc<Commit>) {
        let dropped = self.backlog.push(commit) as u64;
        self.stats.dropped.fetch_add(dropped, Ordering::Relaxed);
    }

    /// Writes the next durable entries the stream needs; whether there were any.
    async fn publish_some(&mut self) -> Result<bool, Failure> {
        let mut connection = self.link.connection().await?;
        let next = match self.next {
            Some(next) => next,
            None => self.stream_next(&mut connection).await?,
        };
        self.next = Some(next);
        if next >= self.durable {
            self.recovered();
            return Ok(false);
        }
        let entries = self.entries(next);
        let Some(last) = entries.last() else {
            return Ok(false);
        };
        let following = last.next_offset();
        let mut pipeline = redis::pipe();
        for entry in &entries {
            let mut command = redis::cmd("XADD");
            command
                .arg(&self.settings.address.stream)
                .arg("MAXLEN")
                .arg("~")
                .arg(self.settings.max_len)
                .arg(entry.id());
            for (name, value) in entry.fields() {
                command.arg(name).arg(value);
            }
            pipeline.add_command(command).ignore();
        }
        pipeline.query_async::<()>(&mut connection).await?;
        self.recovered();
        let (mut commits, mut resyncs) = (0, 0);
        for entry in &entries {
            match entry {
                StreamEntry::Commit(commit) => {
                    commits += 1;
                    if commit.meta.timestamp != Timestamp::UNIX_EPOCH {
                        let age = Timestamp::now().to_micros_since_unix_epoch()
                            - commit.meta.timestamp.to_micros_since_unix_epoch();
                        self.stats
                            .latency_micros
                            .store(age.max(0) as u64, Ordering::Relaxed);
                    }
                }
                StreamEntry::Resync { .. } => resyncs += 1,
            }
        }
        self.stats.written.fetch_add(commits, Ordering::Relaxed);
        self.stats.resyncs.fetch_add(resyncs, Ordering::Relaxed);
        self.next = Some(following);
        self.backlog.release(following);
        Ok(true)
    }

    /// The offset the stream needs next, from its last entry; for an empty (or lost) stream,
    /// the oldest of the last `max_len` durable commits.
    async fn stream_next(&self, connection: &mut MultiplexedConnection) -> Result<u64, Failure> {
        let Some(last) = last_id(connection, &self.settings.address.stream).await? else {
            return Ok(self.durable.saturating_sub(self.settings.max_len));
        };
        let next = next_offset_after(&last).map_err(|reason| {
            Failure::Stream(format!(
                "the stream {} holds entries of another kind: {reason}",
                self.settings.address
            ))
        })?;
        if next > self.durable {
            tracing::warn!(
                stream = %self.settings.address,
                stream_next = next,
                durable = self.durable,
                "the stream is ahead of this primary's log (another primary's stream, or a \
                 replaced data directory?): commits below its end are not published"
            );
        }
        Ok(next)
    }

    /// The entries that follow offset `next`, up to [`BATCH`] of the durable ones: commits
    /// from memory, or from the log, or a marker where neither has them. Empty if the log has
    /// not written them yet.
    fn entries(&mut self, next: u64) -> Vec<StreamEntry> {
        self.backlog.release(next);
        let until = self.durable.min(next + BATCH);
        let first = self.backlog.first();
        if first == Some(next) {
            return self
                .backlog
                .range(next, until)
                .into_iter()
                .map(StreamEntry::Commit)
                .collect();
        }
        let refill_until = first.map_or(until, |first| first.min(until));
        let from_log = match self.database.log() {
            Some(log) => log.read(next, refill_until),
            None => Ok(None),
        };
        let resync = StreamEntry::Resync {
            offset: first.unwrap_or(self.durable),
        };
        match from_log {
            Ok(Some(run)) => {
                self.stats
                    .refilled
                    .fetch_add(run.len() as u64, Ordering::Relaxed);
                run.into_iter()
                    .map(|(offset, changes)| {
                        StreamEntry::Commit(Arc::new(Commit {
                            offset,
                            meta: CommitMeta::recovered(),
                            changes,
                        }))
                    })
                    .collect()
            }
            Ok(None) => vec![resync],
            Err(error) => {
                tracing::warn!(
                    "cannot read commits {next}.. back from the log for the stream: {error}"
                );
                vec![resync]
            }
        }
    }

    /// Waits for a commit to become durable or to arrive, or, while the stream is behind, for
    /// a retry; `false` on shutdown.
    async fn wait_for_commits(&mut self, shutdown: &mut watch::Receiver<bool>) -> bool {
        if let Some(last) = self.backlog.last().filter(|last| *last >= self.durable) {
            if !self.log_failed {
                let ticket = self.database.durable(last);
                match tokio::task::spawn_blocking(move || ticket.wait()).await {
                    Ok(Ok(())) => {
                        self.durable = last + 1;
                        return true;
                    }
                    Ok(Err(error)) => {
                        tracing::error!("commits are no longer published: {error}");
                        self.log_failed = true;
                    }
                    Err(error) => tracing::error!("waiting for durability failed: {error}"),
                }
            }
        }
        let behind = self.next.is_some_and(|next| next < self.durable);
        tokio::select! {
            commit = self.feed.recv() => if !self.received(commit) {
                return false;
            },
            () = crate::stopped(shutdown) => return false,
            () = tokio::time::sleep(self.settings.retry), if behind => {}
        }
        true
    }

    /// Waits [`PublishSettings::retry`] after a failure, taking commits meanwhile; `false`
    /// on shutdown.
    async fn pause(&mut self, shutdown: &mut watch::Receiver<bool>) -> bool {
        let until = tokio::time::Instant::now() + self.settings.retry;
        loop {
            tokio::select! {
                commit = self.feed.recv() => if !self.received(commit) {
                    return false;
                },
                () = crate::stopped(shutdown) => return false,
                () = tokio::time::sleep_until(until) => return true,
            }
        }
    }

    /// Counts a failed exchange, forgets the connection and the stream's tail (both are read
    /// again), and logs the backlog now and then.
    fn failed(&mut self, failure: &Failure) {
        self.link.forget();
        self.next = None;
        self.stats.errors.fetch_add(1, Ordering::Relaxed);
        self.stats.connected.store(false, Ordering::Relaxed);
        let now = Instant::now();
        let since = match self.failing {
            Some((since, warned)) if now.duration_since(warned) < WARN_EVERY => {
                self.failing = Some((since, warned));
                return;
            }
            Some((since, _)) => since,
            None => now,
        };
        self.failing = Some((since, now));
        let published = self.stats.published.load(Ordering::Relaxed);
        tracing::warn!(
            stream = %self.settings.address,
            behind = self.durable.saturating_sub(published),
            in_memory = self.backlog.len(),
            failing_for = ?now.duration_since(since),
            "cannot publish commits: {failure}; they wait, and the stream is refilled once Redis answers"
        );
    }

    /// Notes that Redis answered.
    fn recovered(&mut self) {
        self.stats.connected.store(true, Ordering::Relaxed);
        if let Some((since, _)) = self.failing.take() {
            tracing::info!(
                stream = %self.settings.address,
                after = ?since.elapsed(),
                "publishing commits again"
            );
        }
    }

    /// Updates the gauges.
    fn count(&self) {
        if let Some(next) = self.next {
            self.stats.published.store(next, Ordering::Relaxed);
        }
        self.stats.durable.store(self.durable, Ordering::Relaxed);
        self.stats
            .backlog
            .store(self.backlog.len() as u64, Ordering::Relaxed);
    }
}
