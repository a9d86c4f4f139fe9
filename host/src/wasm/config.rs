//! The knobs of the wasm transport: what an engine is built with, and the budgets of each
//! module.
//!
//! Engine settings ([`EngineConfig`]) are fixed when the code is compiled: the optimisation
//! level, the most stack wasm code may use, and how often the epoch ticks. Module settings
//! ([`WasmConfig`]) are per [`WasmModule`](super::WasmModule): the deadline of one call and the
//! caps on memory and tables.

use std::time::Duration;

/// How an engine compiles and interrupts wasm code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineConfig {
    /// How much Cranelift optimises the compiled code.
    pub opt_level: OptLevel,
    /// The most native stack, in bytes, one call into wasm may use; deeper recursion traps
    /// with a stack overflow. It must leave room on the calling thread's own stack (the
    /// default, 512 KiB, fits the 2 MiB of a spawned thread), and wasmtime refuses more than
    /// 2 MiB.
    pub max_wasm_stack: usize,
    /// How often the engine's epoch advances: the resolution of every deadline. A call is
    /// interrupted no earlier than its deadline and at most about one tick after it.
    pub epoch_tick: Duration,
    /// Whether the engine writes `/tmp/perf-<pid>.map`, so that `perf report` names the
    /// module's compiled functions instead of showing bare addresses. Off by default: the map
    /// grows with every module compiled.
    pub perf_map: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            opt_level: OptLevel::Speed,
            max_wasm_stack: 512 << 10,
            epoch_tick: Duration::from_millis(10),
            perf_map: false,
        }
    }
}

/// How much Cranelift optimises.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OptLevel {
    /// No optimisation: the fastest compilation.
    None,
    /// Optimise for speed (the default).
    #[default]
    Speed,
    /// Optimise for speed and code size.
    SpeedAndSize,
}

impl OptLevel {
    pub(crate) fn to_wasmtime(self) -> wasmtime::OptLevel {
        match self {
            Self::None => wasmtime::OptLevel::None,
            Self::Speed => wasmtime::OptLevel::Speed,
            Self::SpeedAndSize => wasmtime::OptLevel::SpeedAndSize,
        }
    }
}

/// The budgets of one module: how long a call may run, and how much memory and how many
/// table elements an instance may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WasmConfig {
    /// How long one export call (a reducer, view, procedure, HTTP handler, or the module's
    /// description) may run before it is interrupted and aborted. Time spent inside the host's
    /// imports counts, but an import is not interrupted: the call ends at the next wasm
    /// instruction that checks the epoch.
    pub deadline: Duration,
    /// The most bytes of linear memory an instance may have. Growing past it fails (the
    /// module sees `memory.grow` return `-1`), and a module that then aborts is reported as
    /// out of memory.
    pub max_memory_bytes: usize,
    /// The most elements one table of an instance may have.
    pub max_table_elements: usize,
}

impl Default for WasmConfig {
    fn default() -> Self {
        Self {
            deadline: Duration::from_secs(5),
            max_memory_bytes: 256 << 20,
            max_table_elements: 100_000,
        }
    }
}
