//! A module that imports a function the host does not have, imports from a module other than
//! `wasmod_v1`, and imports `insert` with the wrong signature.

#![cfg(target_arch = "wasm32")]

mod common;

#[link(wasm_import_module = "wasmod_v1")]
extern "C" {
    fn no_such_function(x: u32) -> u32;
    #[link_name = "insert"]
    fn insert_with_one_argument(table: u32) -> u32;
}

#[link(wasm_import_module = "env")]
extern "C" {
    fn host_time() -> u64;
}

no_entry_points!();

#[no_mangle]
extern "C" fn __describe_module__(sink: u32) -> i16 {
    // SAFETY: never called: the host refuses the module before instantiating it.
    let used = unsafe { no_such_function(1) + insert_with_one_argument(0) + host_time() as u32 };
    common::write(sink, &used.to_le_bytes())
}
