//! The server's limits and settings, with the defaults `wasmod serve` uses.
//!
//! [`ServerConfig`] holds what the transport bounds (bodies, requests, tokens, rates per source
//! address, connections, table pages) and, whole, the node's configuration
//! ([`ServerConfig::node`]): the module's queue, its calls, its sockets' queues, live queries
//! and one-off reads are the node's to bound, and documented there, once. Nothing of the
//! node's is copied here, so a setting has one name, one default and one place to read it.

use std::time::Duration;
use wasmod_node::NodeConfig;

/// How the server protects itself and the module.
///
/// Start from [`ServerConfig::default`] and set the fields that differ (the node's under
/// [`ServerConfig::node`]): more may be added, so the struct cannot be written out whole
/// outside this crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The largest request body accepted (`payload_too_large`, 413, beyond). Default: 1 MiB.
    pub max_body_bytes: usize,
    /// The largest build `wasmod publish` may send (`POST /v1/admin/module`;
    /// `payload_too_large`, 413, beyond). Default: 64 MiB.
    pub max_module_bytes: usize,
    /// The longest a request may take, body read and queueing included (`timeout`, 504,
    /// beyond). A call the module has started still runs to completion under the module's own
    /// deadline; only the answer is lost. Default: 30 s.
    pub request_timeout: Duration,
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
    /// The node's limits: the module's queue, its calls and their results, its sockets'
    /// queues and pings, live queries, one-off reads and table pages (`GET
    /// /v1/tables/{name}`) ([`NodeConfig`] documents each).
    pub node: NodeConfig,
}

impl Default for ServerConfig {
    /// The transport's defaults, and the node's own ([`NodeConfig::default`]).
    fn default() -> Self {
        Self {
            max_body_bytes: 1 << 20,
            max_module_bytes: 64 << 20,
            request_timeout: Duration::from_secs(30),
            token_ttl: Duration::from_secs(30 * 24 * 60 * 60),
            identities_per_minute: 30,
            anonymous_calls_per_minute: 600,
            failed_tokens_per_second: 2,
            shutdown_grace: Duration::from_secs(30),
            max_connections: 10_000,
            max_connections_per_address: 256,
            max_websockets_per_identity: 64,
            header_read_timeout: Duration::from_secs(15),
            write_timeout: Duration::from_secs(30),
            node: NodeConfig::default(),
        }
    }
}
