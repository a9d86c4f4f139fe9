//! Shared pieces of the benchmarks: the data sets, the SQLite side, and the module hosts.
//!
//! Every workload is measured side by side, in one run, on each backend that can do it: the
//! benchmark module (`examples/benchmarks`) through the host, and the same work done by SQLite
//! in memory with prepared statements in one transaction. Setup (creating the database and
//! preloading rows) is never measured; each measured iteration starts from the same state.

pub mod data;
pub mod dispatch;
pub mod encoding;
pub mod measure;
pub mod module;
pub mod results;
pub mod sqlite;
pub mod workloads;
