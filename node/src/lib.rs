//! One served wasmod module, and everything that runs beside it.
//!
//! A **node** owns one module: the thread it runs on and the queue of its calls, the answers
//! that wait for durability, where a call runs (here, or on an edge's primary), the builds
//! that `wasmod publish` swaps in, the scheduler of its schedule tables, its connections and
//! their lifecycle reducers, its live queries (evaluation, groups, outgoing queues, snapshots,
//! the resume window), its replication (publishing commits to edges, or following a primary
//! as an edge) and its recent logs. It serves no HTTP: the transports (`wasmod-server`, and
//! `wasmod call` in-process) sit on top and hand it calls, sockets' frames and builds.
//! Splitting the two keeps what a module *does* apart from how clients *reach* it: the node is
//! testable without a socket, and the transport holds no state of the module's.
//!
//! # Verbs
//!
//! Transports hold a [`NodeHandle`] and use its verbs; they never reach the node's parts:
//!
//! - calls: [`NodeHandle::call`] (by name, JSON arguments), [`NodeHandle::call_http`] (the
//!   module's HTTP handlers), [`NodeHandle::admit`] (a new identity's `client_connected`),
//!   [`NodeHandle::run_forwarded`] (an edge's call, on its primary): every one through the
//!   same call pipeline (find, caller, arguments, slot, queue, durability, result, metrics);
//! - sockets: [`NodeHandle::serve_socket`], over the [`socket`] module's frames;
//! - tables: [`NodeHandle::read_page`], [`NodeHandle::row_counts`], [`NodeHandle::snapshot`];
//! - builds: [`NodeHandle::publish`], [`NodeHandle::describe`];
//! - operations: [`NodeHandle::health`], [`NodeHandle::metrics`], [`NodeHandle::status`],
//!   [`NodeHandle::logs`].
//!
//! # Shape
//!
//! ```text
//!  transport (HTTP routes, WebSocket frames)
//!     │ calls ─────────▶ call pipeline ──▶ runner ──▶ worker (the module's thread) ──▶ durable
//!     │                                      └─────▶ an edge's primary (forwarded writes)
//!     │ sockets ───────▶ realtime (reader · evaluation task · writer), over frames
//!     │ builds ────────▶ swap (between two calls)
//!     ▼
//!  Node ── scheduler ── replication (publisher to a stream, or an edge's follower)
//! ```
//!
//! The modules behind it, one job each, and the threads and tasks they run are mapped in
//! `docs/architecture.md` ("Inside the node", "Threads and tasks").
//!
//! # Use
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use wasmod_node::{Node, NodeConfig};
//! let module = wasmod_host::WasmModule::new(&std::fs::read("chat.wasm")?)?;
//! let node = Node::builder(module, NodeConfig::default()).build()?;
//! let handle = node.handle().clone();
//! let running = node.start().await;
//! // ... hand `handle` to a transport, serve, then at shutdown:
//! drop(handle);
//! running.stopper().stop().await;
//! running.finish(std::time::Duration::from_secs(30)).await;
//! # Ok(())
//! # }
//! ```

mod build;
mod call;
pub mod cluster;
mod connections;
mod durable;
mod health;
mod invocation;
mod logs;
mod memory;
mod metrics;
mod node;
mod realtime;
pub mod replication;
mod report;
mod results;
mod runner;
mod schedule;
mod slots;
pub mod socket;
mod swap;
mod tables;
#[cfg(test)]
mod test_support;
mod worker;

/// The node's internals that its own benchmarks and the workspace's tests of replication drive
/// by hand (`node/benches/`, `server/tests/api/follow.rs`), built with `--features internals`:
/// not an API, and not listed in `api.txt`.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals {
    pub use crate::build::Build;
    pub use crate::realtime::{
        broadcast, fanout, frame, limits, outbox, stats, window, wire, Settings,
    };
    pub use crate::replication::internals::*;
}

pub use call::{Caller, HttpAnswer, HttpRefusal};
pub use connections::new_identity;
pub use logs::{FeedEvent, FeedReader, FeedRecord, LevelFilter, LogFeed};
pub use memory::{address_key, Charge, ClientMemory, Holder, MemoryRefused};
pub use node::{
    ClientsDropped, EdgeOptions, Node, NodeBuilder, NodeConfig, NodeHandle, NodeStopper, Role,
    Running, Status,
};
pub use report::Health;
pub use results::INLINE_RESULT_BYTES;
pub use schedule::{ManualClock, ScheduleClock, SystemClock};
pub use slots::{Counted, Counts};
pub use swap::{Published, PUBLISHED_FILE};
pub use tables::{PageQuery, Reader, TablePage};
pub use wasmod_host::Claims;
pub use wasmod_protocol::call::CallKind;

/// How many times their binary size rows are expected to take once rendered as JSON: what
/// a JSON answer or table page is charged before it is rendered ([`ClientMemory`]), then
/// settled to what it took.
pub const JSON_EXPANSION: usize = <realtime::wire::Json as realtime::wire::Wire>::EXPANSION;

/// Completes once `shutdown` is `true` (or its sender has gone): how the node's tasks (the
/// evaluation task, the sockets' writers, the publisher) learn that the node stops.
pub(crate) async fn stopped(shutdown: &mut tokio::sync::watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|&stop| stop).await;
}
