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
//! queueing without bound.

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

    /// Calls `acknowledge` once `ticket`'s commits are durable (or failed to be), after every
    /// answer handed over before it.
    pub fn after(&self, ticket: Ticket, acknowledge: Acknowledge) {
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
