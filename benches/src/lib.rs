//! Shared pieces of the benchmarks (`benches/`): the data sets, the backends, the harnesses,
//! and the results tables.
//!
//! Every workload is measured side by side, in one run, on each backend that can do it: the
//! benchmark module (`examples/benchmarks`) through the host in wasm and natively, and the same
//! work done by SQLite in memory with prepared statements in one transaction. Setup (creating
//! the database, loading the module, preloading rows) is never measured; each measured
//! iteration starts from the same state.
//!
//! - [`data`]: the row shapes, the table variants and the rows;
//! - [`module`], [`sqlite`]: the backends;
//! - [`workloads`]: the standard set, as data (what each backend does, the reference figures);
//! - [`measure`]: the one measuring loop;
//! - [`dispatch`], [`encoding`]: the harnesses of those two benches;
//! - [`results`]: the tables of `RESULTS.md`, from criterion's saved estimates.

pub mod data;
pub mod dispatch;
pub mod encoding;
pub mod measure;
pub mod module;
pub mod results;
pub mod sqlite;
pub mod workloads;
