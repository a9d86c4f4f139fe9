//! Where an in-process host plugs in, when module code is compiled natively.
//!
//! Compiled for wasm32, module code reaches its host through the imports of `docs/abi.md`.
//! Compiled natively (for `cargo test`), it calls the same functions ([`crate::sys`]), and
//! they call the [`Imports`] installed here: the host's own implementation of the imports,
//! running in the same process.
//!
//! This crate does not depend on the host, so that a module's build never compiles one: the
//! host is the test-support crate's business. `wasmod-testing`'s `TestModule` installs the
//! real host's imports (`wasmod_host::with_env`) before it loads a module, and nothing else
//! is needed from module authors. Module code called natively with nothing installed (a
//! reducer called as a plain function, say) panics, naming `TestModule`.
//!
//! A trait object, installed once per process in a `static`, rather than a generic parameter
//! or a link-time symbol: module code and the runtime are compiled before, and without
//! knowing, the host that will serve them; a missing host is then a clear panic at the first
//! import rather than a link error; and one indirect call per import costs nothing next to
//! what the host does for it. On wasm32 none of this exists: the dispatch path keeps its
//! direct calls.
//!
//! Not for module authors: this is the seam between the runtime and a host that runs module
//! code in-process.

use std::sync::OnceLock;
use wasmod_abi::imports::{Advance, LogLevel};
use wasmod_abi::{Errno, Timestamp};

/// The host's imports, as an in-process host serves them to module code compiled natively.
///
/// One method per import of `docs/abi.md`, with the ABI's meaning, over native slices instead
/// of pointers into wasm memory. Each is called while module code runs inside one of the
/// host's calls (a reducer, a procedure, a view, an HTTP handler, or a test's read or write),
/// on that call's thread.
pub trait Imports: Sync {
    /// Bytes left in a byte source.
    fn bytes_source_remaining(&self, source: u32) -> Result<u32, Errno>;

    /// Reads up to `buf.len()` bytes of a byte source into the front of `buf`; returns the
    /// count and whether the source is now empty.
    fn bytes_source_read(&self, source: u32, buf: &mut [u8]) -> Result<(usize, bool), Errno>;

    /// Appends `bytes` to a byte sink.
    fn bytes_sink_write(&self, sink: u32, bytes: &[u8]) -> Result<(), Errno>;

    /// A byte source holding the claims of the call's caller, or the empty source if it has
    /// none.
    fn caller_claims(&self) -> Result<u32, Errno>;

    /// Rows in a table.
    fn table_row_count(&self, table: u32) -> Result<u64, Errno>;

    /// An iterator over every row of a table.
    fn table_scan(&self, table: u32) -> Result<u32, Errno>;

    /// An iterator over the rows an encoded index scan selects.
    fn index_scan(&self, table: u32, index: u32, scan: &[u8]) -> Result<u32, Errno>;

    /// Fills `buf` with as many whole rows as fit.
    fn row_iter_advance(&self, iter: u32, buf: &mut [u8]) -> Result<Advance, Errno>;

    /// Drops a row iterator before it is exhausted.
    fn row_iter_close(&self, iter: u32) -> Result<(), Errno>;

    /// Inserts an encoded row; generated auto-increment values are written back into `row`.
    fn insert(&self, table: u32, row: &mut [u8]) -> Result<(), Errno>;

    /// Replaces the row with the same key in a unique index.
    fn update_by_unique(&self, table: u32, index: u32, row: &[u8]) -> Result<(), Errno>;

    /// Deletes the rows an encoded index scan selects; returns how many.
    fn delete_by_index_scan(&self, table: u32, index: u32, scan: &[u8]) -> Result<u32, Errno>;

    /// Deletes the rows equal to the given concatenated encoded rows; returns how many.
    fn delete_rows(&self, table: u32, rows: &[u8]) -> Result<u32, Errno>;

    /// Deletes every row of a table; returns how many.
    fn clear_table(&self, table: u32) -> Result<u64, Errno>;

    /// Logs one line.
    fn console_log(&self, level: LogLevel, target: &str, file: &str, line: u32, message: &str);

    /// Opens a transaction from a procedure; returns its timestamp.
    fn procedure_start_tx(&self) -> Result<Timestamp, Errno>;

    /// Opens a read-only transaction from a procedure; returns its timestamp.
    fn procedure_start_read_tx(&self) -> Result<Timestamp, Errno>;

    /// Commits a procedure's transaction.
    fn procedure_commit_tx(&self) -> Result<(), Errno>;

    /// Rolls a procedure's transaction back.
    fn procedure_abort_tx(&self) -> Result<(), Errno>;

    /// Sends an encoded HTTP request; returns a byte source holding the encoded response.
    fn procedure_http_request(&self, request: &[u8]) -> Result<u32, Errno>;
}

/// The imports installed in this process, if any.
static INSTALLED: OnceLock<&'static dyn Imports> = OnceLock::new();

/// Installs `imports` as the host of every module call natively compiled code makes in this
/// process.
///
/// The first installation stays for the life of the process, and later ones change nothing: a
/// process has one in-process host, which tells its calls apart itself (the real host keeps the
/// environment of the call running on each thread). So installing again is harmless, and
/// `wasmod-testing` does it before every module it loads.
pub fn install(imports: &'static dyn Imports) {
    INSTALLED.get_or_init(|| imports);
}

/// The installed imports.
///
/// # Panics
///
/// If none are installed: module code was called natively outside a host.
pub(crate) fn imports() -> &'static dyn Imports {
    match INSTALLED.get() {
        Some(imports) => *imports,
        None => panic!(
            "wasmod module code was called natively with no host to serve its imports: run it \
             through `wasmod_testing::TestModule` (the `wasmod-testing` crate, as a \
             dev-dependency)"
        ),
    }
}
