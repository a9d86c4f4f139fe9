//! Replication: the primary's commits carried to edge nodes over a Redis stream
//! (`docs/edges.md`).
//!
//! One machine holds a module's data and takes its writes; edges hold clients and their
//! subscriptions. Rather than a protocol of our own, the commit feed goes through Redis
//! Streams, a widely deployed engine that keeps an ordered, bounded log any number of readers
//! tail on their own: the primary appends each durable commit once, keeps no state per edge,
//! and a slow edge costs it nothing (the stream is trimmed to its bound whoever reads it).
//!
//! - [`address`]: where a stream is, `redis://HOST:PORT/<stream>`;
//! - [`entry`]: one entry of the stream, its id derived from the commit's offset so that
//!   gaps show in the ids, and its fields;
//! - [`backlog`]: the commits in memory waiting for the stream, bounded;
//! - [`publisher`]: the primary's task that writes them, refilling from the commit log after
//!   an outage; [`stats`]: its counters.

pub mod address;
pub mod backlog;
pub mod entry;
pub mod publisher;
pub mod stats;

pub use address::StreamAddress;
pub use entry::Entry;
pub use publisher::{PublishSettings, Publisher};
pub use stats::{PublishReading, PublishStats};
