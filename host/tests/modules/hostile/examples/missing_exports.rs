//! A module without `__call_view__` and `__call_http_handler__`, whose `__call_reducer__` has
//! the wrong signature.

#![cfg(target_arch = "wasm32")]

mod common;

#[no_mangle]
extern "C" fn __describe_module__(sink: u32) -> i16 {
    common::write(
        sink,
        &wasmod_abi::description::encode(&common::description(&[])),
    )
}

#[no_mangle]
extern "C" fn __call_reducer__(id: u32) -> i16 {
    id as i16
}

#[no_mangle]
extern "C" fn __call_procedure__(
    _: u32,
    _: u64,
    _: u64,
    _: u64,
    _: u64,
    _: u64,
    _: u64,
    _: i64,
    _: u32,
    _: u32,
) -> i16 {
    common::NO_SUCH_ENTRY
}

#[no_mangle]
extern "C" fn __call_view_anon__(_: u32, _: i64, _: u32, _: u32) -> i16 {
    common::NO_SUCH_ENTRY
}
