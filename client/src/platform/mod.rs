//! What differs between the client on a native tokio runtime and the client in a browser:
//! the WebSocket and the runtime (spawning the connection task, sleeping). Everything else,
//! the socket's messages ([`crate::socket`]), the connection task, the cache, reconnection,
//! calls, is the same code on both.
//!
//! Each side provides the same few items, chosen by target:
//!
//! - `Tls`: what a `wss://` socket trusts (natively the platform's roots and those the
//!   application added, `tls.rs`; in a browser, the browser's, and nothing to say);
//! - `connect(url, token, subprotocol, max_message, tls)`: the handshake, with the subprotocol
//!   agreed, as the socket's two halves: a [`Writer`] (`send(payload)`, `close()`) and a
//!   [`Reader`] (`next()`, the next [`Incoming`] frame; cancel-safe, as the connection task
//!   polls it beside its commands), so that one task can send while another reads;
//! - `spawn(task)`, `sleep(duration)` and `timeout(duration, future)`;
//! - `http_get(url, tls)`: a body over HTTP(S) (the module's description), or why there is none;
//! - `decompresses(compression)`: whether the transport inflates frames of that compression
//!   itself, before the decoder (the browser inflates gzip with its `DecompressionStream`).
//!
//! Native (`native.rs`): tokio-tungstenite on tokio, `ureq` for HTTP. Browser (`browser.rs`, `wasm32`): the
//! browser's `WebSocket` through `web-sys`, tasks on the page's event loop
//! (`wasm-bindgen-futures`), timers from `gloo-timers`, and the global `fetch`.

#[cfg(not(target_arch = "wasm32"))]
mod native;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use native::{
    connect, decompresses, http_get, sleep, spawn, timeout, Reader, Tls, Writer,
};

#[cfg(target_arch = "wasm32")]
mod browser;
#[cfg(target_arch = "wasm32")]
pub(crate) use browser::{
    connect, decompresses, describe, http_get, inflate, set_web_socket, sleep, spawn, timeout,
    Reader, Tls, Writer,
};

use crate::transport::{Closed, Payload};

/// The close code of a normal close, which the client sends when it closes a socket.
const NORMAL_CLOSE: u16 = 1000;

/// A frame read from the socket, as the connection sees it whatever the transport.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A data frame, binary or text.
    Data(Payload),
    /// The socket is closed: by the server's close frame, or it ended without one.
    Closed(Closed),
    /// A ping or pong (answered by the transport): nothing to do. A browser answers pings
    /// itself and never shows them.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    Control,
    /// A frame the transport could not make readable (a gzip frame the browser could not
    /// inflate), and why: the connection's to drop, as an undecodable frame.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    Malformed(String),
}
