//! The engine: compiled code, the epoch ticker, and the linker of the ABI's imports.
//!
//! Deadlines use wasmtime's epoch interruption rather than fuel: compiled code only checks an
//! epoch counter at loop heads and function entries, which costs far less than counting
//! fuel, and a thread owned by the engine advances the counter every
//! [`EngineConfig::epoch_tick`]. A store's deadline is a number of ticks from the moment the
//! call starts. The ticker stops when the last clone of the engine is dropped.

use super::config::{EngineConfig, WasmConfig};
use super::error::WasmError;
use super::linker::linker;
use super::store::StoreData;
use super::validate::{check_module, ImportTypes};
use crate::env::InstanceEnv;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;
use wasmtime::{Config, Engine, InstancePre, Linker, Module, Store};

/// The longest deadline, in ticks: far beyond any real deadline (centuries at any tick), and
/// far from overflowing when added to the epoch.
const MAX_TICKS: u64 = 1 << 48;

/// Compiles modules and runs their calls under deadlines. Cheap to clone: clones share the
/// compiled code cache, the linker and the ticker thread.
#[derive(Clone)]
pub struct WasmEngine {
    inner: Arc<Inner>,
}

struct Inner {
    engine: Engine,
    linker: Linker<StoreData>,
    imports: ImportTypes,
    config: EngineConfig,
    _ticker: Ticker,
}

impl WasmEngine {
    /// An engine configured by `config`, with its ticker thread started.
    pub fn new(config: EngineConfig) -> Result<Self, WasmError> {
        if config.epoch_tick.is_zero() {
            return Err(WasmError::Engine("the epoch tick must not be zero".into()));
        }
        let mut wasmtime = Config::new();
        wasmtime
            .epoch_interruption(true)
            .max_wasm_stack(config.max_wasm_stack)
            .cranelift_opt_level(config.opt_level.to_wasmtime())
            // The ABI has one 32-bit memory, `memory`.
            .wasm_multi_memory(false)
            .wasm_memory64(false);
        if config.perf_map {
            wasmtime.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine =
            Engine::new(&wasmtime).map_err(|error| WasmError::Engine(error.to_string()))?;
        let linker = linker(&engine).map_err(|error| WasmError::Engine(error.to_string()))?;
        let imports = ImportTypes::of(&linker, &mut scratch_store(&engine));
        let ticker = Ticker::start(engine.clone(), config.epoch_tick)?;
        Ok(Self {
            inner: Arc::new(Inner {
                engine,
                linker,
                imports,
                config,
                _ticker: ticker,
            }),
        })
    }

    /// The engine of the process, with the default [`EngineConfig`], made on first use.
    pub fn shared() -> Result<Self, WasmError> {
        static SHARED: OnceLock<Result<WasmEngine, String>> = OnceLock::new();
        SHARED
            .get_or_init(|| Self::new(EngineConfig::default()).map_err(|error| error.to_string()))
            .clone()
            .map_err(WasmError::Engine)
    }

    /// Compiles `wasm` and checks its imports and exports against the ABI. The result can be
    /// loaded any number of times ([`WasmModule::load`](super::WasmModule::load)).
    pub fn compile(&self, wasm: &[u8]) -> Result<CompiledModule, WasmError> {
        let module = Module::new(&self.inner.engine, wasm)
            .map_err(|error| WasmError::Compile(format!("{error:#}")))?;
        check_module(&module, &self.inner.imports).map_err(WasmError::Abi)?;
        let pre = self
            .inner
            .linker
            .instantiate_pre(&module)
            .map_err(|error| WasmError::Instantiate(format!("{error:#}")))?;
        Ok(CompiledModule {
            engine: self.clone(),
            pre,
        })
    }

    /// The configuration the engine was made with.
    pub fn config(&self) -> &EngineConfig {
        &self.inner.config
    }

    pub(crate) fn wasmtime(&self) -> &Engine {
        &self.inner.engine
    }

    /// The number of epoch ticks that covers `deadline`, plus one for the tick in progress.
    /// Capped at [`MAX_TICKS`], so that the store's deadline (the current epoch plus this)
    /// cannot overflow: a `Duration::MAX` deadline means "never".
    pub(crate) fn ticks(&self, deadline: Duration) -> u64 {
        let tick = self.inner.config.epoch_tick.as_nanos();
        u64::try_from(deadline.as_nanos().div_ceil(tick))
            .unwrap_or(MAX_TICKS)
            .saturating_add(1)
            .min(MAX_TICKS)
    }
}

impl std::fmt::Debug for WasmEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmEngine")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// A module compiled by a [`WasmEngine`] whose imports and exports match the ABI, ready to be
/// instantiated. Cheap to clone.
#[derive(Clone)]
pub struct CompiledModule {
    engine: WasmEngine,
    pre: InstancePre<StoreData>,
}

impl CompiledModule {
    /// The engine that compiled it.
    pub fn engine(&self) -> &WasmEngine {
        &self.engine
    }

    pub(crate) fn pre(&self) -> &InstancePre<StoreData> {
        &self.pre
    }
}

impl std::fmt::Debug for CompiledModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledModule")
            .field("engine", &self.engine)
            .finish_non_exhaustive()
    }
}

/// A store that only serves to read the linker's function types.
fn scratch_store(engine: &Engine) -> Store<StoreData> {
    Store::new(
        engine,
        StoreData::new(InstanceEnv::unloaded(), &WasmConfig::default()),
    )
}

/// The thread that advances an engine's epoch; it stops when this is dropped.
struct Ticker {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Ticker {
    fn start(engine: Engine, tick: Duration) -> Result<Self, WasmError> {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("wasmod-epoch".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(tick) {
                    engine.increment_epoch();
                }
            })
            .map_err(|error| {
                WasmError::Engine(format!("the epoch ticker did not start: {error}"))
            })?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            // The thread only waits and ticks; it cannot panic.
            let _ = thread.join();
        }
    }
}
