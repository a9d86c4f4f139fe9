//! The benchmark module, loaded into a host.
//!
//! [`ModuleHost`] is what a measured call needs from a host: call a reducer by name with
//! encoded arguments. Both hosts implement it: the wasm host (the module built for
//! `wasm32-unknown-unknown` in release, run by wasmtime) and the native host (the same module
//! compiled for this machine, its imports served in-process), so every workload runs on both
//! without being written twice.

use benchmarks::Benchmarks;
use std::sync::OnceLock;
use wasmod_abi::{ConnectionId, Encode, Identity};
use wasmod_host::{
    CompiledModule, EngineConfig, InstanceEnv, NativeModule, Outcome, WasmConfig, WasmEngine,
    WasmModule,
};
use wasmod_wasm_tests::Profile;

/// A host running the benchmark module.
pub trait ModuleHost {
    /// Calls `reducer` with `args` (the encoded product of its parameters).
    fn call(&mut self, reducer: &str, args: &[u8]) -> Outcome;
}

/// Calls `reducer` with `args` (a tuple of its arguments) and panics unless it succeeds: for
/// setup.
pub fn call_ok(host: &mut dyn ModuleHost, reducer: &str, args: impl Encode) {
    call_encoded_ok(host, reducer, &wasmod_abi::encoding::to_vec(&args));
}

/// Calls `reducer` with the encoded `args` and panics unless it succeeds. The benchmarks check
/// every measured call this way, so a reducer that fails fast cannot pass for a fast one.
pub fn call_encoded_ok(host: &mut dyn ModuleHost, reducer: &str, args: &[u8]) {
    let outcome = host.call(reducer, args);
    assert!(outcome.is_success(), "{reducer}: {outcome}");
}

/// The hosts every module workload runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    /// The module built for wasm32 in release, in wasmtime: [`wasm`].
    Wasm,
    /// The same module compiled natively: [`native`].
    Native,
}

impl Host {
    /// Both hosts, in report order.
    pub const ALL: [Host; 2] = [Host::Wasm, Host::Native];

    /// The benchmark function's name: `host_wasm`, `host_native`.
    pub fn name(self) -> &'static str {
        match self {
            Host::Wasm => "host_wasm",
            Host::Native => "host_native",
        }
    }

    /// The benchmark module, freshly loaded in this host (empty tables).
    pub fn load(self) -> Box<dyn ModuleHost> {
        match self {
            Host::Wasm => Box::new(wasm()),
            Host::Native => Box::new(native()),
        }
    }
}

impl ModuleHost for NativeModule<Benchmarks> {
    fn call(&mut self, reducer: &str, args: &[u8]) -> Outcome {
        self.call_reducer(reducer, Identity::ZERO, ConnectionId::ZERO, args)
    }
}

/// The benchmark module compiled natively, in a fresh in-memory host: the host's own
/// `NativeModule`, with `wasmod-testing`'s imports installed (what its `TestModule` does) and
/// nothing of `TestModule` around the calls.
pub fn native() -> NativeModule<Benchmarks> {
    wasmod_testing::install_host();
    NativeModule::new().expect("the benchmark module loads natively")
}

impl ModuleHost for WasmModule {
    fn call(&mut self, reducer: &str, args: &[u8]) -> Outcome {
        self.call_reducer(reducer, Identity::ZERO, ConnectionId::ZERO, args)
    }
}

/// The benchmark module's release wasm binary.
pub fn wasm_bytes() -> Vec<u8> {
    wasmod_wasm_tests::built(Profile::Release).library("benchmarks")
}

/// The benchmark module compiled by an engine with the host's default settings, once per
/// process. With `WASMOD_PERF_MAP=1` in the environment the engine writes a perf map, so that
/// `perf report` names the module's functions (see benches/RESULTS.md).
pub fn compiled() -> &'static CompiledModule {
    static COMPILED: OnceLock<CompiledModule> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let mut config = EngineConfig::default();
        config.perf_map = std::env::var_os("WASMOD_PERF_MAP").is_some_and(|value| value == "1");
        let engine = WasmEngine::new(config).expect("the host's engine starts");
        engine
            .compile(&wasm_bytes())
            .expect("the benchmark module compiles")
    })
}

/// The benchmark module in wasm, in a fresh in-memory host.
pub fn wasm() -> WasmModule {
    WasmModule::load(compiled(), WasmConfig::default(), InstanceEnv::unloaded())
        .expect("the benchmark module loads in wasm")
}
