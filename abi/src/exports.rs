//! A module's exports as Rust functions, for hosts that run module code natively.
//!
//! In wasm, a module's dispatch exports are `extern "C"` functions the host looks up by name
//! (see [`names`](crate::names)). Compiled natively (for `cargo test` of module code), the same
//! functions are reached through this trait, which the module-level macro implements for the
//! module's marker type. The arguments and return values are exactly those of the wasm exports:
//! handles of byte sources and sinks, identities as words, and an `i16` error code.

/// The exports of one module. Every function is the body of the export of the same name.
pub trait ModuleExports {
    /// `__describe_module__`: writes the encoded [`ModuleDef`](crate::ModuleDef) to `sink`.
    fn describe_module(sink: u32) -> i16;

    /// `__call_reducer__`.
    fn call_reducer(
        id: u32,
        sender: [u64; 4],
        connection_id: [u64; 2],
        timestamp: i64,
        args: u32,
        error: u32,
    ) -> i16;

    /// `__call_procedure__`.
    fn call_procedure(
        id: u32,
        sender: [u64; 4],
        connection_id: [u64; 2],
        timestamp: i64,
        args: u32,
        result: u32,
    ) -> i16;

    /// `__call_view__`.
    fn call_view(
        id: u32,
        sender: [u64; 4],
        connection_id: [u64; 2],
        timestamp: i64,
        args: u32,
        result: u32,
    ) -> i16;

    /// `__call_view_anon__`.
    fn call_view_anon(id: u32, timestamp: i64, args: u32, result: u32) -> i16;

    /// `__call_http_handler__`.
    fn call_http_handler(id: u32, timestamp: i64, request: u32, response: u32) -> i16;
}
