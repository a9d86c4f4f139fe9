//! A module whose description is not an encoded `ModuleDef` at all.

#![cfg(target_arch = "wasm32")]

mod common;

no_entry_points!();

#[no_mangle]
extern "C" fn __describe_module__(sink: u32) -> i16 {
    common::write(sink, &[0xff, 0x13, 0x37, 0x00, 0xde, 0xad, 0xbe, 0xef])
}
