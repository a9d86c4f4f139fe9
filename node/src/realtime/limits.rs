//! The fixed bounds of one WebSocket connection.
//!
//! Every client byte is hostile and 10,000 idle connections must stay cheap, so buffers start
//! small and grow only for large messages, messages have a size limit, and a connection has a
//! bounded number of calls in flight. The outbound queue's bounds are settings
//! ([`NodeConfig`](crate::NodeConfig)), since they trade memory for tolerance of slow
//! clients.

use std::time::Duration;

/// The largest message (and frame) a client may send: larger ones close the connection
/// (`1009`).
pub const MAX_INBOUND_MESSAGE: usize = 1 << 20;

/// The read buffer a connection starts with (tungstenite's default is 128 KiB).
pub const READ_BUFFER: usize = 4 * 1024;

/// The write buffer a connection starts with: frames are written out once it holds this much
/// (tungstenite's default is 128 KiB).
pub const WRITE_BUFFER: usize = 4 * 1024;

/// The most calls one connection may have queued or running; a call beyond it is answered
/// with `busy` at once.
pub const MAX_CALLS_IN_FLIGHT: usize = 16;

/// The most `WaitFor` requests one connection may have waiting for a commit not evaluated
/// yet; one beyond it is answered with `busy` at once.
pub const MAX_WAITS: usize = 16;

/// How many subscribe, unsubscribe and `WaitFor` requests one connection may have waiting
/// for the evaluation task; its reader waits for one of them to be handled before it reads
/// on. The task serves the identities that have made it read least first
/// ([`super::fanout`], "Fair service"), so what one connection queues waits behind others'
/// requests rather than ahead of them, and a flood of requests is held in the flooding
/// socket, unread, not in the server.
pub const MAX_REQUESTS_QUEUED: usize = 16;

/// How many pings a client may send: a burst of this many, then one every
/// [`PING_EVERY`]. The WebSocket library answers each with a pong as it reads it; a client
/// that pings and never reads made those pongs wait in its socket's buffer, 16 MiB of them
/// (64 sockets held 1.19 GB). Beyond it the socket is closed ([`super::close::POLICY`]).
pub const PINGS: u32 = 64;

/// How often a client may ping once its burst of [`PINGS`] is spent.
pub const PING_EVERY: Duration = Duration::from_millis(100);

/// How long a close frame may take to reach a client before the socket is dropped anyway (a
/// client that stopped reading never takes it).
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// How many subscribe, unsubscribe and close requests may wait for the evaluation task; a
/// reader waits for room.
pub const FANOUT_REQUESTS: usize = 1024;

/// The smallest binary message (its encoding, after the compression byte) sent compressed
/// when the client chose a compression: smaller ones gain too little to be worth the time
/// (`benches/RESULTS.md`, "Compression threshold", has the measurement).
pub const COMPRESSION_THRESHOLD: usize = 1024;
