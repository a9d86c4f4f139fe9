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
//!
//! The queue is a [`super::queue`]: the evaluation task's push of an update touches the
//! queue's one lock and its slots, and wakes the writer only when it waits. A connection that
//! overflowed takes nothing more: it is closing, and counted as dropped once.

use super::broadcast::SharedUpdate;
use super::close::{self, Close};
use super::queue::{self, Full, Refused, Weighed};
use super::rows::QueryRows;
use super::snapshot::Snapshot;
use super::stats::{Dropped, Stats};
use crate::memory::Charge;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::Notify;
use wasmod_abi::{ConnectionId, Identity, ModuleDef};
use wasmod_protocol::errors::ApiError;

pub use super::queue::Bounds;

/// What the server has to tell a client, before it is rendered in the client's encoding.
///
/// A queue's slot is this size: the rare big messages are boxed to keep it small (a guard test
/// pins it).
#[derive(Debug)]
pub enum Outbound {
    /// The connection's identity, a token for it and its id: its first message.
    Identity(Box<Introduction>),
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
    /// The answer to a `WaitFor`: the connection has been sent every update up to `offset`.
    CaughtUp {
        /// The request's id.
        request_id: u32,
        /// The offset it waited for.
        offset: u64,
    },
    /// A request answered by the evaluation task that it refused (a `WaitFor` past
    /// [`MAX_WAITS`](super::limits::MAX_WAITS)).
    Refused {
        /// The request's id.
        request_id: u32,
        /// The last commit evaluated when it was refused.
        offset: u64,
        /// Why.
        error: Box<ApiError>,
    },
    /// The answer to a one-off query.
    OneOff {
        /// The query's request id.
        request_id: u32,
        /// Its rows, or why there are none.
        result: Result<Box<OneOffRows>, String>,
    },
}

/// A one-off query's rows, with the description of the build whose tables they were read
/// from: what encodes them.
#[derive(Debug)]
pub struct OneOffRows {
    /// The build's description.
    pub module: Arc<ModuleDef>,
    /// The rows.
    pub rows: QueryRows,
    /// What the answer holds, in bytes, as it is queued: its rows, rendered in the client's
    /// encoding ([`QueryRows::held_bytes`]). The queue counts it as this, and the connection's
    /// holder is charged as much until it is sent.
    pub charge: Charge,
}

/// A connection's first message: who it is.
#[derive(Debug)]
pub struct Introduction {
    /// The identity.
    pub identity: Identity,
    /// A token for it.
    pub token: String,
    /// The connection's id.
    pub connection_id: ConnectionId,
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
    sender: queue::Sender<Outbound>,
    stats: Arc<Stats>,
    signals: Arc<Signals>,
}

/// The writer's end.
#[derive(Debug)]
pub struct OutboxReceiver {
    receiver: queue::Receiver<Outbound>,
    stats: Arc<Stats>,
    signals: Arc<Signals>,
}

/// A connection's outbound queue is full: it has been closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow;

/// What the writer is asked ahead of the queue: to close the socket, or to ping.
#[derive(Debug, Default)]
struct Signals {
    close: Mutex<Option<Close>>,
    closing: Notify,
    ping: Notify,
}

/// A queue with `bounds` (at least one message), counted in `stats`.
pub fn channel(bounds: Bounds, stats: Arc<Stats>) -> (Outbox, OutboxReceiver) {
    let (sender, receiver) = queue::bounded(Bounds {
        messages: bounds.messages.max(1),
        bytes: bounds.bytes,
    });
    let signals = Arc::new(Signals::default());
    (
        Outbox {
            sender,
            stats: stats.clone(),
            signals: signals.clone(),
        },
        OutboxReceiver {
            receiver,
            stats,
            signals,
        },
    )
}

impl Weighed for Outbound {
    /// The bytes of rows the message holds (a snapshot's: its pointers).
    fn bytes(&self) -> usize {
        match self {
            Self::Applied(snapshot) => snapshot.bytes(),
            Self::Update(update) => update.shared.bytes(),
            Self::OneOff { result, .. } => result.as_ref().map_or(0, |found| found.charge.bytes()),
            Self::Identity { .. }
            | Self::SubscriptionError { .. }
            | Self::CaughtUp { .. }
            | Self::Refused { .. } => 0,
        }
    }
}

impl Outbox {
    /// Queues `message`; a message over the bounds closes the connection ([`close::TOO_SLOW`])
    /// and fails, and the queue takes nothing more. A connection whose writer has gone, or
    /// that overflowed before, takes nothing, silently.
    pub fn push(&self, message: Outbound) -> Result<(), Overflow> {
        match self.sender.push(message) {
            Ok(depth) => {
                self.stats.queued(depth);
                Ok(())
            }
            Err(Refused::Full(_, full)) => {
                let bounds = self.sender.bounds();
                let waiting = match full {
                    Full::Messages => format!("{} messages", bounds.messages),
                    Full::Bytes => format!("more than {} bytes of updates", bounds.bytes),
                };
                Err(self.overflow(format!(
                    "the client is too slow: {waiting} are waiting for it"
                )))
            }
            Err(Refused::Closed(_)) => Ok(()),
        }
    }

    /// Whether `bytes` of rows could ever fit in the queue.
    pub fn fits(&self, bytes: usize) -> bool {
        self.sender.fits(bytes)
    }

    /// The most messages, and bytes of rows, the queue holds.
    pub fn bounds(&self) -> Bounds {
        self.sender.bounds()
    }

    /// What is queued now (messages, and bytes of rows), and the bounds.
    pub fn depth(&self) -> (Bounds, Bounds) {
        (self.sender.depth(), self.sender.bounds())
    }

    /// Asks the writer to close the socket with `close` (the first reason given wins).
    pub fn close(&self, close: Close) {
        let mut reason = self
            .signals
            .close
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if reason.is_none() {
            *reason = Some(close);
        }
        self.signals.closing.notify_one();
    }

    /// Asks the writer to ping the client, ahead of whatever is queued (a ping asked for while
    /// one is pending is sent once).
    pub fn ping(&self) {
        self.signals.ping.notify_one();
    }

    fn overflow(&self, reason: String) -> Overflow {
        tracing::warn!("closing a slow client: {reason}");
        self.sender.close();
        self.stats.dropped(Dropped::Slow, 1);
        self.close(Close::new(close::TOO_SLOW, reason));
        Overflow
    }
}

impl OutboxReceiver {
    /// The next message; `None` once every producer has gone.
    pub async fn recv(&mut self) -> Option<Outbound> {
        self.receiver.recv().await
    }

    /// The next message if one is queued, without waiting (for code outside the runtime,
    /// such as the fanout benchmark).
    pub fn try_recv(&mut self) -> Option<Outbound> {
        self.receiver.try_recv()
    }

    /// The counters the queue is counted in.
    pub fn stats(&self) -> &Arc<Stats> {
        &self.stats
    }

    /// What tells the writer to close the socket.
    pub fn close_signal(&self) -> CloseSignal {
        CloseSignal {
            signals: self.signals.clone(),
        }
    }
}

/// Tells the writer when someone asks for the socket to be closed, or for a ping.
#[derive(Debug)]
pub struct CloseSignal {
    signals: Arc<Signals>,
}

impl CloseSignal {
    /// Waits until someone asks for the socket to be closed, and returns why.
    pub async fn closing(&self) -> Close {
        loop {
            if let Some(close) = self
                .signals
                .close
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
            {
                return close;
            }
            self.signals.closing.notified().await;
        }
    }

    /// Waits until someone asks for a ping ([`Outbox::ping`]).
    pub async fn ping_asked(&self) {
        self.signals.ping.notified().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn outbox(messages: usize, bytes: usize) -> (Outbox, OutboxReceiver, Arc<Stats>) {
        let stats = Arc::new(Stats::default());
        let (outbox, receiver) = channel(Bounds { messages, bytes }, stats.clone());
        (outbox, receiver, stats)
    }

    fn error(query_set_id: u32) -> Outbound {
        Outbound::SubscriptionError {
            query_set_id,
            message: String::new(),
        }
    }

    /// A one-off query's answer holding one row of `bytes` bytes.
    fn rows(bytes: usize) -> Outbound {
        let row: wasmod_host::datastore::Row = vec![7; bytes].into();
        let rows = QueryRows::new("message", &[row], &[]).expect("rows");
        let charge = crate::memory::ClientMemory::new(usize::MAX)
            .charge(Default::default(), rows.held_bytes())
            .expect("no ceiling");
        Outbound::OneOff {
            request_id: 1,
            result: Ok(Box::new(OneOffRows {
                module: Default::default(),
                rows,
                charge,
            })),
        }
    }

    fn slow_clients(stats: &Stats) -> String {
        let mut text = String::new();
        stats.render(&mut text);
        text.lines()
            .find(|line| line.starts_with("wasmod_ws_dropped_total{reason=\"slow\"}"))
            .expect("the counter")
            .to_owned()
    }

    async fn close_asked(receiver: &OutboxReceiver) -> Close {
        let signal = receiver.close_signal();
        tokio::time::timeout(Duration::from_secs(5), signal.closing())
            .await
            .expect("a close was asked")
    }

    #[tokio::test]
    async fn an_overflow_closes_once_and_the_queue_takes_nothing_more() {
        let (outbox, mut receiver, stats) = outbox(2, 1024);
        outbox.push(error(1)).expect("room");
        outbox.push(error(2)).expect("room");
        assert_eq!(outbox.push(error(3)), Err(Overflow));
        let close = close_asked(&receiver).await;
        assert_eq!(close.code, close::TOO_SLOW);
        assert!(close.reason.contains("2 messages"), "{}", close.reason);
        receiver.try_recv();
        assert_eq!(
            outbox.push(error(4)),
            Ok(()),
            "a closing queue takes nothing, silently"
        );
        assert!(matches!(
            receiver.try_recv(),
            Some(Outbound::SubscriptionError {
                query_set_id: 2,
                ..
            })
        ));
        assert!(receiver.try_recv().is_none());
        assert!(
            slow_clients(&stats).ends_with(" 1"),
            "{}",
            slow_clients(&stats)
        );
    }

    #[tokio::test]
    async fn rows_over_the_byte_bound_overflow() {
        let (outbox, receiver, _) = outbox(8, 130);
        assert!(outbox.fits(130) && !outbox.fits(131));
        let one = rows(40);
        let size = one.bytes();
        assert!(2 * size <= 130 && 3 * size > 130, "{size} bytes");
        outbox.push(one).expect("room");
        outbox.push(rows(40)).expect("room");
        assert_eq!(outbox.push(rows(40)), Err(Overflow));
        let close = close_asked(&receiver).await;
        assert_eq!(close.code, close::TOO_SLOW);
        assert!(close.reason.contains("130 bytes"), "{}", close.reason);
    }

    #[tokio::test]
    async fn the_first_close_asked_for_wins_and_a_ping_is_told() {
        let (outbox, receiver, _) = outbox(8, 100);
        outbox.ping();
        let signal = receiver.close_signal();
        tokio::time::timeout(Duration::from_secs(5), signal.ping_asked())
            .await
            .expect("a ping was asked");
        outbox.close(Close::new(close::IDLE, "silent"));
        outbox.close(Close::new(close::NORMAL, ""));
        assert_eq!(close_asked(&receiver).await.code, close::IDLE);
    }

    #[tokio::test]
    async fn a_gone_writer_takes_nothing_and_the_writer_ends_with_its_producers() {
        let (outbox, mut receiver, _) = outbox(8, 100);
        outbox.push(error(1)).expect("room");
        let other = outbox.clone();
        drop(outbox);
        assert!(receiver.recv().await.is_some());
        drop(other);
        assert!(receiver.recv().await.is_none(), "every producer has gone");
        let (outbox, receiver, stats) = self::outbox(8, 100);
        drop(receiver);
        assert_eq!(outbox.push(error(1)), Ok(()));
        assert!(slow_clients(&stats).ends_with(" 0"));
    }

    /// Every queued message takes a slot of this size: more would cost every connection's
    /// queue, and every update's push, more memory.
    #[test]
    fn a_message_is_at_most_40_bytes() {
        assert!(
            std::mem::size_of::<Outbound>() <= 40,
            "{} bytes",
            std::mem::size_of::<Outbound>()
        );
    }
}
