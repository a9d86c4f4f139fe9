//! The thread that answers calls once their commits are durable.
//!
//! With a commit log and deferred durability, the module's thread does not wait for the disk:
//! a call's commits come back with a [`Ticket`], and nobody may hear of them before the
//! ticket's wait returns. That wait blocks, so it cannot run on a runtime thread. A blocking
//! task per call (`spawn_blocking`) costs a thread hop and the wake of a parked thread for
//! every call, and each group sync woke every one of those threads at once.
//!
//! Instead one thread takes the module thread's answers with their tickets, in the order the
//! calls ran, and waits on each ticket before it sends its answer. Records become durable in
//! order, so once the first ticket of a group sync is ready so are the tickets queued behind
//! it: a sync costs this thread one wake and each answer it covers a check under the log's
//! lock. The queue is bounded; when it is full (more calls wait for the disk than the module's
//! queue holds), the module's thread waits for room, which slows callers down rather than
//! queueing without bound. An answer whose commits are durable already (always, with
//! durability off) skips the hop: the module's thread sends it at once.

use std::io;
use std::sync::mpsc;
use std::thread::JoinHandle;
use wasmod_host::datastore::durability::Ticket;
use wasmod_protocol::errors::{ApiError, ErrorCode};

/// Sends an answer, told whether the call's commits are durable.
pub type Acknowledge = Box<dyn FnOnce(Result<(), ApiError>) + Send>;

/// An answer waiting for its ticket.
struct Waiting {
    ticket: Ticket,
    acknowledge: Acknowledge,
}

/// Hands answers to the durability thread. Dropping it lets the thread finish what it holds
/// and end.
#[derive(Debug)]
pub struct Acknowledger {
    waiting: mpsc::SyncSender<Waiting>,
}

impl Acknowledger {
    /// Starts the thread, with room for `capacity` answers (at least one) waiting for the disk;
    /// returns the handle that feeds it and the thread, to join once the handle has gone.
    pub fn start(capacity: usize) -> io::Result<(Self, JoinHandle<()>)> {
        let (waiting, queued) = mpsc::sync_channel::<Waiting>(capacity.max(1));
        let thread = std::thread::Builder::new()
            .name("wasmod-durable".into())
            .spawn(move || {
                for Waiting {
                    ticket,
                    acknowledge,
                } in queued
                {
                    acknowledge(
                        ticket
                            .wait()
                            .map_err(|error| crate::health::not_durable(&error)),
                    );
                }
            })?;
        Ok((Self { waiting }, thread))
    }

    /// Calls `acknowledge` once `ticket`'s commits are durable (or failed to be): at once, on
    /// the calling thread, if they are already (always so with durability off), else on the
    /// durability thread, after every answer handed over before it.
    ///
    /// Answering at once may overtake answers still waiting on the durability thread: theirs
    /// are durable too (records become durable in order), only not sent yet. Nothing relies on
    /// the order of answers across callers, and a connection puts its own in call order.
    pub fn after(&self, ticket: Ticket, acknowledge: Acknowledge) {
        if ticket.is_settled() {
            acknowledge(
                ticket
                    .wait()
                    .map_err(|error| crate::health::not_durable(&error)),
            );
            return;
        }
        let waiting = Waiting {
            ticket,
            acknowledge,
        };
        if let Err(mpsc::SendError(waiting)) = self.waiting.send(waiting) {
            (waiting.acknowledge)(Err(ApiError::new(
                ErrorCode::Internal,
                "the thread that waits for the commit log has stopped",
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn a_settled_ticket_is_answered_at_once_on_the_calling_thread() {
        let (acknowledger, thread) = Acknowledger::start(1).expect("the thread starts");
        let answered = Arc::new(Mutex::new(None));
        let record = answered.clone();
        acknowledger.after(
            Ticket::refused("the log failed".into()),
            Box::new(move |durable| {
                let on = std::thread::current().id();
                *record.lock().expect("not poisoned") = Some((on, durable.is_err()));
            }),
        );
        let answer = answered.lock().expect("not poisoned").take();
        assert_eq!(answer, Some((std::thread::current().id(), true)));
        drop(acknowledger);
        thread.join().expect("the thread ends");
    }
}
