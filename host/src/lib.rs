//! The wasmod host: what runs a module's code next to its data.
//!
//! - [`env`](mod@env): one module instance's host-side state ([`InstanceEnv`]) and the ABI's imports,
//!   over byte slices: the semantics every transport shares.
//! - [`call`]: calling entry points by name (transactions, arguments, results, outcomes),
//!   over any [`Transport`].
//! - [`native`]: the transport for module code compiled natively, so modules can be tested
//!   with `cargo test` ([`NativeModule`]).
//!
//! The wasmtime transport, which maps a wasm module's memory onto [`InstanceEnv`], comes next
//! behind a default cargo feature.

pub mod call;
pub mod env;
pub mod native;

pub use call::{Caller, ExportCall, LoadError, Outcome, Transport, Trap};
pub use env::{Advance, DenyAllHttp, HttpClient, InstanceEnv, Limits, LogLevel, LogRecord};
pub use native::{with_env, NativeModule, NativeTransport};
pub use wasmod_datastore as datastore;
