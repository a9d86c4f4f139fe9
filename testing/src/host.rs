//! The real host's imports, installed into `wasmod` for module code compiled natively.
//!
//! Compiled natively, `wasmod` calls its imports through the [`Imports`] trait it defines, on
//! the one implementation installed for the process. The host serves each import on the
//! environment of the export call running on the thread, which [`with_env`] finds. So the
//! implementation is a unit struct of this crate that forwards each import to `with_env`: the
//! host cannot implement `wasmod`'s trait (it does not depend on `wasmod`, which stands beside
//! it), and neither can this crate for a host type (the orphan rule).

use wasmod::abi::imports::{Advance, LogLevel};
use wasmod::native::Imports;
use wasmod::{Errno, Timestamp};
use wasmod_host::with_env;

/// The host's imports: each call runs on the [`InstanceEnv`](wasmod_host::InstanceEnv) of the
/// export call in progress on this thread.
struct Host;

/// The one [`Host`], as `wasmod` keeps it for the process.
static HOST: Host = Host;

/// Installs the real host's imports into `wasmod`, for this process.
///
/// [`TestModule`](crate::TestModule) does it before loading a module, so tests need not: call
/// it only to drive the host's [`NativeModule`](wasmod_host::NativeModule) yourself (the
/// benchmarks do, to measure the native floor with nothing of `TestModule`'s around the call).
/// Installing again changes nothing.
///
/// ```
/// wasmod_testing::install_host();
/// wasmod_testing::install_host();
/// ```
pub fn install_host() {
    wasmod::native::install(&HOST);
}

impl Imports for Host {
    fn bytes_source_remaining(&self, source: u32) -> Result<u32, Errno> {
        with_env(|env| env.bytes_source_remaining(source))
    }

    fn bytes_source_read(&self, source: u32, buf: &mut [u8]) -> Result<(usize, bool), Errno> {
        with_env(|env| env.bytes_source_read(source, buf))
    }

    fn bytes_sink_write(&self, sink: u32, bytes: &[u8]) -> Result<(), Errno> {
        with_env(|env| env.bytes_sink_write(sink, bytes))
    }

    fn caller_claims(&self) -> Result<u32, Errno> {
        with_env(|env| env.caller_claims())
    }

    fn table_row_count(&self, table: u32) -> Result<u64, Errno> {
        with_env(|env| env.table_row_count(table))
    }

    fn table_scan(&self, table: u32) -> Result<u32, Errno> {
        with_env(|env| env.table_scan(table))
    }

    fn index_scan(&self, table: u32, index: u32, scan: &[u8]) -> Result<u32, Errno> {
        with_env(|env| env.index_scan(table, index, scan))
    }

    fn row_iter_advance(&self, iter: u32, buf: &mut [u8]) -> Result<Advance, Errno> {
        with_env(|env| env.row_iter_advance(iter, buf))
    }

    fn row_iter_close(&self, iter: u32) -> Result<(), Errno> {
        with_env(|env| env.row_iter_close(iter))
    }

    fn insert(&self, table: u32, row: &mut [u8]) -> Result<(), Errno> {
        with_env(|env| env.insert(table, row))
    }

    fn update_by_unique(&self, table: u32, index: u32, row: &[u8]) -> Result<(), Errno> {
        with_env(|env| env.update_by_unique(table, index, row))
    }

    fn delete_by_index_scan(&self, table: u32, index: u32, scan: &[u8]) -> Result<u32, Errno> {
        with_env(|env| env.delete_by_index_scan(table, index, scan))
    }

    fn delete_rows(&self, table: u32, rows: &[u8]) -> Result<u32, Errno> {
        with_env(|env| env.delete_rows(table, rows))
    }

    fn clear_table(&self, table: u32) -> Result<u64, Errno> {
        with_env(|env| env.clear_table(table))
    }

    fn console_log(&self, level: LogLevel, target: &str, file: &str, line: u32, message: &str) {
        with_env(|env| {
            env.console_log(
                level,
                target.as_bytes(),
                file.as_bytes(),
                line,
                message.as_bytes(),
            )
        });
    }

    fn procedure_start_tx(&self) -> Result<Timestamp, Errno> {
        with_env(|env| env.procedure_start_tx())
    }

    fn procedure_start_read_tx(&self) -> Result<Timestamp, Errno> {
        with_env(|env| env.procedure_start_read_tx())
    }

    fn procedure_commit_tx(&self) -> Result<(), Errno> {
        with_env(|env| env.procedure_commit_tx())
    }

    fn procedure_abort_tx(&self) -> Result<(), Errno> {
        with_env(|env| env.procedure_abort_tx())
    }

    fn procedure_http_request(&self, request: &[u8]) -> Result<u32, Errno> {
        with_env(|env| env.procedure_http_request(request))
    }
}
