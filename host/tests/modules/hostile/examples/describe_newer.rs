//! A module whose description is of a format version after the host's: a valid description
//! behind a version tag one higher than the newest the host reads.

#![cfg(target_arch = "wasm32")]

mod common;

use wasmod_abi::description::FORMAT_VERSION;

no_entry_points!();

#[no_mangle]
extern "C" fn __describe_module__(sink: u32) -> i16 {
    let mut bytes = (FORMAT_VERSION + 1).to_le_bytes().to_vec();
    bytes.extend_from_slice(&wasmod_abi::encoding::to_vec(&common::description(&[])));
    common::write(sink, &bytes)
}
