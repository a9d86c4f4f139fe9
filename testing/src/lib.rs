//! # wasmod-testing: test wasmod modules natively, with `cargo test`
//!
//! Module code compiles for the machine's own target too. [`TestModule`] loads a module that
//! way into the real host: its description is read through `__describe_module__`, its tables
//! are created in the real datastore, its `init` runs, and every call goes through the same
//! dispatch `match` and the same host-side semantics as in wasm. Only the transport differs:
//! imports are served in-process instead of through wasm memory.
//!
//! Add it as a dev-dependency of the module crate (`wasmod new` does):
//!
//! ```toml
//! [dependencies]
//! wasmod = "0.1"
//!
//! [dev-dependencies]
//! wasmod-testing = "0.1"
//! ```
//!
//! ```
//! use wasmod::prelude::*;
//! use wasmod_testing::{Outcome, TestModule};
//!
//! #[wasmod::module]
//! mod counter {
//!     use wasmod::prelude::*;
//!
//!     #[table]
//!     pub struct Tally {
//!         #[primary_key]
//!         pub who: Identity,
//!         pub n: u64,
//!     }
//!
//!     #[reducer]
//!     fn bump(ctx: &ReducerContext, by: u64) -> Result<(), String> {
//!         if by == 0 {
//!             return Err("bump by at least 1".into());
//!         }
//!         let tallies = ctx.db.tally();
//!         let n = tallies.who().find(ctx.sender()).map_or(0, |tally| tally.n) + by;
//!         tallies.who().delete(ctx.sender());
//!         tallies.insert(Tally { who: ctx.sender(), n });
//!         Ok(())
//!     }
//! }
//! use counter::TallyAccess;
//!
//! let module = TestModule::<counter::Module>::new();
//! let alice = Identity::from_bytes([1; 32]);
//! assert!(module.call_reducer(alice, "bump", (2u64,)).is_success());
//! assert!(module.call_reducer(alice, "bump", (3u64,)).is_success());
//! assert!(matches!(module.call_reducer(alice, "bump", (0u64,)), Outcome::Failed { .. }));
//! assert_eq!(module.read(|db| db.tally().who().find(alice).map(|t| t.n)), Some(5));
//! ```
//!
//! The guide is `docs/testing-modules.md`.
//!
//! ## Why a crate of its own
//!
//! The host (`wasmod-host`: the datastore, the ABI's semantics, the native transport) is what
//! a test needs and what a module must never carry. In `wasmod` itself it was a dependency of
//! every native build of every module, there only for the tests. Here it is a
//! dev-dependency: `cargo build` of a module compiles no host, `cargo test` compiles the
//! native host only (no wasmtime: nothing here runs a `.wasm`).
//!
//! `wasmod` keeps the native side of its imports without knowing the host: the functions of
//! `wasmod::sys` call a `wasmod::native::Imports` installed once per process, and this crate
//! installs the host's (see [`install_host`]) before loading a module. Module code called
//! natively with nothing installed panics, naming [`TestModule`].
//!
//! The host's types a test meets ([`Outcome`], [`LogRecord`], [`Database`], ...) are
//! re-exported, so a module's tests depend on this crate and `wasmod` only.

mod claims;
mod host;
mod module;

pub use claims::WithClaims;
pub use host::install_host;
pub use module::{CallFailure, TestModule};
pub use wasmod_host::datastore::{Commit, Database, TxData};
pub use wasmod_host::{LoadError, LogLevel, LogRecord, Outcome};
