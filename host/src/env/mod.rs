//! One module instance's host-side state, and the ABI's imports over byte slices.
//!
//! An [`InstanceEnv`] is what every import of `docs/abi.md` acts on: the module's datastore,
//! the transaction of the call in progress, and the handle tables of row iterators, byte
//! sources and byte sinks. Its methods are the imports themselves, with slices in place of
//! `(pointer, length)` pairs and `Result`s in place of error codes, so that every transport
//! (the native one in [`crate::native`] now, wasmtime later) only has to move bytes between the
//! module's memory and these methods. The semantics live here, once.
//!
//! The methods are spread over small files by subject: byte sources and sinks; tables, scans
//! and row iterators; logging; and what only procedures may do (explicit transactions and
//! outbound HTTP). `InstanceEnv` is `Send`, so a host may move an instance between threads
//! between calls.

mod bytes;
mod entries;
mod handles;
mod log;
mod procedure;
mod rows;

pub use log::{LogLevel, LogRecord};
pub use procedure::{DenyAllHttp, HttpClient};
pub use rows::Advance;

pub(crate) use entries::{Entries, Entry};

use crate::clock::CallClock;
use bytes::{ByteSink, ByteSource};
use handles::Handles;
use log::{LogBuffer, Names};
use rows::RowIter;
use std::path::PathBuf;
use std::sync::Arc;
use wasmod_abi::{Errno, ModuleDef};
use wasmod_datastore::durability::{self, Durability, DurabilityError, RecoveryReport, Ticket};
use wasmod_datastore::{Datastore, MutTx, ReadTx, Tables, TxData};

/// Where and how a host keeps its module's tables durable: the commit log's directory and
/// its [`Options`](durability::Options). Without it the tables live in memory only. Made with
/// [`Persistence::new`] (more fields may be added).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Persistence {
    /// The directory of the commit log (created if missing; one process at a time). No
    /// default: it is always given.
    pub dir: PathBuf,
    /// How commits are made durable. Default: [`durability::Options::default`].
    pub options: durability::Options,
}

impl Persistence {
    /// The commit log in `dir`, written with `options`.
    pub fn new(dir: impl Into<PathBuf>, options: durability::Options) -> Self {
        Self {
            dir: dir.into(),
            options,
        }
    }
}

/// Caps on what a module may make the host hold.
///
/// Start from [`Limits::default`] and set the fields that differ: more may be added, so the
/// struct cannot be written out whole outside this crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The most bytes one byte sink accepts (results, error messages, the description);
    /// writes past it fail with `TOO_LARGE`. Default: 16 MiB.
    pub max_sink_bytes: usize,
    /// The most log lines kept for one call (older lines are dropped first; every line still
    /// reaches `tracing`). Default: 1024.
    pub max_log_records: usize,
    /// The most bytes of a log line's message, target or file that are kept; the rest is cut
    /// (at a character boundary, marked with `…`), so a module cannot make the host hold its
    /// whole memory once per kept line. Default: 64 KiB.
    pub max_log_line_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_sink_bytes: 16 << 20,
            max_log_records: 1024,
            max_log_line_bytes: 64 << 10,
        }
    }
}

/// What kind of call is in progress, which decides what the imports may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallKind {
    /// `__describe_module__`: no transaction.
    Describe,
    /// A reducer: one mutable transaction, opened and closed by the host.
    Reducer,
    /// A view: one read-only transaction.
    View,
    /// A procedure or an HTTP handler: no transaction unless it opens one.
    Procedure,
}

/// The transaction of the call in progress.
pub(crate) enum Tx {
    /// None: table imports fail with `NO_TX`.
    None,
    /// A view's: writes fail with `NOT_ALLOWED`.
    Read(ReadTx),
    /// A reducer's, committed or rolled back by the host.
    Reducer(MutTx),
    /// One a procedure opened with `procedure_start_tx`.
    Procedure(MutTx),
}

/// The host-side state of one module instance.
pub struct InstanceEnv {
    module: Arc<ModuleDef>,
    entries: Entries,
    datastore: Arc<Datastore>,
    limits: Limits,
    http: Arc<dyn HttpClient>,
    call: Option<CallKind>,
    clock: CallClock,
    tx: Tx,
    iters: Handles<RowIter>,
    /// Buffers of finished iterators, for the next scans.
    spare_iters: Vec<RowIter>,
    sources: Handles<ByteSource>,
    sinks: Handles<ByteSink>,
    logs: LogBuffer,
    log_names: Names,
    procedure_commits: Vec<TxData>,
    persistence: Option<Persistence>,
    durability: Option<Durability>,
    recovery: Option<RecoveryReport>,
    /// Whether commits leave their durability wait to the caller ([`Self::take_durability`]).
    defer_durability: bool,
    /// The wait of the last commit, when deferred.
    pending: Option<Ticket>,
}

impl InstanceEnv {
    /// The state of an instance of the module described by `module`, whose tables are
    /// `datastore`, with default [`Limits`] and no outbound HTTP.
    pub fn new(module: Arc<ModuleDef>, datastore: Arc<Datastore>) -> Self {
        let limits = Limits::default();
        Self {
            entries: Entries::new(&module),
            module,
            datastore,
            limits,
            http: Arc::new(DenyAllHttp),
            call: None,
            clock: CallClock::new(),
            tx: Tx::None,
            iters: Handles::default(),
            spare_iters: Vec::new(),
            sources: Handles::default(),
            sinks: Handles::default(),
            logs: LogBuffer::new(limits.max_log_records),
            log_names: Names::default(),
            procedure_commits: Vec::new(),
            persistence: None,
            durability: None,
            recovery: None,
            defer_durability: false,
            pending: None,
        }
    }

    /// The state of an instance whose module is not described yet: no entry points and no
    /// tables, enough to run `__describe_module__`. See [`InstanceEnv::set_module`].
    pub fn unloaded() -> Self {
        let module = ModuleDef::default();
        let datastore = Datastore::new(&module)
            .unwrap_or_else(|error| unreachable!("an empty description is always valid: {error}"));
        Self::new(Arc::new(module), Arc::new(datastore))
    }

    /// Replaces the module and its tables, once the description is known.
    pub fn set_module(&mut self, module: Arc<ModuleDef>, datastore: Arc<Datastore>) {
        self.entries = Entries::new(&module);
        self.module = module;
        self.datastore = datastore;
    }

    /// This state with `limits` in force.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self.logs = LogBuffer::new(limits.max_log_records);
        self
    }

    /// This state sending procedures' outbound requests through `client`.
    pub fn with_http_client(mut self, client: Arc<dyn HttpClient>) -> Self {
        self.http = client;
        self
    }

    /// This state keeping the module's tables durable as `persistence` says: loading the
    /// module ([`crate::call::load`]) recovers them from the log there, and every commit is
    /// acknowledged only once the log has it.
    pub fn with_persistence(mut self, persistence: Persistence) -> Self {
        self.persistence = Some(persistence);
        self
    }

    /// This state leaving the wait for durability to its host: a commit returns (and a
    /// reducer's [`Outcome::Committed`](crate::Outcome::Committed) comes back) as soon as its
    /// record is queued, and the host **must** wait on [`Self::take_durability`] after each
    /// call before it tells anyone the call committed. A single-threaded host then runs the
    /// next call while the last one's record is being synced, so commits share syncs.
    pub fn with_deferred_durability(mut self) -> Self {
        self.defer_durability = true;
        self
    }

    /// With deferred durability, the wait that covers every commit so far (each record is
    /// durable once a later one is); `None` when there is nothing to wait for.
    pub fn take_durability(&mut self) -> Option<Ticket> {
        self.pending.take()
    }

    /// Opens the log of the [`Persistence`] this state was given (if any) for `module`, and
    /// installs the recovered tables; without one, installs empty in-memory tables.
    pub(crate) fn open_tables(&mut self, module: Arc<ModuleDef>) -> Result<(), OpenError> {
        let datastore = match &self.persistence {
            None => Datastore::new(&module).map_err(OpenError::Schema)?,
            Some(persistence) => {
                let recovered = durability::open(&persistence.dir, &module, persistence.options)
                    .map_err(OpenError::Durability)?;
                tracing::info!(
                    target: "wasmod::host",
                    dir = %persistence.dir.display(),
                    transactions = recovered.report.transactions,
                    took = ?recovered.report.duration,
                    "recovered the tables from the commit log"
                );
                self.durability = Some(recovered.durability);
                self.recovery = Some(recovered.report);
                recovered.datastore
            }
        };
        self.set_module(module, Arc::new(datastore));
        Ok(())
    }

    /// What recovery found when the tables were opened from a commit log; `None` for
    /// in-memory tables.
    pub fn recovery(&self) -> Option<&RecoveryReport> {
        self.recovery.as_ref()
    }

    /// Commits `tx` and, with a commit log, waits until the log has it (or, with deferred
    /// durability, leaves the wait in [`Self::take_durability`]): a caller may acknowledge
    /// the commit once this returns `Ok`. On `Err` the changes are visible in memory but not
    /// durable, and the log refuses every later commit.
    pub(crate) fn commit(&mut self, tx: MutTx) -> Result<TxData, DurabilityError> {
        let Some(log) = &self.durability else {
            return Ok(tx.commit());
        };
        let (changes, ticket) = tx.commit_with(|changes| log.append(changes));
        if changes.is_empty() {
            return Ok(changes);
        }
        if self.defer_durability {
            self.pending = Some(ticket);
        } else {
            ticket.wait()?;
        }
        log.snapshot_if_due(&self.datastore);
        Ok(changes)
    }

    /// The module's description.
    pub fn module(&self) -> &Arc<ModuleDef> {
        &self.module
    }

    /// The clock this instance's calls are timed with.
    pub(crate) fn clock(&mut self) -> &mut CallClock {
        &mut self.clock
    }

    /// The module's entry points by name and route.
    pub(crate) fn entries(&self) -> &Entries {
        &self.entries
    }

    /// The module's tables.
    pub fn datastore(&self) -> &Arc<Datastore> {
        &self.datastore
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The lines logged during the last (or current) call, oldest first.
    pub fn logs(&self) -> impl ExactSizeIterator<Item = &LogRecord> {
        self.logs.iter()
    }

    /// How many lines of the last call were not kept (see [`Limits::max_log_records`]).
    pub fn dropped_logs(&self) -> usize {
        self.logs.dropped()
    }

    /// The changes of the transactions procedures committed since the last time this was
    /// called, oldest first.
    pub fn take_procedure_commits(&mut self) -> Vec<TxData> {
        std::mem::take(&mut self.procedure_commits)
    }

    /// Starts a call of kind `kind` in transaction `tx`: clears the last call's logs.
    pub(crate) fn begin_call(&mut self, kind: CallKind, tx: Tx) {
        self.end_call();
        self.logs.clear();
        self.call = Some(kind);
        self.tx = tx;
    }

    /// Ends the call in progress: every handle becomes invalid, and the transaction still
    /// open is handed back to the caller to commit or roll back.
    pub(crate) fn end_call(&mut self) -> Tx {
        self.call = None;
        for iter in self.iters.drain() {
            rows::keep(&mut self.spare_iters, iter);
        }
        self.sources.clear();
        self.sinks.clear();
        std::mem::replace(&mut self.tx, Tx::None)
    }

    /// The tables as the current transaction sees them: `NO_TX` without one.
    fn reading(&self) -> Result<&Tables, Errno> {
        match &self.tx {
            Tx::None => Err(Errno::NO_TX),
            Tx::Read(tx) => Ok(tx),
            Tx::Reducer(tx) | Tx::Procedure(tx) => Ok(tx),
        }
    }

    /// The current transaction, to write: `NO_TX` without one, `NOT_ALLOWED` in a view.
    fn writing(&mut self) -> Result<&mut MutTx, Errno> {
        match &mut self.tx {
            Tx::None => Err(Errno::NO_TX),
            Tx::Read(_) => Err(Errno::NOT_ALLOWED),
            Tx::Reducer(tx) | Tx::Procedure(tx) => Ok(tx),
        }
    }
}

impl std::fmt::Debug for InstanceEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstanceEnv")
            .field("datastore", &self.datastore)
            .field("limits", &self.limits)
            .field("call", &self.call)
            .finish_non_exhaustive()
    }
}

/// Why an instance's tables could not be opened.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// The description's tables are invalid.
    Schema(wasmod_datastore::SchemaError),
    /// The commit log could not be opened or recovered.
    Durability(DurabilityError),
}

/// Turns a datastore error into the module's error code, keeping the explanation for the
/// host's logs.
fn report(error: wasmod_datastore::Error) -> Errno {
    tracing::debug!(target: "wasmod::host", errno = error.errno().name(), "{}", error.message());
    error.errno()
}

#[cfg(test)]
mod tests;
