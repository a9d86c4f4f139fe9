//! A module whose description is of the current format version, but then not an encoded
//! `ModuleDef` at all.

#![cfg(target_arch = "wasm32")]

mod common;

no_entry_points!();

#[no_mangle]
extern "C" fn __describe_module__(sink: u32) -> i16 {
    let mut bytes = wasmod_abi::description::FORMAT_VERSION
        .to_le_bytes()
        .to_vec();
    bytes.extend_from_slice(&[0xff, 0x13, 0x37, 0x00, 0xde, 0xad, 0xbe, 0xef]);
    common::write(sink, &bytes)
}
