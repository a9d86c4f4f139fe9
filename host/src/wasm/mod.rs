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
//! [`Outcome::Aborted`] with a reason that says what happened (deadline exceeded, out of
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

use crate::call::{self, Caller, LoadError, Outcome, Transport};
use crate::env::{InstanceEnv, LogRecord};
use std::sync::Arc;
use transport::WasmTransport;
use wasmod_abi::http::Request;
use wasmod_abi::{ConnectionId, Identity, ModuleDef};
use wasmod_datastore::{Datastore, Tables};

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
pub struct WasmModule {
    transport: WasmTransport,
    module: Arc<ModuleDef>,
}

impl WasmModule {
    /// Compiles `wasm` with the process's [shared engine](WasmEngine::shared) and loads it
    /// with the default [`WasmConfig`] and no outbound HTTP.
    pub fn new(wasm: &[u8]) -> Result<Self, WasmError> {
        let module = WasmEngine::shared()?.compile(wasm)?;
        Self::load(&module, WasmConfig::default(), InstanceEnv::unloaded())
    }

    /// Instantiates `module` with the budgets of `config` over `env` (an
    /// [`InstanceEnv::unloaded`] configured with limits or an HTTP client), describes it,
    /// creates its tables, and runs its `init` reducer.
    pub fn load(
        module: &CompiledModule,
        config: WasmConfig,
        env: InstanceEnv,
    ) -> Result<Self, WasmError> {
        let mut transport = WasmTransport::new(module, config, env)?;
        let module = call::load(&mut transport)?;
        match call::init(&mut transport) {
            Some(outcome) if !outcome.is_success() => Err(LoadError::Init(outcome).into()),
            _ => Ok(Self { transport, module }),
        }
    }

    /// Calls reducer `name` as `sender` over `connection`; `args` is the encoded product of
    /// its parameters.
    pub fn call_reducer(
        &mut self,
        name: &str,
        sender: Identity,
        connection: ConnectionId,
        args: &[u8],
    ) -> Outcome {
        self.with_instance(|transport| {
            call::call_reducer(transport, name, Caller::new(sender, connection), args)
        })
    }

    /// Calls view `name` (per-caller or anonymous) as `sender`.
    pub fn call_view(&mut self, name: &str, sender: Identity, args: &[u8]) -> Outcome {
        self.with_instance(|transport| {
            call::call_view(
                transport,
                name,
                Caller::new(sender, ConnectionId::ZERO),
                args,
            )
        })
    }

    /// Calls procedure `name` as `sender` over `connection`.
    pub fn call_procedure(
        &mut self,
        name: &str,
        sender: Identity,
        connection: ConnectionId,
        args: &[u8],
    ) -> Outcome {
        self.with_instance(|transport| {
            call::call_procedure(transport, name, Caller::new(sender, connection), args)
        })
    }

    /// Sends `request` to the HTTP handler of its method and path.
    pub fn call_http(&mut self, request: &Request) -> Outcome {
        self.with_instance(|transport| call::call_http(transport, request))
    }

    /// Runs the `ClientConnected` lifecycle reducer, if the module has one.
    pub fn client_connected(
        &mut self,
        sender: Identity,
        connection: ConnectionId,
    ) -> Option<Outcome> {
        self.with_instance(|transport| {
            call::client_connected(transport, Caller::new(sender, connection))
        })
    }

    /// Runs the `ClientDisconnected` lifecycle reducer, if the module has one.
    pub fn client_disconnected(
        &mut self,
        sender: Identity,
        connection: ConnectionId,
    ) -> Option<Outcome> {
        self.with_instance(|transport| {
            call::client_disconnected(transport, Caller::new(sender, connection))
        })
    }

    /// The module's description.
    pub fn module(&self) -> &ModuleDef {
        &self.module
    }

    /// The module's tables.
    pub fn datastore(&self) -> &Arc<Datastore> {
        self.transport.env_ref().datastore()
    }

    /// Runs `f` on the committed state of the tables.
    pub fn read<R>(&self, f: impl FnOnce(&Tables) -> R) -> R {
        f(&self.transport.env_ref().datastore().begin_read())
    }

    /// The lines the last call logged, oldest first.
    pub fn logs(&self) -> Vec<LogRecord> {
        self.transport.env_ref().logs().cloned().collect()
    }

    /// The instance's environment, between calls.
    pub fn env_mut(&mut self) -> &mut InstanceEnv {
        self.transport.env()
    }

    /// Runs `call` on a usable instance: after a trap, a new one is made first; if none can
    /// be, the call is aborted with the reason.
    fn with_instance<R: From<Outcome>>(&mut self, call: impl FnOnce(&mut WasmTransport) -> R) -> R {
        match self.transport.recover() {
            Ok(()) => call(&mut self.transport),
            Err(trap) => Outcome::Aborted {
                reason: trap.message,
            }
            .into(),
        }
    }
}

impl std::fmt::Debug for WasmModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmModule")
            .field("env", self.transport.env_ref())
            .finish_non_exhaustive()
    }
}
