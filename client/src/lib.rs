//! `wasmod-client`: the Rust client SDK of wasmod, over the WebSocket protocol
//! (`docs/protocol.md`, binary subprotocol `v1.bin.wasmod`).
//!
//! A [`Client`] is a cheap handle to a connection task that owns the socket (on the tokio
//! runtime it was connected on). Through it an application:
//!
//! - calls reducers, procedures and views, pipelined, each call a future of its answer
//!   ([`Client::call_reducer`], [`Client::call_procedure`], [`Client::call_view`], and their
//!   `_raw` forms over encoded bytes), failing with a typed [`Error`];
//! - subscribes query sets ([`Client::subscription`]) and runs one-off queries;
//! - reads the **client cache**, the rows of every subscribed query set, each stored once
//!   however many queries select it ([`cache`]), through typed [`TableHandle`]s with
//!   `on_insert`, `on_delete` and `on_update` callbacks that run once a whole transaction is
//!   applied;
//! - keeps all of it across lost connections: the task reconnects with backoff as the same
//!   identity and resumes each query set from the last transaction it applied, so that only
//!   real changes reach the callbacks; [`Client::on_connection_state`] hears of each loss and
//!   return ([`ConnectionState`]);
//! - follows a replicated deployment's failover: given its servers
//!   ([`ClientBuilder::with_servers`]), it moves on to the next when one refuses it (a
//!   standby), fails or is lost, and resumes on the new primary;
//! - follows a new build of the module (`wasmod publish`): a query set the server ended at
//!   the swap is subscribed again by itself when the new build can serve it in the row types
//!   the client reads, and the application hears what became of it ([`NewBuild`],
//!   [`SubscriptionBuilder::on_new_build`]).
//!
//! Callbacks run on the connection task by default; a game or GUI loop that wants them on its
//! own thread builds the client with [`Callbacks::OnFrameTick`] and calls
//! [`Client::frame_tick`] once per frame.
//!
//! Messages that come another way than the client's own socket (recorded, relayed) are
//! applied to a cache of their own by a [`Replay`], as the connection task applies them.
//!
//! Below the client is its WebSocket, [`socket`]: a connection that opens the socket, sends
//! client messages and yields the server's decoded, in either subprotocol. The client's
//! connection task is built on it, and tools that want the messages rather than a cache (the
//! `wasmod` command, the load generator) use it directly.
//!
//! The same client runs in a browser (built for `wasm32-unknown-unknown`): the transport and
//! the runtime differ (`platform`), nothing else; `web` (compiled for wasm32 only) is its
//! JavaScript API, with rows and calls in JSON through [`json`].
//!
//! The crate depends on the protocol and the value encoding only, not on the host or the
//! server. See `docs/client.md` for an example.

mod apply;
pub mod cache;
mod client;
mod connection;
mod credentials;
mod delivery;
mod description;
mod error;
mod id_map;
pub mod json;
mod new_build;
mod platform;
mod replay;
mod servers;
pub mod socket;
mod state;
mod subscription;
mod sync;
mod table;
#[cfg(not(target_arch = "wasm32"))]
mod tls;
mod transport;
#[cfg(target_arch = "wasm32")]
pub mod web;

pub use client::{Client, ClientBuilder};
pub use connection::{
    Backoff, ReducerOutcome, SubscriptionState, BUSY_RETRIES, MAX_CALLS_IN_FLIGHT, MAX_WAITS,
    NOT_PRIMARY_RETRIES,
};
pub use delivery::Callbacks;
pub use error::Error;
pub use new_build::NewBuild;
pub use replay::Replay;
pub use state::ConnectionState;
pub use subscription::{SubscriptionBuilder, SubscriptionHandle};
pub use table::{CallbackId, TableHandle};
#[cfg(not(target_arch = "wasm32"))]
pub use tls::{Certificate, CertificateError, Tls};
pub use wasmod_protocol::errors::{ApiError, ErrorCode};
pub use wasmod_protocol::ws::{Compression, RowList, TableRows};

/// The client's hash maps (by table name, query set id, call id, ...): hashbrown with foldhash,
/// much faster than std's SipHash on short keys (rows and names come from the server the
/// client chose to trust). One kind of map for all of them rather than std's `HashMap` beside
/// it: std's is a second copy of hashbrown's code, with SipHash, in the browser client's wasm.
type HashMap<K, V> = hashbrown::HashMap<K, V, foldhash::fast::RandomState>;
