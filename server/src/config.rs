//! The server's limits and settings, with the defaults `wasmod serve` uses.

use crate::pages::PageLimits;
use std::time::Duration;

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
    /// have queued or running at once, of every kind (`too_many_calls`, 429, beyond).
    /// Default: 8.
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
    /// How long shutdown waits for the module's thread to finish the calls already queued.
    /// Default: 30 s.
    pub shutdown_grace: Duration,
    /// The most messages queued for one WebSocket client; a client with more waiting is too
    /// slow and is closed (`4001`). Default: 1024.
    pub outbound_messages: usize,
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
    /// alone). The JSON, streamed, is larger by a factor the encoding bounds. Default: 1 MiB.
    pub max_table_page_bytes: usize,
    /// The most table reads in progress at once, each from before it waits for the tables
    /// until its page is sent (`busy`, 503, beyond); as many one-off queries over WebSockets,
    /// every connection together, are evaluated at once (the others wait). Default: 4.
    pub max_table_reads: usize,
    /// The most bytes of a value a view or procedure returns, in its binary encoding, that an
    /// answer carries (over HTTP or the WebSocket); a larger one is answered
    /// `result_too_large` (500), the call's commits staying. Default: 8 MiB.
    pub max_result_bytes: usize,
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
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: 1 << 20,
            max_module_bytes: 64 << 20,
            max_calls_per_identity: 8,
            request_timeout: Duration::from_secs(30),
            queue: 256,
            token_ttl: Duration::from_secs(30 * 24 * 60 * 60),
            identities_per_minute: 30,
            anonymous_calls_per_minute: 600,
            shutdown_grace: Duration::from_secs(30),
            outbound_messages: 1024,
            outbound_bytes: 16 << 20,
            subscription_part_bytes: 1 << 20,
            resume_commits: 4096,
            resume_bytes: 64 << 20,
            ping_interval: Duration::from_secs(30),
            table_page_rows: 1000,
            max_table_page_rows: 10_000,
            max_table_page_bytes: 1 << 20,
            max_table_reads: 4,
            max_result_bytes: 8 << 20,
        }
    }
}
