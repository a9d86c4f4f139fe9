//! Where a server message takes effect: on the connection task as it arrives (the default),
//! or on the application's thread, in [`Client::frame_tick`](crate::Client::frame_tick).
//!
//! The connection task keeps its own bookkeeping (which calls wait, which query sets are
//! applied, the last offset) as messages arrive, because reconnection needs it at once. What
//! the application sees of a message (its rows entering and leaving the cache, the row
//! callbacks, `on_applied`, the answer to the call that made it) is one [`Delivery`], run
//! whole, in message order. Queued for a frame tick, the cache changes wait with their
//! callbacks: a callback of one transaction never sees the rows of a later one, and a game
//! loop reads a cache that changes only while it ticks.

use crate::cache::Cache;
use crate::socket::Session;
use crate::state::ConnectionStates;
use crate::sync::{Mutex, RwLock};
use crate::table::Listeners;
use std::collections::VecDeque;
use std::sync::Arc;

/// Where row callbacks (and everything else a server message does to the cache and the
/// calls) run; see [`ClientBuilder::callbacks`](crate::ClientBuilder::callbacks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Callbacks {
    /// On the connection task, as each message arrives: the cache is always current, and
    /// callbacks must not block.
    #[default]
    OnConnectionTask,
    /// Queued until the application calls [`Client::frame_tick`](crate::Client::frame_tick),
    /// which applies what arrived since the last tick and runs its callbacks on the caller's
    /// thread. Reducer futures and `applied()` also resolve only then.
    OnFrameTick,
}

/// What the handle and the connection task share: the state every delivery works on.
pub(crate) struct Shared {
    pub(crate) cache: Arc<RwLock<Cache>>,
    pub(crate) listeners: Arc<Listeners>,
    pub(crate) session: Mutex<Session>,
    pub(crate) deliveries: Deliveries,
    pub(crate) connection: ConnectionStates,
}

/// What one server message does that the application sees, run once, with the client's
/// shared state.
pub(crate) type Delivery = Box<dyn FnOnce(&Shared) + Send>;

/// The deliveries of a client, run at once or queued for the next frame tick.
#[derive(Default)]
pub(crate) struct Deliveries {
    mode: Callbacks,
    queue: Mutex<VecDeque<Delivery>>,
    /// Held by the frame tick running, so that two threads ticking at once cannot run
    /// deliveries out of order.
    ticking: Mutex<()>,
}

impl Deliveries {
    /// Deliveries that run as `mode` says.
    pub(crate) fn new(mode: Callbacks) -> Self {
        Self {
            mode,
            ..Self::default()
        }
    }

    /// Runs `delivery` now, or queues it for the next frame tick.
    pub(crate) fn deliver(&self, shared: &Shared, delivery: impl FnOnce(&Shared) + Send + 'static) {
        match self.mode {
            Callbacks::OnConnectionTask => delivery(shared),
            Callbacks::OnFrameTick => self.queue.lock().push_back(Box::new(delivery)),
        }
    }

    /// Runs the deliveries queued so far, in order, and returns how many ran; `0` at once if
    /// another tick is running (a callback that ticks, or another thread).
    pub(crate) fn tick(&self, shared: &Shared) -> usize {
        let Some(_ticking) = self.ticking.try_lock() else {
            return 0;
        };
        let queued = std::mem::take(&mut *self.queue.lock());
        let count = queued.len();
        for delivery in queued {
            delivery(shared);
        }
        count
    }
}
