//! Testing modules natively, with `cargo test`.
//!
//! Module code compiles for the host's own target too. [`TestModule`] loads a module that way
//! into the real host: its description is read through `__describe_module__`, its tables are
//! created in the real datastore, its `init` runs, and every call goes through the same
//! dispatch `match` and the same host-side semantics as in wasm. Only the transport differs:
//! imports are served in-process instead of through wasm memory.
//!
//! ```
//! use wasmod::prelude::*;
//! use wasmod::testing::{Outcome, TestModule};
//!
//! #[wasmod::module]
//! mod counter {
//!     use wasmod::prelude::*;
//!
//!     #[table]
//!     pub struct Tally {
//!         #[primary_key]
//!         pub who: Identity,
//!         pub n: u64,
//!     }
//!
//!     #[reducer]
//!     fn bump(ctx: &ReducerContext, by: u64) -> Result<(), String> {
//!         if by == 0 {
//!             return Err("bump by at least 1".into());
//!         }
//!         let tallies = ctx.db.tally();
//!         let n = tallies.who().find(ctx.sender()).map_or(0, |tally| tally.n) + by;
//!         tallies.who().delete(ctx.sender());
//!         tallies.insert(Tally { who: ctx.sender(), n });
//!         Ok(())
//!     }
//! }
//! use counter::TallyAccess;
//!
//! let module = TestModule::<counter::Module>::new();
//! let alice = Identity::from_bytes([1; 32]);
//! assert!(module.call_reducer(alice, "bump", (2u64,)).is_success());
//! assert!(module.call_reducer(alice, "bump", (3u64,)).is_success());
//! assert!(matches!(module.call_reducer(alice, "bump", (0u64,)), Outcome::Failed { .. }));
//! assert_eq!(module.read(|db| db.tally().who().find(alice).map(|t| t.n)), Some(5));
//! ```

use crate::db::{Db, ReadOnly, ReadWrite};
use crate::http::{Request, Response};
use crate::{ConnectionId, Decode, Encode, Identity};
use std::cell::RefCell;
use std::sync::Arc;
use wasmod_abi::{EntryKind, EntryPoint, Errno, ModuleDef, ModuleExports};
use wasmod_host::NativeModule;

pub use wasmod_host::datastore::{Commit, Database, TxData};
pub use wasmod_host::{LoadError, LogLevel, LogRecord, Outcome};

/// A module loaded natively into an in-memory host.
///
/// Calls take the arguments as a tuple of the entry point's parameters (`()` for none,
/// `(x,)` for one), encoded as the ABI encodes them. Arguments that do not decode fail the
/// call with `BAD_ARGUMENTS`, and the message names how many the entry point takes, and which:
/// a tuple of the wrong length is the usual cause.
pub struct TestModule<M> {
    module: RefCell<NativeModule<M>>,
    description: Arc<ModuleDef>,
}

/// Why a procedure, view or HTTP call did not return a value.
#[derive(Debug)]
pub enum CallFailure {
    /// The call failed or aborted: the host's outcome.
    Outcome(Outcome),
    /// The call returned bytes that do not decode as the expected type.
    Decode(crate::DecodeError),
}

impl core::fmt::Display for CallFailure {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Outcome(outcome) => write!(f, "the call did not return: {outcome}"),
            Self::Decode(error) => write!(f, "the call's result did not decode: {error}"),
        }
    }
}

impl std::error::Error for CallFailure {}

impl<M: ModuleExports> Default for TestModule<M> {
    fn default() -> Self {
        Self::new()
    }
}

impl<M: ModuleExports> TestModule<M> {
    /// Loads the module and runs its `init` reducer.
    ///
    /// # Panics
    ///
    /// If the module cannot be loaded or its `init` fails: see [`try_new`](Self::try_new).
    pub fn new() -> Self {
        Self::try_new().unwrap_or_else(|error| panic!("the module did not load: {error}"))
    }

    /// Loads the module and runs its `init` reducer.
    pub fn try_new() -> Result<Self, LoadError> {
        let module = NativeModule::<M>::new()?;
        let description = Arc::new(module.module().clone());
        Ok(Self {
            module: RefCell::new(module),
            description,
        })
    }

    /// The module's description, as the host read it.
    pub fn description(&self) -> &ModuleDef {
        &self.description
    }

    /// The module's database: subscribe to its [`feed`](Database::feed) to see every commit
    /// the calls make, with who made it and what changed.
    pub fn database(&self) -> Arc<Database> {
        self.module.borrow().database().clone()
    }

    /// Calls reducer `name` as `sender`.
    pub fn call_reducer(&self, sender: Identity, name: &str, args: impl Encode) -> Outcome {
        let args = wasmod_abi::encoding::to_vec(&args);
        let outcome =
            self.module
                .borrow_mut()
                .call_reducer(name, sender, ConnectionId::ZERO, &args);
        self.naming_the_parameters(name, outcome)
    }

    /// Calls procedure `name` as `sender` and decodes its result.
    pub fn call_procedure<R: Decode>(
        &self,
        sender: Identity,
        name: &str,
        args: impl Encode,
    ) -> Result<R, CallFailure> {
        let args = wasmod_abi::encoding::to_vec(&args);
        let outcome =
            self.module
                .borrow_mut()
                .call_procedure(name, sender, ConnectionId::ZERO, &args);
        returned(self.naming_the_parameters(name, outcome))
    }

    /// Calls per-caller view `name` as `sender` and decodes its rows.
    pub fn call_view<R: Decode>(
        &self,
        sender: Identity,
        name: &str,
        args: impl Encode,
    ) -> Result<R, CallFailure> {
        let args = wasmod_abi::encoding::to_vec(&args);
        let outcome = self.module.borrow_mut().call_view(name, sender, &args);
        returned(self.naming_the_parameters(name, outcome))
    }

    /// Calls anonymous view `name` and decodes its rows.
    pub fn call_anonymous_view<R: Decode>(
        &self,
        name: &str,
        args: impl Encode,
    ) -> Result<R, CallFailure> {
        self.call_view(Identity::ZERO, name, args)
    }

    /// Sends `request` to the HTTP handler of its method and path.
    pub fn call_http(&self, request: Request) -> Result<Response, CallFailure> {
        returned(self.module.borrow_mut().call_http(&request))
    }

    /// Runs the module's `client_connected` reducer for `identity` (a committed no-op if it has
    /// none).
    pub fn connect(&self, identity: Identity) -> Outcome {
        let outcome = self
            .module
            .borrow_mut()
            .client_connected(identity, ConnectionId::ZERO);
        outcome.unwrap_or_else(no_lifecycle_reducer)
    }

    /// Runs the module's `client_disconnected` reducer for `identity` (a committed no-op if it
    /// has none).
    pub fn disconnect(&self, identity: Identity) -> Outcome {
        let outcome = self
            .module
            .borrow_mut()
            .client_disconnected(identity, ConnectionId::ZERO);
        outcome.unwrap_or_else(no_lifecycle_reducer)
    }

    /// Reads the tables through the module's own handles, as a view would:
    /// `module.read(|db| db.message().count())`.
    pub fn read<R>(&self, f: impl FnOnce(&Db<ReadOnly>) -> R) -> R {
        self.module.borrow_mut().read_as_module(|| f(&Db::new()))
    }

    /// Writes the tables through the module's own handles in one committed transaction, to set
    /// up a test: `module.write(|db| db.message().insert(..))`.
    pub fn write<R>(&self, f: impl FnOnce(&Db<ReadWrite>) -> R) -> R {
        self.module.borrow_mut().write_as_module(|| f(&Db::new())).0
    }

    /// `outcome`, its message completed with the parameters of entry point `name` if the
    /// arguments did not decode: the module's own message names only the parameter where
    /// decoding stopped, which for a tuple of the wrong length does not say what was expected.
    fn naming_the_parameters(&self, name: &str, outcome: Outcome) -> Outcome {
        if outcome.errno() != Some(Errno::BAD_ARGUMENTS) {
            return outcome;
        }
        let Outcome::Failed { code, message } = outcome else {
            return outcome;
        };
        let entry = self
            .description
            .entry_points()
            .find(|entry| entry.kind != EntryKind::HttpHandler && entry.name == name);
        let Some(entry) = entry else {
            return Outcome::Failed { code, message };
        };
        Outcome::Failed {
            code,
            message: format!("{message}; {}", expected_arguments(entry)),
        }
    }

    /// The lines the last call logged, oldest first.
    pub fn logs(&self) -> Vec<LogRecord> {
        self.module.borrow().logs()
    }
}

/// What `entry` takes, in words: "`add` takes 2 arguments, as the tuple `(sku, price)`".
fn expected_arguments(entry: EntryPoint<'_>) -> String {
    let names: Vec<&str> = entry
        .params
        .iter()
        .map(|param| param.name.as_str())
        .collect();
    match names.as_slice() {
        [] => format!("`{}` takes no arguments, as `()`", entry.name),
        [one] => format!("`{}` takes 1 argument, as the tuple `({one},)`", entry.name),
        many => format!(
            "`{}` takes {} arguments, as the tuple `({})`",
            entry.name,
            many.len(),
            many.join(", ")
        ),
    }
}

fn no_lifecycle_reducer() -> Outcome {
    Outcome::Committed {
        commit: None,
        duration: std::time::Duration::ZERO,
    }
}

fn returned<R: Decode>(outcome: Outcome) -> Result<R, CallFailure> {
    match outcome {
        Outcome::Returned { bytes, .. } => {
            wasmod_abi::encoding::from_slice(&bytes).map_err(CallFailure::Decode)
        }
        other => Err(CallFailure::Outcome(other)),
    }
}
