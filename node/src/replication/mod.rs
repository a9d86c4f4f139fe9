//! Replication: the primary's commits carried to edge nodes over a Redis stream
//! (`docs/edges.md`).
//!
//! One machine holds a module's data and takes its writes; edges hold clients and their
//! subscriptions. Rather than a protocol of our own, the commit feed goes through Redis
//! Streams, a widely deployed engine that keeps an ordered, bounded log any number of readers
//! tail on their own: the primary appends each durable commit once, keeps no state per edge,
//! and a slow edge costs it nothing (the stream is trimmed to its bound whoever reads it).
//!
//! - `address`: where a stream is, `redis://HOST:PORT/<stream>`;
//! - `entry`: one entry of the stream, its id derived from the commit's offset so that
//!   gaps show in the ids, and its fields;
//! - `backlog`: the commits in memory waiting for the stream, bounded;
//! - `link`: the connection to Redis that each side keeps;
//! - `follower`: the reading side, which tails the stream from an offset and detects gaps
//!   (what an edge bootstraps again on);
//! - `publisher`: the primary's task that writes them, refilling from the commit log after
//!   an outage; `stats`: its counters, and an edge's;
//! - the snapshot edges bootstrap from is a route ([`SNAPSHOT_PATH`]), served only by a
//!   publishing server to the holders of its edge token; so is the route of the calls edges
//!   forward (`forward`: what crosses the wire);
//! - on an edge: `primary`, its HTTP line to the primary (the snapshot, forwarded calls),
//!   and `edge`, the task that keeps its copy up to date from the stream and bootstraps it
//!   again on a gap.

pub(crate) mod address;
pub(crate) mod backlog;
pub(crate) mod edge;
pub(crate) mod entry;
pub(crate) mod follower;
pub(crate) mod forward;
mod link;
pub(crate) mod primary;
pub(crate) mod publisher;
pub(crate) mod snapshot;
pub(crate) mod stats;

/// The primary's snapshot endpoint, for edges: `GET` with the edge token.
pub const SNAPSHOT_PATH: &str = "/v1/replication/snapshot";

/// The media type of a snapshot: the commit log's record encoding of one transaction
/// inserting every row.
pub const SNAPSHOT_TYPE: &str = "application/vnd.wasmod.snapshot";

pub use wasmod_protocol::http::OFFSET_HEADER;

pub use address::StreamAddress;
pub use edge::EdgeSettings;
pub use forward::{ForwardedCall, ForwardedOutcome, CALLS_PATH};
pub use primary::{Primary, PrimaryError, Snapshot};
pub use publisher::{PublishSettings, DEFAULT_BACKLOG, DEFAULT_MAX_LEN};
pub use stats::PublishReading;

pub(crate) use edge::{EdgeState, Follow};
pub(crate) use publisher::Publisher;

/// The stream's entries, its follower and the publisher, for the node's benchmarks and the
/// workspace's tests of the stream (`wasmod_node::internals`): not an API.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals {
    pub use super::entry::StreamEntry;
    pub use super::follower::{FollowSettings, Followed, Follower, Gap};
    pub use super::publisher::Publisher;
}
pub(crate) use stats::{EdgeStats, PublishStats};
