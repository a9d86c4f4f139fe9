//! # wasmod: server modules in plain Rust, dispatched without indirect calls
//!
//! A wasmod module is a crate compiled to `wasm32-unknown-unknown` and run by the wasmod host
//! beside the data it owns. You write tables and functions; attribute macros generate the
//! rest:
//!
//! ```
//! use wasmod::prelude::*;
//!
//! #[wasmod::module]
//! mod chat {
//!     use wasmod::prelude::*;
//!
//!     #[table(public)]
//!     pub struct Message {
//!         #[primary_key]
//!         #[auto_inc]
//!         id: u64,
//!         #[index(btree)]
//!         sender: Identity,
//!         text: String,
//!     }
//!
//!     #[reducer]
//!     fn send(ctx: &ReducerContext, text: String) -> Result<(), String> {
//!         if text.is_empty() {
//!             return Err("empty message".into());
//!         }
//!         ctx.db.message().insert(Message { id: 0, sender: ctx.sender(), text });
//!         Ok(())
//!     }
//!
//!     #[view]
//!     fn mine(ctx: &ViewContext) -> Vec<Message> {
//!         ctx.db.message().sender().filter(ctx.sender()).collect()
//!     }
//! }
//! # fn main() {}
//! ```
//!
//! ## The dispatch property
//!
//! `#[wasmod::module]` generates the module's exports (`__call_reducer__` and friends). Each is
//! a `match` on the entry point's id whose arms call one concrete, generated function directly:
//! no table of function pointers, no trait objects, no formatting on the way from the export to
//! your function. The ids and the order of the module description come from one list in one
//! expansion, so they cannot disagree.
//!
//! ## What is where
//!
//! - Attributes: [`table`](macro@table), [`reducer`], [`procedure`], [`view`], [`http_handler`], [`module`],
//!   and `#[derive(SchemaType)]` for your own column, parameter and return types.
//! - Contexts: [`ReducerContext`], [`ViewContext`], [`AnonymousViewContext`],
//!   [`ProcedureContext`], [`HttpContext`]; the caller's [`Claims`] (its OpenID Connect
//!   token's), which they read with `ctx.claims()`; [`serde_json`], re-exported, for the
//!   claims' values.
//! - Tables: [`Db`], [`table::Table`] and the index handles [`table::UniqueColumn`] and
//!   [`table::BTreeIndex`]; what a failed insert or update says, [`InsertError`].
//! - Transactions of procedures and HTTP handlers: [`ProcedureContext::with_tx`] (commits,
//!   whatever its closure returns) and [`ProcedureContext::try_with_tx`] (rolls back on
//!   `Err`); [`TxError`], the host refusing one.
//! - Outbound HTTP: [`ProcedureContext::send_http`], [`HttpError`].
//! - Logging: [`info!`], [`warn!`], [`error!`], [`debug!`], [`trace!`], [`log!`].
//! - Native tests: the `wasmod-testing` crate (a dev-dependency), its `TestModule`; the seam
//!   it plugs the host into, `wasmod::native` (on non-wasm targets).
//! - The ABI itself: the [`abi`] crate and `docs/abi.md`.
//!
//! Every context, handle and method has an example, run as a doctest against the native test
//! host (`wasmod-testing`). The guide pages, whose examples are doctests too, are in `docs/`:
//! `tables-and-indexes.md`, `transactions.md`, `procedures-and-http.md` (with
//! `http-handlers.md`) and `testing-modules.md`.

pub mod claims;
pub mod context;
pub mod db;
pub mod log;
#[cfg(not(target_arch = "wasm32"))]
pub mod native;
#[cfg(target_arch = "wasm32")]
mod panic;
mod registered;
#[doc(hidden)]
pub mod rt;
pub mod sys;
pub mod table;

pub use serde_json;
pub use wasmod_abi as abi;
pub use wasmod_abi::http;
pub use wasmod_abi::{
    ConnectionId, Decode, DecodeBorrowed, DecodeError, Encode, Errno, Identity, ScheduleAt,
    SchemaType, TimeDuration, Timestamp,
};

pub use claims::Claims;
pub use context::{
    AnonymousViewContext, HttpContext, HttpError, ProcedureContext, ReadTxContext, ReducerContext,
    TxContext, TxError, ViewContext,
};
pub use db::{Db, ReadOnly, ReadWrite};
pub use rt::IntoErrorMessage;
pub use table::InsertError;

pub use wasmod_macros::{http_handler, module, procedure, reducer, table, view};

/// The guide pages of `docs/`: compiled only by `cargo test --doc`, so that every example in
/// them is a doctest of this crate.
#[cfg(doctest)]
mod guides {
    #[doc = include_str!("../../docs/tables-and-indexes.md")]
    struct TablesAndIndexes;

    #[doc = include_str!("../../docs/transactions.md")]
    struct Transactions;

    #[doc = include_str!("../../docs/procedures-and-http.md")]
    struct ProceduresAndHttp;

    #[doc = include_str!("../../docs/testing-modules.md")]
    struct TestingModules;

    #[doc = include_str!("../../docs/scheduled-reducers.md")]
    struct ScheduledReducers;

    #[doc = include_str!("../../docs/upgrading.md")]
    struct Upgrading;
}

/// The names a module needs: `use wasmod::prelude::*;`.
pub mod prelude {
    pub use crate::http::{Method, Request, Response};
    pub use crate::{
        http_handler, procedure, reducer, table, view, AnonymousViewContext, Claims, ConnectionId,
        HttpContext, Identity, ProcedureContext, ReadTxContext, ReducerContext, ScheduleAt,
        SchemaType, TimeDuration, Timestamp, TxContext, ViewContext,
    };
}
