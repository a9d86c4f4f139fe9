//! The native transport: module code compiled for the host's own target, called in-process.
//!
//! This is how module authors test their modules with `cargo test`: the module's exports are
//! ordinary Rust functions ([`ModuleExports`]), and its imports are served by the
//! [`InstanceEnv`] of the call in progress, which the runtime's native import layer reaches
//! through [`with_env`] (`wasmod-testing` installs that bridge into the runtime). The
//! environment is moved into a thread-local for the duration of one export call and moved back
//! afterwards, panic or not; a panic in module code unwinds to here, is caught, and becomes
//! [`Outcome::Aborted`](crate::Outcome::Aborted) with its message, the transaction rolled
//! back, exactly as a trap would in wasm.

use crate::call::{AnonymousExport, CallerExport, ExportCall, LoadError, Transport, Trap};
use crate::env::{CallKind, CallOrigin, Durable, InstanceEnv, Tx};
use crate::module::LoadedModule;
use std::any::Any;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;
use wasmod_abi::{ModuleExports, Timestamp};
use wasmod_datastore::Commit;

thread_local! {
    /// The environment of the export call running on this thread, if any.
    static CURRENT: RefCell<Option<InstanceEnv>> = const { RefCell::new(None) };
}

/// Runs `f` on the [`InstanceEnv`] of the export call running on this thread.
///
/// The runtime's native import layer calls this for every import, through the imports
/// `wasmod-testing` installs.
///
/// # Panics
///
/// If no call is in progress on this thread (module code was called directly rather than
/// through the host), or if `f` itself calls `with_env` (imports do not nest).
pub fn with_env<R>(f: impl FnOnce(&mut InstanceEnv) -> R) -> R {
    CURRENT.with(|current| {
        let Ok(mut current) = current.try_borrow_mut() else {
            panic!("wasmod host imports were called from inside another import (`with_env` does not nest)")
        };
        let Some(env) = current.as_mut() else {
            panic!("no wasmod host is running on this thread: call module code through `wasmod_testing::TestModule`")
        };
        f(env)
    })
}

/// Moves `env` into the thread-local for the duration of `call`, and always back out.
fn with_installed<R>(env: &mut Option<InstanceEnv>, call: impl FnOnce() -> R) -> Result<R, Trap> {
    let installed = CURRENT.with(|current| match current.try_borrow_mut() {
        Ok(mut current) if current.is_none() => {
            *current = env.take();
            true
        }
        _ => false,
    });
    if !installed {
        return Err(Trap {
            message:
                "a wasmod call is already running on this thread: native module calls do not nest"
                    .into(),
        });
    }
    let result = call();
    *env = CURRENT.with(|current| current.borrow_mut().take());
    Ok(result)
}

/// The transport of a module compiled natively: its exports are `M`'s functions.
pub struct NativeTransport<M> {
    /// `None` only while an export call has lent it to the thread-local.
    env: Option<InstanceEnv>,
    module: PhantomData<fn() -> M>,
}

impl<M: ModuleExports> NativeTransport<M> {
    /// A transport over `env`.
    pub fn new(env: InstanceEnv) -> Self {
        Self {
            env: Some(env),
            module: PhantomData,
        }
    }
}

impl<M: ModuleExports> Transport for NativeTransport<M> {
    fn env_ref(&self) -> &InstanceEnv {
        // Only `call_export` lends the environment out, and it takes it back before returning.
        self.env
            .as_ref()
            .expect("the instance's environment is back after every export call")
    }

    fn env(&mut self) -> &mut InstanceEnv {
        // Only `call_export` lends the environment out, and it takes it back before returning.
        self.env
            .as_mut()
            .expect("the instance's environment is back after every export call")
    }

    fn call_export(&mut self, call: ExportCall) -> Result<i16, Trap> {
        let result = with_installed(&mut self.env, || {
            catch_unwind(AssertUnwindSafe(|| dispatch::<M>(call)))
        })?;
        result.map_err(|payload| Trap {
            message: panic_message(payload.as_ref()),
        })
    }
}

/// Calls the export `call` names.
fn dispatch<M: ModuleExports>(call: ExportCall) -> i16 {
    match call {
        ExportCall::Describe { sink } => M::describe_module(sink),
        ExportCall::WithCaller {
            export,
            id,
            sender,
            connection_id,
            timestamp,
            input,
            output,
        } => {
            let call = match export {
                CallerExport::Reducer => M::call_reducer,
                CallerExport::Procedure => M::call_procedure,
                CallerExport::View => M::call_view,
            };
            call(id, sender, connection_id, timestamp, input, output)
        }
        ExportCall::Anonymous {
            export,
            id,
            timestamp,
            input,
            output,
        } => {
            let call = match export {
                AnonymousExport::View => M::call_view_anon,
                AnonymousExport::HttpHandler => M::call_http_handler,
            };
            call(id, timestamp, input, output)
        }
    }
}

/// The message of a caught panic.
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "the module panicked with a value that is not a string".to_owned()
    }
}

/// A module compiled natively, loaded into an in-memory host: what `cargo test` of a module
/// runs against.
pub type NativeModule<M> = LoadedModule<NativeTransport<M>>;

impl<M: ModuleExports> LoadedModule<NativeTransport<M>> {
    /// Describes the module, creates its tables, and runs its `init` reducer.
    pub fn new() -> Result<Self, LoadError> {
        Self::with_env(InstanceEnv::unloaded())
    }

    /// Like [`NativeModule::new`], over `env` (an [`InstanceEnv::unloaded`] configured with
    /// limits, an HTTP client or persistence).
    pub fn with_env(env: InstanceEnv) -> Result<Self, LoadError> {
        Self::start(NativeTransport::new(env))
    }

    /// Runs `f` as module code inside a read-only transaction, as a view runs: the runtime's
    /// table handles work inside it, writes fail. A panic in `f` propagates, after the
    /// environment is restored.
    pub fn read_as_module<R>(&mut self, f: impl FnOnce() -> R) -> R {
        let tx = Tx::Read(self.database().begin_read());
        let (result, _) = self.run_as_module(CallKind::View, tx, f);
        result
    }

    /// Runs `f` as module code inside a transaction, as a reducer runs, and commits it as the
    /// host's own: the runtime's table handles can write. Returns `f`'s result and the
    /// commit (`None` if nothing changed). A panic in `f` rolls the transaction back and
    /// propagates.
    ///
    /// # Panics
    ///
    /// Also if the tables have a commit log and the commit could not be made durable.
    pub fn write_as_module<R>(&mut self, f: impl FnOnce() -> R) -> (R, Option<Arc<Commit>>) {
        let tx = Tx::Reducer(self.database().begin_mut());
        let (result, tx) = self.run_as_module(CallKind::Reducer, tx, f);
        let commit = match tx {
            Tx::Reducer(tx) => {
                let env = self.transport.env();
                env.set_origin(CallOrigin::HOST);
                env.commit(tx, Timestamp::now(), Durable::Deferred)
                    .unwrap_or_else(|error| panic!("the test's writes are not durable: {error}"))
            }
            _ => None,
        };
        (result, commit)
    }

    /// Installs the environment in a call of `kind` over `tx`, runs `f`, and hands back the
    /// transaction; a panic in `f` ends the call (dropping the transaction rolls it back) and
    /// resumes.
    fn run_as_module<R>(&mut self, kind: CallKind, tx: Tx, f: impl FnOnce() -> R) -> (R, Tx) {
        self.transport.env().begin_call(kind, tx);
        let outcome = with_installed(&mut self.transport.env, || {
            catch_unwind(AssertUnwindSafe(f))
        });
        let tx = self.transport.env().end_call();
        match outcome {
            Ok(Ok(result)) => (result, tx),
            Ok(Err(payload)) => resume_unwind(payload),
            Err(trap) => panic!("{}", trap.message),
        }
    }
}
