//! Names and numbers of the ABI: the import module, the exports, the version.

/// The version of this ABI. A host refuses a module whose imports come from another version's
/// import module.
pub const ABI_VERSION: u32 = 1;

/// The wasm import module every host function is imported from.
pub const IMPORT_MODULE: &str = "wasmod_v1";

/// The export that writes the encoded [`ModuleDef`](crate::ModuleDef) to a byte sink:
/// `(sink: u32) -> i16`.
pub const DESCRIBE_MODULE: &str = "__describe_module__";

/// Reducer dispatch: `(id: u32, sender0..3: u64, conn0..1: u64, timestamp: i64, args: u32,
/// error: u32) -> i16`.
pub const CALL_REDUCER: &str = "__call_reducer__";

/// Procedure dispatch: `(id: u32, sender0..3: u64, conn0..1: u64, timestamp: i64, args: u32,
/// result: u32) -> i16`.
pub const CALL_PROCEDURE: &str = "__call_procedure__";

/// Per-caller view dispatch: `(id: u32, sender0..3: u64, conn0..1: u64, timestamp: i64,
/// args: u32, result: u32) -> i16`.
pub const CALL_VIEW: &str = "__call_view__";

/// Anonymous view dispatch: `(id: u32, timestamp: i64, args: u32, result: u32) -> i16`.
pub const CALL_VIEW_ANON: &str = "__call_view_anon__";

/// HTTP handler dispatch: `(id: u32, timestamp: i64, request: u32, response: u32) -> i16`.
pub const CALL_HTTP_HANDLER: &str = "__call_http_handler__";

/// The value a row-iterator advance or a byte-source read returns when nothing is left.
pub const EXHAUSTED: i16 = -1;

/// The byte source that holds nothing. The host passes it for an entry point's arguments when
/// there are none, so that a call without arguments creates no source and the module need not
/// read one: it knows there is nothing to read. Reading it, or asking what remains of it,
/// answers as an empty source does (nothing, exhausted), so a module that reads it anyway
/// works too.
pub const EMPTY_SOURCE: u32 = 0;
