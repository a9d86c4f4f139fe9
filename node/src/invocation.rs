//! A call to run on the module's thread: what the pipeline found ([`Invocation`]), how it
//! runs ([`Invocation::run`]), and how its [`Outcome`] becomes an answer or an error
//! ([`Invocation::answer`], [`failure`]).
//!
//! Finding an entry point, encoding its JSON arguments and rendering its result need only the
//! description, and are the protocol's ([`wasmod_protocol::call`]), so that every transport
//! and `wasmod call` refuse the same calls with the same codes and print the same JSON.

use serde_json::value::RawValue;
use std::sync::Arc;
use wasmod_abi::{AlgebraicType, EntryKind, Errno, ModuleDef};
use wasmod_host::datastore::migrate::same_encoding;
use wasmod_host::{Caller, Outcome, WasmModule};
use wasmod_protocol::call::{self, EntryPoint};
use wasmod_protocol::errors::{ApiError, ErrorCode};
use wasmod_protocol::http::CallResponse;

/// A call's arguments, as its transport has them.
#[derive(Debug)]
pub enum Args {
    /// JSON: an array in parameter order, or an object keyed by parameter name.
    Json(serde_json::Value),
    /// Already in the module's encoding (the binary WebSocket protocol).
    Encoded(Vec<u8>),
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
    /// The call of the entry point `name` of `kind`, found in `found_in`.
    pub fn new(kind: EntryKind, name: String, found_in: Arc<ModuleDef>) -> Self {
        Self {
            kind,
            name,
            found_in,
        }
    }

    /// The entry point as the description it was found in says.
    fn point(&self) -> Result<EntryPoint<'_>, ApiError> {
        call::find(&self.found_in, &self.name, &[self.kind])
    }

    /// The arguments in the module's encoding: JSON converted through the parameters' types
    /// ([`EntryPoint::encode_args`]), encoded ones as they are.
    pub fn encode_args(&self, args: Args) -> Result<Vec<u8>, ApiError> {
        match args {
            Args::Json(json) => self.point()?.encode_args(&json),
            Args::Encoded(bytes) => Ok(bytes),
        }
    }

    /// The answer to the call once it ended in `outcome`, when the last commit was `offset`:
    /// its commit or its return value as JSON, or the error it ended in. Returned values are
    /// bounded first ([`Results`](crate::results::Results)).
    pub fn answer(&self, outcome: Outcome, offset: u64) -> Result<CallResponse, ApiError> {
        match outcome {
            Outcome::Committed { commit, duration } => Ok(CallResponse::committed(
                commit.map_or(offset, |commit| commit.offset),
                duration,
            )),
            Outcome::Returned { bytes, duration } => {
                self.point()?.returned(&bytes, offset, duration)
            }
            failed => Err(failure(failed)),
        }
    }

    /// The encoded value `bytes` that the call returned, as JSON ([`EntryPoint::value`]).
    pub fn value(&self, bytes: &[u8]) -> Result<Box<RawValue>, ApiError> {
        self.point()?.value(bytes)
    }

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

    /// Runs the call as `caller` (ignored by anonymous views): its identity, its connection
    /// ([`ConnectionId::ZERO`](wasmod_abi::ConnectionId::ZERO) for a call without one, such as
    /// an HTTP call) and its claims,
    /// with the encoded `args`.
    ///
    /// If a newer build took over since the call was found ([`crate::build`]), it runs only
    /// if the newer build has the same entry point with parameters and a return type that
    /// encode alike; otherwise it fails (`no_such_entry` or `bad_arguments`, saying so) and
    /// the caller may call again.
    pub fn run(&self, module: &mut WasmModule, caller: &Caller, args: &[u8]) -> Outcome {
        if let Err(refused) = self.still_callable(module.description()) {
            return refused;
        }
        let name = &self.name;
        match self.kind {
            EntryKind::Reducer => module.call_reducer_as(name, caller, args),
            EntryKind::Procedure => module.call_procedure_as(name, caller, args),
            EntryKind::View | EntryKind::AnonymousView => module.call_view_as(name, caller, args),
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

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_abi::encoding::to_vec;
    use wasmod_host::{InstanceEnv, WasmConfig, WasmEngine};
    use wasmod_protocol::call::CALLED_BY_NAME;
    use wasmod_wasm_tests::{built, Profile};

    #[test]
    fn calls_found_in_the_old_build_run_on_the_new_one_only_if_it_has_them_alike() {
        let built = built(Profile::Release);
        let engine = WasmEngine::shared().expect("the engine");
        let compile = |wasm: Vec<u8>| engine.compile(&wasm).expect("compiles");
        let v1 = compile(built.library("notes"));
        let mut module = WasmModule::load(&v1, WasmConfig::default(), InstanceEnv::unloaded())
            .expect("build 1 loads");
        let old = module.description().clone();
        module
            .replace(&compile(built.example("notes_v2")))
            .expect("build 2 takes over");
        let run = |module: &mut WasmModule, name: &str, args: Vec<u8>| {
            let found = call::find(&old, name, &CALLED_BY_NAME).expect("in build 1");
            Invocation::new(found.kind, name.to_owned(), old.clone()).run(
                module,
                &Caller::HOST,
                &args,
            )
        };

        let same = run(&mut module, "add_note", to_vec(&("kept".to_owned(),)));
        assert!(matches!(same, Outcome::Committed { .. }), "{same}");
        let changed = run(&mut module, "rename", to_vec(&(1u64, "x".to_owned())));
        let Outcome::Failed { code, message } = &changed else {
            panic!("refused: {changed}")
        };
        assert_eq!(*code, Errno::BAD_ARGUMENTS.code() as i16);
        assert!(
            message.contains("parameters or its return type changed"),
            "{message}"
        );
        let gone = run(&mut module, "forget", to_vec(&(1u64,)));
        let Outcome::Failed { code, message } = &gone else {
            panic!("refused: {gone}")
        };
        assert_eq!(*code, Errno::NO_SUCH_ENTRY.code() as i16);
        assert!(message.contains("no reducer `forget`"), "{message}");
        // `forget` did not run: the note is still there.
        let rows = module.read(|tables| tables.rows(0).expect("notes").count());
        assert_eq!(rows, 1);
    }
}
