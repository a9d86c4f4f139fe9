//! The wasmtime transport: modules compiled to `wasm32-unknown-unknown`, run under budgets.
//!
//! [`WasmModule`] is to a `.wasm` file what [`NativeModule`](crate::NativeModule) is to module
//! code compiled natively: it loads the module (checks its imports and exports against the
//! ABI, instantiates it, reads its description through the same orchestration in
//! [`call`], creates its tables, runs `init`) and calls its entry points by name.
//! Only the transport differs: the imports of `docs/abi.md` read and write the module's linear
//! memory, each pointer bounds-checked, and the exports are called as typed wasm functions.
//!
//! A hostile module cannot take the host down:
//!
//! - every call runs under a deadline ([`WasmConfig::deadline`], epoch interruption) that
//!   stops infinite loops;
//! - an instance's memory and tables are capped ([`WasmConfig::max_memory_bytes`],
//!   [`WasmConfig::max_table_elements`]);
//! - deep recursion is a stack overflow trap ([`EngineConfig::max_wasm_stack`]);
//! - every pointer and length from the module is checked against its memory
//!   (`OUT_OF_BOUNDS`), and what the host keeps is capped by the environment's
//!   [`Limits`](crate::Limits);
//! - imports and exports are checked before instantiation, with errors that name each missing,
//!   unknown or mistyped one.
//!
//! A trap, whatever its cause, rolls the call's transaction back and ends in
//! [`Outcome::Aborted`](crate::Outcome::Aborted) with a reason that says what happened (deadline exceeded, out of
//! memory, stack overflow, or the module's panic message, file and line). The trapped instance
//! is then replaced by a fresh one before the next call (see [`WasmModule`]); the data stays.
//!
//! Files, one job each: `config` (the knobs), `engine` (compilation, the epoch ticker),
//! `linker` (the imports), `memory` (bounds checks), `validate` (the ABI check of imports and
//! exports), `store` (the store's data and the resource limiter), `transport` (calls, traps,
//! re-instantiation), `error` (load errors).

mod config;
mod engine;
mod error;
mod linker;
mod memory;
mod store;
mod transport;
mod validate;

pub use config::{EngineConfig, OptLevel, WasmConfig};
pub use engine::{CompiledModule, WasmEngine};
pub use error::WasmError;

use crate::call::{self, Transport};
use crate::env::InstanceEnv;
use crate::module::LoadedModule;
use std::sync::Arc;
pub use transport::WasmTransport;
use wasmod_abi::ModuleDef;

/// A module compiled to wasm, loaded into an in-memory host.
///
/// # After a trap
///
/// A trap can stop a module anywhere (halfway through its allocator, with a `RefCell`
/// borrowed, with its shadow stack pointer moved), so the trapped instance is not trusted
/// again. The next call first makes a new instance from the pre-linked module (cheap: no
/// compilation, just a fresh store and memory), runs its `__describe_module__` as the ABI
/// requires of every new instance, and checks that it describes the same module. The
/// [`InstanceEnv`], and with it the datastore, moves to the new instance untouched; the trapped
/// call's transaction was already rolled back. If no new instance can be made, the call is
/// aborted with the reason and the next call tries again.
pub type WasmModule = LoadedModule<WasmTransport>;

impl LoadedModule<WasmTransport> {
    /// Compiles `wasm` with the process's [shared engine](WasmEngine::shared) and loads it
    /// with the default [`WasmConfig`] and no outbound HTTP.
    pub fn new(wasm: &[u8]) -> Result<Self, WasmError> {
        let module = WasmEngine::shared()?.compile(wasm)?;
        Self::load(&module, WasmConfig::default(), InstanceEnv::unloaded())
    }

    /// Instantiates `module` with the budgets of `config` over `env` (an
    /// [`InstanceEnv::unloaded`] configured with limits, an HTTP client or persistence),
    /// describes it, creates its tables, and runs its `init` reducer.
    pub fn load(
        module: &CompiledModule,
        config: WasmConfig,
        env: InstanceEnv,
    ) -> Result<Self, WasmError> {
        Ok(Self::start(WasmTransport::new(module, config, env)?)?)
    }

    /// The engine the module runs in: a newer build must be compiled by it
    /// ([`WasmModule::replace`]).
    pub fn engine(&self) -> &WasmEngine {
        self.transport.engine()
    }

    /// The budgets the module's instances get.
    pub fn wasm_config(&self) -> WasmConfig {
        self.transport.config()
    }

    /// Makes `module`, a newer build of this module compiled by the same engine, serve the
    /// tables from the next call on: what `wasmod publish` does between two calls.
    ///
    /// The new build is described in a throwaway instance (with this module's budgets) and
    /// checked as loading would; its tables take the old build's rows as an upgrade on start
    /// would ([`Database::replace`](wasmod_datastore::Database::replace): the same rules,
    /// the log moved to the new tables); then its instance takes the old one's place, with the
    /// same environment (limits, outbound HTTP, log tap, connections). Neither `init` nor any
    /// lifecycle reducer runs: the database and its connections go on.
    ///
    /// Fails with the old build still serving, unchanged, if the new one cannot be
    /// described, its tables cannot take the rows, or its log cannot be moved (see
    /// [`ReplaceError`](wasmod_datastore::ReplaceError) for the one failure that changes
    /// something: a log that failed halfway).
    pub fn replace(&mut self, module: &CompiledModule) -> Result<Replacement, ReplaceError> {
        if !self.transport.same_engine(module) {
            return Err(ReplaceError::Engine);
        }
        let described = Arc::new(
            module
                .describe(self.transport.config())
                .map_err(ReplaceError::Describe)?,
        );
        let database = self.database().clone();
        let replaced = database
            .replace(&self.module, &described)
            .map_err(ReplaceError::Tables)?;
        self.transport.env().set_module(described.clone(), database);
        self.transport.replace_module(module);
        self.module = described.clone();
        Ok(Replacement {
            module: described,
            tables: replaced,
        })
    }
}

/// A newer build serving a module's tables ([`WasmModule::replace`]).
#[derive(Clone, Debug)]
pub struct Replacement {
    /// The new build's description.
    pub module: Arc<ModuleDef>,
    /// What became of the tables: the new datastore, the offset where the new build's
    /// commits start, what changed.
    pub tables: wasmod_datastore::Replaced,
}

/// Why a newer build does not serve the module; the old one still does.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReplaceError {
    /// The new build was compiled by another engine than the one the module runs in.
    Engine,
    /// The new build cannot be instantiated or described, or its description is invalid.
    Describe(WasmError),
    /// Its tables cannot take the stored rows, or the log could not be moved.
    Tables(wasmod_datastore::ReplaceError),
}

impl std::fmt::Display for ReplaceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Engine => f.write_str(
                "the new build was compiled by another engine than the one serving the module",
            ),
            Self::Describe(error) => write!(f, "the new build cannot be loaded: {error}"),
            Self::Tables(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for ReplaceError {}

impl CompiledModule {
    /// Reads the module's description in a throwaway instance with the budgets of `config`,
    /// and checks it as loading would (entry points and tables), without creating tables or
    /// running `init`: for tools that only show a module.
    pub fn describe(&self, config: WasmConfig) -> Result<ModuleDef, WasmError> {
        let mut transport = WasmTransport::new(self, config, InstanceEnv::unloaded())?;
        Ok(call::describe_only(&mut transport)?)
    }
}
