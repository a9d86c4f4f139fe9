//! Calling a module's entry points by name with JSON: the part that needs the module.
//!
//! Finding an entry point, encoding its JSON arguments and rendering its result need only the
//! description, and are the protocol's ([`wasmod_protocol::call`]), so that the server's
//! routes and `wasmod call` (which runs a module in-process) refuse the same calls with the
//! same codes and print the same JSON. Here:
//!
//! 1. [`find`] looks the name up among the kinds a route accepts ([`CALLED_BY_NAME`] at most);
//! 2. [`Invocation::run`] calls the module (on whatever thread owns it);
//! 3. [`Entry::answer`] turns the [`Outcome`] into a [`CallResponse`] or an [`ApiError`] with
//!    a status that fits ([`failure`]); the server's [`Results`](crate::results::Results)
//!    bounds a returned value and picks the thread that converts it ([`returned`]).

use serde_json::value::RawValue;
use std::sync::Arc;
use wasmod_abi::{AlgebraicType, ConnectionId, EntryKind, Errno, Identity, ModuleDef};
use wasmod_host::datastore::migrate::same_encoding;
use wasmod_host::{Outcome, WasmModule};
use wasmod_protocol::call::{self, EntryPoint};
use wasmod_protocol::errors::{ApiError, ErrorCode};
use wasmod_protocol::http::CallResponse;

/// The kinds of entry point clients call by name (HTTP handlers are called by route).
pub const CALLED_BY_NAME: [EntryKind; 4] = [
    EntryKind::Reducer,
    EntryKind::Procedure,
    EntryKind::View,
    EntryKind::AnonymousView,
];

/// An entry point found in a module's description, to run.
#[derive(Clone, Copy, Debug)]
pub struct Entry<'m> {
    /// What the description says of it: kind, name, parameters, return type.
    pub point: EntryPoint<'m>,
    /// The description it was found in.
    module: &'m Arc<ModuleDef>,
}

/// Finds the entry point `name` among the kinds `kinds` ([`call::find`]).
///
/// Fails with `no_such_entry` (saying what `name` is, if it is an entry point of another kind)
/// or `lifecycle_reducer`.
pub fn find<'m>(
    module: &'m Arc<ModuleDef>,
    name: &str,
    kinds: &[EntryKind],
) -> Result<Entry<'m>, ApiError> {
    let point = call::find(module, name, kinds)?;
    Ok(Entry { point, module })
}

impl Entry<'_> {
    /// Encodes the JSON arguments ([`EntryPoint::encode_args`]).
    pub fn encode_args(&self, args: &serde_json::Value) -> Result<Vec<u8>, ApiError> {
        self.point.encode_args(args)
    }

    /// What the worker needs to run the call: owned, so it can cross threads.
    pub fn invocation(&self) -> Invocation {
        Invocation {
            kind: self.point.kind,
            name: self.point.name.to_owned(),
            found_in: self.module.clone(),
        }
    }

    /// The answer to a call that ended in `outcome`, when the last commit was `offset`
    /// ([`Done::offset`](crate::worker::Done)): its commit or its return value as JSON, or the
    /// error it ended in. The server bounds returned values first
    /// ([`Results`](crate::results::Results)).
    pub fn answer(&self, outcome: Outcome, offset: u64) -> Result<CallResponse, ApiError> {
        match outcome {
            Outcome::Committed { commit, duration } => Ok(CallResponse::committed(
                commit.map_or(offset, |commit| commit.offset),
                duration,
            )),
            Outcome::Returned { bytes, duration } => self.point.returned(&bytes, offset, duration),
            failed => Err(failure(failed)),
        }
    }
}

/// The encoded value `bytes` that a call of `invocation` (in `module`) returned, as JSON
/// ([`EntryPoint::value`]).
pub fn value(
    module: &ModuleDef,
    invocation: &Invocation,
    bytes: &[u8],
) -> Result<Box<RawValue>, ApiError> {
    call::find(module, invocation.name(), &[invocation.kind()])?.value(bytes)
}

/// A call to run on the thread that owns the module.
#[derive(Clone, Debug)]
pub struct Invocation {
    kind: EntryKind,
    name: String,
    /// The description its arguments were encoded for.
    found_in: Arc<ModuleDef>,
}

impl Invocation {
    /// The kind of entry point it calls.
    pub fn kind(&self) -> EntryKind {
        self.kind
    }

    /// The name of the entry point it calls.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the call may write to the tables: a reducer or a procedure, not a view.
    pub fn writes(&self) -> bool {
        matches!(self.kind, EntryKind::Reducer | EntryKind::Procedure)
    }

    /// Runs the call as `caller` (ignored by anonymous views) over the connection
    /// `connection` ([`ConnectionId::ZERO`] for a call without one, such as an HTTP call) with
    /// the encoded `args`.
    ///
    /// If a newer build took over since the call was found ([`crate::build`]), it runs only
    /// if the newer build has the same entry point with parameters and a return type that
    /// encode alike; otherwise it fails (`no_such_entry` or `bad_arguments`, saying so) and
    /// the caller may call again.
    pub fn run(
        &self,
        module: &mut WasmModule,
        caller: Identity,
        connection: ConnectionId,
        args: &[u8],
    ) -> Outcome {
        if let Err(refused) = self.still_callable(module.description()) {
            return refused;
        }
        let name = &self.name;
        match self.kind {
            EntryKind::Reducer => module.call_reducer(name, caller, connection, args),
            EntryKind::Procedure => module.call_procedure(name, caller, connection, args),
            EntryKind::View | EntryKind::AnonymousView => module.call_view(name, caller, args),
            EntryKind::HttpHandler => Outcome::Failed {
                code: Errno::NO_SUCH_ENTRY.code() as i16,
                message: format!("http handler `{name}` is called by its route, not by name"),
            },
        }
    }
}

impl Invocation {
    /// `Ok` if the call, found in `self.found_in`, can run in the build described by `now`.
    fn still_callable(&self, now: &Arc<ModuleDef>) -> Result<(), Outcome> {
        if Arc::ptr_eq(&self.found_in, now) {
            return Ok(());
        }
        let (kind, name) = (self.kind, &self.name);
        let refused = |errno: Errno, why: &str| Outcome::Failed {
            code: errno.code() as i16,
            message: format!(
                "a new build of the module was published while the call to {kind} `{name}` \
                 waited, and {why}: it did not run"
            ),
        };
        let (Ok(before), Ok(after)) = (
            call::find(&self.found_in, name, &[kind]),
            call::find(now, name, &[kind]),
        ) else {
            return Err(refused(
                Errno::NO_SUCH_ENTRY,
                &format!("the new build has no {kind} `{name}` a client may call"),
            ));
        };
        let alike = |a: &AlgebraicType, b: &AlgebraicType| {
            same_encoding(&self.found_in.typespace, a, &now.typespace, b)
        };
        let unit = AlgebraicType::Product(Vec::new());
        let same_params = before.params.len() == after.params.len()
            && before
                .params
                .iter()
                .zip(after.params)
                .all(|(a, b)| alike(&a.ty, &b.ty));
        let same_return = alike(
            before.returns.unwrap_or(&unit),
            after.returns.unwrap_or(&unit),
        );
        if same_params && same_return {
            Ok(())
        } else {
            Err(refused(
                Errno::BAD_ARGUMENTS,
                "its parameters or its return type changed: call it again",
            ))
        }
    }
}

/// The error a failed or aborted call ends in:
///
/// | outcome | code |
/// |---|---|
/// | `BAD_ARGUMENTS` | `bad_arguments` (400), the module's message |
/// | `ENTRY_FAILED` | `entry_failed` (422), the module's message |
/// | `NO_SUCH_ENTRY` | `no_such_entry` (404) |
/// | any other code | `module_error` (500) |
/// | a trap or panic | `aborted` (500), with the reason |
pub fn failure(outcome: Outcome) -> ApiError {
    let errno = outcome.errno();
    match outcome {
        Outcome::Failed { message, .. } => {
            let code = match errno {
                Some(Errno::BAD_ARGUMENTS) => ErrorCode::BadArguments,
                Some(Errno::ENTRY_FAILED) => ErrorCode::EntryFailed,
                Some(Errno::NO_SUCH_ENTRY) => ErrorCode::NoSuchEntry,
                _ => ErrorCode::ModuleError,
            };
            ApiError::new(code, message)
        }
        Outcome::Aborted { reason } => {
            ApiError::new(ErrorCode::Aborted, format!("the module aborted: {reason}"))
        }
        success => ApiError::new(
            ErrorCode::Internal,
            format!("a successful call was taken for a failure: {success}"),
        ),
    }
}

/// Whether the module accepted a connection, from how its `client_connected` reducer ended
/// (`None`: it has none): the module may refuse it (`connection_refused`, with the module's
/// message).
pub fn accepted(outcome: Option<Outcome>) -> Result<(), ApiError> {
    match outcome {
        None => Ok(()),
        Some(outcome) if outcome.is_success() => Ok(()),
        Some(Outcome::Failed { message, .. }) => Err(ApiError::new(
            ErrorCode::ConnectionRefused,
            format!("the module refused the connection: {message}"),
        )),
        Some(other) => Err(failure(other)),
    }
}
