//! The sockets open now, each with its outbound queue: what the admin API lists as
//! connections and their queue depths.
//!
//! A socket is listed from when its connection is accepted until its task ends (an
//! [`Listed`] guard). Listing reads each queue's depth under that queue's lock, one at a
//! time; the registry's own lock is held only to copy the list, never while a queue is read.

use super::outbox::Outbox;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;
use wasmod_abi::{ConnectionId, Identity};

/// One open socket, as the operator sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SocketView {
    /// The connection's id, in hex.
    pub connection_id: String,
    /// Its identity, in hex.
    pub identity: String,
    /// How long it has been open, in seconds.
    pub open_seconds: u64,
    /// Messages waiting in its outbound queue.
    pub queued_messages: usize,
    /// Bytes of rows waiting in it.
    pub queued_bytes: usize,
    /// The queue's bound in messages; past it the client is closed as too slow.
    pub max_messages: usize,
    /// The queue's bound in bytes.
    pub max_bytes: usize,
}

#[derive(Clone, Debug)]
struct Entry {
    identity: Identity,
    outbox: Outbox,
    opened: Instant,
}

/// The registry of open sockets. Cheap to share.
#[derive(Debug, Default)]
pub struct OpenSockets {
    entries: Arc<Mutex<HashMap<ConnectionId, Entry>>>,
}

/// Lists a socket until dropped.
#[derive(Debug)]
pub struct Listed {
    connection: ConnectionId,
    entries: Arc<Mutex<HashMap<ConnectionId, Entry>>>,
}

impl OpenSockets {
    /// Lists the socket of `connection` (of `identity`, queueing into `outbox`) until the
    /// guard is dropped.
    pub fn register(&self, connection: ConnectionId, identity: Identity, outbox: Outbox) -> Listed {
        let entry = Entry {
            identity,
            outbox,
            opened: Instant::now(),
        };
        self.lock().insert(connection, entry);
        Listed {
            connection,
            entries: self.entries.clone(),
        }
    }

    /// The open sockets, longest open first.
    pub fn list(&self) -> Vec<SocketView> {
        let entries: Vec<(ConnectionId, Entry)> = self
            .lock()
            .iter()
            .map(|(id, entry)| (*id, entry.clone()))
            .collect();
        let mut views: Vec<SocketView> = entries
            .into_iter()
            .map(|(connection, entry)| {
                let (depth, bounds) = entry.outbox.depth();
                SocketView {
                    connection_id: connection.to_hex(),
                    identity: entry.identity.to_hex(),
                    open_seconds: entry.opened.elapsed().as_secs(),
                    queued_messages: depth.messages,
                    queued_bytes: depth.bytes,
                    max_messages: bounds.messages,
                    max_bytes: bounds.bytes,
                }
            })
            .collect();
        views.sort_by(|a, b| {
            b.open_seconds
                .cmp(&a.open_seconds)
                .then(a.connection_id.cmp(&b.connection_id))
        });
        views
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ConnectionId, Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Listed {
    fn drop(&mut self) {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.connection);
    }
}
