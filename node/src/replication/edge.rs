//! An edge node's copy of its primary's tables: bootstrapped from the primary's snapshot, kept
//! up to date from the stream, and brought up to date again from a newer snapshot whenever the
//! stream cannot take it further.
//!
//! The copy is a replica [`Database`] (`Database::replica`), which the edge's server serves
//! exactly as a primary serves its own: the subscription evaluation follows its feed, table
//! reads and views read it. Only the task here changes it:
//!
//! 1. it reads the next commits from the stream ([`Follower`]) and applies them in order
//!    ([`Database::apply_replicated`]), off the async runtime;
//! 2. on a gap (the stream was trimmed past the edge, Redis lost it, a marker), it takes a new
//!    snapshot from the primary and changes the copy to it in one commit of the difference
//!    ([`Database::resync`]): every live query on the edge gets exactly the rows that changed,
//!    so no client sees a gap or a duplicate, and then it follows from the snapshot's offset;
//! 3. it publishes the offset it has applied ([`Applied`]), which calls forwarded to the
//!    primary wait for, so that a client reads its own writes; and counts what it does
//!    ([`EdgeStats`]: lag in offsets and time, resyncs, errors, whether it is caught up).
//!
//! The edge holds at most one read of the stream ([`FollowSettings::batch`] commits) beyond its
//! copy, whatever the stream's length: a stuck or slow edge costs neither the primary nor
//! Redis anything (the stream is trimmed to its bound), and on resuming it meets a gap and
//! bootstraps again.

use super::follower::{FollowSettings, Followed, Follower};
use super::primary::{Primary, Snapshot};
use super::stats::EdgeStats;
use super::StreamAddress;
use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use wasmod_abi::Timestamp;
use wasmod_host::datastore::{Commit, Database};

/// How long to wait before trying again after a failed exchange with Redis or the primary.
const RETRY: Duration = Duration::from_millis(500);

/// How often failures are logged as warnings while they go on (between, at debug level).
const WARN_EVERY: Duration = Duration::from_secs(10);

/// How an edge follows its primary.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct EdgeSettings {
    /// The primary's stream (`redis://HOST:PORT/<stream>`).
    pub follow: StreamAddress,
    /// How the stream is read.
    pub reads: FollowSettings,
    /// The longest a forwarded call waits for the edge to apply its commit before it is
    /// answered anyway (the commit is on the primary; the client may not see it here yet).
    /// Default: 10 s.
    pub apply_wait: Duration,
}

impl EdgeSettings {
    /// Follows `follow` with the default reads and waits.
    pub fn new(follow: StreamAddress) -> Self {
        Self {
            follow,
            reads: FollowSettings::default(),
            apply_wait: Duration::from_secs(10),
        }
    }

    /// How long a read may have found nothing more for the edge to count as caught up: two
    /// reads' worth of waiting.
    pub fn fresh(&self) -> Duration {
        2 * (self.reads.block + self.reads.timeout)
    }
}

/// The offset an edge's copy has applied up to, to wait on. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Applied {
    next: watch::Receiver<u64>,
}

impl Applied {
    /// Waits until the copy holds the commit at `offset`, at most `patience`; whether it does.
    pub async fn wait_for(&self, offset: u64, patience: Duration) -> bool {
        let mut next = self.next.clone();
        let holds = tokio::time::timeout(patience, next.wait_for(|next| *next > offset)).await;
        matches!(holds, Ok(Ok(_)))
    }
}

/// The task that keeps an edge's copy up to date ([`Follow::run`]).
#[derive(Debug)]
pub struct Follow {
    database: Arc<Database>,
    primary: Arc<Primary>,
    follower: Follower,
    /// The most commits one read takes: a read this long may have left more behind.
    batch: usize,
    stats: Arc<EdgeStats>,
    applied: watch::Sender<u64>,
}

impl Follow {
    /// The task that keeps `database`, a replica of `primary` bootstrapped from a snapshot,
    /// up to date from the stream `settings` names; and the offset it has applied, to wait
    /// on. Fails if the stream's address is not one the Redis client accepts.
    pub fn new(
        database: Arc<Database>,
        primary: Arc<Primary>,
        settings: &EdgeSettings,
        stats: Arc<EdgeStats>,
    ) -> io::Result<(Self, Applied)> {
        let next = database.next_offset();
        let follower = Follower::new(settings.follow.clone(), next, settings.reads)?;
        stats.applied.store(next, Ordering::Relaxed);
        let (applied, receiver) = watch::channel(next);
        let follow = Self {
            database,
            primary,
            follower,
            batch: settings.reads.batch,
            stats,
            applied,
        };
        Ok((follow, Applied { next: receiver }))
    }

    /// Follows the stream until `stop` becomes `true`.
    pub async fn run(mut self, mut stop: watch::Receiver<bool>) {
        let mut warned: Option<Instant> = None;
        loop {
            let read = tokio::select! {
                read = self.follower.read() => read,
                _ = stop.wait_for(|stop| *stop) => return,
            };
            let failure = match read {
                Ok(Followed::Commits(commits)) => {
                    let full = commits.len() >= self.batch;
                    match self.apply(commits).await {
                        Ok(()) => self.note_position(full).await,
                        Err(reason) => Some(reason),
                    }
                }
                Ok(Followed::Gap(gap)) => {
                    tracing::info!(?gap, "the stream cannot take this edge further: resynchronising from the primary's snapshot");
                    self.stats.gap.store(true, Ordering::Relaxed);
                    self.resync().await.err()
                }
                Err(error) => Some(format!("reading the stream failed: {error}")),
            };
            if let Some(reason) = failure {
                self.stats.errors.fetch_add(1, Ordering::Relaxed);
                if warned.is_none_or(|at| at.elapsed() >= WARN_EVERY) {
                    tracing::warn!("{reason}; retrying every {RETRY:?}");
                    warned = Some(Instant::now());
                } else {
                    tracing::debug!("{reason}; retrying in {RETRY:?}");
                }
                tokio::select! {
                    () = tokio::time::sleep(RETRY) => {}
                    _ = stop.wait_for(|stop| *stop) => return,
                }
            }
        }
    }

    /// Applies `commits`, in order, off the runtime.
    async fn apply(&mut self, commits: Vec<Arc<Commit>>) -> Result<(), String> {
        let Some(last) = commits.last() else {
            return Ok(());
        };
        let timestamp = last.meta.timestamp;
        let count = commits.len() as u64;
        let database = self.database.clone();
        let applied = tokio::task::spawn_blocking(move || {
            for commit in commits {
                database.apply_replicated(Arc::unwrap_or_clone(commit))?;
            }
            Ok::<(), wasmod_host::datastore::ReplicaError>(())
        })
        .await
        .map_err(|error| format!("applying commits failed: {error}"))?;
        if let Err(error) = applied {
            // The copy no longer holds what the primary held: take a new snapshot.
            self.stats.gap.store(true, Ordering::Relaxed);
            tracing::warn!("{error}: resynchronising from the primary's snapshot");
            return self.resync().await;
        }
        self.stats.commits.fetch_add(count, Ordering::Relaxed);
        if timestamp != Timestamp::UNIX_EPOCH {
            let lag = Timestamp::now()
                .to_micros_since_unix_epoch()
                .saturating_sub(timestamp.to_micros_since_unix_epoch());
            self.stats
                .lag_micros
                .store(lag.max(0) as u64, Ordering::Relaxed);
        }
        self.published(self.database.next_offset());
        Ok(())
    }

    /// Records how far the stream goes after a read: as far as the copy if the read came back
    /// short, otherwise as its last entry says.
    async fn note_position(&mut self, full: bool) -> Option<String> {
        let next = self.database.next_offset();
        if !full {
            self.stats.stream.store(next, Ordering::Relaxed);
            self.stats.caught_up_now();
            return None;
        }
        match self.follower.stream_next().await {
            Ok(end) => {
                self.stats
                    .stream
                    .store(end.unwrap_or(next).max(next), Ordering::Relaxed);
                None
            }
            Err(error) => Some(format!("reading the stream's end failed: {error}")),
        }
    }

    /// Takes a snapshot from the primary and changes the copy to it, then follows from there.
    async fn resync(&mut self) -> Result<(), String> {
        let Snapshot { offset, rows } = self
            .primary
            .snapshot()
            .await
            .map_err(|error| format!("the snapshot failed: {error}"))?;
        let database = self.database.clone();
        let changed = tokio::task::spawn_blocking(move || database.resync(offset, &rows))
            .await
            .map_err(|error| format!("resynchronising failed: {error}"))?
            .map_err(|error| format!("resynchronising failed: {error}"))?;
        tracing::info!(
            offset,
            changed = changed.is_some(),
            "resynchronised from the primary's snapshot"
        );
        self.follower.restart(offset);
        self.stats.gap.store(false, Ordering::Relaxed);
        self.stats.resyncs.fetch_add(1, Ordering::Relaxed);
        self.published(offset);
        Ok(())
    }

    /// Tells the waiting calls and the counters that the copy needs `next` next.
    fn published(&self, next: u64) {
        self.stats.applied.store(next, Ordering::Relaxed);
        self.applied.send_replace(next);
    }
}

/// An edge's counters and how recent a read must be to count as caught up, for `/health`
/// and `/metrics`.
#[derive(Debug)]
pub struct EdgeState {
    /// The edge's counters.
    pub stats: Arc<EdgeStats>,
    /// How recent the edge's last read of the stream must be for it to be caught up.
    pub fresh: Duration,
}
