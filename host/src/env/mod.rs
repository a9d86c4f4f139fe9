//! One module instance's host-side state, and the ABI's imports over byte slices.
//!
//! An [`InstanceEnv`] is what every import of `docs/abi.md` acts on: the module's
//! [`Database`], the transaction of the call in progress, and the handle tables of row
//! iterators, byte sources and byte sinks. It keeps per-call state only: the tables, their
//! commit log and the stream of commits belong to the database, which outlives instances (a
//! trapped instance is replaced; its database is not). Its methods are the imports themselves,
//! with slices in place of `(pointer, length)` pairs and `Result`s in place of error codes, so
//! that both transports (native code in-process, [`crate::native`], and wasm under wasmtime,
//! `crate::wasm`) only have to move bytes between the module's memory and these methods. The
//! semantics live here, once.
//!
//! The methods are spread over small files by subject: byte sources and sinks; the caller's
//! claims; tables, scans and row iterators; logging; and what only procedures may do (explicit transactions and
//! outbound HTTP). `InstanceEnv` is `Send`, so a host may move an instance between threads
//! between calls.

mod budget;
mod bytes;
mod claims;
mod entries;
mod handles;
mod log;
mod procedure;
mod rows;

pub use log::{LogLevel, LogRecord, LogTap};
pub use procedure::{DenyAllHttp, HttpClient};
pub use rows::Advance;

pub(crate) use entries::{Entries, Entry};

use crate::claims::Claims;
use crate::clock::CallClock;
use bytes::{ByteSink, ByteSource};
use handles::Handles;
use log::{LogBudget, LogBuffer, Names};
use rows::RowIter;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use wasmod_abi::{ConnectionId, EntryKind, Errno, Identity, ModuleDef, Timestamp};
use wasmod_datastore::durability::{self, DurabilityError, RecoveryReport, Ticket};
use wasmod_datastore::{
    Commit, CommitMeta, Database, Datastore, EntryPoint, MutTx, ReadTx, ReplicaError, SchemaError,
    Tables, TxData,
};

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

/// Where a host's tables come from when its module is loaded.
enum Storage {
    /// Empty, in memory.
    Memory,
    /// Recovered from a commit log, and kept durable there.
    Log(Persistence),
    /// A replica of another database, from its rows at an offset.
    Replica {
        /// The offset of the rows.
        offset: u64,
        /// Every row of every table.
        rows: TxData,
    },
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
    /// The most handles of every kind (row iterators, byte sources, byte sinks) one call may
    /// have open at once; a scan or an outbound HTTP request past it fails with `TOO_LARGE`.
    /// Default: 1,024.
    pub max_live_handles: usize,
    /// The most bytes the open handles of one call may hold together on the host's side: the
    /// rows scans copied, the bytes of byte sources (arguments, outbound HTTP responses) and
    /// what was written to byte sinks. A scan, a response or a write past it fails with
    /// `TOO_LARGE` and holds nothing, so a module that opens them in a loop without reading
    /// cannot grow the host without bound. Default: 256 MiB.
    pub max_held_bytes: usize,
    /// The most log lines of one call that reach `tracing` (the host's log); later lines are
    /// dropped from it (still kept for the call, see `max_log_records`), and the call ends
    /// with one line saying how many were. Default: 1,000.
    pub max_log_lines_per_call: usize,
    /// The most bytes of messages of one call that reach `tracing`, likewise. Default: 1 MiB.
    pub max_log_bytes_per_call: usize,
    /// The most log lines per second, every call together, that reach `tracing`, likewise.
    /// Default: 10,000.
    pub max_log_lines_per_second: usize,
    /// The most bytes of messages per second, every call together, that reach `tracing`,
    /// likewise. Default: 8 MiB.
    pub max_log_bytes_per_second: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_sink_bytes: 16 << 20,
            max_log_records: 1024,
            max_log_line_bytes: 64 << 10,
            max_live_handles: 1024,
            max_held_bytes: 256 << 20,
            max_log_lines_per_call: 1_000,
            max_log_bytes_per_call: 1 << 20,
            max_log_lines_per_second: 10_000,
            max_log_bytes_per_second: 8 << 20,
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
    /// One a procedure opened with `procedure_start_tx`, and when it opened it.
    Procedure(MutTx, Timestamp),
    /// A read-only one a procedure opened with `procedure_start_read_tx`.
    ProcedureRead(ReadTx),
}

/// Who is making the call in progress, and through which entry point: what its commits are
/// published with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CallOrigin {
    /// The entry point's kind and id; `None` for `__describe_module__` and the host's own
    /// transactions.
    pub(crate) entry: Option<(EntryKind, u32)>,
    /// The caller's identity.
    pub(crate) caller: Identity,
    /// The caller's connection.
    pub(crate) connection_id: ConnectionId,
}

impl CallOrigin {
    /// The host itself.
    pub(crate) const HOST: Self = Self {
        entry: None,
        caller: Identity::ZERO,
        connection_id: ConnectionId::ZERO,
    };

    /// The metadata of a commit made at `timestamp` by this call of one of `module`'s entry
    /// points. The name is looked up (and allocated) here, once per commit, not per call.
    fn meta(&self, module: &ModuleDef, timestamp: Timestamp) -> CommitMeta {
        let entry = self.entry.and_then(|(kind, id)| {
            let name = module.entry_point(kind, id)?.name;
            Some(EntryPoint::new(kind, name))
        });
        CommitMeta {
            timestamp,
            caller: self.caller,
            connection_id: self.connection_id,
            entry,
        }
    }
}

/// The host-side state of one module instance.
pub struct InstanceEnv {
    module: Arc<ModuleDef>,
    entries: Entries,
    database: Arc<Database>,
    limits: Limits,
    http: Arc<dyn HttpClient>,
    call: Option<CallKind>,
    /// Who makes the call in progress (or made the last one).
    origin: CallOrigin,
    /// The claims of the call in progress's caller, for `caller_claims`; `None` between calls.
    claims: Option<Claims>,
    clock: CallClock,
    /// When the call in progress must end, if its transport has a deadline.
    deadline: Option<Instant>,
    /// Whether an import stopped at the deadline, for the transport to end the call
    /// ([`InstanceEnv::take_interrupt`]).
    interrupted: bool,
    tx: Tx,
    iters: Handles<RowIter>,
    /// What the open handles of every kind hold ([`Limits::max_held_bytes`]).
    held_bytes: usize,
    /// Buffers of finished iterators, for the next scans.
    spare_iters: Vec<RowIter>,
    sources: Handles<ByteSource>,
    sinks: Handles<ByteSink>,
    logs: LogBuffer,
    log_budget: LogBudget,
    log_names: Names,
    /// Who else hears the lines that reach the host's log ([`Self::set_log_tap`]).
    log_tap: Option<Arc<dyn LogTap>>,
    /// Where the tables come from when the module is loaded.
    storage: Storage,
    /// Whether commits leave their durability wait to the caller ([`Self::take_durability`]).
    defer_durability: bool,
    /// The wait of the last commit, when deferred.
    pending: Option<Ticket>,
}

impl InstanceEnv {
    /// The state of an instance of the module described by `module`, whose tables are in
    /// `database`, with default [`Limits`] and no outbound HTTP.
    pub fn new(module: Arc<ModuleDef>, database: Arc<Database>) -> Self {
        let limits = Limits::default();
        Self {
            entries: Entries::new(&module),
            module,
            database,
            limits,
            http: Arc::new(DenyAllHttp),
            call: None,
            origin: CallOrigin::HOST,
            claims: None,
            clock: CallClock::new(),
            deadline: None,
            interrupted: false,
            tx: Tx::None,
            iters: Handles::default(),
            held_bytes: 0,
            spare_iters: Vec::new(),
            sources: Handles::default(),
            sinks: Handles::default(),
            logs: LogBuffer::new(limits.max_log_records),
            log_budget: LogBudget::new(&limits),
            log_names: Names::default(),
            log_tap: None,
            storage: Storage::Memory,
            defer_durability: false,
            pending: None,
        }
    }

    /// The state of an instance whose module is not described yet: no entry points and no
    /// tables, enough to run `__describe_module__`. See [`InstanceEnv::set_module`].
    pub fn unloaded() -> Self {
        let module = ModuleDef::default();
        let database = Database::in_memory(&module)
            .unwrap_or_else(|error| unreachable!("an empty description is always valid: {error}"));
        Self::new(Arc::new(module), Arc::new(database))
    }

    /// Replaces the module and its database, once the description is known.
    pub fn set_module(&mut self, module: Arc<ModuleDef>, database: Arc<Database>) {
        self.entries = Entries::new(&module);
        self.module = module;
        self.database = database;
    }

    /// This state with `limits` in force.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self.logs = LogBuffer::new(limits.max_log_records);
        self.log_budget = LogBudget::new(&limits);
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
        self.storage = Storage::Log(persistence);
        self
    }

    /// This state holding a replica of another database's tables ([`Database::replica`]):
    /// loading the module makes its tables from `rows` (every row of every table) as of
    /// offset `offset`, and runs neither `init` nor anything else that would write. Its
    /// tables change only through [`Database::apply_replicated`] and [`Database::resync`]
    /// (an edge node's copy of its primary).
    pub fn with_replica(mut self, offset: u64, rows: TxData) -> Self {
        self.storage = Storage::Replica { offset, rows };
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

    /// Hands every log line that reaches the host's log (a module's within its budget, and
    /// the host's own lines about the call) to `tap` as well, as it is logged: a server's
    /// live feed of module logs. Replaces the tap set before, if any.
    pub fn set_log_tap(&mut self, tap: Arc<dyn LogTap>) {
        self.log_tap = Some(tap);
    }

    /// This state with `tap` hearing its log lines ([`Self::set_log_tap`]): set before the
    /// module is loaded, the tap hears its `init` too.
    pub fn with_log_tap(mut self, tap: Arc<dyn LogTap>) -> Self {
        self.set_log_tap(tap);
        self
    }

    /// With deferred durability, the wait that covers every commit so far (each record is
    /// durable once a later one is); `None` when there is nothing to wait for.
    pub fn take_durability(&mut self) -> Option<Ticket> {
        self.pending.take()
    }

    /// Opens the database for `module` (recovering its tables from the log of the
    /// [`Persistence`] this state was given, if any; empty tables in memory without one) and
    /// installs it.
    pub(crate) fn open_tables(&mut self, module: Arc<ModuleDef>) -> Result<(), OpenError> {
        let database = match std::mem::replace(&mut self.storage, Storage::Memory) {
            Storage::Memory => Database::in_memory(&module).map_err(OpenError::Schema)?,
            Storage::Replica { offset, rows } => {
                Database::replica(&module, offset, &rows).map_err(OpenError::Replica)?
            }
            Storage::Log(persistence) => {
                let database = Database::open(&persistence.dir, &module, persistence.options)
                    .map_err(OpenError::Durability)?;
                if let Some(report) = database.recovery() {
                    tracing::info!(
                        target: "wasmod::host",
                        dir = %persistence.dir.display(),
                        transactions = report.transactions,
                        took = ?report.duration,
                        "recovered the tables from the commit log"
                    );
                }
                database
            }
        };
        self.set_module(module, Arc::new(database));
        Ok(())
    }

    /// What recovery found when the tables were opened from a commit log; `None` for
    /// in-memory tables.
    pub fn recovery(&self) -> Option<&RecoveryReport> {
        self.database.recovery()
    }

    /// Commits `tx` through the database's pipeline, as made by the call in progress at
    /// `timestamp`, and, with a commit log, waits until the log has it (or, with deferred
    /// durability and `wait` [`Durable::Deferred`], leaves the wait in
    /// [`Self::take_durability`]): a caller may acknowledge the commit once this returns `Ok`.
    /// Returns the published commit (`None` if `tx` changed nothing).
    ///
    /// On `Err` the commit is not durable: either the log refused it (it had failed already,
    /// or the record is too large for it), and `tx` was rolled back unseen, or the log failed
    /// while syncing it, and its changes stay visible in memory until a restart (the log
    /// refuses every later commit). With deferred durability and a failed log, the wait left
    /// behind fails too, so that the call's answer says so.
    pub(crate) fn commit(
        &mut self,
        tx: MutTx,
        timestamp: Timestamp,
        wait: Durable,
    ) -> Result<Option<Arc<Commit>>, DurabilityError> {
        let meta = self.origin.meta(&self.module, timestamp);
        let committed = match self.database.commit(tx, meta) {
            Ok(committed) => committed,
            Err(error) => {
                self.fail_answer(&error);
                return Err(error);
            }
        };
        if committed.commit.is_some() {
            if self.defer_durability && wait == Durable::Deferred {
                self.pending = Some(committed.durable);
            } else if let Err(error) = committed.durable.wait() {
                self.fail_answer(&error);
                return Err(error);
            }
        }
        Ok(committed.commit)
    }

    /// With deferred durability, makes the wait for the call's answer fail once the log has
    /// failed (`error`), so that the host reports it like a commit the disk lost. A record too
    /// large for the log fails the call alone (its outcome says so), and the log goes on.
    fn fail_answer(&mut self, error: &DurabilityError) {
        if let (true, DurabilityError::Failed(reason)) = (self.defer_durability, error) {
            self.pending = Some(Ticket::refused(reason.clone()));
        }
    }

    /// Sets who makes the calls from now on (until the next call to this).
    pub(crate) fn set_origin(&mut self, origin: CallOrigin) {
        self.origin = origin;
    }

    /// Sets the claims of the call in progress's caller (until the call ends).
    pub(crate) fn set_claims(&mut self, claims: Option<Claims>) {
        self.claims = claims;
    }

    /// Sets when the call in progress must end (`None`: never), for the imports that wait on
    /// the outside world (outbound HTTP) and for scans, which stop at it. Reset when the call
    /// ends. Only the wasm transport
    /// has deadlines.
    #[cfg(any(feature = "wasmtime", test))]
    pub(crate) fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }

    /// Whether the import just run stopped because the call's deadline passed (a long scan,
    /// [`rows`]); cleared by asking. The transport then ends the call as it ends wasm code
    /// past its deadline, so the module never goes on with the import's error code.
    #[cfg(any(feature = "wasmtime", test))]
    pub(crate) fn take_interrupt(&mut self) -> bool {
        std::mem::take(&mut self.interrupted)
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

    /// The module's database: its tables, commit log and commit feed.
    pub fn database(&self) -> &Arc<Database> {
        &self.database
    }

    /// The module's tables (those of the build that serves them now).
    pub fn datastore(&self) -> Arc<Datastore> {
        self.database.datastore()
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

    /// Starts a call of kind `kind` in transaction `tx`: clears the last call's logs.
    pub(crate) fn begin_call(&mut self, kind: CallKind, tx: Tx) {
        self.end_call();
        self.logs.clear();
        self.call = Some(kind);
        self.tx = tx;
    }

    /// Ends a call that was cut short (by a panic in the host): its transaction, if one is
    /// still open, is rolled back, and its handles are dropped.
    pub fn abandon_call(&mut self) {
        drop(self.end_call());
    }

    /// Ends the call in progress: every handle becomes invalid, and the transaction still
    /// open is handed back to the caller to commit or roll back.
    pub(crate) fn end_call(&mut self) -> Tx {
        self.call = None;
        self.claims = None;
        self.deadline = None;
        self.interrupted = false;
        self.log_budget_spent();
        for iter in self.iters.drain() {
            rows::keep(&mut self.spare_iters, iter);
        }
        self.sources.clear();
        self.sinks.clear();
        self.release_all();
        std::mem::replace(&mut self.tx, Tx::None)
    }

    /// The tables as the current transaction sees them, to read table `table`: `NO_TX`
    /// without one, `NO_SUCH_TABLE` for the host's own tables.
    fn reading(&self, table: u32) -> Result<&Tables, Errno> {
        self.module_table(table)?;
        match &self.tx {
            Tx::None => Err(Errno::NO_TX),
            Tx::Read(tx) | Tx::ProcedureRead(tx) => Ok(tx),
            Tx::Reducer(tx) | Tx::Procedure(tx, _) => Ok(tx),
        }
    }

    /// The current transaction, to write table `table`: `NO_TX` without one, `NOT_ALLOWED` in
    /// a read-only one, `NO_SUCH_TABLE` for the host's own tables.
    fn writing(&mut self, table: u32) -> Result<&mut MutTx, Errno> {
        self.module_table(table)?;
        match &mut self.tx {
            Tx::None => Err(Errno::NO_TX),
            Tx::Read(_) | Tx::ProcedureRead(_) => Err(Errno::NOT_ALLOWED),
            Tx::Reducer(tx) | Tx::Procedure(tx, _) => Ok(tx),
        }
    }

    /// Refuses the ids of the host's own tables (`NO_SUCH_TABLE`): a module sees its tables
    /// only.
    fn module_table(&self, table: u32) -> Result<(), Errno> {
        if self.database.is_system_table(table) {
            tracing::debug!(
                target: "wasmod::host",
                table,
                "no table has this id (the module has {})",
                self.database.module_tables()
            );
            return Err(Errno::NO_SUCH_TABLE);
        }
        Ok(())
    }
}

impl std::fmt::Debug for InstanceEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstanceEnv")
            .field("database", &self.database)
            .field("limits", &self.limits)
            .field("call", &self.call)
            .finish_non_exhaustive()
    }
}

/// Whether [`InstanceEnv::commit`] may leave the wait for durability to the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Durable {
    /// With deferred durability, the wait is left in [`InstanceEnv::take_durability`]: for a
    /// commit that ends the call (a reducer's), whose answer the host sends once durable.
    Deferred,
    /// Wait here in any case: for a commit the call goes on after (a procedure's), which must
    /// not learn of it before it is durable.
    Now,
}

/// Why an instance's tables could not be opened.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// The description's tables are invalid.
    Schema(SchemaError),
    /// The commit log could not be opened or recovered.
    Durability(DurabilityError),
    /// The replica's rows do not fit the tables.
    Replica(ReplicaError),
}

/// Turns a datastore error into the module's error code, keeping the explanation for the
/// host's logs.
fn report(error: wasmod_datastore::Error) -> Errno {
    tracing::debug!(target: "wasmod::host", errno = error.errno().name(), "{}", error.message());
    error.errno()
}

#[cfg(test)]
mod tests;
