//! A connection's outbound queue: bounded in messages and in bytes, one reader (the socket's
//! writer task), many producers (the evaluation task, the subscription answers).
//!
//! A producer never waits: a message that does not fit closes the connection
//! ([`close::TOO_SLOW`]) instead, so a client that cannot keep up costs at most the queue's
//! bounds, and the evaluation task is never held back by one slow socket. Bytes are counted as
//! the rows' binary size (JSON is larger, by a bounded factor); the rows themselves are
//! shared by every subscriber of their query, so this is an upper bound on what one client
//! makes the server keep. A subscription's rows are counted as their pointers, since they
//! are the tables' own rows until the writer encodes them ([`super::snapshot`]).

use super::broadcast::SharedUpdate;
use super::close::{self, Close};
use super::rows::QueryRows;
use super::snapshot::Snapshot;
use super::stats::{Dropped, Stats};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::{mpsc, Notify};
use wasmod_abi::{ConnectionId, Identity};

/// The bounds of one connection's outbound queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// The most messages queued.
    pub messages: usize,
    /// The most bytes of rows queued.
    pub bytes: usize,
}

/// What the server has to tell a client, before it is rendered in the client's encoding.
#[derive(Debug)]
pub enum Outbound {
    /// The connection's identity, a token for it and its id.
    Identity {
        /// The identity.
        identity: Identity,
        /// A token for it.
        token: String,
        /// The connection's id.
        connection_id: ConnectionId,
    },
    /// A query set's rows, once it is subscribed, for the writer to send in parts.
    Applied(Box<Snapshot>),
    /// A query set that could not be subscribed.
    SubscriptionError {
        /// The query set.
        query_set_id: u32,
        /// Why.
        message: String,
    },
    /// A commit's changes to the connection's query sets.
    Update(Update),
    /// The answer to a one-off query.
    OneOff {
        /// The query's request id.
        request_id: u32,
        /// Its rows, or why there are none.
        result: Result<Arc<QueryRows>, String>,
    },
}

/// A commit's changes to one connection's query sets: the update of its group, shared.
#[derive(Debug)]
pub struct Update {
    /// The commit and its changes, shared by every connection with the same query sets.
    pub shared: Arc<SharedUpdate>,
    /// Whether a reducer call of this connection made the commit: the writer then joins it
    /// with the call's answer.
    pub own: bool,
}

/// The producers' end. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Outbox {
    sender: mpsc::Sender<Queued>,
    shared: Arc<Shared>,
}

/// The writer's end.
#[derive(Debug)]
pub struct OutboxReceiver {
    receiver: mpsc::Receiver<Queued>,
    shared: Arc<Shared>,
}

/// A connection's outbound queue is full: it has been closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow;

#[derive(Debug)]
struct Queued {
    message: Outbound,
    bytes: usize,
}

#[derive(Debug)]
struct Shared {
    stats: Arc<Stats>,
    bytes: AtomicUsize,
    max_bytes: usize,
    close: Mutex<Option<Close>>,
    closing: Notify,
    ping: Notify,
}

/// A queue with `bounds`, counted in `stats`.
pub fn channel(bounds: Bounds, stats: Arc<Stats>) -> (Outbox, OutboxReceiver) {
    let (sender, receiver) = mpsc::channel(bounds.messages.max(1));
    let shared = Arc::new(Shared {
        stats,
        bytes: AtomicUsize::new(0),
        max_bytes: bounds.bytes,
        close: Mutex::new(None),
        closing: Notify::new(),
        ping: Notify::new(),
    });
    (
        Outbox {
            sender,
            shared: shared.clone(),
        },
        OutboxReceiver { receiver, shared },
    )
}

impl Outbound {
    /// The bytes of rows the message holds (a snapshot's: its pointers).
    fn bytes(&self) -> usize {
        match self {
            Self::Applied(snapshot) => snapshot.bytes(),
            Self::Update(update) => update.shared.bytes(),
            Self::OneOff { result, .. } => result.as_ref().map_or(0, |rows| rows.bytes()),
            Self::Identity { .. } | Self::SubscriptionError { .. } => 0,
        }
    }
}

impl Outbox {
    /// Queues `message`; a message over the bounds closes the connection ([`close::TOO_SLOW`])
    /// and fails. A connection whose writer has gone takes nothing, silently.
    pub fn push(&self, message: Outbound) -> Result<(), Overflow> {
        let bytes = message.bytes();
        let queued = self.shared.bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if queued > self.shared.max_bytes {
            self.shared.bytes.fetch_sub(bytes, Ordering::Relaxed);
            return Err(self.overflow(format!(
                "the client is too slow: more than {} bytes of updates are waiting for it",
                self.shared.max_bytes
            )));
        }
        match self.sender.try_send(Queued { message, bytes }) {
            Ok(()) => {
                let depth = self.sender.max_capacity() - self.sender.capacity();
                self.shared.stats.queued(depth);
                Ok(())
            }
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.shared.bytes.fetch_sub(bytes, Ordering::Relaxed);
                Err(self.overflow(format!(
                    "the client is too slow: {} messages are waiting for it",
                    self.sender.max_capacity()
                )))
            }
            Err(mpsc::error::TrySendError::Closed(_)) => Ok(()),
        }
    }

    /// Whether `bytes` of rows could ever fit in the queue.
    pub fn fits(&self, bytes: usize) -> bool {
        bytes <= self.shared.max_bytes
    }

    /// Asks the writer to close the socket with `close` (the first reason given wins).
    pub fn close(&self, close: Close) {
        let mut reason = self
            .shared
            .close
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if reason.is_none() {
            *reason = Some(close);
        }
        self.shared.closing.notify_one();
    }

    /// Asks the writer to ping the client, ahead of whatever is queued (a ping asked for while
    /// one is pending is sent once).
    pub fn ping(&self) {
        self.shared.ping.notify_one();
    }

    fn overflow(&self, reason: String) -> Overflow {
        tracing::warn!("closing a slow client: {reason}");
        self.shared.stats.dropped(Dropped::Slow, 1);
        self.close(Close::new(close::TOO_SLOW, reason));
        Overflow
    }
}

impl OutboxReceiver {
    /// The next message; `None` once every producer has gone.
    pub async fn recv(&mut self) -> Option<Outbound> {
        let queued = self.receiver.recv().await?;
        Some(self.taken(queued))
    }

    /// The next message if one is queued, without waiting (for code outside the runtime,
    /// such as the fanout benchmark).
    pub fn try_recv(&mut self) -> Option<Outbound> {
        let queued = self.receiver.try_recv().ok()?;
        Some(self.taken(queued))
    }

    /// `queued`'s message, no longer counted in the queue.
    fn taken(&self, queued: Queued) -> Outbound {
        self.shared.bytes.fetch_sub(queued.bytes, Ordering::Relaxed);
        queued.message
    }

    /// The counters the queue is counted in.
    pub fn stats(&self) -> &Arc<Stats> {
        &self.shared.stats
    }

    /// What tells the writer to close the socket.
    pub fn close_signal(&self) -> CloseSignal {
        CloseSignal {
            shared: self.shared.clone(),
        }
    }
}

/// Tells the writer when someone asks for the socket to be closed, or for a ping.
#[derive(Debug)]
pub struct CloseSignal {
    shared: Arc<Shared>,
}

impl CloseSignal {
    /// Waits until someone asks for the socket to be closed, and returns why.
    pub async fn closing(&self) -> Close {
        loop {
            if let Some(close) = self
                .shared
                .close
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
            {
                return close;
            }
            self.shared.closing.notified().await;
        }
    }

    /// Waits until someone asks for a ping ([`Outbox::ping`]).
    pub async fn ping_asked(&self) {
        self.shared.ping.notified().await;
    }
}
