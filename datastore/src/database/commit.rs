//! What the commit pipeline publishes: one [`Commit`] per transaction that changed something.

use crate::durability::recent::Changes;
use crate::tx::TxData;
use std::sync::Arc;
use wasmod_abi::{ConnectionId, EntryKind, Identity, Timestamp};

/// The entry point whose call made a commit.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EntryPoint {
    /// Its kind.
    pub kind: EntryKind,
    /// Its name in the module's description.
    pub name: Arc<str>,
}

impl EntryPoint {
    /// The entry point `name` of kind `kind`.
    pub fn new(kind: EntryKind, name: impl Into<Arc<str>>) -> Self {
        Self {
            kind,
            name: name.into(),
        }
    }
}

/// Who made a commit, when and how: what the host knows of a transaction besides its rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitMeta {
    /// When the call that made it started (what the module saw as its timestamp).
    pub timestamp: Timestamp,
    /// The caller's identity ([`Identity::ZERO`] for the host and for anonymous calls).
    pub caller: Identity,
    /// The connection the call came over ([`ConnectionId::ZERO`] for none).
    pub connection_id: ConnectionId,
    /// The entry point that made it; `None` for the host's own bookkeeping (a connection
    /// recorded for a module without lifecycle reducers, say).
    pub entry: Option<EntryPoint>,
}

impl CommitMeta {
    /// A commit the host makes on its own behalf, now.
    pub fn host() -> Self {
        Self {
            timestamp: Timestamp::now(),
            caller: Identity::ZERO,
            connection_id: ConnectionId::ZERO,
            entry: None,
        }
    }

    /// The metadata of a commit read back from the log, which keeps only its changes: who
    /// made it, when and how are unknown (zero identity, zero connection, the epoch, no entry
    /// point).
    pub fn recovered() -> Self {
        Self {
            timestamp: Timestamp::UNIX_EPOCH,
            caller: Identity::ZERO,
            connection_id: ConnectionId::ZERO,
            entry: None,
        }
    }
}

/// One committed transaction, as observers and subscribers of the
/// [`Database`](crate::Database) see it.
///
/// Commits are published once each, in commit order, which is also the order of their offsets:
/// an observer that saw offset `n` next sees `n + 1`. A transaction that changed nothing is not
/// a commit (it has no record in the log, so no offset) and is not published.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commit {
    /// The transaction's offset: its position in the commit log (the number of transactions
    /// committed before it, over the database's whole life), or, for a database without a
    /// log, its position among this process's commits.
    pub offset: u64,
    /// Who made it, when and how.
    pub meta: CommitMeta,
    /// What it changed, net, by table; the host's own tables included (see
    /// [`Database::is_system_table`](crate::Database::is_system_table)).
    pub changes: TxData,
}

impl Changes for Arc<Commit> {
    fn changes(&self) -> &TxData {
        &self.changes
    }
}
