//! What a round of the evaluation task sends, held until the commits it shows are durable.
//!
//! A subscriber must not see a commit that a crash could still lose: it would hold rows the
//! server no longer has, and, reconnecting, resume from an offset that another commit takes
//! after the restart. The caller of a reducer already hears of its commit only once it is
//! durable; with a commit log, every other message of a round waits here too, until every
//! commit the round's tables include is durable (initial rows included: they show those
//! commits). The evaluation task waits after it has released its read transaction, so commits
//! go on meanwhile; the next round takes what came, in one batch. Without a log nothing is
//! held.
//!
//! Messages keep their order per connection, and a connection forgotten while its messages
//! were held (it closed, or its queue overflowed) gets none of them.

use super::outbox::{Outbound, Outbox};
use super::session::Session;
use std::collections::HashMap;
use wasmod_abi::ConnectionId;

/// A round's messages to connections, sent at once or held for durability.
#[derive(Debug)]
pub struct Outgoing {
    hold: bool,
    held: Vec<(ConnectionId, Outbound)>,
    overflowed: Vec<ConnectionId>,
}

impl Outgoing {
    /// Messages that are held until [`Outgoing::release`] if `hold` (the database has a
    /// commit log), sent at once otherwise.
    pub fn new(hold: bool) -> Self {
        Self {
            hold,
            held: Vec::new(),
            overflowed: Vec::new(),
        }
    }

    /// Sends `message` to `connection`, whose queue is `outbox`, or holds it.
    pub fn send(&mut self, connection: ConnectionId, outbox: &Outbox, message: Outbound) {
        if self.hold {
            self.held.push((connection, message));
        } else if outbox.push(message).is_err() {
            self.overflowed.push(connection);
        }
    }

    /// Whether messages are held, waiting for [`Outgoing::release`].
    pub fn holds(&self) -> bool {
        !self.held.is_empty()
    }

    /// Sends the held messages, in order, to the connections of `sessions` (those gone get
    /// nothing).
    pub fn release(&mut self, sessions: &HashMap<ConnectionId, Session>) {
        for (connection, message) in self.held.drain(..) {
            let Some(session) = sessions.get(&connection) else {
                continue;
            };
            if session.outbox.push(message).is_err() {
                self.overflowed.push(connection);
            }
        }
    }

    /// Forgets the held messages: they will never be sent.
    pub fn discard(&mut self) {
        self.held.clear();
    }

    /// The connections whose queue overflowed (and which are closing), since last asked.
    pub fn take_overflowed(&mut self) -> Vec<ConnectionId> {
        std::mem::take(&mut self.overflowed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::realtime::outbox::{self, Bounds, OutboxReceiver};

    fn connection(n: u8) -> (ConnectionId, Outbox, OutboxReceiver) {
        let bounds = Bounds {
            messages: 2,
            bytes: 1024,
        };
        let (outbox, receiver) = outbox::channel(bounds, Default::default());
        (ConnectionId::from_bytes([n; 16]), outbox, receiver)
    }

    fn error(query_set_id: u32) -> Outbound {
        Outbound::SubscriptionError {
            query_set_id,
            message: String::new(),
        }
    }

    fn received(receiver: &mut OutboxReceiver) -> Vec<u32> {
        std::iter::from_fn(|| receiver.try_recv())
            .map(|message| match message {
                Outbound::SubscriptionError { query_set_id, .. } => query_set_id,
                other => panic!("unexpected {other:?}"),
            })
            .collect()
    }

    #[test]
    fn held_messages_wait_for_release_and_keep_their_order() {
        let (a, a_box, mut a_in) = connection(1);
        let (b, b_box, mut b_in) = connection(2);
        let (gone, gone_box, mut gone_in) = connection(3);
        let mut outgoing = Outgoing::new(true);
        outgoing.send(a, &a_box, error(1));
        outgoing.send(b, &b_box, error(7));
        outgoing.send(gone, &gone_box, error(9));
        outgoing.send(a, &a_box, error(2));
        assert!(outgoing.holds());
        assert!(received(&mut a_in).is_empty(), "nothing before the release");
        let session = |outbox| {
            Session::new(
                wasmod_abi::Identity::ZERO,
                outbox,
                std::sync::Arc::new(tokio::sync::Semaphore::new(1)),
            )
        };
        let sessions = HashMap::from([(a, session(a_box)), (b, session(b_box))]);
        outgoing.release(&sessions);
        assert!(!outgoing.holds());
        assert_eq!(received(&mut a_in), vec![1, 2]);
        assert_eq!(received(&mut b_in), vec![7]);
        assert!(
            received(&mut gone_in).is_empty(),
            "a forgotten connection gets nothing"
        );
        assert!(outgoing.take_overflowed().is_empty());
    }

    #[test]
    fn without_a_log_messages_go_at_once_and_overflows_are_told() {
        let (a, a_box, mut a_in) = connection(1);
        let mut outgoing = Outgoing::new(false);
        for id in 0..3 {
            outgoing.send(a, &a_box, error(id));
        }
        assert!(!outgoing.holds());
        assert_eq!(
            outgoing.take_overflowed(),
            vec![a],
            "a queue of two took a third"
        );
        assert_eq!(received(&mut a_in), vec![0, 1]);
    }
}
