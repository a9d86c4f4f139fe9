//! The reading side of the stream: tails it from an offset and hands over the commits in
//! order, or says that the reader must bootstrap again.
//!
//! A follower that holds every commit below offset `n` reads entries after id `n-0` (so a
//! marker `n-0`, which concerns only commits it has, is not even returned). The next entry must
//! be the commit `n-1`; anything else is a gap, told from the ids alone:
//!
//! - a later commit: the stream was trimmed past the follower (`MAXLEN`, a stuck reader), or
//!   Redis lost it and the primary refilled only the latest commits;
//! - a marker `m-0` with `m > n`: the primary could not provide the commits before `m`.
//!
//! A Redis that lost the stream and was refilled from the primary's log from an offset at or
//! before `n` is no gap: the follower goes on from `n-1` as if nothing happened. Each read
//! takes at most [`FollowSettings::batch`] entries, so a follower that falls behind holds no
//! more than that in memory however long the stream.

use super::address::StreamAddress;
use super::entry::next_offset_after;
use super::entry::StreamEntry;
use super::link::{last_id, Link};
use redis::streams::StreamReadReply;
use redis::RedisError;
use std::io;
use std::sync::Arc;
use std::time::Duration;
use wasmod_host::datastore::Commit;

/// How a follower reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FollowSettings {
    /// The most entries one read takes.
    pub batch: usize,
    /// How long one read waits for entries to come (`XREAD BLOCK`).
    pub block: Duration,
    /// The longest connecting may take, and a read beyond its `block`.
    pub timeout: Duration,
}

impl Default for FollowSettings {
    /// 512 entries a read, waiting up to 1 s for them, exchanges of at most 2 s more.
    fn default() -> Self {
        Self {
            batch: 512,
            block: Duration::from_secs(1),
            timeout: Duration::from_secs(2),
        }
    }
}

/// What a read found.
#[derive(Debug, PartialEq, Eq)]
pub enum Followed {
    /// The next commits, in order (none if nothing came within the read's wait).
    Commits(Vec<Arc<Commit>>),
    /// The stream cannot take the follower further: bootstrap again, then
    /// [`Follower::restart`] from the snapshot's offset. The commits before this point in
    /// the same read were handed over first.
    Gap(Gap),
}

/// Why the stream cannot take a follower further.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gap {
    /// The next commit in the stream is not the one expected: the ones between are gone.
    Missing {
        /// The offset the follower needed.
        expected: u64,
        /// The offset of the commit the stream has instead.
        found: u64,
    },
    /// The primary marked the commits before `offset` as not in the stream.
    Resync {
        /// The offset the follower needed.
        expected: u64,
        /// The marker's offset.
        offset: u64,
    },
}

/// A reader of the stream from an offset.
#[derive(Debug)]
pub struct Follower {
    address: StreamAddress,
    settings: FollowSettings,
    link: Link,
    next: u64,
    pending: Option<Gap>,
}

impl Follower {
    /// A follower of the stream at `address` that holds every commit below `next`. Fails if
    /// the address is not one the Redis client accepts.
    pub fn new(address: StreamAddress, next: u64, settings: FollowSettings) -> io::Result<Self> {
        let link = Link::new(
            &address,
            settings.timeout,
            settings.block + settings.timeout,
        )?;
        Ok(Self {
            address,
            settings,
            link,
            next,
            pending: None,
        })
    }

    /// The offset of the next commit the follower needs.
    #[cfg(feature = "internals")]
    pub fn next_offset(&self) -> u64 {
        self.next
    }

    /// Follows from `next` on, after a bootstrap from a snapshot at that offset.
    pub fn restart(&mut self, next: u64) {
        self.next = next;
        self.pending = None;
    }

    /// The offset after the stream's last entry (`None` for an empty stream): how far the
    /// stream goes, to tell a follower's lag.
    pub async fn stream_next(&mut self) -> Result<Option<u64>, RedisError> {
        let mut connection = self.link.connection().await?;
        let last = last_id(&mut connection, &self.address.stream)
            .await
            .inspect_err(|_| self.link.forget())?;
        last.map(|id| {
            next_offset_after(&id).map_err(|reason| {
                RedisError::from((redis::ErrorKind::Parse, "not a replication entry", reason))
            })
        })
        .transpose()
    }

    /// The next commits, waiting up to [`FollowSettings::block`] for them, or the gap that
    /// stops the follower (told again until [`Follower::restart`]). An error of Redis drops
    /// the connection (the next read opens another); the position is kept.
    pub async fn read(&mut self) -> Result<Followed, RedisError> {
        if let Some(gap) = self.pending {
            return Ok(Followed::Gap(gap));
        }
        let mut connection = self.link.connection().await?;
        let reply: Result<Option<StreamReadReply>, RedisError> = redis::cmd("XREAD")
            .arg("COUNT")
            .arg(self.settings.batch)
            .arg("BLOCK")
            .arg(self.settings.block.as_millis() as u64)
            .arg("STREAMS")
            .arg(&self.address.stream)
            .arg(format!("{}-0", self.next))
            .query_async(&mut connection)
            .await;
        let reply = reply.inspect_err(|_| self.link.forget())?;
        let mut commits = Vec::new();
        for entry in reply
            .iter()
            .flat_map(|reply| &reply.keys)
            .flat_map(|key| &key.ids)
        {
            let entry = StreamEntry::from_stream(entry).map_err(|reason| {
                RedisError::from((redis::ErrorKind::Parse, "not a replication entry", reason))
            })?;
            let gap = match entry {
                StreamEntry::Commit(commit) if commit.offset == self.next => {
                    self.next += 1;
                    commits.push(commit);
                    continue;
                }
                StreamEntry::Resync { offset } if offset <= self.next => continue,
                StreamEntry::Commit(commit) => Gap::Missing {
                    expected: self.next,
                    found: commit.offset,
                },
                StreamEntry::Resync { offset } => Gap::Resync {
                    expected: self.next,
                    offset,
                },
            };
            self.pending = Some(gap);
            break;
        }
        Ok(match self.pending {
            Some(gap) if commits.is_empty() => Followed::Gap(gap),
            _ => Followed::Commits(commits),
        })
    }
}
