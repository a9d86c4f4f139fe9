//! What the node's unit tests share: the quickstart module, loaded in memory.

use wasmod_host::{InstanceEnv, WasmConfig, WasmEngine, WasmModule};
use wasmod_wasm_tests::{built, Profile};

/// A fresh quickstart (the workspace's example module, built for wasm32), in memory.
pub(crate) fn quickstart() -> WasmModule {
    let wasm = built(Profile::Release).library("quickstart");
    let compiled = WasmEngine::shared()
        .expect("the engine")
        .compile(&wasm)
        .expect("the quickstart compiles");
    WasmModule::load(&compiled, WasmConfig::default(), InstanceEnv::unloaded())
        .expect("the quickstart loads")
}
