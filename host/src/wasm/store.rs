//! What a wasmtime `Store` holds for one instance: the [`InstanceEnv`], the instance's memory,
//! and the limiter that caps its memory and tables.
//!
//! The limiter refuses growth past the caps rather than trapping: `memory.grow` then returns
//! `-1`, as the wasm specification allows, so a module that handles allocation failure keeps
//! running. Most modules do not (a Rust module aborts), and the abort is an opaque
//! `unreachable` trap; the limiter remembers the refusal so that the trap can be reported as
//! what it is: the module ran out of memory.

use super::config::WasmConfig;
use crate::env::InstanceEnv;
use wasmtime::{Memory, ResourceLimiter};

/// The data of one instance's store.
pub(crate) struct StoreData {
    /// The host-side state the imports act on.
    pub(crate) env: InstanceEnv,
    /// The module's exported `memory`, once the instance exists.
    pub(crate) memory: Option<Memory>,
    /// The caps on memory and tables.
    pub(crate) limiter: Limiter,
}

impl StoreData {
    pub(crate) fn new(env: InstanceEnv, config: &WasmConfig) -> Self {
        Self {
            env,
            memory: None,
            limiter: Limiter {
                max_memory_bytes: config.max_memory_bytes,
                max_table_elements: config.max_table_elements,
                refused: None,
            },
        }
    }
}

/// A memory growth the limiter refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// The size the module asked for, in bytes.
    pub(crate) desired: usize,
    /// The cap, in bytes.
    pub(crate) cap: usize,
}

/// Caps one instance's memory and tables (see the module documentation).
pub(crate) struct Limiter {
    max_memory_bytes: usize,
    max_table_elements: usize,
    /// The last memory growth refused since [`Limiter::take_refusal`].
    refused: Option<Refusal>,
}

impl Limiter {
    /// The memory growth refused since the last call, if any; forgets it.
    pub(crate) fn take_refusal(&mut self) -> Option<Refusal> {
        self.refused.take()
    }
}

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.max_memory_bytes {
            self.refused = Some(Refusal {
                desired,
                cap: self.max_memory_bytes,
            });
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= self.max_table_elements)
    }

    /// One instance per store: a store is made for one instance and replaced with it.
    fn instances(&self) -> usize {
        1
    }

    /// The ABI's one memory, `memory`.
    fn memories(&self) -> usize {
        1
    }

    /// Rust modules have one table (of functions); a few more cost nothing.
    fn tables(&self) -> usize {
        4
    }
}
