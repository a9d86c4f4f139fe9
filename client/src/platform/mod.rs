//! What differs between the client on a native tokio runtime and the client in a browser:
//! the WebSocket and the runtime (spawning the connection task, sleeping). Everything else,
//! the connection task, the cache, reconnection, calls, is the same code on both.
//!
//! Each side provides the same few items, chosen by target:
//!
//! - [`Socket`]: `connect(url, token)` (the handshake, with the binary subprotocol agreed),
//!   `send(bytes)`, `next()` (the next [`Incoming`] frame, `None` once the socket failed or
//!   ended; cancel-safe, as the connection task polls it beside its commands) and `close()`;
//! - `spawn(task)`, `sleep(duration)` and `timeout(duration, future)`.
//!
//! Native (`native.rs`): tokio-tungstenite on tokio. Browser (`browser.rs`, `wasm32`): the
//! browser's `WebSocket` through `web-sys`, tasks on the page's event loop
//! (`wasm-bindgen-futures`), timers from `gloo-timers`.

#[cfg(not(target_arch = "wasm32"))]
mod native;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use native::{sleep, spawn, timeout, Socket};

#[cfg(target_arch = "wasm32")]
mod browser;
#[cfg(target_arch = "wasm32")]
pub(crate) use browser::{sleep, spawn, timeout, Socket};

use bytes::Bytes;

/// A frame read from the socket, as the connection sees it whatever the transport.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A binary frame: a server message, perhaps compressed.
    Binary(Bytes),
    /// A text frame (the binary protocol has none).
    Text,
    /// The server closed the socket, for this reason (its code and text).
    Closed(String),
    /// A ping or pong (answered by the transport): nothing to do. A browser answers pings
    /// itself and never shows them.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    Control,
}
