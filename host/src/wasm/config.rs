//! The knobs of the wasm transport: what an engine is built with, and the budgets of each
//! module.
//!
//! Engine settings ([`EngineConfig`]) are fixed when the code is compiled: the optimisation
//! level, the most stack wasm code may use, and how often the epoch ticks. Module settings
//! ([`WasmConfig`]) are per [`WasmModule`](super::WasmModule): the deadline of one call and the
//! caps on memory and tables.

use std::time::Duration;

/// How an engine compiles and interrupts wasm code.
///
/// Start from [`EngineConfig::default`] and set the fields that differ: more may be added, so
/// the struct cannot be written out whole outside this crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct EngineConfig {
    /// How much Cranelift optimises the compiled code. Default: [`OptLevel::Speed`].
    pub opt_level: OptLevel,
    /// The most native stack, in bytes, one call into wasm may use; deeper recursion traps
    /// with a stack overflow. It must leave room on the calling thread's own stack (the
    /// default fits the 2 MiB of a spawned thread), and wasmtime refuses more than 2 MiB.
    /// Default: 512 KiB.
    pub max_wasm_stack: usize,
    /// How often the engine's epoch advances: the resolution of every deadline. A call is
    /// interrupted no earlier than its deadline and at most about one tick after it. Default:
    /// 10 ms.
    pub epoch_tick: Duration,
    /// Whether the engine writes `/tmp/perf-<pid>.map`, so that `perf report` names the
    /// module's compiled functions instead of showing bare addresses. Default: off (the map
    /// grows with every module compiled).
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
#[non_exhaustive]
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
///
/// Start from [`WasmConfig::default`] and set what differs with the `with_*` methods (or the
/// fields): more may be added, so the struct cannot be written out whole outside this crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WasmConfig {
    /// How long one export call (a reducer, view, procedure, HTTP handler, or the module's
    /// description) may run before it is interrupted and aborted. Time spent inside the host's
    /// imports counts, but an import is not interrupted: the call ends at the next wasm
    /// instruction that checks the epoch. The one import that waits on the outside world,
    /// outbound HTTP, gets no more time than the call has left. Default: 5 s.
    pub deadline: Duration,
    /// The most bytes of linear memory an instance may have. Growing past it fails (the
    /// module sees `memory.grow` return `-1`), and a module that then aborts is reported as
    /// out of memory. Default: 256 MiB.
    pub max_memory_bytes: usize,
    /// The most elements one table of an instance may have. Default: 100,000.
    pub max_table_elements: usize,
}

impl WasmConfig {
    /// This configuration with [`deadline`](Self::deadline) `deadline`.
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// This configuration with [`max_memory_bytes`](Self::max_memory_bytes) `bytes`.
    pub fn with_max_memory_bytes(mut self, bytes: usize) -> Self {
        self.max_memory_bytes = bytes;
        self
    }

    /// This configuration with [`max_table_elements`](Self::max_table_elements) `elements`.
    pub fn with_max_table_elements(mut self, elements: usize) -> Self {
        self.max_table_elements = elements;
        self
    }
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
