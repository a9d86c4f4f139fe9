//! Calling a module's entry points by name with JSON: finding, encoding, running, answering.
//!
//! This is the part of the API that does not depend on HTTP, so that the server's routes and
//! `wasmod call` (which runs a module in-process) behave the same way, refuse the same calls
//! with the same codes and print the same JSON:
//!
//! 1. [`find`] looks the name up in the description, among the kinds
//!    ([`EntryKind`]s) a route accepts, and refuses lifecycle reducers (only the host calls
//!    them);
//! 2. [`Entry::encode_args`] converts the JSON arguments through the parameters' types, with
//!    errors that name the parameter;
//! 3. [`Invocation::run`] calls the module (on whatever thread owns it);
//! 4. [`Entry::answer`] turns the [`Outcome`] into a [`CallResult`] (the return value
//!    rendered as JSON) or an [`ApiError`] with a status that fits ([`failure`]).

use crate::error::{ApiError, ErrorCode};
use serde_json::{json, Value};
use std::time::Duration;
use wasmod_abi::{
    AlgebraicType, ConnectionId, EntryKind, EntryPoint, Errno, Identity, ModuleDef, ParamDef,
};
use wasmod_host::{args_from_json, value_to_json, Outcome, WasmModule};

/// The kinds of entry point clients call by name (HTTP handlers are called by route).
pub const CALLED_BY_NAME: [EntryKind; 4] = [
    EntryKind::Reducer,
    EntryKind::Procedure,
    EntryKind::View,
    EntryKind::AnonymousView,
];

/// The path of the API that calls entry points of `kind` by name, such as `/v1/reducers`;
/// `None` for kinds not called by name.
pub const fn route(kind: EntryKind) -> Option<&'static str> {
    match kind {
        EntryKind::Reducer => Some("/v1/reducers"),
        EntryKind::Procedure => Some("/v1/procedures"),
        EntryKind::View | EntryKind::AnonymousView => Some("/v1/views"),
        _ => None,
    }
}

/// An entry point found in a module's description.
#[derive(Clone, Copy, Debug)]
pub struct Entry<'m> {
    /// Its kind.
    pub kind: EntryKind,
    /// Its name.
    pub name: &'m str,
    /// Its parameters, after the context.
    pub params: &'m [ParamDef],
    /// The type it returns; `None` for reducers.
    pub returns: Option<&'m AlgebraicType>,
    module: &'m ModuleDef,
}

/// Finds the entry point `name` among the kinds `kinds`.
///
/// Fails with `no_such_entry` (saying what `name` is, if it is an entry point of another kind)
/// or `lifecycle_reducer`.
pub fn find<'m>(
    module: &'m ModuleDef,
    name: &str,
    kinds: &[EntryKind],
) -> Result<Entry<'m>, ApiError> {
    let found = kinds.iter().find_map(|&kind| {
        module
            .entry_points_of(kind)
            .find(|entry| entry.name == name)
    });
    if let Some(EntryPoint {
        kind,
        name,
        params,
        returns,
        lifecycle,
        ..
    }) = found
    {
        if lifecycle.is_some() {
            return Err(ApiError::new(
                ErrorCode::LifecycleReducer,
                format!("`{name}` is a lifecycle reducer: only the host calls it"),
            ));
        }
        return Ok(Entry {
            kind,
            name,
            params,
            returns,
            module,
        });
    }
    let wanted = match kinds {
        [EntryKind::View, EntryKind::AnonymousView]
        | [EntryKind::AnonymousView, EntryKind::View] => "view",
        [one] => one.as_str(),
        _ => "reducer, procedure or view",
    };
    let message = match module.entry_point_names().find(|&(_, other)| other == name) {
        Some((actual, _)) => {
            format!("`{name}` is not a {wanted}: it is one of the module's {actual}s")
        }
        None => format!("the module has no {wanted} named `{name}`"),
    };
    Err(ApiError::new(ErrorCode::NoSuchEntry, message))
}

impl Entry<'_> {
    /// Encodes the JSON arguments (an array in parameter order, or an object keyed by
    /// parameter name; `null` for none) as the module expects them.
    pub fn encode_args(&self, args: &Value) -> Result<Vec<u8>, ApiError> {
        let none = json!([]);
        let args = if args.is_null() { &none } else { args };
        args_from_json(self.params, &self.module.typespace, args).map_err(|error| {
            let error = error.in_entry_point(self.kind.as_str(), self.name);
            ApiError::new(ErrorCode::BadArguments, error.to_string())
        })
    }

    /// What the worker needs to run the call: owned, so it can cross threads.
    pub fn invocation(&self) -> Invocation {
        Invocation {
            kind: self.kind,
            name: self.name.to_owned(),
        }
    }

    /// The answer to a finished call: its return value as JSON, or the error it ended in.
    pub fn answer(&self, outcome: Outcome) -> Result<CallResult, ApiError> {
        match outcome {
            Outcome::Committed { duration, .. } => Ok(CallResult::Committed { duration }),
            Outcome::Returned { bytes, duration } => {
                let unit = AlgebraicType::Product(Vec::new());
                let returns = self.returns.unwrap_or(&unit);
                let value = value_to_json(returns, &self.module.typespace, &bytes).map_err(
                    |error| {
                        ApiError::new(
                            ErrorCode::ModuleError,
                            format!(
                                "{} `{}` returned a value that does not match its description: {error}",
                                self.kind.as_str(),
                                self.name
                            ),
                        )
                    },
                )?;
                Ok(CallResult::Returned { value, duration })
            }
            failed => Err(failure(failed)),
        }
    }
}

/// A call to run on the thread that owns the module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invocation {
    kind: EntryKind,
    name: String,
}

impl Invocation {
    /// Runs the call as `caller` (ignored by anonymous views) with the encoded `args`. A kind
    /// not [called by name](CALLED_BY_NAME) is refused with `NO_SUCH_ENTRY`.
    pub fn run(&self, module: &mut WasmModule, caller: Identity, args: &[u8]) -> Outcome {
        let name = &self.name;
        match self.kind {
            EntryKind::Reducer => module.call_reducer(name, caller, ConnectionId::ZERO, args),
            EntryKind::Procedure => module.call_procedure(name, caller, ConnectionId::ZERO, args),
            EntryKind::View | EntryKind::AnonymousView => module.call_view(name, caller, args),
            other => Outcome::Failed {
                code: Errno::NO_SUCH_ENTRY.code() as i16,
                message: format!("{other} `{name}` is not called by name"),
            },
        }
    }
}

/// A successful call.
#[derive(Clone, Debug, PartialEq)]
pub enum CallResult {
    /// A reducer's transaction committed.
    Committed {
        /// How long the call took in the module, commit included.
        duration: Duration,
    },
    /// A procedure or view returned a value.
    Returned {
        /// The value, as JSON.
        value: Value,
        /// How long the call took in the module.
        duration: Duration,
    },
}

impl CallResult {
    /// The result as the API writes it: `{"status": "committed", "duration_us": ..}` or
    /// `{"status": "returned", "result": .., "duration_us": ..}`.
    pub fn to_json(&self) -> Value {
        let micros = |duration: &Duration| u64::try_from(duration.as_micros()).unwrap_or(u64::MAX);
        match self {
            Self::Committed { duration } => {
                json!({ "status": "committed", "duration_us": micros(duration) })
            }
            Self::Returned { value, duration } => {
                json!({ "status": "returned", "result": value, "duration_us": micros(duration) })
            }
        }
    }
}

/// Runs the module's `client_connected` reducer for `identity`: the module may refuse it
/// (`connection_refused`, with the module's message).
pub fn connect(module: &mut WasmModule, identity: Identity) -> Result<(), ApiError> {
    match module.client_connected(identity, ConnectionId::ZERO) {
        None => Ok(()),
        Some(outcome) if outcome.is_success() => Ok(()),
        Some(Outcome::Failed { message, .. }) => Err(ApiError::new(
            ErrorCode::ConnectionRefused,
            format!("the module refused the connection: {message}"),
        )),
        Some(other) => Err(failure(other)),
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
