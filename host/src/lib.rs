//! The wasmod host: what runs a module's code next to its data.
//!
//! - [`env`](mod@env): one module instance's host-side state ([`InstanceEnv`]) and the ABI's imports,
//!   over byte slices: the semantics every transport shares.
//! - [`call`]: calling entry points by name (transactions, arguments, results, outcomes),
//!   over any [`Transport`], as a [`Caller`], whose [`Claims`] the module may read.
//! - [`native`]: the transport for module code compiled natively, so modules can be tested
//!   with `cargo test` ([`NativeModule`]).
//! - [`schedule`]: schedule tables (`#[table(scheduled(..))]`): their checks at load and what
//!   their rows say; [`LoadedModule::call_scheduled`] makes the call a row asks for.
//! - [`outbound`]: procedures' outbound HTTP through a real client, behind the operator's
//!   allow list ([`OutboundHttp`]).
//!
//! - [`wasm`] (cargo feature `wasmtime`, on by default): the transport for modules compiled to
//!   wasm, run by wasmtime under a deadline and memory caps ([`WasmModule`]).

pub mod call;
mod claims;
mod clock;
pub mod env;
pub mod module;
pub mod native;
pub mod outbound;
pub mod schedule;
#[cfg(feature = "wasmtime")]
pub mod wasm;

pub use call::{
    AnonymousExport, Caller, CallerExport, ExportCall, LoadError, Outcome, Transport, Trap,
};
pub use claims::Claims;
pub use env::{
    Advance, DenyAllHttp, HttpClient, InstanceEnv, Limits, LogLevel, LogRecord, LogTap, Persistence,
};
pub use module::LoadedModule;
pub use native::{with_env, NativeModule, NativeTransport};
pub use outbound::{AllowList, HostRule, OutboundHttp};
#[cfg(feature = "wasmtime")]
pub use wasm::{
    CompiledModule, EngineConfig, ReplaceError, Replacement, WasmConfig, WasmEngine, WasmError,
    WasmModule,
};
pub use wasmod_datastore as datastore;
