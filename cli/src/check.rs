//! The checks a compiled module goes through before it is described, called or served.
//!
//! - [`compile`]: the host compiles it and checks its imports and exports against the ABI;
//! - [`load`]: the host instantiates it, reads its description and runs its `init`;
//! - [`compile_and_describe`]: the host reads and checks its description only;
//! - [`inspect`]: the dispatch exports reach every entry point without indirect calls.
//!
//! Each failure is the module's ([`Failure::module`], exit status 1) with the host's or the
//! inspection's explanation.

use crate::failure::{Failure, Result};
use wasmod_abi::ModuleDef;
use wasmod_host::{CompiledModule, InstanceEnv, WasmConfig, WasmEngine, WasmModule};
use wasmod_inspect::Report;

/// Compiles `wasm` with the process's engine and checks it against the ABI.
pub fn compile(wasm: &[u8]) -> Result<CompiledModule> {
    let engine = WasmEngine::shared().map_err(Failure::usage)?;
    engine.compile(wasm).map_err(Failure::module)
}

/// Loads `module` into a fresh in-memory host (its `init` runs) with `config` over `env`.
pub fn load(module: &CompiledModule, config: WasmConfig, env: InstanceEnv) -> Result<WasmModule> {
    WasmModule::load(module, config, env).map_err(Failure::module)
}

/// Compiles `wasm` and reads its checked description, without loading it (no tables, no
/// `init`).
pub fn compile_and_describe(wasm: &[u8]) -> Result<ModuleDef> {
    compile(wasm)?
        .describe(WasmConfig::default())
        .map_err(Failure::module)
}

/// Inspects the dispatch of `wasm`.
pub fn inspect(wasm: &[u8]) -> Result<Report> {
    wasmod_inspect::inspect(wasm)
        .map_err(|error| Failure::module(format!("the module cannot be inspected: {error}")))
}
