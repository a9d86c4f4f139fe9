//! The broadcast point of a database's commits.
//!
//! Subscribers (live queries, replication) each get every commit once, in commit order, on
//! their own thread or task. The feed is a bounded ring ([`FEED_CAPACITY`] commits): a commit
//! is kept until every subscriber has received it, and a subscriber that falls a whole ring
//! behind is told how many it missed ([`FeedError::Lagged`]) rather than holding the writer
//! back or growing without bound. With no subscriber, publishing keeps nothing.

use super::{Commit, CommitObserver};
use std::fmt;
use std::sync::Arc;
use tokio::sync::broadcast;

/// How many commits the feed holds for its slowest subscriber.
pub const FEED_CAPACITY: usize = 4096;

/// The commits of one database, to subscribe to.
pub struct CommitFeed {
    sender: broadcast::Sender<Arc<Commit>>,
}

/// One subscriber's view of a [`CommitFeed`]: every commit published after it subscribed.
pub struct CommitReceiver {
    receiver: broadcast::Receiver<Arc<Commit>>,
}

/// Why a [`CommitReceiver`] has no commit to give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeedError {
    /// The subscriber fell behind by more than the feed holds: it missed this many commits
    /// (the next one received is the oldest still held). It must resynchronise from the
    /// tables.
    Lagged {
        /// How many commits were missed.
        missed: u64,
    },
    /// The database is gone: no commit will come.
    Closed,
    /// No commit is waiting (from [`CommitReceiver::try_recv`] only).
    Empty,
}

impl fmt::Display for FeedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Lagged { missed } => {
                write!(f, "the subscriber fell behind and missed {missed} commits")
            }
            Self::Closed => f.write_str("the database is closed"),
            Self::Empty => f.write_str("no commit is waiting"),
        }
    }
}

impl std::error::Error for FeedError {}

impl CommitFeed {
    /// A feed that holds up to `capacity` commits for its slowest subscriber.
    pub(crate) fn new(capacity: usize) -> Self {
        let (sender, _) = broadcast::channel(capacity.max(1));
        Self { sender }
    }

    /// A subscriber that receives every commit published from now on.
    pub fn subscribe(&self) -> CommitReceiver {
        CommitReceiver {
            receiver: self.sender.subscribe(),
        }
    }

    /// How many subscribers there are.
    pub fn subscribers(&self) -> usize {
        self.sender.receiver_count()
    }
}

impl CommitObserver for CommitFeed {
    fn observe(&self, commit: &Arc<Commit>) {
        // With no subscriber the commit comes back, and is dropped here: nothing is kept.
        let _ = self.sender.send(commit.clone());
    }
}

impl fmt::Debug for CommitFeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommitFeed")
            .field("subscribers", &self.subscribers())
            .finish()
    }
}

impl CommitReceiver {
    /// The next commit, waiting for it.
    pub async fn recv(&mut self) -> Result<Arc<Commit>, FeedError> {
        self.receiver.recv().await.map_err(recv_error)
    }

    /// The next commit, blocking the thread until it comes. Not for async code.
    pub fn blocking_recv(&mut self) -> Result<Arc<Commit>, FeedError> {
        self.receiver.blocking_recv().map_err(recv_error)
    }

    /// The next commit if one is waiting.
    pub fn try_recv(&mut self) -> Result<Arc<Commit>, FeedError> {
        self.receiver.try_recv().map_err(|error| match error {
            broadcast::error::TryRecvError::Empty => FeedError::Empty,
            broadcast::error::TryRecvError::Closed => FeedError::Closed,
            broadcast::error::TryRecvError::Lagged(missed) => FeedError::Lagged { missed },
        })
    }
}

impl fmt::Debug for CommitReceiver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommitReceiver")
            .field("waiting", &self.receiver.len())
            .finish()
    }
}

fn recv_error(error: broadcast::error::RecvError) -> FeedError {
    match error {
        broadcast::error::RecvError::Closed => FeedError::Closed,
        broadcast::error::RecvError::Lagged(missed) => FeedError::Lagged { missed },
    }
}
