//! The last few commits, kept for a server whose clients resume from an offset they applied
//! before a restart.
//!
//! Two places keep them, with the same bounds ([`Options::recent_commits`] and
//! [`Options::recent_bytes`]): recovery, the last transactions it replays, and the
//! [`Database`](crate::Database), those it commits from its opening until the server takes
//! them ([`Database::take_recent`](crate::Database::take_recent)). A start after a crash
//! commits before the server serves anyone (the disconnections of the connections the crash
//! left open), and the clients that were connected then need those commits to resume.
//!
//! The bounds keep memory in check whoever opens the log: a process that never takes the
//! commits (a command-line call on the data directory, say) keeps no more than a server would.

use super::Options;
use crate::tx::TxData;
use std::collections::VecDeque;

/// A transaction as kept: what it changed, which its rows' bytes are counted from.
pub(crate) trait Changes {
    /// The transaction's changes.
    fn changes(&self) -> &TxData;
}

impl Changes for (u64, TxData) {
    fn changes(&self) -> &TxData {
        &self.1
    }
}

/// The last transactions kept, oldest first, an unbroken run: at most `max_commits` of them,
/// with at most `max_bytes` of rows.
#[derive(Debug)]
pub(crate) struct Recent<T> {
    kept: VecDeque<T>,
    bytes: usize,
    max_commits: usize,
    max_bytes: usize,
}

impl<T: Changes> Recent<T> {
    /// None yet, bounded as `options` say.
    pub(crate) fn new(options: &Options) -> Self {
        Self {
            kept: VecDeque::new(),
            bytes: 0,
            max_commits: options.recent_commits,
            max_bytes: options.recent_bytes,
        }
    }

    /// Keeps `transaction`, the one after the last kept, and forgets the oldest past the
    /// bounds.
    pub(crate) fn keep(&mut self, transaction: T) {
        if self.max_commits == 0 {
            return;
        }
        self.bytes += transaction.changes().row_bytes();
        self.kept.push_back(transaction);
        while self.kept.len() > self.max_commits || self.bytes > self.max_bytes {
            match self.kept.pop_front() {
                Some(oldest) => self.bytes -= oldest.changes().row_bytes(),
                None => break,
            }
        }
    }

    /// The transactions kept, oldest first.
    pub(crate) fn into_kept(self) -> VecDeque<T> {
        self.kept
    }
}
