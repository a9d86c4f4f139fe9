//! The server's limits and settings, with the defaults `wasmod serve` uses.

use std::time::Duration;

/// How the server protects itself and the module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerConfig {
    /// The largest request body accepted (`payload_too_large`, 413, beyond).
    pub max_body_bytes: usize,
    /// The most calls one identity may have queued or running at once (`too_many_calls`, 429,
    /// beyond).
    pub max_calls_per_identity: usize,
    /// The longest a request may take, body read and queueing included (`timeout`, 504,
    /// beyond). A call the module has started still runs to completion under the module's own
    /// deadline; only the answer is lost.
    pub request_timeout: Duration,
    /// The most calls waiting for the module (`busy`, 503, beyond).
    pub queue: usize,
    /// How long an issued token is valid.
    pub token_ttl: Duration,
    /// How long shutdown waits for the module's thread to finish the calls already queued.
    pub shutdown_grace: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: 1 << 20,
            max_calls_per_identity: 8,
            request_timeout: Duration::from_secs(30),
            queue: 256,
            token_ttl: Duration::from_secs(30 * 24 * 60 * 60),
            shutdown_grace: Duration::from_secs(30),
        }
    }
}
