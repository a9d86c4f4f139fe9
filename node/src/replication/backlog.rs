//! The commits waiting to be published, in memory and bounded.
//!
//! The publisher takes every commit from the feed as it is made, and keeps it (its metadata
//! included, which the log does not keep) until the stream has it. The backlog holds one
//! unbroken run of offsets ending at the newest commit, at most `capacity` of them: when
//! Redis is down long enough to fill it, the oldest are dropped, and the publisher reads them
//! back from the commit log instead (or, if the log no longer has them, tells edges to
//! resynchronise). So Redis being down costs the primary at most `capacity` commits of memory.

use std::collections::VecDeque;
use std::sync::Arc;
use wasmod_host::datastore::Commit;

/// An unbroken run of the newest commits, at most `capacity` long.
#[derive(Debug)]
pub struct Backlog {
    commits: VecDeque<Arc<Commit>>,
    capacity: usize,
}

impl Backlog {
    /// An empty backlog of at most `capacity` commits (at least one).
    pub fn new(capacity: usize) -> Self {
        Self {
            commits: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    /// Adds the newest commit. A commit that does not follow the last (the feed lagged and
    /// skipped some) starts the run afresh: the missed ones are the log's to provide. Returns
    /// how many commits were dropped to make room or to keep the run unbroken.
    pub fn push(&mut self, commit: Arc<Commit>) -> usize {
        let mut dropped = 0;
        if self
            .commits
            .back()
            .is_some_and(|last| last.offset + 1 != commit.offset)
        {
            dropped = self.commits.len();
            self.commits.clear();
        }
        self.commits.push_back(commit);
        if self.commits.len() > self.capacity {
            self.commits.pop_front();
            dropped += 1;
        }
        dropped
    }

    /// The offset of the oldest commit held.
    pub fn first(&self) -> Option<u64> {
        self.commits.front().map(|commit| commit.offset)
    }

    /// The offset of the newest commit held.
    pub fn last(&self) -> Option<u64> {
        self.commits.back().map(|commit| commit.offset)
    }

    /// How many commits are held.
    pub fn len(&self) -> usize {
        self.commits.len()
    }

    /// Whether no commit is held.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.commits.is_empty()
    }

    /// The commits held at offsets `from..until`, oldest first.
    pub fn range(&self, from: u64, until: u64) -> Vec<Arc<Commit>> {
        self.commits
            .iter()
            .filter(|commit| (from..until).contains(&commit.offset))
            .cloned()
            .collect()
    }

    /// Forgets the commits below offset `next`: the stream has them.
    pub fn release(&mut self, next: u64) {
        while self
            .commits
            .front()
            .is_some_and(|commit| commit.offset < next)
        {
            self.commits.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_host::datastore::{CommitMeta, TxData};

    fn commit(offset: u64) -> Arc<Commit> {
        Arc::new(Commit {
            offset,
            meta: CommitMeta::host(),
            changes: TxData::default(),
        })
    }

    fn offsets(commits: &[Arc<Commit>]) -> Vec<u64> {
        commits.iter().map(|commit| commit.offset).collect()
    }

    #[test]
    fn the_backlog_keeps_the_newest_commits_within_its_capacity() {
        let mut backlog = Backlog::new(3);
        let dropped: usize = (10..15).map(|offset| backlog.push(commit(offset))).sum();
        assert_eq!(dropped, 2);
        assert_eq!(
            (backlog.first(), backlog.last(), backlog.len()),
            (Some(12), Some(14), 3)
        );
        assert_eq!(offsets(&backlog.range(0, 100)), [12, 13, 14]);
        assert_eq!(offsets(&backlog.range(13, 14)), [13]);
    }

    #[test]
    fn a_commit_after_a_hole_starts_the_run_afresh() {
        let mut backlog = Backlog::new(10);
        backlog.push(commit(1));
        backlog.push(commit(2));
        assert_eq!(backlog.push(commit(5)), 2);
        assert_eq!(offsets(&backlog.range(0, 100)), [5]);
    }

    #[test]
    fn released_commits_are_forgotten() {
        let mut backlog = Backlog::new(10);
        for offset in 0..5 {
            backlog.push(commit(offset));
        }
        backlog.release(3);
        assert_eq!(backlog.first(), Some(3));
        backlog.release(9);
        assert!(backlog.is_empty());
    }
}
