//! The wasmtime [`Transport`]: calls a module's exports as typed functions, under the
//! deadline, and turns traps into [`Trap`]s that say what happened.
//!
//! # After a trap
//!
//! A trap can stop a module anywhere: halfway through an allocator, with a lock held, with
//! its shadow stack pointer moved. Its memory is not to be trusted any more, so the instance
//! is thrown away. The next call first makes a new instance from the pre-linked module (cheap:
//! no compilation, a fresh store and memory), calls its `__describe_module__` as the ABI
//! requires of every new instance, and checks that it describes the same module. The
//! [`InstanceEnv`], and with it the datastore, moves over to the new store untouched: the
//! trapped call's transaction was already rolled back by the orchestrator, so the data is as it
//! was before that call. Instantiating lazily (at the next call rather than right after the
//! trap) keeps the trapped call's logs readable until then.

use super::config::WasmConfig;
use super::engine::{CompiledModule, WasmEngine};
use super::error::WasmError;
use super::store::StoreData;
use super::validate::MEMORY;
use crate::call::{self, AnonymousExport, CallerExport, ExportCall, Transport, Trap};
use crate::env::{InstanceEnv, LogLevel};
use std::time::Instant;
use wasmod_abi::names::DESCRIBE_MODULE;
use wasmtime::{InstancePre, Store, TypedFunc, WasmParams};

/// The parameters of `__call_reducer__`, `__call_procedure__` and `__call_view__`.
type CallerParams = (u32, u64, u64, u64, u64, u64, u64, i64, u32, u32);
/// The parameters of `__call_view_anon__` and `__call_http_handler__`.
type AnonymousParams = (u32, i64, u32, u32);

/// The dispatch exports of one instance.
struct Exports {
    describe: TypedFunc<u32, i32>,
    /// The exports of [`CallerExport::ALL`], in its order.
    with_caller: Vec<TypedFunc<CallerParams, i32>>,
    /// The exports of [`AnonymousExport::ALL`], in its order.
    anonymous: Vec<TypedFunc<AnonymousParams, i32>>,
}

/// A module instance in a wasmtime store, replaced after a trap (see the module docs).
pub struct WasmTransport {
    engine: WasmEngine,
    pre: InstancePre<StoreData>,
    config: WasmConfig,
    /// The deadline, in epoch ticks.
    ticks: u64,
    store: Store<StoreData>,
    /// `None` when the instance could not be (re)made: every call fails until one is.
    exports: Option<Exports>,
    /// The last call trapped: the next one needs a new instance.
    trapped: bool,
}

impl WasmTransport {
    /// Instantiates `module` in a new store holding `env`.
    pub(crate) fn new(
        module: &CompiledModule,
        config: WasmConfig,
        env: InstanceEnv,
    ) -> Result<Self, WasmError> {
        let engine = module.engine().clone();
        let ticks = engine.ticks(config.deadline);
        let mut transport = Self {
            store: new_store(&engine, env, &config),
            engine,
            pre: module.pre().clone(),
            config,
            ticks,
            exports: None,
            trapped: false,
        };
        transport.exports = Some(transport.instantiate().map_err(WasmError::Instantiate)?);
        Ok(transport)
    }

    /// The instance's environment, between calls.
    /// Whether `module` was compiled by this transport's engine, so that it can take the
    /// place of the current one ([`WasmTransport::replace_module`]).
    pub(crate) fn same_engine(&self, module: &CompiledModule) -> bool {
        wasmtime::Engine::same(self.engine.wasmtime(), module.engine().wasmtime())
    }

    /// The engine the instances run in.
    pub(crate) fn engine(&self) -> &WasmEngine {
        &self.engine
    }

    /// The budgets instances get.
    pub(crate) fn config(&self) -> WasmConfig {
        self.config
    }

    /// Makes the next call run in an instance of `module` (a newer build, compiled by the same
    /// engine), made as after a trap: the environment moves over, and the new instance must
    /// describe itself as the environment's module, which the caller has set to the new
    /// build's description.
    pub(crate) fn replace_module(&mut self, module: &CompiledModule) {
        self.pre = module.pre().clone();
        self.trapped = true;
    }

    /// Makes sure the instance is usable: after a trap, replaces it with a new one that
    /// described itself as the same module. `Err` says why no instance could be made; the next
    /// call tries again.
    fn recover(&mut self) -> Result<(), Trap> {
        if !self.trapped {
            return Ok(());
        }
        let env = std::mem::replace(&mut self.store.data_mut().env, InstanceEnv::unloaded());
        self.store = new_store(&self.engine, env, &self.config);
        self.exports = None;
        let fresh = |message: String| Trap {
            message: format!(
                "the module could not be instantiated again after its last call trapped: {message}"
            ),
        };
        self.exports = Some(self.instantiate().map_err(fresh)?);
        self.trapped = false;
        let described = call::describe(self).map_err(|error| fresh(error.to_string()))?;
        if described != **self.env().module() {
            self.trapped = true;
            return Err(fresh(
                "the new instance describes a different module than the first one did".into(),
            ));
        }
        Ok(())
    }

    /// Instantiates the module in the current store (running its start function, if any,
    /// under the deadline) and looks up its exports.
    fn instantiate(&mut self) -> Result<Exports, String> {
        let store = &mut self.store;
        store.set_epoch_deadline(self.ticks);
        let instance = match self.pre.instantiate(&mut *store) {
            Ok(instance) => instance,
            Err(error) => {
                return Err(match store.data_mut().limiter.take_refusal() {
                    Some(refusal) => format!(
                        "its memory of {} bytes is over the cap of {} bytes",
                        refusal.desired, refusal.cap
                    ),
                    None => describe_error(&error, None),
                })
            }
        };
        let memory = instance
            .get_memory(&mut *store, MEMORY)
            .ok_or_else(|| format!("the module exports no memory `{MEMORY}`"))?;
        store.data_mut().memory = Some(memory);
        fn typed<P: WasmParams>(
            instance: &wasmtime::Instance,
            store: &mut Store<StoreData>,
            name: &str,
        ) -> Result<TypedFunc<P, i32>, String> {
            let func = instance
                .get_func(&mut *store, name)
                .ok_or_else(|| format!("the module exports no function `{name}`"))?;
            func.typed(&*store).map_err(|error| format!("{error:#}"))
        }
        let with_caller = CallerExport::ALL
            .iter()
            .map(|export| typed(&instance, store, export.kind().export()))
            .collect::<Result<_, _>>()?;
        let anonymous = AnonymousExport::ALL
            .iter()
            .map(|export| typed(&instance, store, export.kind().export()))
            .collect::<Result<_, _>>()?;
        Ok(Exports {
            describe: typed(&instance, store, DESCRIBE_MODULE)?,
            with_caller,
            anonymous,
        })
    }

    /// Why the call that failed with `error` trapped, in words.
    fn trap_reason(&mut self, error: &wasmtime::Error) -> String {
        let refusal = self.store.data_mut().limiter.take_refusal();
        let trap = error.downcast_ref::<wasmtime::Trap>();
        let panic = self
            .store
            .data()
            .env
            .logs()
            .filter(|record| record.level == LogLevel::Panic)
            .last()
            .map(|record| match &*record.file {
                "" => format!("the module panicked: {}", record.message),
                file => format!(
                    "the module panicked at {file}:{}: {}",
                    record.line, record.message
                ),
            });
        match trap {
            Some(wasmtime::Trap::Interrupt) => format!(
                "deadline exceeded: the call ran for more than {:?}",
                self.config.deadline
            ),
            Some(wasmtime::Trap::StackOverflow) => format!(
                "stack overflow: the call used more than the {} bytes of stack wasm code may use",
                self.engine.config().max_wasm_stack
            ),
            _ => match (refusal, panic) {
                (Some(refusal), panic) => format!(
                    "out of memory: the module asked for {} bytes of memory, over the cap of {} bytes, and then: {}",
                    refusal.desired,
                    refusal.cap,
                    panic.unwrap_or_else(|| describe_error(error, trap))
                ),
                (None, Some(panic)) => panic,
                (None, None) => describe_error(error, trap),
            },
        }
    }
}

impl Transport for WasmTransport {
    fn env(&mut self) -> &mut InstanceEnv {
        &mut self.store.data_mut().env
    }

    fn distrust(&mut self) {
        self.trapped = true;
    }

    fn env_ref(&self) -> &InstanceEnv {
        &self.store.data().env
    }

    fn prepare(&mut self) -> Result<(), Trap> {
        self.recover()
    }

    fn call_export(&mut self, call: ExportCall) -> Result<i16, Trap> {
        let Some(exports) = &self.exports else {
            return Err(Trap {
                message: "the module has no working instance".into(),
            });
        };
        let store = &mut self.store;
        store.set_epoch_deadline(self.ticks);
        let deadline = Instant::now().checked_add(self.config.deadline);
        store.data_mut().env.set_deadline(deadline);
        store.data_mut().limiter.take_refusal();
        let result = match call {
            ExportCall::Describe { sink } => exports.describe.call(&mut *store, sink),
            ExportCall::WithCaller {
                export,
                id,
                sender: [s0, s1, s2, s3],
                connection_id: [c0, c1],
                timestamp,
                input,
                output,
            } => {
                let params = (id, s0, s1, s2, s3, c0, c1, timestamp, input, output);
                exports.with_caller[export as usize].call(&mut *store, params)
            }
            ExportCall::Anonymous {
                export,
                id,
                timestamp,
                input,
                output,
            } => {
                let params = (id, timestamp, input, output);
                exports.anonymous[export as usize].call(&mut *store, params)
            }
        };
        let failure = match result {
            Ok(code) => match i16::try_from(code) {
                Ok(code) => return Ok(code),
                Err(_) => format!(
                    "the export returned {code}, which is not an error code (codes are i16)"
                ),
            },
            Err(error) => self.trap_reason(&error),
        };
        self.trapped = true;
        Err(Trap { message: failure })
    }
}

/// A new store for one instance, holding `env`, with the limits of `config`.
fn new_store(engine: &WasmEngine, env: InstanceEnv, config: &WasmConfig) -> Store<StoreData> {
    let mut store = Store::new(engine.wasmtime(), StoreData::new(env, config));
    store.limiter(|data| &mut data.limiter);
    store.epoch_deadline_trap();
    store
}

/// An error from wasmtime in words: the trap's own description, else the whole chain.
fn describe_error(error: &wasmtime::Error, trap: Option<&wasmtime::Trap>) -> String {
    match trap {
        Some(wasmtime::Trap::UnreachableCodeReached) => {
            "the module aborted (wasm `unreachable` executed) without logging a panic".into()
        }
        Some(trap) => format!("the module trapped: {trap}"),
        None => format!("{error:#}"),
    }
}
