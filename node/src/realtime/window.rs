//! The recent commits the evaluation task keeps so that a reconnecting client can resume: it
//! says the last offset it applied (`resume_from`), and if every commit after it is still
//! here, it is sent only what those commits changed in its queries instead of all their rows.
//!
//! The window is bounded twice: in commits and in the bytes of their rows, so that a burst of
//! large transactions cannot make it hold more memory than configured. It keeps whole
//! commits, oldest first, and only an unbroken run of offsets: a gap (the task fell behind the
//! feed) empties it, since the commits in the gap are gone.
//!
//! Offsets identify commits across restarts only when the database has a commit log: a client
//! that applied offset 41 before the server restarted resumes from it, from the commits since
//! the restart (or with nothing to send, if there were none). An in-memory database counts
//! from zero again each run, so a client's offset may name another run's commit: such a
//! server never resumes, and always sends the full rows.
//!
//! A restart starts the window with the last commits read back from the log and the start's
//! own commits, made before anyone is served
//! ([`Database::take_recent`](wasmod_host::datastore::Database::take_recent)). After a crash
//! those are the disconnections of every connection the crash left open, one commit each: the
//! clients that reconnect are exactly the ones that were connected, and each applied a commit
//! before them, so the window must reach back past them (it holds `--resume-commits` commits:
//! more than the connections open at a crash, with room for those before).
//!
//! A new build of the module (`wasmod publish`) starts the window afresh at its first commit
//! ([`ResumeWindow::restart`]): a client that applied an earlier commit holds the old build's
//! rows, whose row types the new build's may not share, so it is sent the full rows. So does a
//! start that upgraded the stored rows to new row types (a column added): the window then
//! holds only the start's commits. An upgrade that kept every row's encoding (a table or an
//! index added) does not: the rows a client holds are still the new build's.

use std::collections::VecDeque;
use std::sync::Arc;
use wasmod_host::datastore::Commit;

/// The bounds of the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowBounds {
    /// The most commits kept; `0` keeps none (no client ever resumes).
    pub commits: usize,
    /// The most bytes of rows kept.
    pub bytes: usize,
}

/// The most recent commits, an unbroken run of offsets.
#[derive(Debug)]
pub struct ResumeWindow {
    bounds: WindowBounds,
    commits: VecDeque<Arc<Commit>>,
    bytes: usize,
    /// Whether offsets name the same commits across restarts: true with a commit log. Without
    /// one, no client resumes.
    durable_offsets: bool,
    /// The offset of the oldest commit kept, or of the next one if none is: a client resumes
    /// from `start - 1` or later.
    start: u64,
    /// The first commit of the build serving the module: a client resumes from it or later
    /// only (it holds another build's rows otherwise).
    build_start: u64,
}

impl ResumeWindow {
    /// An empty window with `bounds`, whose first commit will have offset `next_offset`.
    /// `durable_offsets` says whether offsets name the same commits across restarts (with a
    /// commit log) or may name another run's (in memory, counting from zero each run).
    pub fn new(bounds: WindowBounds, next_offset: u64, durable_offsets: bool) -> Self {
        Self {
            bounds,
            commits: VecDeque::new(),
            bytes: 0,
            durable_offsets,
            start: next_offset,
            build_start: 0,
        }
    }

    /// Forgets every commit, and every client's offset before `offset`: the commits from
    /// `offset` on are a new build's, the earlier ones another build's.
    pub fn restart(&mut self, offset: u64) {
        self.clear(offset);
        self.build_start = offset;
    }

    /// Keeps `commit`, the next commit after those kept (a commit whose offset does not follow
    /// the last one's starts the window again), and forgets the oldest commits past the
    /// bounds.
    pub fn push(&mut self, commit: &Arc<Commit>) {
        if self.next() != commit.offset {
            self.clear(commit.offset);
        }
        if self.bounds.commits == 0 {
            self.start = commit.offset + 1;
            return;
        }
        self.bytes += commit.changes.row_bytes();
        self.commits.push_back(commit.clone());
        while self.commits.len() > self.bounds.commits
            || (self.bytes > self.bounds.bytes && !self.commits.is_empty())
        {
            if let Some(oldest) = self.commits.pop_front() {
                self.bytes -= oldest.changes.row_bytes();
                self.start = oldest.offset + 1;
            }
        }
    }

    /// Forgets every commit: the next one is expected at `next_offset`, and a client resumes
    /// from `next_offset - 1` or later only.
    fn clear(&mut self, next_offset: u64) {
        self.commits.clear();
        self.bytes = 0;
        self.start = next_offset;
    }

    /// The commits after offset `applied`, oldest first, if the window holds every one of
    /// them; `None` if some are gone, `applied` is past the last commit or before the build
    /// serving the module ([`ResumeWindow::restart`]), or offsets do not name commits across
    /// restarts (an in-memory database: `applied` may be another run's).
    pub fn since(&self, applied: u64) -> Option<Vec<Arc<Commit>>> {
        if !self.durable_offsets || applied >= self.next() || applied < self.build_start {
            return None;
        }
        let first = applied.checked_add(1)?;
        let skip = usize::try_from(first.checked_sub(self.start)?).ok()?;
        Some(self.commits.iter().skip(skip).cloned().collect())
    }

    /// The offset the next commit will have.
    fn next(&self) -> u64 {
        self.start + self.commits.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_host::datastore::{CommitMeta, TableChanges, TxData};

    fn commit(offset: u64, bytes: usize) -> Arc<Commit> {
        Arc::new(Commit {
            offset,
            meta: CommitMeta::host(),
            changes: TxData {
                tables: vec![TableChanges {
                    table: 0,
                    inserted: vec![Arc::from(vec![0; bytes])],
                    deleted: Vec::new(),
                }],
            },
        })
    }

    fn offsets(commits: Option<Vec<Arc<Commit>>>) -> Option<Vec<u64>> {
        commits.map(|commits| commits.iter().map(|commit| commit.offset).collect())
    }

    const ROOMY: WindowBounds = WindowBounds {
        commits: 100,
        bytes: 1 << 20,
    };

    #[test]
    fn gives_the_commits_after_an_offset_it_holds_them_all_for() {
        let mut window = ResumeWindow::new(ROOMY, 10, true);
        for offset in 10..15 {
            window.push(&commit(offset, 8));
        }
        assert_eq!(offsets(window.since(9)), Some(vec![10, 11, 12, 13, 14]));
        assert_eq!(offsets(window.since(12)), Some(vec![13, 14]));
        assert_eq!(offsets(window.since(14)), Some(vec![]));
        assert_eq!(offsets(window.since(8)), None, "commit 9 is not held");
        assert_eq!(offsets(window.since(15)), None, "a future offset");
        assert_eq!(offsets(window.since(u64::MAX)), None);
    }

    #[test]
    fn an_up_to_date_client_resumes_with_nothing_before_any_commit() {
        let window = ResumeWindow::new(ROOMY, 10, true);
        assert_eq!(offsets(window.since(9)), Some(vec![]));
        assert_eq!(offsets(window.since(8)), None);
        assert_eq!(offsets(ResumeWindow::new(ROOMY, 0, true).since(0)), None);
    }

    #[test]
    fn is_bounded_in_commits_and_in_bytes() {
        let mut window = ResumeWindow::new(
            WindowBounds {
                commits: 3,
                bytes: 1000,
            },
            0,
            true,
        );
        for offset in 0..5 {
            window.push(&commit(offset, 10));
        }
        assert_eq!(offsets(window.since(1)), Some(vec![2, 3, 4]));
        assert_eq!(offsets(window.since(0)), None);
        window.push(&commit(5, 995));
        assert_eq!(
            offsets(window.since(4)),
            Some(vec![5]),
            "only the big one fits"
        );
        assert_eq!(offsets(window.since(3)), None);
        window.push(&commit(6, 2000));
        assert_eq!(
            offsets(window.since(6)),
            Some(vec![]),
            "none fits, the offsets go on"
        );
        assert_eq!(offsets(window.since(5)), None);
    }

    #[test]
    fn a_gap_in_the_offsets_starts_it_again() {
        let mut window = ResumeWindow::new(ROOMY, 0, true);
        window.push(&commit(0, 1));
        window.push(&commit(1, 1));
        window.push(&commit(7, 1));
        assert_eq!(offsets(window.since(6)), Some(vec![7]));
        assert_eq!(offsets(window.since(1)), None, "commits 2 to 6 were missed");
    }

    #[test]
    fn a_new_build_resumes_only_clients_that_applied_one_of_its_commits() {
        let mut window = ResumeWindow::new(ROOMY, 0, true);
        for offset in 0..3 {
            window.push(&commit(offset, 1));
        }
        window.restart(3);
        assert_eq!(
            offsets(window.since(2)),
            None,
            "commit 2 was the old build's: its rows are the old build's"
        );
        window.push(&commit(3, 1));
        window.push(&commit(4, 1));
        assert_eq!(offsets(window.since(3)), Some(vec![4]));
        assert_eq!(offsets(window.since(1)), None);
    }

    #[test]
    fn never_resumes_without_durable_offsets_or_with_no_room() {
        let mut memory = ResumeWindow::new(ROOMY, 0, false);
        memory.push(&commit(0, 1));
        assert_eq!(offsets(memory.since(0)), None);
        let mut none = ResumeWindow::new(
            WindowBounds {
                commits: 0,
                bytes: 1000,
            },
            0,
            true,
        );
        none.push(&commit(0, 1));
        none.push(&commit(1, 1));
        assert_eq!(offsets(none.since(1)), Some(vec![]), "up to date");
        assert_eq!(offsets(none.since(0)), None);
    }
}
