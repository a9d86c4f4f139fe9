//! The server's limits and settings, with the defaults `wasmod serve` uses.

use crate::pages::PageLimits;
use std::time::Duration;
use wasmod_node::realtime::{self, SubscriptionLimits};
use wasmod_node::NodeConfig;

/// How the server protects itself and the module.
///
/// Start from [`ServerConfig::default`] and set the fields that differ: more may be added, so
/// the struct cannot be written out whole outside this crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The largest request body accepted (`payload_too_large`, 413, beyond). Default: 1 MiB.
    pub max_body_bytes: usize,
    /// The largest build `wasmod publish` may send (`POST /v1/admin/module`;
    /// `payload_too_large`, 413, beyond). Default: 64 MiB.
    pub max_module_bytes: usize,
    /// The most calls one identity (or, for calls without a token, one source address) may
    /// have queued or running at once, of every kind, over HTTP and every WebSocket together
    /// (`too_many_calls`, 429, beyond). Default: 16, what one WebSocket may have in flight.
    pub max_calls_per_identity: usize,
    /// The longest a request may take, body read and queueing included (`timeout`, 504,
    /// beyond). A call the module has started still runs to completion under the module's own
    /// deadline; only the answer is lost. Default: 30 s.
    pub request_timeout: Duration,
    /// The most calls waiting for the module (`busy`, 503, beyond). Default: 256.
    pub queue: usize,
    /// How long an issued token is valid. Default: 30 days.
    pub token_ttl: Duration,
    /// The most new identities one source address is given a minute (`POST /v1/identity`,
    /// and WebSocket connections without a token), as a burst of as many refilled evenly;
    /// beyond, `too_many_calls` (429). `0`: no limit. Default: 30.
    pub identities_per_minute: u32,
    /// The most calls without a token one source address may make a minute (anonymous views
    /// over `POST /v1/views/{name}`, the module's HTTP handlers under `/v1/http`), as a burst
    /// of as many refilled evenly; beyond, `too_many_calls` (429) with `Retry-After`. `0`: no
    /// limit. Default: 600.
    pub anonymous_calls_per_minute: u32,
    /// The most tokens one source address may get wrong a second (a client token that is
    /// not the server's, `invalid_token`; a wrong operator token, `not_operator`), after a
    /// burst of five times as many; beyond, every token check of the address is answered
    /// `too_many_calls` (429) with `Retry-After` until it is within the rate again, the
    /// right token's included. `0`: no limit. Default: 2 (a burst of 10).
    pub failed_tokens_per_second: u32,
    /// How long shutdown waits for the module's thread to finish the calls already queued.
    /// Default: 30 s.
    pub shutdown_grace: Duration,
    /// The most messages queued for one WebSocket client; a client with more waiting is too
    /// slow and is closed (`4001`). Default: 1024.
    pub outbound_messages: usize,
    /// The most bytes clients may make the server hold for them, every client together: the
    /// texts of their query sets, one-off answers and table pages on their way out
    /// ([`wasmod_node::memory`]). An identity may hold an eighth of it, a source address a
    /// quarter. Default: a sixty-fourth of the machine's memory, within 64 MiB and 4 GiB.
    pub max_client_memory: usize,
    /// The most bytes of rows queued for one WebSocket client (counted in the binary
    /// encoding); beyond, the client is closed (`4001`). A subscription's rows are counted as
    /// their pointers (16 bytes a row) until they are sent, and a subscription with more is
    /// refused. Default: 16 MiB.
    pub outbound_bytes: usize,
    /// The most bytes of rows (in the binary encoding) in one message of a subscription's
    /// rows: more are sent in parts (`SubscribeRows`, then `SubscribeApplied`), each encoded
    /// once the one before it is written. Large enough that a part's fixed costs (a frame, a
    /// compressor's set-up) vanish beside its rows, small enough that a connection holds
    /// little beyond its rows' pointers (`benches/RESULTS.md`, "Initial subscription").
    /// Default: 1 MiB.
    pub subscription_part_bytes: usize,
    /// The most recent commits kept so that a WebSocket client that reconnects (with
    /// `resume_from`) is sent what changed since its last offset rather than all its rows;
    /// `0` keeps none. Only a server with a commit log resumes. Default: 4096.
    pub resume_commits: usize,
    /// The most bytes of rows those commits may hold; the oldest are forgotten beyond.
    /// Default: 64 MiB.
    pub resume_bytes: usize,
    /// How long a WebSocket client may stay silent before the server pings it; a client that
    /// then stays silent for as long again (it sent nothing, not even the pong) is closed
    /// (`4003`). Default: 30 s.
    pub ping_interval: Duration,
    /// The rows of a page of `GET /v1/tables/{name}` when the request names no `limit`.
    /// Default: 1000.
    pub table_page_rows: usize,
    /// The most rows of such a page; a larger `limit` is taken as this. Default: 10,000.
    pub max_table_page_rows: usize,
    /// The most bytes of such a page's rows, in their binary encoding: the page stops before
    /// the row that would take it past this (a first row larger than that on its own is sent
    /// alone). The JSON, rendered whole before it is sent, is larger by a factor the encoding
    /// bounds. Default: 1 MiB.
    pub max_table_page_bytes: usize,
    /// The most table reads in progress at once, each from before it waits for the tables
    /// until its page is rendered, not while it is sent (`busy`, 503, beyond); as many one-off queries over WebSockets,
    /// every connection together, are evaluated at once (the others wait). Default: 4.
    pub max_table_reads: usize,
    /// The most bytes of a value a view or procedure returns, in its binary encoding, that an
    /// answer carries (over HTTP or the WebSocket); a larger one is answered
    /// `result_too_large` (500), the call's commits staying. Default: 8 MiB.
    pub max_result_bytes: usize,
    /// The most queries one WebSocket `Subscribe` may carry, repeats included (repeats are
    /// then subscribed once); beyond, a `SubscriptionError`. Default: 256.
    pub max_queries_per_set: usize,
    /// The most query sets one WebSocket connection may hold at once; beyond, a
    /// `SubscriptionError` (unsubscribe one first). Default: 1024.
    pub max_query_sets_per_connection: usize,
    /// The most distinct queries one identity may be subscribed to at once, all its
    /// connections together (a query is counted once however many of its sets hold it);
    /// beyond, a `SubscriptionError`. Default: 4096.
    pub max_queries_per_identity: usize,
    /// The most those distinct queries may cost together, in reads a row (one for the row,
    /// one for each comparison of a query's condition, its tables' visibility filters
    /// included: `SELECT * FROM t WHERE a = 1 OR a = 2` costs 3): what each row a commit
    /// changes may cost to check against the identity's queries. Beyond, a
    /// `SubscriptionError`. Default: 16,384.
    pub max_query_cost_per_identity: usize,
    /// The most reads the first evaluation of new subscriptions may make under one read
    /// transaction of the tables, during which commits wait: a read is a row found (scanned,
    /// through an index, a join's partner) and each comparison of the query's condition
    /// checked on it. It bounds how long subscribing holds commits back, whatever clients
    /// send. Subscriptions beyond it wait for the next transaction; one that reads more on its
    /// own is refused with a `SubscriptionError`. A WebSocket one-off query may read as many,
    /// or is refused. Default: 1,000,000 (10 to 50 ms on this project's 2-core reference
    /// machine: `subscription/tests/selective.rs`, `a_read`).
    pub max_subscription_reads: usize,
    /// The most TCP connections open at once, every client together (WebSockets included).
    /// Beyond it, [`crate::admission::HEALTH_PLACES`] more are taken for `GET /health` alone,
    /// and the others are closed as soon as they are accepted, after a best-effort `503
    /// busy`. The server lowers it at start to leave [`crate::admission::RESERVED_FILES`] file
    /// descriptors of its open-file limit for its own files. Default: 10,000.
    pub max_connections: usize,
    /// The most TCP connections open at once from one source address (an IPv6 address counts
    /// by its /64, which one host usually holds whole); beyond, a new one is closed as soon as
    /// it is accepted, after a best-effort `429 too_many_calls`. Default: 256.
    pub max_connections_per_address: usize,
    /// The most WebSocket connections one identity may have open at once (`GET
    /// /v1/subscribe`); beyond, the handshake is answered `too_many_calls` (429).
    /// Default: 64.
    pub max_websockets_per_identity: usize,
    /// The longest a client may take to send a request's headers, counted from when the
    /// server starts waiting for them: from the connection's start, and on a kept-alive
    /// connection from the end of the previous answer, so that it is also how long an idle
    /// keep-alive connection stays open. Beyond, the connection is closed. Default: 15 s.
    pub header_read_timeout: Duration,
    /// The longest a write to a client may wait for it to read (its receive window full)
    /// before the connection is closed: a client that stops reading does not hold an answer,
    /// and what it holds, for ever. WebSockets included. Default: 30 s.
    pub write_timeout: Duration,
}

impl ServerConfig {
    /// The bounds of a page of a table read.
    pub fn page_limits(&self) -> PageLimits {
        PageLimits {
            default_rows: self.table_page_rows,
            max_rows: self.max_table_page_rows,
            max_bytes: self.max_table_page_bytes,
        }
    }

    /// The node's share of the configuration: its queue, calls, results and sockets.
    pub fn node_config(&self) -> NodeConfig {
        let mut node = NodeConfig::default();
        node.queue = self.queue;
        node.max_calls_per_identity = self.max_calls_per_identity;
        node.max_result_bytes = self.max_result_bytes;
        let sockets = &mut node.realtime;
        sockets.outbound = realtime::outbox::Bounds {
            messages: self.outbound_messages,
            bytes: self.outbound_bytes,
        };
        sockets.resume = realtime::window::WindowBounds {
            commits: self.resume_commits,
            bytes: self.resume_bytes,
        };
        sockets.ping_interval = self.ping_interval;
        sockets.part_bytes = self.subscription_part_bytes;
        sockets.one_offs = self.max_table_reads;
        sockets.client_memory = self.max_client_memory;
        sockets.subscriptions = self.subscription_limits();
        node
    }

    /// The bounds of subscribing over WebSockets.
    pub fn subscription_limits(&self) -> SubscriptionLimits {
        let mut limits = NodeConfig::default().realtime.subscriptions;
        limits.queries_per_set = self.max_queries_per_set;
        limits.sets_per_connection = self.max_query_sets_per_connection;
        limits.queries_per_identity = self.max_queries_per_identity;
        limits.cost_per_identity = self.max_query_cost_per_identity;
        limits.reads = self.max_subscription_reads;
        limits
    }
}

impl Default for ServerConfig {
    /// The node's settings are the node's defaults ([`NodeConfig::default`]), so that the two
    /// cannot drift apart; the rest are the transport's own.
    fn default() -> Self {
        let node = NodeConfig::default();
        let realtime = node.realtime;
        let subscriptions = realtime.subscriptions;
        Self {
            max_body_bytes: 1 << 20,
            max_module_bytes: 64 << 20,
            max_calls_per_identity: node.max_calls_per_identity,
            request_timeout: Duration::from_secs(30),
            queue: node.queue,
            token_ttl: Duration::from_secs(30 * 24 * 60 * 60),
            identities_per_minute: 30,
            anonymous_calls_per_minute: 600,
            failed_tokens_per_second: 2,
            shutdown_grace: Duration::from_secs(30),
            max_client_memory: realtime.client_memory,
            outbound_messages: realtime.outbound.messages,
            outbound_bytes: realtime.outbound.bytes,
            subscription_part_bytes: realtime.part_bytes,
            resume_commits: realtime.resume.commits,
            resume_bytes: realtime.resume.bytes,
            ping_interval: realtime.ping_interval,
            table_page_rows: 1000,
            max_table_page_rows: 10_000,
            max_table_page_bytes: 1 << 20,
            max_table_reads: realtime.one_offs,
            max_result_bytes: node.max_result_bytes,
            max_queries_per_set: subscriptions.queries_per_set,
            max_query_sets_per_connection: subscriptions.sets_per_connection,
            max_queries_per_identity: subscriptions.queries_per_identity,
            max_query_cost_per_identity: subscriptions.cost_per_identity,
            max_subscription_reads: subscriptions.reads,
            max_connections: 10_000,
            max_connections_per_address: 256,
            max_websockets_per_identity: 64,
            header_read_timeout: Duration::from_secs(15),
            write_timeout: Duration::from_secs(30),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_configuration_gives_the_node_its_own_defaults() {
        assert_eq!(ServerConfig::default().node_config(), NodeConfig::default());
    }
}
