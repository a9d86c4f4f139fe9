//! The load generator's clients: the SDK's socket in the binary protocol
//! ([`wasmod_client::socket`], the tree's one WebSocket client, whose buffers start at 4 KiB
//! like the server's, so that ten thousand idle clients do not cost more memory than the
//! server they measure), opened with the patience of a loaded machine. The messages are the
//! `wasmod_protocol::ws` types, every one decoded, with no cache behind them.

use anyhow::{Context, Result};
use std::time::Duration;
use wasmod_client::socket::{Binary, Connection, Subprotocol};

/// How long connecting (TCP, upgrade and the first message) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Opens a binary-protocol socket to `url` (`ws://…/v1/subscribe`, with a `token` parameter
/// to connect as that token's identity), past the server's first message: its
/// `IdentityToken` (a floor server sends one too).
pub async fn connect(url: &str) -> Result<Connection> {
    connect_as::<Binary>(url).await
}

/// [`connect`] in subprotocol `P` (the JSON one, say).
pub async fn connect_as<P: Subprotocol>(url: &str) -> Result<Connection<P>> {
    Connection::open(url, None, CONNECT_TIMEOUT)
        .await
        .with_context(|| format!("connecting to {url}"))
}
