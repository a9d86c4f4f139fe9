//! The benchmark module, loaded into a host.
//!
//! [`ModuleHost`] is what a measured call needs from a host: call a reducer by name with
//! encoded arguments. The native host (the module compiled for this machine, its imports served
//! in-process) implements it here; the wasm host implements it when it is available, so every
//! workload runs on both without being written twice.

use benchmarks::Benchmarks;
use wasmod_abi::{ConnectionId, Encode, Identity};
use wasmod_host::{NativeModule, Outcome};

/// A host running the benchmark module.
pub trait ModuleHost {
    /// Calls `reducer` with `args` (the encoded product of its parameters).
    fn call(&mut self, reducer: &str, args: &[u8]) -> Outcome;

    /// Calls `reducer` with `args` and panics unless it succeeds: for setup.
    fn call_ok(&mut self, reducer: &str, args: impl Encode) {
        let outcome = self.call(reducer, &wasmod_abi::encoding::to_vec(&args));
        assert!(outcome.is_success(), "{reducer}: {outcome}");
    }
}

impl ModuleHost for NativeModule<Benchmarks> {
    fn call(&mut self, reducer: &str, args: &[u8]) -> Outcome {
        self.call_reducer(reducer, Identity::ZERO, ConnectionId::ZERO, args)
    }
}

/// The benchmark module compiled natively, in a fresh in-memory host.
pub fn native() -> NativeModule<Benchmarks> {
    NativeModule::new().expect("the benchmark module loads natively")
}
