//! The real-time side of the node: a WebSocket per client (the server's `GET /v1/subscribe`)
//! that carries its calls, its live queries and their updates (`docs/protocol.md` is the wire
//! protocol).
//!
//! # Shape
//!
//! ```text
//!                       ┌───────────── one evaluation task per node (fanout) ────────────┐
//! commit feed ─────────▶│ read tx · drain commits · evaluate_batch · subscribe requests │
//!                       └───────┬──────────────────────────────────────────────────────┘
//!                               │ each query's delta as shared rows (Arc), per commit
//!                               ▼
//! socket ─▶ reader ──calls──▶ worker (module thread) ──▶ answers, in request order
//!             │                                               │
//!             └─ subscribe / unsubscribe ─▶ fanout            ▼
//!                                         outbox (bounded) ─▶ writer ─▶ socket
//! ```
//!
//! - [`socket`]: one task per socket reads frames ([`socket::serve`]) and one writer task per
//!   socket ([`writer`]) is the only one that writes frames.
//! - [`fanout`]: the evaluation task. It owns the registry of live queries
//!   ([`wasmod_subscription::Subscriptions`]) and the feed of commits, evaluates commits off
//!   the module's thread and queues each connection's updates.
//! - [`groups`]: connections with the same query sets, grouped, so that [`broadcast`] builds
//!   a commit's update once per group and each of its frames is encoded (and compressed)
//!   once, then shared by every member: the broadcast that serializes once.
//! - [`session`]: a connection's query sets, as the evaluation task keeps them, with what it
//!   needs to bind them again when a new build of the module is published ([`rebind`]: which
//!   sets carry on across the new build, and the messages of those that end).
//! - [`calls`]: a connection's calls, at most [`limits::MAX_CALLS_IN_FLIGHT`] in flight,
//!   answered in the order they came.
//! - [`outbox`]: a connection's bounded outbound queue; a client that cannot keep up is
//!   closed rather than queued for without bound; [`outgoing`]: a round's messages, held
//!   until the commits they show are durable; [`queue`]: the bounded queue under the outbox
//!   and the calls, whose push touches one small allocation and wakes its consumer only when
//!   it waits.
//! - [`wire`]: the two encodings (binary and JSON) behind one trait, so that everything above
//!   is written once, and the compression of binary frames; [`rows`]: a query's rows of one
//!   commit, shared by every subscriber.
//! - [`snapshot`]: a query set's rows as it is subscribed, taken by the evaluation task as
//!   shared row pointers and encoded by the writer in parts, one at a time.
//! - [`window`]: the recent commits, for clients that reconnect and resume from the last
//!   offset they applied.
//! - [`parsing`]: clients' queries parsed off the runtime's workers, each client within a
//!   budget of time; `spent`: what each client cost lately, which decides who is served first
//!   and who waits; `texts`: the query sets' texts, each held once.
//! - [`limits`]: frame sizes, buffers, calls in flight; [`close`]: the close codes;
//!   [`stats`]: the counters of `/metrics`; [`open`]: the sockets open now, with their
//!   queues, for the operator.
//!
//! # A new build
//!
//! `wasmod publish` swaps the module to a new build between two calls, without closing
//! sockets. Sockets take the build serving now ([`CurrentBuild::get`]) for each message they
//! read: calls find their entry points in it, subscriptions and one-off queries are bound
//! against its tables, one-off queries read them. The evaluation task owns the build whose
//! commits it evaluates and switches to the new one when the swap says so
//! ([`Realtime::rebuilt`]), between the old build's last commit and the new one's first: see
//! [`fanout`], "A new build". Every message with rows carries the description of its build and
//! the writer encodes it with that one.
//!
//! The node owns no socket: the transport hands [`socket::serve`] a stream and a sink of
//! [`frame::Frame`]s. The server's transport is axum's `ws` (tokio-tungstenite underneath),
//! chosen by measurement against tokio-websockets (`benches/RESULTS.md`, "Choosing the
//! WebSocket implementation").

pub mod broadcast;
pub(crate) mod calls;
pub(crate) mod close;
pub mod fanout;
pub mod frame;
pub(crate) mod groups;
mod held;
pub mod limits;
pub(crate) mod open;
pub mod outbox;
pub(crate) mod outgoing;
pub(crate) mod parsing;
pub(crate) mod queue;
pub(crate) mod rebind;
#[cfg(test)]
mod rebuilt_tests;
pub(crate) mod rows;
pub(crate) mod session;
pub(crate) mod snapshot;
pub(crate) mod socket;
mod spent;
pub mod stats;
mod texts;
pub mod window;
pub mod wire;
pub(crate) mod writer;

use crate::build::{Build, CurrentBuild};
use crate::call::Pipeline;
use crate::connections::Connections;
use crate::memory::ClientMemory;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch, Semaphore};
use wasmod_host::datastore::Database;

/// What every socket of the node shares.
#[derive(Debug)]
pub struct Realtime {
    /// The build serving the module: its description, its tables as queries see them, its
    /// tables. Sockets take it once per message.
    pub build: CurrentBuild,
    /// The module's database: offsets, durability and the feed of commits.
    pub database: Arc<Database>,
    /// The steps of sockets' calls, the same as every other call's.
    pub pipeline: Pipeline,
    /// The live connections and their lifecycle reducers.
    pub connections: Connections,
    /// The evaluation task's requests.
    pub fanout: mpsc::Sender<fanout::Request>,
    /// The settings every connection follows.
    pub settings: Settings,
    /// The turns of one-off queries ([`Settings::one_offs`]).
    pub one_offs: Semaphore,
    /// The parsing of clients' queries, off the runtime's workers.
    pub parsing: parsing::Parsing,
    /// The counters of `/metrics`.
    pub stats: Arc<stats::Stats>,
    /// What clients make the node hold, in bytes ([`crate::memory`]): query texts, one-off
    /// answers.
    pub memory: Arc<ClientMemory>,
    /// The sockets open now, for the admin API.
    pub open: open::OpenSockets,
    /// Becomes `true` when the node stops: every socket closes.
    shutdown: watch::Receiver<bool>,
    /// How many sockets are being served.
    sockets: watch::Sender<usize>,
}

/// The half of the real-time side that the node keeps for its start and its shutdown
/// ([`crate::Node::start`], [`crate::Running::finish`]): starts the evaluation task and, at
/// shutdown, closes every socket.
#[derive(Debug)]
pub struct RealtimeControl {
    shutdown: Stopper,
    sockets: watch::Receiver<usize>,
    evaluator: Option<fanout::Evaluator>,
}

/// Tells every socket to close: the first step of shutdown. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Stopper {
    shutdown: Arc<watch::Sender<bool>>,
}

impl Stopper {
    /// Tells every socket (and the evaluation task) to close; they do so on their own tasks.
    pub fn stop(&self) {
        self.shutdown.send_replace(true);
    }
}

/// The settings of the real-time side, cut from the node's configuration
/// ([`NodeConfig`](crate::NodeConfig), where each is documented, makes them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Settings {
    /// The bounds of each connection's outbound queue
    /// ([`NodeConfig::outbound_messages`](crate::NodeConfig::outbound_messages),
    /// [`outbound_bytes`](crate::NodeConfig::outbound_bytes)).
    pub outbound: outbox::Bounds,
    /// The bounds of the recent commits kept for clients that resume
    /// ([`NodeConfig::resume_commits`](crate::NodeConfig::resume_commits),
    /// [`resume_bytes`](crate::NodeConfig::resume_bytes)).
    pub resume: window::WindowBounds,
    /// How long a client may stay silent before it is pinged (and, as long again, closed).
    pub ping_interval: Duration,
    /// The most bytes of rows in one message of a subscription's rows ([`snapshot`]).
    pub part_bytes: usize,
    /// The most one-off queries evaluated at once, every connection together; the others
    /// wait their turn ([`NodeConfig::max_table_reads`](crate::NodeConfig::max_table_reads)).
    pub one_offs: usize,
    /// The most bytes clients may make the node hold for them, every client together
    /// ([`crate::memory`]).
    pub client_memory: usize,
    /// What connections and identities may subscribe to, and what subscribing may cost.
    pub subscriptions: SubscriptionLimits,
}

/// The bounds of subscribing (`docs/security.md`): a client chooses its queries, so the
/// memory they take and the time their first evaluation holds commits back are bounded here
/// rather than left to the client. Each refusal is a `SubscriptionError` that names its limit.
/// Each is a field of [`NodeConfig`](crate::NodeConfig), which documents it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SubscriptionLimits {
    /// The most queries one `Subscribe` may carry, repeats included
    /// ([`NodeConfig::max_queries_per_set`](crate::NodeConfig::max_queries_per_set)).
    pub queries_per_set: usize,
    /// The most query sets one connection may hold at once
    /// ([`NodeConfig::max_query_sets_per_connection`](crate::NodeConfig::max_query_sets_per_connection)).
    pub sets_per_connection: usize,
    /// The most distinct queries one identity may hold at once, all its connections together
    /// ([`NodeConfig::max_queries_per_identity`](crate::NodeConfig::max_queries_per_identity)).
    pub queries_per_identity: usize,
    /// The most those distinct queries may cost together, in reads a row
    /// ([`NodeConfig::max_query_cost_per_identity`](crate::NodeConfig::max_query_cost_per_identity)).
    pub cost_per_identity: usize,
    /// The most reads the first evaluation of query sets may make under one read transaction
    /// of the tables, and a one-off query on its own
    /// ([`NodeConfig::max_subscription_reads`](crate::NodeConfig::max_subscription_reads)).
    pub reads: usize,
}

/// Counts one socket for as long as it lives.
#[derive(Debug)]
pub struct SocketGuard {
    sockets: watch::Sender<usize>,
}

impl Realtime {
    /// The real-time side of a node over `database`, served by the build `build` serves
    /// now, whose calls go through `pipeline` (as every other call does) and whose
    /// connections `connections` registers. The evaluation task starts with
    /// [`RealtimeControl::start`].
    pub fn new(
        build: CurrentBuild,
        database: Arc<Database>,
        pipeline: Pipeline,
        connections: Connections,
        settings: Settings,
    ) -> (Arc<Self>, RealtimeControl) {
        let stats = Arc::new(stats::Stats::default());
        let (requests, evaluator) = fanout::Evaluator::new(
            build.get(),
            database.clone(),
            settings.resume,
            settings.subscriptions,
            stats.clone(),
        );
        let (shutdown_sender, shutdown) = watch::channel(false);
        let (sockets, sockets_receiver) = watch::channel(0);
        let realtime = Arc::new(Self {
            build,
            database,
            pipeline,
            connections,
            fanout: requests,
            settings,
            one_offs: Semaphore::new(settings.one_offs),
            parsing: parsing::Parsing::default(),
            stats,
            memory: ClientMemory::new(settings.client_memory),
            open: open::OpenSockets::default(),
            shutdown,
            sockets,
        });
        let control = RealtimeControl {
            shutdown: Stopper {
                shutdown: Arc::new(shutdown_sender),
            },
            sockets: sockets_receiver,
            evaluator: Some(evaluator),
        };
        (realtime, control)
    }

    /// Counts a socket until the guard is dropped, so that shutdown can wait for it.
    pub fn socket_guard(&self) -> SocketGuard {
        self.sockets.send_modify(|count| *count += 1);
        SocketGuard {
            sockets: self.sockets.clone(),
        }
    }

    /// Tells the evaluation task that `build` has taken over the module's tables, from commit
    /// `offset` on (every earlier one was the build before it's): the hook of a swap to a
    /// published build, after `Database::replace` and before `CurrentBuild::set`.
    ///
    /// Call it on the module's thread, between calls, and outside any async runtime (it waits
    /// for room in the task's queue): nothing may commit between the tables' replacement and
    /// this call's return, so that the request is queued before the feed has any commit of
    /// the new build. Does nothing once the evaluation task has stopped.
    pub fn rebuilt(&self, build: Arc<Build>, offset: u64) {
        let number = build.number;
        if self
            .fanout
            .blocking_send(fanout::Request::Rebuilt { build, offset })
            .is_err()
        {
            tracing::debug!(
                build = number,
                "a new build took over after the subscription evaluation stopped"
            );
        }
    }

    /// A receiver that sees `true` once the node stops.
    pub fn shutdown(&self) -> watch::Receiver<bool> {
        self.shutdown.clone()
    }
}

impl Drop for SocketGuard {
    fn drop(&mut self) {
        self.sockets
            .send_modify(|count| *count = count.saturating_sub(1));
    }
}

impl RealtimeControl {
    /// Starts the evaluation task, on the current runtime (once; later calls do nothing).
    pub fn start(&mut self) {
        if let Some(evaluator) = self.evaluator.take() {
            tokio::spawn(evaluator.run(self.shutdown.shutdown.subscribe()));
        }
    }

    /// What tells every socket to close, for the node's [`crate::NodeStopper`].
    pub fn stopper(&self) -> Stopper {
        self.shutdown.clone()
    }

    /// Closes every socket (each with a close frame, then its connection's
    /// `client_disconnected`) and waits at most `grace` for them; returns how many were still
    /// open when it stopped waiting.
    pub async fn close_all(&mut self, grace: Duration) -> usize {
        self.shutdown.stop();
        let all_closed = tokio::time::timeout(grace, self.sockets.wait_for(|&count| count == 0))
            .await
            .is_ok_and(|closed| closed.is_ok());
        if all_closed {
            0
        } else {
            *self.sockets.borrow()
        }
    }
}
