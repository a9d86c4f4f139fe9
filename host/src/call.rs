//! Calling a module's entry points: the one orchestration every transport shares.
//!
//! A transport (native code in-process, [`crate::native`], or wasm under wasmtime,
//! `crate::wasm`) only knows how to invoke the module's exports ([`Transport::call_export`])
//! and where its [`InstanceEnv`] is ([`Transport::env`]). Everything else about a call lives
//! here: finding the entry point by name, refusing what clients may not call, opening the
//! right kind of transaction, passing the arguments through a byte source and collecting the
//! result or error from a byte sink, then committing or rolling back according to the
//! export's code, and turning all of it into an [`Outcome`].

use crate::claims::Claims;
use crate::clock::CallTimer;
use crate::env::{CallKind, CallOrigin, Durable, Entry, InstanceEnv, LogLevel, OpenError, Tx};
use crate::schedule::{ScheduleTable, Schedules};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use wasmod_abi::encoding::{from_slice, to_vec};
use wasmod_abi::http::{Method, Request, Response};
use wasmod_abi::route::{Pattern, Routed};
use wasmod_abi::{
    description, ConnectionId, DescriptionError, EntryKind, Errno, Identity, Lifecycle, ModuleDef,
    ScheduleAt, Timestamp,
};
use wasmod_datastore::durability::DurabilityError;
use wasmod_datastore::ReplicaError;
use wasmod_datastore::{Commit, Datastore, MutTx, SchemaError};

/// A way to run a module's exports.
pub trait Transport {
    /// The instance's host-side state.
    fn env(&mut self) -> &mut InstanceEnv;

    /// The instance's host-side state, between calls.
    fn env_ref(&self) -> &InstanceEnv;

    /// Makes the instance ready for the next call (a transport whose instance can be left
    /// unusable, by a wasm trap, replaces it here). `Err` says why it cannot be.
    fn prepare(&mut self) -> Result<(), Trap> {
        Ok(())
    }

    /// Stops trusting the instance: a call was cut short by a panic in the host, so it may
    /// have stopped anywhere. A transport that can replace its instance does so before the
    /// next call ([`Transport::prepare`]).
    fn distrust(&mut self) {}

    /// Invokes one export and returns its code, or the reason the module trapped (a wasm
    /// trap, a native panic). During the call the module reaches [`Transport::env`] through
    /// its imports.
    fn call_export(&mut self, call: ExportCall) -> Result<i16, Trap>;
}

/// One invocation of a dispatch export, with the arguments of `docs/abi.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportCall {
    /// `__describe_module__(sink)`.
    Describe {
        /// The sink for the encoded description.
        sink: u32,
    },
    /// An entry point that sees its caller: `__call_reducer__`, `__call_procedure__` or
    /// `__call_view__`.
    WithCaller {
        /// Which of the three.
        export: CallerExport,
        /// The entry point's id.
        id: u32,
        /// The caller's identity, as words.
        sender: [u64; 4],
        /// The caller's connection id, as words.
        connection_id: [u64; 2],
        /// Microseconds since the Unix epoch.
        timestamp: i64,
        /// The arguments' byte source.
        input: u32,
        /// The byte sink of the result (procedures, views) or of the error message (reducers).
        output: u32,
    },
    /// An entry point that does not see its caller: `__call_view_anon__` or
    /// `__call_http_handler__`.
    Anonymous {
        /// Which of the two.
        export: AnonymousExport,
        /// The entry point's id.
        id: u32,
        /// Microseconds since the Unix epoch.
        timestamp: i64,
        /// The byte source of the arguments (views) or of the encoded request (HTTP handlers).
        input: u32,
        /// The byte sink of the result (views) or of the encoded response (HTTP handlers).
        output: u32,
    },
}

/// The dispatch exports that take the caller: those of the kinds whose
/// [`EntryKind::takes_caller`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallerExport {
    /// `__call_reducer__`.
    Reducer,
    /// `__call_procedure__`.
    Procedure,
    /// `__call_view__`.
    View,
}

impl CallerExport {
    /// Every export that takes the caller.
    pub const ALL: [Self; 3] = [Self::Reducer, Self::Procedure, Self::View];

    /// The kind of entry point the export calls; its name is the kind's
    /// [`export`](EntryKind::export).
    pub const fn kind(self) -> EntryKind {
        match self {
            Self::Reducer => EntryKind::Reducer,
            Self::Procedure => EntryKind::Procedure,
            Self::View => EntryKind::View,
        }
    }
}

/// The dispatch exports that do not take the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnonymousExport {
    /// `__call_view_anon__`.
    View,
    /// `__call_http_handler__`.
    HttpHandler,
}

impl AnonymousExport {
    /// Every export that does not take the caller.
    pub const ALL: [Self; 2] = [Self::View, Self::HttpHandler];

    /// The kind of entry point the export calls; its name is the kind's
    /// [`export`](EntryKind::export).
    pub const fn kind(self) -> EntryKind {
        match self {
            Self::View => EntryKind::AnonymousView,
            Self::HttpHandler => EntryKind::HttpHandler,
        }
    }
}

/// Why a module's export did not return: a wasm trap or a native panic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trap {
    /// What happened (the panic message, or the trap's description).
    pub message: String,
}

impl fmt::Display for Trap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Who makes a call.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Caller {
    /// The caller's identity.
    pub identity: Identity,
    /// The connection the call came over ([`ConnectionId::ZERO`] for none).
    pub connection_id: ConnectionId,
    /// The claims of the caller's verified token, which the module reads when it asks
    /// (`caller_claims`); `None` for a server-signed token and for the host's own calls.
    pub claims: Option<Claims>,
}

impl Caller {
    /// The host itself: zero identity, no connection, no claims.
    pub const HOST: Self = Self {
        identity: Identity::ZERO,
        connection_id: ConnectionId::ZERO,
        claims: None,
    };

    /// A caller with `identity` over connection `connection_id`, without claims.
    pub fn new(identity: Identity, connection_id: ConnectionId) -> Self {
        Self {
            identity,
            connection_id,
            claims: None,
        }
    }

    /// This caller with `claims`.
    pub fn with_claims(self, claims: Option<Claims>) -> Self {
        Self { claims, ..self }
    }

    /// Whether the call came over a connection.
    pub fn has_connection(&self) -> bool {
        self.connection_id != ConnectionId::ZERO
    }

    /// This caller calling entry point `id` of kind `kind`.
    fn calling(&self, kind: EntryKind, id: u32) -> CallOrigin {
        CallOrigin {
            entry: Some((kind, id)),
            ..self.host_tx()
        }
    }

    /// The host's own transaction on this caller's behalf.
    fn host_tx(&self) -> CallOrigin {
        CallOrigin {
            entry: None,
            caller: self.identity,
            connection_id: self.connection_id,
        }
    }

    /// The call of `export`'s entry point `id` by this caller.
    fn export_call(
        &self,
        export: CallerExport,
        id: u32,
        timestamp: i64,
        input: u32,
        output: u32,
    ) -> ExportCall {
        ExportCall::WithCaller {
            export,
            id,
            sender: self.identity.to_words(),
            connection_id: self.connection_id.to_words(),
            timestamp,
            input,
            output,
        }
    }
}

/// How a call ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A reducer succeeded and its transaction committed.
    Committed {
        /// The commit as the database published it: offset, metadata and changes; `None` if
        /// the transaction changed nothing.
        commit: Option<Arc<Commit>>,
        /// How long the call took, commit included.
        duration: Duration,
    },
    /// A view, procedure or HTTP handler succeeded and returned these bytes (the encoded
    /// return value, or the encoded [`Response`]).
    Returned {
        /// The encoded result.
        bytes: Vec<u8>,
        /// How long the call took.
        duration: Duration,
    },
    /// The call was refused or the entry point failed; any transaction was rolled back.
    Failed {
        /// The error code (from the module, or the host's reason for refusing).
        code: i16,
        /// What the module wrote to its error sink, or the host's explanation.
        message: String,
    },
    /// The module trapped or panicked, and any transaction was rolled back; or (with a
    /// commit log) the reducer's commit could not be made durable, so it is not acknowledged
    /// although its changes are visible in memory until the host restarts.
    Aborted {
        /// The trap or panic message.
        reason: String,
    },
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Committed { commit, duration } => match commit {
                Some(commit) => write!(
                    f,
                    "committed at offset {} ({} tables changed) in {duration:?}",
                    commit.offset,
                    commit.changes.tables.len()
                ),
                None => write!(f, "committed (nothing changed) in {duration:?}"),
            },
            Self::Returned { bytes, duration } => {
                write!(f, "returned {} bytes in {duration:?}", bytes.len())
            }
            Self::Failed { code, message } => {
                let name = u16::try_from(*code)
                    .ok()
                    .and_then(Errno::from_code)
                    .map_or("error", Errno::name);
                write!(f, "failed with {name} ({code}): {message}")
            }
            Self::Aborted { reason } => write!(f, "aborted: {reason}"),
        }
    }
}

impl Outcome {
    /// Whether the call succeeded.
    pub fn is_success(&self) -> bool {
        matches!(self, Self::Committed { .. } | Self::Returned { .. })
    }

    /// The error code of a failed call, if it is a known one.
    pub fn errno(&self) -> Option<Errno> {
        match self {
            Self::Failed { code, .. } => u16::try_from(*code).ok().and_then(Errno::from_code),
            _ => None,
        }
    }

    pub(crate) fn refused(errno: Errno, message: String) -> Self {
        Self::Failed {
            code: errno.code() as i16,
            message,
        }
    }
}

/// Why a module could not be loaded.
#[derive(Debug)]
#[non_exhaustive]
pub enum LoadError {
    /// `__describe_module__` failed or trapped.
    Describe(String),
    /// The description is of a format version this host does not read, or did not decode.
    Description(DescriptionError),
    /// The description's tables are invalid.
    Schema(SchemaError),
    /// The commit log could not be opened or recovered (see
    /// [`InstanceEnv::with_persistence`]).
    Durability(DurabilityError),
    /// The replica's rows do not fit the description's tables (see
    /// [`InstanceEnv::with_replica`]).
    Replica(ReplicaError),
    /// The description's entry points are invalid (duplicate names, an HTTP handler's path
    /// that is not a route pattern, two handlers of one method whose routes answer the same
    /// paths, several lifecycle reducers of one kind, a schedule table whose reducer does not
    /// fit it: see [`Schedules::of`]).
    EntryPoints(String),
    /// A type of the description has values that decode to more elements than their bytes
    /// allow (arrays of zero-sized types nested or repeated: see
    /// [`wasmod_abi::elements`]).
    Elements(String),
    /// The `init` reducer did not succeed.
    Init(Outcome),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Describe(message) => write!(f, "the module could not describe itself: {message}"),
            Self::Description(error) => error.fmt(f),
            Self::Schema(error) => error.fmt(f),
            Self::Durability(error) => write!(f, "the tables could not be recovered: {error}"),
            Self::Replica(error) => write!(f, "the replica could not be made: {error}"),
            Self::EntryPoints(message) => write!(f, "invalid module description: {message}"),
            Self::Elements(message) => write!(f, "invalid module description: {message}"),
            Self::Init(outcome) => {
                write!(f, "the module's init reducer did not succeed: {outcome:?}")
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// Asks the module to describe itself, checks the description, creates its tables (empty,
/// or recovered from the commit log of the environment's
/// [`Persistence`](crate::env::Persistence)), and installs both in the transport's
/// [`InstanceEnv`]. Does not run `init`: see [`init`].
pub fn load<T: Transport>(transport: &mut T) -> Result<Arc<ModuleDef>, LoadError> {
    let module = Arc::new(describe(transport)?);
    transport
        .env()
        .open_tables(module.clone())
        .map_err(|error| match error {
            OpenError::Schema(error) => LoadError::Schema(error),
            OpenError::Durability(error) => LoadError::Durability(error),
            OpenError::Replica(error) => LoadError::Replica(error),
        })?;
    Ok(module)
}

/// Calls `__describe_module__` and checks the entry points of the description it writes,
/// without touching the tables. [`load`] does this for a module's first instance; a transport
/// that replaces an instance (after a trap) does it for the new one, which the ABI requires
/// before any other export, and compares the result with the module it already has.
pub fn describe<T: Transport>(transport: &mut T) -> Result<ModuleDef, LoadError> {
    let raw = run(
        transport,
        CallKind::Describe,
        CallOrigin::HOST,
        None,
        Tx::None,
        Vec::new(),
        |_, sink, _| ExportCall::Describe { sink },
    );
    let bytes = match raw.result {
        Ok(0) => raw.output,
        Ok(code) => {
            return Err(LoadError::Describe(failure_message(
                "the description",
                code,
                raw.output,
            )))
        }
        Err(trap) => return Err(LoadError::Describe(trap.message)),
    };
    let module = description::decode(&bytes).map_err(LoadError::Description)?;
    check_entry_points(&module).map_err(LoadError::EntryPoints)?;
    Schedules::of(&module).map_err(LoadError::EntryPoints)?;
    description::check_elements(&module).map_err(LoadError::Elements)?;
    Ok(module)
}

/// Reads the module's description and checks all of it, entry points and tables, without
/// creating anything or running `init`: what a tool that only shows a module needs. [`load`]
/// goes on to create the tables (or recover them) instead.
pub fn describe_only<T: Transport>(transport: &mut T) -> Result<ModuleDef, LoadError> {
    let module = describe(transport)?;
    Datastore::new(&module).map_err(LoadError::Schema)?;
    Ok(module)
}

/// Runs the module's `Init` lifecycle reducer, if it has one, as the host; not when the
/// tables have commits already (recovered from a commit log, or replicated to a standby from
/// its primaries: init ran on the first start, and its effects are in the log).
pub fn init<T: Transport>(transport: &mut T) -> Option<Outcome> {
    let commits = transport.env().database().next_offset();
    if commits > 0 {
        tracing::debug!(target: "wasmod::host", commits, "init skipped: the tables have commits");
        return None;
    }
    run_lifecycle(transport, Lifecycle::Init, &Caller::HOST)
}

/// Runs the module's `ClientConnected` lifecycle reducer, if it has one, for `caller`, and,
/// when the caller has a connection, records it as open in the same transaction: a connection
/// is open if and only if its `ClientConnected` committed. A module without that reducer still
/// gets the connection recorded (in a transaction of the host's). `None` when there was
/// nothing to run or record (no reducer, no connection).
///
/// Refused (`UNIQUE_VIOLATION`) when the connection is open already.
pub fn client_connected<T: Transport>(transport: &mut T, caller: &Caller) -> Option<Outcome> {
    let database = transport.env().database().clone();
    let mut tx = database.begin_mut();
    if caller.has_connection() {
        if let Err(error) =
            database.record_connection(&mut tx, caller.identity, caller.connection_id)
        {
            return Some(Outcome::refused(
                error.errno(),
                format!("the connection could not be opened: {}", error.message()),
            ));
        }
    }
    match lifecycle_reducer(transport, Lifecycle::ClientConnected) {
        Some((id, name)) => Some(run_reducer(transport, tx, id, &name, caller, &[])),
        None if caller.has_connection() => Some(commit_host_tx(transport, tx, caller)),
        None => None,
    }
}

/// Runs the module's `ClientDisconnected` lifecycle reducer, if it has one, for `caller`, and,
/// when the caller has a connection, forgets it in the same transaction. A connection is
/// disconnected once: if it is not open (never was, or was disconnected already), nothing runs
/// and this returns `None`. If the reducer fails, the connection is forgotten all the same, in
/// a transaction of the host's, so that it is not disconnected again after a restart.
pub fn client_disconnected<T: Transport>(transport: &mut T, caller: &Caller) -> Option<Outcome> {
    let database = transport.env().database().clone();
    let mut tx = database.begin_mut();
    if caller.has_connection() {
        match database.forget_connection(&mut tx, caller.identity, caller.connection_id) {
            Ok(true) => {}
            Ok(false) => {
                tracing::debug!(
                    target: "wasmod::host",
                    connection = %caller.connection_id.to_hex(),
                    "not disconnected: the connection is not open"
                );
                return None;
            }
            Err(error) => {
                return Some(Outcome::refused(
                    error.errno(),
                    format!("the connection could not be closed: {}", error.message()),
                ))
            }
        }
    }
    let outcome = match lifecycle_reducer(transport, Lifecycle::ClientDisconnected) {
        Some((id, name)) => run_reducer(transport, tx, id, &name, caller, &[]),
        None if caller.has_connection() => return Some(commit_host_tx(transport, tx, caller)),
        None => return None,
    };
    if caller.has_connection() && !outcome.is_success() {
        tracing::warn!(
            target: "wasmod::host",
            connection = %caller.connection_id.to_hex(),
            "client_disconnected did not succeed ({outcome}): the connection is closed anyway"
        );
        let mut tx = database.begin_mut();
        if database
            .forget_connection(&mut tx, caller.identity, caller.connection_id)
            .is_ok()
        {
            let _ = commit_host_tx(transport, tx, caller);
        }
    }
    Some(outcome)
}

/// Disconnects the connections the database recorded as open when it was opened: those a
/// crash (or a stop that did not close them) left behind. Run once, when a module starts over
/// its tables, before any client is served. Returns how many were disconnected.
pub fn disconnect_leftovers<T: Transport>(transport: &mut T) -> usize {
    let leftovers = transport.env().database().recorded_connections();
    for &(identity, connection_id) in &leftovers {
        let outcome = client_disconnected(transport, &Caller::new(identity, connection_id));
        tracing::info!(
            target: "wasmod::host",
            connection = %connection_id.to_hex(),
            identity = %identity.to_hex(),
            outcome = %outcome.map_or_else(|| "nothing to run".to_owned(), |outcome| outcome.to_string()),
            "disconnected a connection left open by the last run"
        );
    }
    leftovers.len()
}

/// Calls the reducer `name` for a client, with `args` the encoded product of its
/// parameters. Lifecycle reducers and the reducers of schedule tables are refused
/// (`NOT_ALLOWED`): only the host calls them.
pub fn call_reducer<T: Transport>(
    transport: &mut T,
    name: &str,
    caller: &Caller,
    args: &[u8],
) -> Outcome {
    match transport.env().entries().get(name) {
        Some(Entry::Reducer {
            id,
            lifecycle: None,
        }) => {
            let env = transport.env();
            if let Some(schedule) = env.entries().schedules().of_reducer(id) {
                let table = &env.module().tables[schedule.table as usize].name;
                return Outcome::refused(
                    Errno::NOT_ALLOWED,
                    format!("reducer `{name}` is called with the rows of the schedule table `{table}`: only the host calls it, when a row is due"),
                );
            }
            let tx = env.database().begin_mut();
            run_reducer(transport, tx, id, name, caller, args)
        }
        Some(Entry::Reducer {
            lifecycle: Some(lifecycle),
            ..
        }) => Outcome::refused(
            Errno::NOT_ALLOWED,
            format!("reducer `{name}` is the module's {lifecycle:?} lifecycle reducer: only the host calls it"),
        ),
        other => unknown(EntryKind::Reducer, name, other),
    }
}

/// Calls the reducer of the schedule table `table` with its encoded row `row`, as the host
/// (zero identity, no connection, like `init`), if the table still holds exactly that row;
/// `None` if it does not (it was deleted or changed since it was read) or `table` is no
/// schedule.
///
/// A one-shot row (`ScheduleAt::Time`) is deleted in the reducer's transaction, before the
/// reducer runs (which may insert a row of the same key for a next time). If the reducer
/// fails, its transaction is rolled back and the row is deleted in a transaction of its own,
/// so that a failing one-shot schedule is not retried forever. A repeating row
/// (`ScheduleAt::Interval`) stays.
pub fn call_scheduled<T: Transport>(transport: &mut T, table: u32, row: &[u8]) -> Option<Outcome> {
    let env = transport.env();
    let schedule = env.entries().schedules().table(table)?.clone();
    let module = env.module().clone();
    let scheduled = schedule.read(&module, row).ok()?;
    let mut tx = env.database().begin_mut();
    let scan = ScheduleTable::key_scan(&scheduled.key);
    if !tx
        .index_rows(table, 0, &scan)
        .ok()?
        .any(|stored| **stored == *row)
    {
        return None;
    }
    let one_shot = matches!(scheduled.at, ScheduleAt::Time(_));
    if one_shot {
        tx.delete_rows(table, row).ok()?;
    }
    let name = &module.reducers[schedule.reducer as usize].name;
    let outcome = run_reducer(transport, tx, schedule.reducer, name, &Caller::HOST, row);
    if one_shot && !outcome.is_success() {
        let mut tx = transport.env().database().begin_mut();
        let deleted = tx.delete_rows(table, row);
        let table_name = &module.tables[table as usize].name;
        let removal = match deleted {
            Ok(_) => commit_host_tx(transport, tx, &Caller::HOST).to_string(),
            Err(error) => error.to_string(),
        };
        tracing::error!(
            target: "wasmod::host",
            reducer = %name,
            table = %table_name,
            "a scheduled call failed ({outcome}); its one-shot row was deleted so that it does not run again: {removal}"
        );
    }
    Some(outcome)
}

/// Calls the view `name` (per-caller or anonymous) in a read-only transaction. An anonymous
/// view does not see `caller`.
pub fn call_view<T: Transport>(
    transport: &mut T,
    name: &str,
    caller: &Caller,
    args: &[u8],
) -> Outcome {
    match transport.env().entries().get(name) {
        Some(Entry::View(id)) => run_view(
            transport,
            name,
            caller.calling(EntryKind::View, id),
            caller.claims.clone(),
            args,
            |args, result, timestamp| {
                caller.export_call(CallerExport::View, id, timestamp, args, result)
            },
        ),
        Some(Entry::AnonymousView(id)) => {
            let origin = Caller::HOST.calling(EntryKind::AnonymousView, id);
            run_view(
                transport,
                name,
                origin,
                None,
                args,
                |input, output, timestamp| ExportCall::Anonymous {
                    export: AnonymousExport::View,
                    id,
                    timestamp,
                    input,
                    output,
                },
            )
        }
        other => unknown(EntryKind::View, name, other),
    }
}

/// Calls the procedure `name`. It runs outside any transaction; one it leaves open is rolled
/// back. The transactions it commits are published by the database like any other.
pub fn call_procedure<T: Transport>(
    transport: &mut T,
    name: &str,
    caller: &Caller,
    args: &[u8],
) -> Outcome {
    let id = match transport.env().entries().get(name) {
        Some(Entry::Procedure(id)) => id,
        other => return unknown(EntryKind::Procedure, name, other),
    };
    let what = format!("procedure `{name}`");
    let raw = run(
        transport,
        CallKind::Procedure,
        caller.calling(EntryKind::Procedure, id),
        caller.claims.clone(),
        Tx::None,
        args.to_vec(),
        |args, result, timestamp| {
            caller.export_call(CallerExport::Procedure, id, timestamp, args, result)
        },
    );
    let raw = close_procedure_tx(transport, &what, raw);
    finish(
        || what,
        raw,
        |raw| Outcome::Returned {
            bytes: raw.output,
            duration: transport.env().clock().elapsed(raw.timer),
        },
    )
}

/// Routes `request` to the HTTP handler for its method and path (`uri`), and calls it like a
/// procedure ([`call_http_handler`]), with `claims` those of the request's verified token;
/// refused with `NO_SUCH_ENTRY` if none answers.
pub fn call_http<T: Transport>(
    transport: &mut T,
    request: &Request,
    claims: Option<Claims>,
) -> Outcome {
    match transport
        .env()
        .entries()
        .route(request.method, &request.uri)
    {
        Routed::Handler(id) => call_http_handler(transport, id, request, claims),
        Routed::WrongMethod(allowed) => unrouted(request, &allowed),
        Routed::NotFound => unrouted(request, &[]),
    }
}

/// The refusal of `request`, which no handler answers (only handlers of `allowed` do).
fn unrouted(request: &Request, allowed: &[Method]) -> Outcome {
    Outcome::refused(
        Errno::NO_SUCH_ENTRY,
        wasmod_abi::http::unrouted(request.method, &request.uri, allowed),
    )
}

/// Calls HTTP handler `id` with `request`, like a procedure: for a caller that has routed the
/// request already (the server routes once, to answer `404`/`405` before reading a body). The
/// returned bytes are an encoded [`Response`]; one that does not decode fails with
/// `BAD_ENCODING`. An id the module does not have is refused with `NO_SUCH_ENTRY`.
///
/// A handler runs as nobody (the ABI gives it no identity), but it reads `claims`, those of
/// the request's verified bearer token if it had one, as any entry point reads its caller's.
pub fn call_http_handler<T: Transport>(
    transport: &mut T,
    id: u32,
    request: &Request,
    claims: Option<Claims>,
) -> Outcome {
    let env = transport.env();
    let Some(handler) = env.module().http_handlers.get(id as usize) else {
        return Outcome::refused(
            Errno::NO_SUCH_ENTRY,
            format!("the module has no http handler {id}"),
        );
    };
    let what = format!("http handler `{}`", handler.name);
    let raw = run(
        transport,
        CallKind::Procedure,
        Caller::HOST.calling(EntryKind::HttpHandler, id),
        claims,
        Tx::None,
        to_vec(request),
        |input, output, timestamp| ExportCall::Anonymous {
            export: AnonymousExport::HttpHandler,
            id,
            timestamp,
            input,
            output,
        },
    );
    let raw = close_procedure_tx(transport, &what, raw);
    finish(
        || what.clone(),
        raw,
        |raw| match from_slice::<Response>(&raw.output) {
            Ok(_) => Outcome::Returned {
                bytes: raw.output,
                duration: transport.env().clock().elapsed(raw.timer),
            },
            Err(error) => Outcome::refused(
                Errno::BAD_ENCODING,
                format!("{what} wrote a response that does not decode: {error}"),
            ),
        },
    )
}

/// What one export call left behind.
struct Raw {
    result: Result<i16, Trap>,
    output: Vec<u8>,
    tx: Tx,
    timer: CallTimer,
    timestamp: Timestamp,
}

/// Invokes one export with `input` in a fresh byte source and a fresh output sink, inside
/// `tx`, made by `origin` with `claims` (what `caller_claims` answers during the call), and
/// collects what it left. `export` makes the call from the
/// source's and the sink's handles and the call's timestamp (microseconds since the Unix
/// epoch).
fn run<T: Transport>(
    transport: &mut T,
    kind: CallKind,
    origin: CallOrigin,
    claims: Option<Claims>,
    tx: Tx,
    input: Vec<u8>,
    export: impl FnOnce(u32, u32, i64) -> ExportCall,
) -> Raw {
    let env = transport.env();
    env.begin_call(kind, tx);
    env.set_origin(origin);
    env.set_claims(claims);
    let source = env.create_source(input);
    let sink = env.create_sink();
    let (timer, timestamp) = env.clock().start();
    let call = export(source, sink, timestamp.to_micros_since_unix_epoch());
    let result = transport.call_export(call);
    let env = transport.env();
    let output = env.take_sink(sink).unwrap_or_default();
    let tx = env.end_call();
    Raw {
        result,
        output,
        tx,
        timer,
        timestamp,
    }
}

/// Turns a finished call into an outcome: `success` for code 0; otherwise the transaction
/// (dropped with `raw`) is rolled back.
fn finish(
    what: impl FnOnce() -> String,
    raw: Raw,
    success: impl FnOnce(Raw) -> Outcome,
) -> Outcome {
    match raw.result {
        Ok(0) => success(raw),
        Ok(code) => Outcome::Failed {
            code,
            message: failure_message(&what(), code, raw.output),
        },
        Err(trap) => Outcome::Aborted {
            reason: trap.message,
        },
    }
}

/// Rolls back a transaction a procedure left open (or ends a read-only one), and says so in
/// the call's logs.
fn close_procedure_tx<T: Transport>(transport: &mut T, what: &str, mut raw: Raw) -> Raw {
    let message = match std::mem::replace(&mut raw.tx, Tx::None) {
        Tx::Procedure(..) => format!("{what} returned with a transaction open: it was rolled back"),
        Tx::ProcedureRead(_) => {
            format!("{what} returned with a read-only transaction open: it was ended")
        }
        Tx::None | Tx::Read(_) | Tx::Reducer(_) => return raw,
    };
    tracing::warn!(target: "wasmod::host", "{message}");
    transport.env().host_log(LogLevel::Warn, message);
    raw
}

fn run_view<T: Transport>(
    transport: &mut T,
    name: &str,
    origin: CallOrigin,
    claims: Option<Claims>,
    args: &[u8],
    export: impl FnOnce(u32, u32, i64) -> ExportCall,
) -> Outcome {
    let tx = Tx::Read(transport.env().database().begin_read());
    let raw = run(
        transport,
        CallKind::View,
        origin,
        claims,
        tx,
        args.to_vec(),
        export,
    );
    finish(
        || format!("view `{name}`"),
        raw,
        |raw| Outcome::Returned {
            bytes: raw.output,
            duration: transport.env().clock().elapsed(raw.timer),
        },
    )
}

/// Runs reducer `id` (named `name`) for `caller` in `tx`, and commits `tx` if it succeeds.
fn run_reducer<T: Transport>(
    transport: &mut T,
    tx: MutTx,
    id: u32,
    name: &str,
    caller: &Caller,
    args: &[u8],
) -> Outcome {
    let raw = run(
        transport,
        CallKind::Reducer,
        caller.calling(EntryKind::Reducer, id),
        caller.claims.clone(),
        Tx::Reducer(tx),
        args.to_vec(),
        |args, error, timestamp| {
            caller.export_call(CallerExport::Reducer, id, timestamp, args, error)
        },
    );
    finish(
        || format!("reducer `{name}`"),
        raw,
        |raw| {
            let committed = match raw.tx {
                Tx::Reducer(tx) => transport.env().commit(tx, raw.timestamp, Durable::Deferred),
                _ => Ok(None),
            };
            match committed {
                Ok(commit) => Outcome::Committed {
                    commit,
                    duration: transport.env().clock().elapsed(raw.timer),
                },
                // Not acknowledged: the changes are in memory but not in the log.
                Err(error) => Outcome::Aborted {
                    reason: format!("reducer `{name}` could not be made durable: {error}"),
                },
            }
        },
    )
}

/// Commits `tx`, a transaction of the host's own on behalf of `caller` (recording a
/// connection for a module without lifecycle reducers).
fn commit_host_tx<T: Transport>(transport: &mut T, tx: MutTx, caller: &Caller) -> Outcome {
    let env = transport.env();
    env.set_origin(caller.host_tx());
    match env.commit(tx, Timestamp::now(), Durable::Deferred) {
        Ok(commit) => Outcome::Committed {
            commit,
            duration: Duration::ZERO,
        },
        Err(error) => Outcome::Aborted {
            reason: format!("the host's transaction could not be made durable: {error}"),
        },
    }
}

/// The id and name of the module's reducer for `lifecycle`, if it has one.
fn lifecycle_reducer<T: Transport>(
    transport: &mut T,
    lifecycle: Lifecycle,
) -> Option<(u32, String)> {
    let module = transport.env().module();
    let id = module
        .reducers
        .iter()
        .position(|def| def.lifecycle == Some(lifecycle))?;
    Some((id as u32, module.reducers[id].name.clone()))
}

fn run_lifecycle<T: Transport>(
    transport: &mut T,
    lifecycle: Lifecycle,
    caller: &Caller,
) -> Option<Outcome> {
    let (id, name) = lifecycle_reducer(transport, lifecycle)?;
    let tx = transport.env().database().begin_mut();
    Some(run_reducer(transport, tx, id, &name, caller, &[]))
}

/// The message of a failed call: the module's own for `BAD_ARGUMENTS` and `ENTRY_FAILED`,
/// otherwise the code named, followed by whatever the module wrote.
fn failure_message(what: &str, code: i16, output: Vec<u8>) -> String {
    let text = String::from_utf8_lossy(&output).into_owned();
    let errno = u16::try_from(code).ok().and_then(Errno::from_code);
    let mut message = match errno {
        Some(errno) if errno == Errno::BAD_ARGUMENTS || errno == Errno::ENTRY_FAILED => {
            if !text.is_empty() {
                return text;
            }
            format!("{what} failed with {errno}")
        }
        Some(errno) if errno.is_known() => format!("{what} returned {errno}"),
        _ => format!("{what} returned {code}, which is not an error code"),
    };
    if !text.is_empty() {
        message.push_str(": ");
        message.push_str(&text);
    }
    message
}

/// The refusal for `name`, which is not an entry point of the expected kind: `found` is what
/// the name is, if anything.
fn unknown(kind: EntryKind, name: &str, found: Option<Entry>) -> Outcome {
    let message = match found {
        Some(entry) => format!(
            "`{name}` is not a {kind}: it is one of the module's {}s",
            entry.kind()
        ),
        None => format!("the module has no {kind} named `{name}`"),
    };
    Outcome::refused(Errno::NO_SUCH_ENTRY, message)
}

/// Entry point names are unique, routes are unique, and each lifecycle has one reducer.
fn check_entry_points(module: &ModuleDef) -> Result<(), String> {
    let mut names = HashSet::new();
    for (kind, name) in module.entry_point_names() {
        if !names.insert(name) {
            return Err(format!(
                "two entry points are named `{name}` (one is a {kind})"
            ));
        }
    }
    let mut routes = HashMap::new();
    for handler in &module.http_handlers {
        Pattern::parse(&handler.path).map_err(|error| {
            format!(
                "http handler `{}` answers `{}`, which is not a route pattern: {error}",
                handler.name, handler.path
            )
        })?;
        let route = (handler.method, route_shape(&handler.path));
        if let Some(other) = routes.insert(route, handler.name.as_str()) {
            return Err(format!(
                "two http handlers answer {} {}: `{other}` and `{}`",
                handler.method.as_str(),
                handler.path,
                handler.name
            ));
        }
    }
    let mut lifecycles = HashSet::new();
    for reducer in &module.reducers {
        if let Some(lifecycle) = reducer.lifecycle {
            if !lifecycles.insert(lifecycle) {
                return Err(format!(
                    "two reducers are the {lifecycle:?} lifecycle reducer"
                ));
            }
        }
    }
    Ok(())
}

/// A route pattern (one that parses) with its parameters' names left out: two patterns of one
/// shape answer the same paths (`/a/{x}` and `/a/{y}`, see `Pattern::same_routes`).
fn route_shape(pattern: &str) -> String {
    let segments = pattern.split('/').map(|segment| {
        if segment.starts_with('{') {
            "{}"
        } else {
            segment
        }
    });
    segments.collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::{check_entry_points, AnonymousExport, CallerExport};
    use wasmod_abi::http::Method;
    use wasmod_abi::{HttpHandlerDef, ModuleDef};

    /// A description whose only entry points are HTTP handlers answering `routes`.
    fn handlers(routes: &[(Method, &str)]) -> ModuleDef {
        let http_handlers = routes
            .iter()
            .enumerate()
            .map(|(id, (method, path))| HttpHandlerDef {
                name: format!("handler_{id}"),
                method: *method,
                path: (*path).to_owned(),
            })
            .collect();
        ModuleDef {
            http_handlers,
            ..ModuleDef::default()
        }
    }

    #[test]
    fn a_handler_whose_path_is_not_a_route_pattern_is_refused_at_load() {
        let error = check_entry_points(&handlers(&[(Method::Get, "/a/{b")])).unwrap_err();
        assert!(
            error.contains("`handler_0`") && error.contains("/a/{b"),
            "{error}"
        );
        assert!(check_entry_points(&handlers(&[(Method::Get, "/a/{b}")])).is_ok());
    }

    #[test]
    fn handlers_whose_routes_differ_only_in_parameter_names_are_refused_at_load() {
        let same = handlers(&[
            (Method::Get, "/accounts/{name}"),
            (Method::Get, "/accounts/{id}"),
        ]);
        let error = check_entry_points(&same).unwrap_err();
        assert!(error.contains("`handler_0` and `handler_1`"), "{error}");
        let apart = handlers(&[
            (Method::Get, "/accounts/{name}"),
            (Method::Post, "/accounts/{id}"),
            (Method::Get, "/accounts/new"),
            (Method::Get, "/accounts/{name}/entries"),
        ]);
        assert!(check_entry_points(&apart).is_ok());
    }
    use wasmod_abi::EntryKind;

    /// The two export types split the kinds by [`EntryKind::takes_caller`], and each `ALL` is in
    /// declaration order (transports index by the variant).
    #[test]
    fn the_export_types_cover_every_kind_once() {
        let mut kinds: Vec<EntryKind> = Vec::new();
        for (index, export) in CallerExport::ALL.into_iter().enumerate() {
            assert_eq!(export as usize, index);
            assert!(export.kind().takes_caller(), "{export:?}");
            kinds.push(export.kind());
        }
        for (index, export) in AnonymousExport::ALL.into_iter().enumerate() {
            assert_eq!(export as usize, index);
            assert!(!export.kind().takes_caller(), "{export:?}");
            kinds.push(export.kind());
        }
        kinds.sort();
        assert_eq!(kinds, EntryKind::ALL);
    }
}
