//! What the node's unit tests share: the example modules, loaded in memory.

use wasmod_host::{InstanceEnv, WasmConfig, WasmEngine, WasmModule};
use wasmod_wasm_tests::{built, Profile};

/// A fresh quickstart (the workspace's example module, built for wasm32), in memory.
pub(crate) fn quickstart() -> WasmModule {
    example("quickstart")
}

/// A fresh instance of the workspace's module crate `name`, built for wasm32, in memory.
pub(crate) fn example(name: &str) -> WasmModule {
    let wasm = built(Profile::Release).library(name);
    let compiled = WasmEngine::shared()
        .expect("the engine")
        .compile(&wasm)
        .unwrap_or_else(|error| panic!("{name} compiles: {error}"));
    WasmModule::load(&compiled, WasmConfig::default(), InstanceEnv::unloaded())
        .unwrap_or_else(|error| panic!("{name} loads: {error}"))
}
