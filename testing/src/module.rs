//! [`TestModule`]: a module loaded natively into an in-memory host, and what its calls return.

use crate::install_host;
use std::cell::RefCell;
use std::sync::Arc;
use wasmod::abi::{EntryKind, EntryPoint, ModuleDef, ModuleExports};
use wasmod::db::{Db, ReadOnly, ReadWrite};
use wasmod::http::{Request, Response};
use wasmod::{ConnectionId, Decode, DecodeError, Encode, Errno, Identity};
use wasmod_host::datastore::Database;
use wasmod_host::{Caller, Claims, LoadError, LogRecord, NativeModule, Outcome};

/// A module loaded natively into an in-memory host.
///
/// Calls take the arguments as a tuple of the entry point's parameters (`()` for none,
/// `(x,)` for one), encoded as the ABI encodes them. Arguments that do not decode fail the
/// call with `BAD_ARGUMENTS`, and the message names how many the entry point takes, and which:
/// a tuple of the wrong length is the usual cause. The tables live in memory and start empty
/// for each `TestModule`; outbound HTTP is refused (no destination is allowed).
///
/// The examples of its methods use a guestbook module with a reducer `sign(text)` that
/// refuses an empty text, a `client_connected` reducer, a procedure `count`, views `mine`
/// (per caller) and `all` (anonymous), and an HTTP handler for `GET /count`; the
/// [crate-level example](crate) shows a whole module.
///
/// ```
/// # use wasmod::prelude::*;
/// # use wasmod_testing::{CallFailure, Outcome, TestModule};
/// # #[wasmod::module]
/// # mod guestbook {
/// #     use wasmod::prelude::*;
/// #     #[table]
/// #     pub struct Entry {
/// #         #[primary_key]
/// #         pub who: Identity,
/// #         pub text: String,
/// #     }
/// #     #[reducer]
/// #     fn sign(ctx: &ReducerContext, text: String) -> Result<(), String> {
/// #         if text.is_empty() {
/// #             return Err("say something".into());
/// #         }
/// #         wasmod::info!("signed: {text}");
/// #         ctx.db.entry().insert(Entry { who: ctx.sender(), text });
/// #         Ok(())
/// #     }
/// #     #[reducer(client_connected)]
/// #     fn hello(ctx: &ReducerContext) {
/// #         wasmod::info!("connected");
/// #     }
/// #     #[procedure]
/// #     fn count(ctx: &mut ProcedureContext) -> u64 {
/// #         ctx.with_read_tx(|tx| tx.db.entry().count())
/// #     }
/// #     #[view]
/// #     fn mine(ctx: &ViewContext) -> Option<String> {
/// #         ctx.db.entry().who().find(ctx.sender()).map(|entry| entry.text)
/// #     }
/// #     #[view]
/// #     fn all(ctx: &AnonymousViewContext) -> Vec<String> {
/// #         ctx.db.entry().iter().map(|entry| entry.text).collect()
/// #     }
/// #     #[http_handler(GET, "/count")]
/// #     fn count_page(ctx: &mut HttpContext, _request: Request) -> Response {
/// #         Response::text(ctx.with_read_tx(|tx| tx.db.entry().count()).to_string())
/// #     }
/// # }
/// # use guestbook::{Entry, EntryAccess};
/// # let module = TestModule::<guestbook::Module>::new();
/// # let ann = Identity::from_bytes([1; 32]);
/// assert!(module.call_reducer(ann, "sign", ("hello".to_string(),)).is_success());
/// assert_eq!(module.read(|db| db.entry().count()), 1);
/// ```
pub struct TestModule<M> {
    module: RefCell<NativeModule<M>>,
    description: Arc<ModuleDef>,
}

/// Why a procedure, view or HTTP call did not return a value.
///
/// ```
/// # use wasmod::prelude::*;
/// # use wasmod_testing::{CallFailure, Outcome, TestModule};
/// # #[wasmod::module]
/// # mod guestbook {
/// #     use wasmod::prelude::*;
/// #     #[table]
/// #     pub struct Entry {
/// #         #[primary_key]
/// #         pub who: Identity,
/// #         pub text: String,
/// #     }
/// #     #[reducer]
/// #     fn sign(ctx: &ReducerContext, text: String) -> Result<(), String> {
/// #         if text.is_empty() {
/// #             return Err("say something".into());
/// #         }
/// #         wasmod::info!("signed: {text}");
/// #         ctx.db.entry().insert(Entry { who: ctx.sender(), text });
/// #         Ok(())
/// #     }
/// #     #[reducer(client_connected)]
/// #     fn hello(ctx: &ReducerContext) {
/// #         wasmod::info!("connected");
/// #     }
/// #     #[procedure]
/// #     fn count(ctx: &mut ProcedureContext) -> u64 {
/// #         ctx.with_read_tx(|tx| tx.db.entry().count())
/// #     }
/// #     #[view]
/// #     fn mine(ctx: &ViewContext) -> Option<String> {
/// #         ctx.db.entry().who().find(ctx.sender()).map(|entry| entry.text)
/// #     }
/// #     #[view]
/// #     fn all(ctx: &AnonymousViewContext) -> Vec<String> {
/// #         ctx.db.entry().iter().map(|entry| entry.text).collect()
/// #     }
/// #     #[http_handler(GET, "/count")]
/// #     fn count_page(ctx: &mut HttpContext, _request: Request) -> Response {
/// #         Response::text(ctx.with_read_tx(|tx| tx.db.entry().count()).to_string())
/// #     }
/// # }
/// # use guestbook::{Entry, EntryAccess};
/// # let module = TestModule::<guestbook::Module>::new();
/// # let ann = Identity::from_bytes([1; 32]);
/// // `count` returns a `u64`, which does not decode as a `String`.
/// let wrong = module.call_procedure::<String>(ann, "count", ());
/// assert!(matches!(wrong, Err(CallFailure::Decode(_))));
/// ```
#[derive(Debug)]
pub enum CallFailure {
    /// The call failed or aborted: the host's outcome.
    Outcome(Outcome),
    /// The call returned bytes that do not decode as the expected type.
    Decode(DecodeError),
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
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::{CallFailure, Outcome, TestModule};
    /// # #[wasmod::module]
    /// # mod guestbook {
    /// #     use wasmod::prelude::*;
    /// #     #[table]
    /// #     pub struct Entry {
    /// #         #[primary_key]
    /// #         pub who: Identity,
    /// #         pub text: String,
    /// #     }
    /// #     #[reducer]
    /// #     fn sign(ctx: &ReducerContext, text: String) -> Result<(), String> {
    /// #         if text.is_empty() {
    /// #             return Err("say something".into());
    /// #         }
    /// #         wasmod::info!("signed: {text}");
    /// #         ctx.db.entry().insert(Entry { who: ctx.sender(), text });
    /// #         Ok(())
    /// #     }
    /// #     #[reducer(client_connected)]
    /// #     fn hello(ctx: &ReducerContext) {
    /// #         wasmod::info!("connected");
    /// #     }
    /// #     #[procedure]
    /// #     fn count(ctx: &mut ProcedureContext) -> u64 {
    /// #         ctx.with_read_tx(|tx| tx.db.entry().count())
    /// #     }
    /// #     #[view]
    /// #     fn mine(ctx: &ViewContext) -> Option<String> {
    /// #         ctx.db.entry().who().find(ctx.sender()).map(|entry| entry.text)
    /// #     }
    /// #     #[view]
    /// #     fn all(ctx: &AnonymousViewContext) -> Vec<String> {
    /// #         ctx.db.entry().iter().map(|entry| entry.text).collect()
    /// #     }
    /// #     #[http_handler(GET, "/count")]
    /// #     fn count_page(ctx: &mut HttpContext, _request: Request) -> Response {
    /// #         Response::text(ctx.with_read_tx(|tx| tx.db.entry().count()).to_string())
    /// #     }
    /// # }
    /// # use guestbook::{Entry, EntryAccess};
    /// # let module = TestModule::<guestbook::Module>::new();
    /// # let ann = Identity::from_bytes([1; 32]);
    /// assert_eq!(module.read(|db| db.entry().count()), 0);
    /// ```
    pub fn new() -> Self {
        Self::try_new().unwrap_or_else(|error| panic!("the module did not load: {error}"))
    }

    /// Loads the module and runs its `init` reducer.
    ///
    /// # Errors
    ///
    /// A [`LoadError`] if the module's description is refused (the host's checks of tables,
    /// indexes and entry points) or its `init` reducer fails.
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::{CallFailure, Outcome, TestModule};
    /// # #[wasmod::module]
    /// # mod guestbook {
    /// #     use wasmod::prelude::*;
    /// #     #[table]
    /// #     pub struct Entry {
    /// #         #[primary_key]
    /// #         pub who: Identity,
    /// #         pub text: String,
    /// #     }
    /// #     #[reducer]
    /// #     fn sign(ctx: &ReducerContext, text: String) -> Result<(), String> {
    /// #         if text.is_empty() {
    /// #             return Err("say something".into());
    /// #         }
    /// #         wasmod::info!("signed: {text}");
    /// #         ctx.db.entry().insert(Entry { who: ctx.sender(), text });
    /// #         Ok(())
    /// #     }
    /// #     #[reducer(client_connected)]
    /// #     fn hello(ctx: &ReducerContext) {
    /// #         wasmod::info!("connected");
    /// #     }
    /// #     #[procedure]
    /// #     fn count(ctx: &mut ProcedureContext) -> u64 {
    /// #         ctx.with_read_tx(|tx| tx.db.entry().count())
    /// #     }
    /// #     #[view]
    /// #     fn mine(ctx: &ViewContext) -> Option<String> {
    /// #         ctx.db.entry().who().find(ctx.sender()).map(|entry| entry.text)
    /// #     }
    /// #     #[view]
    /// #     fn all(ctx: &AnonymousViewContext) -> Vec<String> {
    /// #         ctx.db.entry().iter().map(|entry| entry.text).collect()
    /// #     }
    /// #     #[http_handler(GET, "/count")]
    /// #     fn count_page(ctx: &mut HttpContext, _request: Request) -> Response {
    /// #         Response::text(ctx.with_read_tx(|tx| tx.db.entry().count()).to_string())
    /// #     }
    /// # }
    /// # use guestbook::{Entry, EntryAccess};
    /// # let module = TestModule::<guestbook::Module>::new();
    /// # let ann = Identity::from_bytes([1; 32]);
    /// let loaded = TestModule::<guestbook::Module>::try_new();
    /// assert!(loaded.is_ok());
    /// ```
    pub fn try_new() -> Result<Self, LoadError> {
        install_host();
        let module = NativeModule::<M>::new()?;
        let description = Arc::new(module.module().clone());
        Ok(Self {
            module: RefCell::new(module),
            description,
        })
    }

    /// The module's description, as the host read it.
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::{CallFailure, Outcome, TestModule};
    /// # #[wasmod::module]
    /// # mod guestbook {
    /// #     use wasmod::prelude::*;
    /// #     #[table]
    /// #     pub struct Entry {
    /// #         #[primary_key]
    /// #         pub who: Identity,
    /// #         pub text: String,
    /// #     }
    /// #     #[reducer]
    /// #     fn sign(ctx: &ReducerContext, text: String) -> Result<(), String> {
    /// #         if text.is_empty() {
    /// #             return Err("say something".into());
    /// #         }
    /// #         wasmod::info!("signed: {text}");
    /// #         ctx.db.entry().insert(Entry { who: ctx.sender(), text });
    /// #         Ok(())
    /// #     }
    /// #     #[reducer(client_connected)]
    /// #     fn hello(ctx: &ReducerContext) {
    /// #         wasmod::info!("connected");
    /// #     }
    /// #     #[procedure]
    /// #     fn count(ctx: &mut ProcedureContext) -> u64 {
    /// #         ctx.with_read_tx(|tx| tx.db.entry().count())
    /// #     }
    /// #     #[view]
    /// #     fn mine(ctx: &ViewContext) -> Option<String> {
    /// #         ctx.db.entry().who().find(ctx.sender()).map(|entry| entry.text)
    /// #     }
    /// #     #[view]
    /// #     fn all(ctx: &AnonymousViewContext) -> Vec<String> {
    /// #         ctx.db.entry().iter().map(|entry| entry.text).collect()
    /// #     }
    /// #     #[http_handler(GET, "/count")]
    /// #     fn count_page(ctx: &mut HttpContext, _request: Request) -> Response {
    /// #         Response::text(ctx.with_read_tx(|tx| tx.db.entry().count()).to_string())
    /// #     }
    /// # }
    /// # use guestbook::{Entry, EntryAccess};
    /// # let module = TestModule::<guestbook::Module>::new();
    /// # let ann = Identity::from_bytes([1; 32]);
    /// let tables: Vec<&str> =
    ///     module.description().tables.iter().map(|table| table.name.as_str()).collect();
    /// assert_eq!(tables, ["entry"]);
    /// ```
    pub fn description(&self) -> &ModuleDef {
        &self.description
    }

    /// The module's database: subscribe to its [`feed`](Database::feed) to see every commit
    /// the calls make, with who made it and what changed.
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::{CallFailure, Outcome, TestModule};
    /// # #[wasmod::module]
    /// # mod guestbook {
    /// #     use wasmod::prelude::*;
    /// #     #[table]
    /// #     pub struct Entry {
    /// #         #[primary_key]
    /// #         pub who: Identity,
    /// #         pub text: String,
    /// #     }
    /// #     #[reducer]
    /// #     fn sign(ctx: &ReducerContext, text: String) -> Result<(), String> {
    /// #         if text.is_empty() {
    /// #             return Err("say something".into());
    /// #         }
    /// #         wasmod::info!("signed: {text}");
    /// #         ctx.db.entry().insert(Entry { who: ctx.sender(), text });
    /// #         Ok(())
    /// #     }
    /// #     #[reducer(client_connected)]
    /// #     fn hello(ctx: &ReducerContext) {
    /// #         wasmod::info!("connected");
    /// #     }
    /// #     #[procedure]
    /// #     fn count(ctx: &mut ProcedureContext) -> u64 {
    /// #         ctx.with_read_tx(|tx| tx.db.entry().count())
    /// #     }
    /// #     #[view]
    /// #     fn mine(ctx: &ViewContext) -> Option<String> {
    /// #         ctx.db.entry().who().find(ctx.sender()).map(|entry| entry.text)
    /// #     }
    /// #     #[view]
    /// #     fn all(ctx: &AnonymousViewContext) -> Vec<String> {
    /// #         ctx.db.entry().iter().map(|entry| entry.text).collect()
    /// #     }
    /// #     #[http_handler(GET, "/count")]
    /// #     fn count_page(ctx: &mut HttpContext, _request: Request) -> Response {
    /// #         Response::text(ctx.with_read_tx(|tx| tx.db.entry().count()).to_string())
    /// #     }
    /// # }
    /// # use guestbook::{Entry, EntryAccess};
    /// # let module = TestModule::<guestbook::Module>::new();
    /// # let ann = Identity::from_bytes([1; 32]);
    /// let mut commits = module.database().feed().subscribe();
    /// module.call_reducer(ann, "sign", ("hello".to_string(),));
    /// let commit = commits.try_recv().unwrap();
    /// assert_eq!(commit.meta.caller, ann);
    /// ```
    pub fn database(&self) -> Arc<Database> {
        self.module.borrow().database().clone()
    }

    /// Calls reducer `name` as `sender`: [`Outcome::Committed`] if it succeeded,
    /// [`Outcome::Failed`] with its message if it returned `Err` (or the arguments did not
    /// decode), [`Outcome::Aborted`] if it panicked; the last two rolled its writes back.
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::{CallFailure, Outcome, TestModule};
    /// # #[wasmod::module]
    /// # mod guestbook {
    /// #     use wasmod::prelude::*;
    /// #     #[table]
    /// #     pub struct Entry {
    /// #         #[primary_key]
    /// #         pub who: Identity,
    /// #         pub text: String,
    /// #     }
    /// #     #[reducer]
    /// #     fn sign(ctx: &ReducerContext, text: String) -> Result<(), String> {
    /// #         if text.is_empty() {
    /// #             return Err("say something".into());
    /// #         }
    /// #         wasmod::info!("signed: {text}");
    /// #         ctx.db.entry().insert(Entry { who: ctx.sender(), text });
    /// #         Ok(())
    /// #     }
    /// #     #[reducer(client_connected)]
    /// #     fn hello(ctx: &ReducerContext) {
    /// #         wasmod::info!("connected");
    /// #     }
    /// #     #[procedure]
    /// #     fn count(ctx: &mut ProcedureContext) -> u64 {
    /// #         ctx.with_read_tx(|tx| tx.db.entry().count())
    /// #     }
    /// #     #[view]
    /// #     fn mine(ctx: &ViewContext) -> Option<String> {
    /// #         ctx.db.entry().who().find(ctx.sender()).map(|entry| entry.text)
    /// #     }
    /// #     #[view]
    /// #     fn all(ctx: &AnonymousViewContext) -> Vec<String> {
    /// #         ctx.db.entry().iter().map(|entry| entry.text).collect()
    /// #     }
    /// #     #[http_handler(GET, "/count")]
    /// #     fn count_page(ctx: &mut HttpContext, _request: Request) -> Response {
    /// #         Response::text(ctx.with_read_tx(|tx| tx.db.entry().count()).to_string())
    /// #     }
    /// # }
    /// # use guestbook::{Entry, EntryAccess};
    /// # let module = TestModule::<guestbook::Module>::new();
    /// # let ann = Identity::from_bytes([1; 32]);
    /// assert!(module.call_reducer(ann, "sign", ("hello".to_string(),)).is_success());
    /// match module.call_reducer(ann, "sign", (String::new(),)) {
    ///     Outcome::Failed { message, .. } => assert_eq!(message, "say something"),
    ///     other => panic!("{other}"),
    /// }
    /// ```
    pub fn call_reducer(&self, sender: Identity, name: &str, args: impl Encode) -> Outcome {
        self.reducer_as(&caller(sender, None), name, args)
    }

    /// [`call_reducer`](Self::call_reducer) as `caller`.
    pub(crate) fn reducer_as(&self, caller: &Caller, name: &str, args: impl Encode) -> Outcome {
        let args = wasmod::abi::encoding::to_vec(&args);
        let outcome = self
            .module
            .borrow_mut()
            .call_reducer_as(name, caller, &args);
        self.naming_the_parameters(name, outcome)
    }

    /// Calls procedure `name` as `sender` and decodes its result as `R`. A procedure that
    /// returns a `Result` returns it as its value, so `R` is that `Result`.
    ///
    /// # Errors
    ///
    /// [`CallFailure::Outcome`] if the call failed (arguments that did not decode, a panic);
    /// [`CallFailure::Decode`] if the result is not an `R`.
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::{CallFailure, Outcome, TestModule};
    /// # #[wasmod::module]
    /// # mod guestbook {
    /// #     use wasmod::prelude::*;
    /// #     #[table]
    /// #     pub struct Entry {
    /// #         #[primary_key]
    /// #         pub who: Identity,
    /// #         pub text: String,
    /// #     }
    /// #     #[reducer]
    /// #     fn sign(ctx: &ReducerContext, text: String) -> Result<(), String> {
    /// #         if text.is_empty() {
    /// #             return Err("say something".into());
    /// #         }
    /// #         wasmod::info!("signed: {text}");
    /// #         ctx.db.entry().insert(Entry { who: ctx.sender(), text });
    /// #         Ok(())
    /// #     }
    /// #     #[reducer(client_connected)]
    /// #     fn hello(ctx: &ReducerContext) {
    /// #         wasmod::info!("connected");
    /// #     }
    /// #     #[procedure]
    /// #     fn count(ctx: &mut ProcedureContext) -> u64 {
    /// #         ctx.with_read_tx(|tx| tx.db.entry().count())
    /// #     }
    /// #     #[view]
    /// #     fn mine(ctx: &ViewContext) -> Option<String> {
    /// #         ctx.db.entry().who().find(ctx.sender()).map(|entry| entry.text)
    /// #     }
    /// #     #[view]
    /// #     fn all(ctx: &AnonymousViewContext) -> Vec<String> {
    /// #         ctx.db.entry().iter().map(|entry| entry.text).collect()
    /// #     }
    /// #     #[http_handler(GET, "/count")]
    /// #     fn count_page(ctx: &mut HttpContext, _request: Request) -> Response {
    /// #         Response::text(ctx.with_read_tx(|tx| tx.db.entry().count()).to_string())
    /// #     }
    /// # }
    /// # use guestbook::{Entry, EntryAccess};
    /// # let module = TestModule::<guestbook::Module>::new();
    /// # let ann = Identity::from_bytes([1; 32]);
    /// module.call_reducer(ann, "sign", ("hello".to_string(),));
    /// assert_eq!(module.call_procedure::<u64>(ann, "count", ()).unwrap(), 1);
    /// assert!(matches!(
    ///     module.call_procedure::<u64>(ann, "count", (1u8,)),
    ///     Err(CallFailure::Outcome(Outcome::Failed { .. }))
    /// ));
    /// ```
    pub fn call_procedure<R: Decode>(
        &self,
        sender: Identity,
        name: &str,
        args: impl Encode,
    ) -> Result<R, CallFailure> {
        self.procedure_as(&caller(sender, None), name, args)
    }

    /// [`call_procedure`](Self::call_procedure) as `caller`.
    pub(crate) fn procedure_as<R: Decode>(
        &self,
        caller: &Caller,
        name: &str,
        args: impl Encode,
    ) -> Result<R, CallFailure> {
        let args = wasmod::abi::encoding::to_vec(&args);
        let outcome = self
            .module
            .borrow_mut()
            .call_procedure_as(name, caller, &args);
        returned(self.naming_the_parameters(name, outcome))
    }

    /// Calls per-caller view `name` as `sender` and decodes its rows. Errors as
    /// [`call_procedure`](Self::call_procedure).
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::{CallFailure, Outcome, TestModule};
    /// # #[wasmod::module]
    /// # mod guestbook {
    /// #     use wasmod::prelude::*;
    /// #     #[table]
    /// #     pub struct Entry {
    /// #         #[primary_key]
    /// #         pub who: Identity,
    /// #         pub text: String,
    /// #     }
    /// #     #[reducer]
    /// #     fn sign(ctx: &ReducerContext, text: String) -> Result<(), String> {
    /// #         if text.is_empty() {
    /// #             return Err("say something".into());
    /// #         }
    /// #         wasmod::info!("signed: {text}");
    /// #         ctx.db.entry().insert(Entry { who: ctx.sender(), text });
    /// #         Ok(())
    /// #     }
    /// #     #[reducer(client_connected)]
    /// #     fn hello(ctx: &ReducerContext) {
    /// #         wasmod::info!("connected");
    /// #     }
    /// #     #[procedure]
    /// #     fn count(ctx: &mut ProcedureContext) -> u64 {
    /// #         ctx.with_read_tx(|tx| tx.db.entry().count())
    /// #     }
    /// #     #[view]
    /// #     fn mine(ctx: &ViewContext) -> Option<String> {
    /// #         ctx.db.entry().who().find(ctx.sender()).map(|entry| entry.text)
    /// #     }
    /// #     #[view]
    /// #     fn all(ctx: &AnonymousViewContext) -> Vec<String> {
    /// #         ctx.db.entry().iter().map(|entry| entry.text).collect()
    /// #     }
    /// #     #[http_handler(GET, "/count")]
    /// #     fn count_page(ctx: &mut HttpContext, _request: Request) -> Response {
    /// #         Response::text(ctx.with_read_tx(|tx| tx.db.entry().count()).to_string())
    /// #     }
    /// # }
    /// # use guestbook::{Entry, EntryAccess};
    /// # let module = TestModule::<guestbook::Module>::new();
    /// # let ann = Identity::from_bytes([1; 32]);
    /// module.call_reducer(ann, "sign", ("hello".to_string(),));
    /// let mine: Option<String> = module.call_view(ann, "mine", ()).unwrap();
    /// assert_eq!(mine.as_deref(), Some("hello"));
    /// ```
    pub fn call_view<R: Decode>(
        &self,
        sender: Identity,
        name: &str,
        args: impl Encode,
    ) -> Result<R, CallFailure> {
        self.view_as(&caller(sender, None), name, args)
    }

    /// [`call_view`](Self::call_view) as `caller`.
    pub(crate) fn view_as<R: Decode>(
        &self,
        caller: &Caller,
        name: &str,
        args: impl Encode,
    ) -> Result<R, CallFailure> {
        let args = wasmod::abi::encoding::to_vec(&args);
        let outcome = self.module.borrow_mut().call_view_as(name, caller, &args);
        returned(self.naming_the_parameters(name, outcome))
    }

    /// Calls anonymous view `name` and decodes its rows. Errors as
    /// [`call_procedure`](Self::call_procedure).
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::{CallFailure, Outcome, TestModule};
    /// # #[wasmod::module]
    /// # mod guestbook {
    /// #     use wasmod::prelude::*;
    /// #     #[table]
    /// #     pub struct Entry {
    /// #         #[primary_key]
    /// #         pub who: Identity,
    /// #         pub text: String,
    /// #     }
    /// #     #[reducer]
    /// #     fn sign(ctx: &ReducerContext, text: String) -> Result<(), String> {
    /// #         if text.is_empty() {
    /// #             return Err("say something".into());
    /// #         }
    /// #         wasmod::info!("signed: {text}");
    /// #         ctx.db.entry().insert(Entry { who: ctx.sender(), text });
    /// #         Ok(())
    /// #     }
    /// #     #[reducer(client_connected)]
    /// #     fn hello(ctx: &ReducerContext) {
    /// #         wasmod::info!("connected");
    /// #     }
    /// #     #[procedure]
    /// #     fn count(ctx: &mut ProcedureContext) -> u64 {
    /// #         ctx.with_read_tx(|tx| tx.db.entry().count())
    /// #     }
    /// #     #[view]
    /// #     fn mine(ctx: &ViewContext) -> Option<String> {
    /// #         ctx.db.entry().who().find(ctx.sender()).map(|entry| entry.text)
    /// #     }
    /// #     #[view]
    /// #     fn all(ctx: &AnonymousViewContext) -> Vec<String> {
    /// #         ctx.db.entry().iter().map(|entry| entry.text).collect()
    /// #     }
    /// #     #[http_handler(GET, "/count")]
    /// #     fn count_page(ctx: &mut HttpContext, _request: Request) -> Response {
    /// #         Response::text(ctx.with_read_tx(|tx| tx.db.entry().count()).to_string())
    /// #     }
    /// # }
    /// # use guestbook::{Entry, EntryAccess};
    /// # let module = TestModule::<guestbook::Module>::new();
    /// # let ann = Identity::from_bytes([1; 32]);
    /// module.call_reducer(ann, "sign", ("hello".to_string(),));
    /// let all: Vec<String> = module.call_anonymous_view("all", ()).unwrap();
    /// assert_eq!(all, ["hello"]);
    /// ```
    pub fn call_anonymous_view<R: Decode>(
        &self,
        name: &str,
        args: impl Encode,
    ) -> Result<R, CallFailure> {
        self.call_view(Identity::ZERO, name, args)
    }

    /// Sends `request` to the HTTP handler of its method and path (the path relative to the
    /// module's prefix, its query in `request.query`).
    ///
    /// # Errors
    ///
    /// [`CallFailure::Outcome`] if no handler matches or the handler failed or panicked (the
    /// server would answer those with an error status, see `docs/http-handlers.md`).
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::{CallFailure, Outcome, TestModule};
    /// # #[wasmod::module]
    /// # mod guestbook {
    /// #     use wasmod::prelude::*;
    /// #     #[table]
    /// #     pub struct Entry {
    /// #         #[primary_key]
    /// #         pub who: Identity,
    /// #         pub text: String,
    /// #     }
    /// #     #[reducer]
    /// #     fn sign(ctx: &ReducerContext, text: String) -> Result<(), String> {
    /// #         if text.is_empty() {
    /// #             return Err("say something".into());
    /// #         }
    /// #         wasmod::info!("signed: {text}");
    /// #         ctx.db.entry().insert(Entry { who: ctx.sender(), text });
    /// #         Ok(())
    /// #     }
    /// #     #[reducer(client_connected)]
    /// #     fn hello(ctx: &ReducerContext) {
    /// #         wasmod::info!("connected");
    /// #     }
    /// #     #[procedure]
    /// #     fn count(ctx: &mut ProcedureContext) -> u64 {
    /// #         ctx.with_read_tx(|tx| tx.db.entry().count())
    /// #     }
    /// #     #[view]
    /// #     fn mine(ctx: &ViewContext) -> Option<String> {
    /// #         ctx.db.entry().who().find(ctx.sender()).map(|entry| entry.text)
    /// #     }
    /// #     #[view]
    /// #     fn all(ctx: &AnonymousViewContext) -> Vec<String> {
    /// #         ctx.db.entry().iter().map(|entry| entry.text).collect()
    /// #     }
    /// #     #[http_handler(GET, "/count")]
    /// #     fn count_page(ctx: &mut HttpContext, _request: Request) -> Response {
    /// #         Response::text(ctx.with_read_tx(|tx| tx.db.entry().count()).to_string())
    /// #     }
    /// # }
    /// # use guestbook::{Entry, EntryAccess};
    /// # let module = TestModule::<guestbook::Module>::new();
    /// # let ann = Identity::from_bytes([1; 32]);
    /// let page = module.call_http(Request::new(Method::Get, "/count")).unwrap();
    /// assert_eq!((page.status, page.body), (200, b"0".to_vec()));
    /// assert!(module.call_http(Request::new(Method::Get, "/nowhere")).is_err());
    /// ```
    pub fn call_http(&self, request: Request) -> Result<Response, CallFailure> {
        self.http_as(request, None)
    }

    /// [`call_http`](Self::call_http) of a request whose token had `claims`.
    pub(crate) fn http_as(
        &self,
        request: Request,
        claims: Option<Claims>,
    ) -> Result<Response, CallFailure> {
        returned(self.module.borrow_mut().call_http(&request, claims))
    }

    /// Runs the module's `client_connected` reducer for `identity` (a committed no-op if it has
    /// none).
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::{CallFailure, Outcome, TestModule};
    /// # #[wasmod::module]
    /// # mod guestbook {
    /// #     use wasmod::prelude::*;
    /// #     #[table]
    /// #     pub struct Entry {
    /// #         #[primary_key]
    /// #         pub who: Identity,
    /// #         pub text: String,
    /// #     }
    /// #     #[reducer]
    /// #     fn sign(ctx: &ReducerContext, text: String) -> Result<(), String> {
    /// #         if text.is_empty() {
    /// #             return Err("say something".into());
    /// #         }
    /// #         wasmod::info!("signed: {text}");
    /// #         ctx.db.entry().insert(Entry { who: ctx.sender(), text });
    /// #         Ok(())
    /// #     }
    /// #     #[reducer(client_connected)]
    /// #     fn hello(ctx: &ReducerContext) {
    /// #         wasmod::info!("connected");
    /// #     }
    /// #     #[procedure]
    /// #     fn count(ctx: &mut ProcedureContext) -> u64 {
    /// #         ctx.with_read_tx(|tx| tx.db.entry().count())
    /// #     }
    /// #     #[view]
    /// #     fn mine(ctx: &ViewContext) -> Option<String> {
    /// #         ctx.db.entry().who().find(ctx.sender()).map(|entry| entry.text)
    /// #     }
    /// #     #[view]
    /// #     fn all(ctx: &AnonymousViewContext) -> Vec<String> {
    /// #         ctx.db.entry().iter().map(|entry| entry.text).collect()
    /// #     }
    /// #     #[http_handler(GET, "/count")]
    /// #     fn count_page(ctx: &mut HttpContext, _request: Request) -> Response {
    /// #         Response::text(ctx.with_read_tx(|tx| tx.db.entry().count()).to_string())
    /// #     }
    /// # }
    /// # use guestbook::{Entry, EntryAccess};
    /// # let module = TestModule::<guestbook::Module>::new();
    /// # let ann = Identity::from_bytes([1; 32]);
    /// assert!(module.connect(ann).is_success());
    /// assert_eq!(module.logs()[0].message, "connected");
    /// ```
    pub fn connect(&self, identity: Identity) -> Outcome {
        self.connect_as(&caller(identity, None))
    }

    /// [`connect`](Self::connect) as `caller`.
    pub(crate) fn connect_as(&self, caller: &Caller) -> Outcome {
        let outcome = self.module.borrow_mut().client_connected_as(caller);
        outcome.unwrap_or_else(no_lifecycle_reducer)
    }

    /// Runs the module's `client_disconnected` reducer for `identity` (a committed no-op if it
    /// has none).
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::{CallFailure, Outcome, TestModule};
    /// # #[wasmod::module]
    /// # mod guestbook {
    /// #     use wasmod::prelude::*;
    /// #     #[table]
    /// #     pub struct Entry {
    /// #         #[primary_key]
    /// #         pub who: Identity,
    /// #         pub text: String,
    /// #     }
    /// #     #[reducer]
    /// #     fn sign(ctx: &ReducerContext, text: String) -> Result<(), String> {
    /// #         if text.is_empty() {
    /// #             return Err("say something".into());
    /// #         }
    /// #         wasmod::info!("signed: {text}");
    /// #         ctx.db.entry().insert(Entry { who: ctx.sender(), text });
    /// #         Ok(())
    /// #     }
    /// #     #[reducer(client_connected)]
    /// #     fn hello(ctx: &ReducerContext) {
    /// #         wasmod::info!("connected");
    /// #     }
    /// #     #[procedure]
    /// #     fn count(ctx: &mut ProcedureContext) -> u64 {
    /// #         ctx.with_read_tx(|tx| tx.db.entry().count())
    /// #     }
    /// #     #[view]
    /// #     fn mine(ctx: &ViewContext) -> Option<String> {
    /// #         ctx.db.entry().who().find(ctx.sender()).map(|entry| entry.text)
    /// #     }
    /// #     #[view]
    /// #     fn all(ctx: &AnonymousViewContext) -> Vec<String> {
    /// #         ctx.db.entry().iter().map(|entry| entry.text).collect()
    /// #     }
    /// #     #[http_handler(GET, "/count")]
    /// #     fn count_page(ctx: &mut HttpContext, _request: Request) -> Response {
    /// #         Response::text(ctx.with_read_tx(|tx| tx.db.entry().count()).to_string())
    /// #     }
    /// # }
    /// # use guestbook::{Entry, EntryAccess};
    /// # let module = TestModule::<guestbook::Module>::new();
    /// # let ann = Identity::from_bytes([1; 32]);
    /// // The guestbook has no `client_disconnected` reducer.
    /// assert!(module.disconnect(ann).is_success());
    /// ```
    pub fn disconnect(&self, identity: Identity) -> Outcome {
        self.disconnect_as(&caller(identity, None))
    }

    /// [`disconnect`](Self::disconnect) as `caller`.
    pub(crate) fn disconnect_as(&self, caller: &Caller) -> Outcome {
        let outcome = self.module.borrow_mut().client_disconnected_as(caller);
        outcome.unwrap_or_else(no_lifecycle_reducer)
    }

    /// Calls the reducer of the schedule table `table` (`#[table(scheduled(..))]`) once with
    /// each of its rows, whatever time they are due, as the server's scheduler does when a row
    /// is due: as the host, a one-shot row (`ScheduleAt::Time`) deleted with its call (or
    /// after it, if the reducer fails), a repeating one kept. Returns the calls' outcomes in
    /// row order; none if `table` is not a schedule table. When rows come due is the server's
    /// business (tested there with a clock the tests move); this tests what the calls do.
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::TestModule;
    /// #[wasmod::module]
    /// mod reminders {
    ///     use wasmod::prelude::*;
    ///
    ///     #[table(scheduled(remind))]
    ///     pub struct Reminder {
    ///         #[primary_key]
    ///         pub id: u64,
    ///         pub at: ScheduleAt,
    ///     }
    ///
    ///     #[table]
    ///     pub struct Sent {
    ///         #[primary_key]
    ///         pub reminder: u64,
    ///     }
    ///
    ///     #[reducer]
    ///     fn remind(ctx: &ReducerContext, reminder: Reminder) {
    ///         ctx.db.sent().insert(Sent { reminder: reminder.id });
    ///     }
    /// }
    /// use reminders::{ReminderAccess, SentAccess};
    /// let module = TestModule::<reminders::Module>::new();
    /// module.write(|db| {
    ///     let at = ScheduleAt::Time(Timestamp::from_micros_since_unix_epoch(0));
    ///     db.reminder().insert(reminders::Reminder { id: 1, at });
    /// });
    /// let outcomes = module.run_scheduled("reminder");
    /// assert!(outcomes.iter().all(|outcome| outcome.is_success()));
    /// assert_eq!(module.read(|db| (db.sent().count(), db.reminder().count())), (1, 0));
    /// ```
    pub fn run_scheduled(&self, table: &str) -> Vec<Outcome> {
        let mut module = self.module.borrow_mut();
        let Some(id) = module.datastore().table_id(table) else {
            return Vec::new();
        };
        let rows = module.read(|tables| tables.scan(id).unwrap_or_default());
        rows.iter()
            .filter_map(|row| module.call_scheduled(id, row))
            .collect()
    }

    /// Reads the tables through the module's own handles, as a view would:
    /// `module.read(|db| db.message().count())`.
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::{CallFailure, Outcome, TestModule};
    /// # #[wasmod::module]
    /// # mod guestbook {
    /// #     use wasmod::prelude::*;
    /// #     #[table]
    /// #     pub struct Entry {
    /// #         #[primary_key]
    /// #         pub who: Identity,
    /// #         pub text: String,
    /// #     }
    /// #     #[reducer]
    /// #     fn sign(ctx: &ReducerContext, text: String) -> Result<(), String> {
    /// #         if text.is_empty() {
    /// #             return Err("say something".into());
    /// #         }
    /// #         wasmod::info!("signed: {text}");
    /// #         ctx.db.entry().insert(Entry { who: ctx.sender(), text });
    /// #         Ok(())
    /// #     }
    /// #     #[reducer(client_connected)]
    /// #     fn hello(ctx: &ReducerContext) {
    /// #         wasmod::info!("connected");
    /// #     }
    /// #     #[procedure]
    /// #     fn count(ctx: &mut ProcedureContext) -> u64 {
    /// #         ctx.with_read_tx(|tx| tx.db.entry().count())
    /// #     }
    /// #     #[view]
    /// #     fn mine(ctx: &ViewContext) -> Option<String> {
    /// #         ctx.db.entry().who().find(ctx.sender()).map(|entry| entry.text)
    /// #     }
    /// #     #[view]
    /// #     fn all(ctx: &AnonymousViewContext) -> Vec<String> {
    /// #         ctx.db.entry().iter().map(|entry| entry.text).collect()
    /// #     }
    /// #     #[http_handler(GET, "/count")]
    /// #     fn count_page(ctx: &mut HttpContext, _request: Request) -> Response {
    /// #         Response::text(ctx.with_read_tx(|tx| tx.db.entry().count()).to_string())
    /// #     }
    /// # }
    /// # use guestbook::{Entry, EntryAccess};
    /// # let module = TestModule::<guestbook::Module>::new();
    /// # let ann = Identity::from_bytes([1; 32]);
    /// module.call_reducer(ann, "sign", ("hello".to_string(),));
    /// let text = module.read(|db| db.entry().who().find(ann).map(|entry| entry.text));
    /// assert_eq!(text.as_deref(), Some("hello"));
    /// ```
    pub fn read<R>(&self, f: impl FnOnce(&Db<ReadOnly>) -> R) -> R {
        // `Db::__new` is the generated code's way to a handle; here, as there, the host has
        // opened the transaction the handle's access needs.
        self.module.borrow_mut().read_as_module(|| f(&Db::__new()))
    }

    /// Writes the tables through the module's own handles in one committed transaction, to set
    /// up a test: `module.write(|db| db.message().insert(..))`. A panic in `f` fails the test,
    /// as it would any test code.
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::{CallFailure, Outcome, TestModule};
    /// # #[wasmod::module]
    /// # mod guestbook {
    /// #     use wasmod::prelude::*;
    /// #     #[table]
    /// #     pub struct Entry {
    /// #         #[primary_key]
    /// #         pub who: Identity,
    /// #         pub text: String,
    /// #     }
    /// #     #[reducer]
    /// #     fn sign(ctx: &ReducerContext, text: String) -> Result<(), String> {
    /// #         if text.is_empty() {
    /// #             return Err("say something".into());
    /// #         }
    /// #         wasmod::info!("signed: {text}");
    /// #         ctx.db.entry().insert(Entry { who: ctx.sender(), text });
    /// #         Ok(())
    /// #     }
    /// #     #[reducer(client_connected)]
    /// #     fn hello(ctx: &ReducerContext) {
    /// #         wasmod::info!("connected");
    /// #     }
    /// #     #[procedure]
    /// #     fn count(ctx: &mut ProcedureContext) -> u64 {
    /// #         ctx.with_read_tx(|tx| tx.db.entry().count())
    /// #     }
    /// #     #[view]
    /// #     fn mine(ctx: &ViewContext) -> Option<String> {
    /// #         ctx.db.entry().who().find(ctx.sender()).map(|entry| entry.text)
    /// #     }
    /// #     #[view]
    /// #     fn all(ctx: &AnonymousViewContext) -> Vec<String> {
    /// #         ctx.db.entry().iter().map(|entry| entry.text).collect()
    /// #     }
    /// #     #[http_handler(GET, "/count")]
    /// #     fn count_page(ctx: &mut HttpContext, _request: Request) -> Response {
    /// #         Response::text(ctx.with_read_tx(|tx| tx.db.entry().count()).to_string())
    /// #     }
    /// # }
    /// # use guestbook::{Entry, EntryAccess};
    /// # let module = TestModule::<guestbook::Module>::new();
    /// # let ann = Identity::from_bytes([1; 32]);
    /// module.write(|db| db.entry().insert(Entry { who: ann, text: "seeded".into() }));
    /// let all: Vec<String> = module.call_anonymous_view("all", ()).unwrap();
    /// assert_eq!(all, ["seeded"]);
    /// ```
    pub fn write<R>(&self, f: impl FnOnce(&Db<ReadWrite>) -> R) -> R {
        // As in `read`: the host has opened a writable transaction.
        self.module
            .borrow_mut()
            .write_as_module(|| f(&Db::__new()))
            .0
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
    ///
    /// ```
    /// # use wasmod::prelude::*;
    /// # use wasmod_testing::{CallFailure, Outcome, TestModule};
    /// # #[wasmod::module]
    /// # mod guestbook {
    /// #     use wasmod::prelude::*;
    /// #     #[table]
    /// #     pub struct Entry {
    /// #         #[primary_key]
    /// #         pub who: Identity,
    /// #         pub text: String,
    /// #     }
    /// #     #[reducer]
    /// #     fn sign(ctx: &ReducerContext, text: String) -> Result<(), String> {
    /// #         if text.is_empty() {
    /// #             return Err("say something".into());
    /// #         }
    /// #         wasmod::info!("signed: {text}");
    /// #         ctx.db.entry().insert(Entry { who: ctx.sender(), text });
    /// #         Ok(())
    /// #     }
    /// #     #[reducer(client_connected)]
    /// #     fn hello(ctx: &ReducerContext) {
    /// #         wasmod::info!("connected");
    /// #     }
    /// #     #[procedure]
    /// #     fn count(ctx: &mut ProcedureContext) -> u64 {
    /// #         ctx.with_read_tx(|tx| tx.db.entry().count())
    /// #     }
    /// #     #[view]
    /// #     fn mine(ctx: &ViewContext) -> Option<String> {
    /// #         ctx.db.entry().who().find(ctx.sender()).map(|entry| entry.text)
    /// #     }
    /// #     #[view]
    /// #     fn all(ctx: &AnonymousViewContext) -> Vec<String> {
    /// #         ctx.db.entry().iter().map(|entry| entry.text).collect()
    /// #     }
    /// #     #[http_handler(GET, "/count")]
    /// #     fn count_page(ctx: &mut HttpContext, _request: Request) -> Response {
    /// #         Response::text(ctx.with_read_tx(|tx| tx.db.entry().count()).to_string())
    /// #     }
    /// # }
    /// # use guestbook::{Entry, EntryAccess};
    /// # let module = TestModule::<guestbook::Module>::new();
    /// # let ann = Identity::from_bytes([1; 32]);
    /// module.call_reducer(ann, "sign", ("hello".to_string(),));
    /// let logs = module.logs();
    /// assert_eq!(logs.len(), 1);
    /// assert_eq!(logs[0].message, "signed: hello");
    /// ```
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

/// A test's caller: `identity` with `claims`, over no connection.
pub(crate) fn caller(identity: Identity, claims: Option<Claims>) -> Caller {
    Caller::new(identity, ConnectionId::ZERO).with_claims(claims)
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
            wasmod::abi::encoding::from_slice(&bytes).map_err(CallFailure::Decode)
        }
        other => Err(CallFailure::Outcome(other)),
    }
}
