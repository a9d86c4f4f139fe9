//! The contexts entry points receive: who called, when, and access to the database.
//!
//! Each kind of entry point gets its own context type, and the macros check that the first
//! parameter is the right one, so the kind of access a function has is visible in its
//! signature: reducers write ([`ReducerContext`]), views only read ([`ViewContext`],
//! [`AnonymousViewContext`]), procedures and HTTP handlers open transactions explicitly
//! ([`ProcedureContext`], [`HttpContext`]), read-write ([`TxContext`]) or read-only
//! ([`ReadTxContext`]).
//!
//! Every context of a call that has a caller (all but [`AnonymousViewContext`]) has its
//! [`claims`](ReducerContext::claims): the verified payload of the caller's OpenID Connect
//! token, asked of the host when the module asks for it ([`Claims`]).

use crate::claims::{caller_claims, Claims};
use crate::db::{Db, ReadOnly, ReadWrite};
use crate::{sys, ConnectionId, Identity, Timestamp};

/// The caller's connection as the dispatch exports pass it: all zero means none.
fn connection(connection_id: ConnectionId) -> Option<ConnectionId> {
    (connection_id != ConnectionId::ZERO).then_some(connection_id)
}

/// What a reducer gets: the caller, the time, and read-write access to the database.
///
/// Everything a reducer does through `db` happens in one transaction: it commits if the
/// reducer returns normally (or `Ok`), and is rolled back if it returns `Err` or panics.
///
/// ```
/// use wasmod::prelude::*;
/// use wasmod_testing::{Outcome, TestModule};
///
/// #[wasmod::module]
/// mod notes {
///     use wasmod::prelude::*;
///
///     #[table]
///     pub struct Note {
///         #[primary_key]
///         #[auto_inc]
///         pub id: u64,
///         pub author: Identity,
///         pub at: Timestamp,
///         pub text: String,
///     }
///
///     #[reducer]
///     fn write(ctx: &ReducerContext, text: String) -> Result<(), String> {
///         let note = Note { id: 0, author: ctx.sender(), at: ctx.timestamp(), text };
///         ctx.db.note().insert(note);
///         if ctx.db.note().count() > 2 {
///             // Rolls back the insert above, too.
///             return Err("at most two notes".into());
///         }
///         Ok(())
///     }
/// }
/// use notes::NoteAccess;
///
/// let module = TestModule::<notes::Module>::new();
/// let ann = Identity::from_bytes([1; 32]);
/// for text in ["a", "b"] {
///     assert!(module.call_reducer(ann, "write", (text.to_string(),)).is_success());
/// }
/// let third = module.call_reducer(ann, "write", ("c".to_string(),));
/// assert!(matches!(third, Outcome::Failed { message, .. } if message == "at most two notes"));
/// assert_eq!(module.read(|db| db.note().count()), 2);
/// ```
#[non_exhaustive]
pub struct ReducerContext {
    /// The database, readable and writable.
    pub db: Db<ReadWrite>,
    sender: Identity,
    connection_id: Option<ConnectionId>,
    timestamp: Timestamp,
}

impl ReducerContext {
    #[doc(hidden)]
    pub fn __new(sender: Identity, connection_id: ConnectionId, timestamp: Timestamp) -> Self {
        let connection_id = connection(connection_id);
        Self {
            db: Db::new(),
            sender,
            connection_id,
            timestamp,
        }
    }

    /// The claims of the caller's verified OpenID Connect token: its issuer, subject, audience
    /// and any other claim ([`Claims`]). `None` for a caller with a token of the server's own
    /// (`POST /v1/identity`), and for the host's own calls (`init`, scheduled reducers).
    ///
    /// Asked of the host and parsed each time: call it once and keep what it returns. In
    /// `client_connected`, they are the claims of the token the connection was opened with,
    /// and a reducer that returns `Err` refuses the connection; every call over that
    /// connection, and its `client_disconnected`, has the same claims.
    ///
    /// ```
    /// use wasmod::prelude::*;
    /// use wasmod_testing::TestModule;
    ///
    /// #[wasmod::module]
    /// mod staff {
    ///     use wasmod::prelude::*;
    ///
    ///     #[reducer(client_connected)]
    ///     fn connected(ctx: &ReducerContext) -> Result<(), String> {
    ///         let claims = ctx.claims().ok_or("sign in with your company account")?;
    ///         match claims.get_str("email") {
    ///             Some(email) if email.ends_with("@example.com") => Ok(()),
    ///             _ => Err("staff only".into()),
    ///         }
    ///     }
    /// }
    ///
    /// let module = TestModule::<staff::Module>::new();
    /// let ann = Identity::from_bytes([1; 32]);
    /// let staff = r#"{"iss":"https://id.example.com","sub":"1","email":"ann@example.com"}"#;
    /// assert!(module.with_claims(staff).connect(ann).is_success());
    /// let guest = r#"{"iss":"https://id.example.com","sub":"2","email":"eve@example.net"}"#;
    /// assert!(!module.with_claims(guest).connect(ann).is_success());
    /// ```
    pub fn claims(&self) -> Option<Claims> {
        caller_claims()
    }

    /// The identity of the caller ([`Identity::ZERO`] for calls made by the host itself).
    /// (See the example on [`ReducerContext`].)
    pub fn sender(&self) -> Identity {
        self.sender
    }

    /// The caller's connection, if the call came over one (a WebSocket client's); `None` for
    /// calls over plain HTTP, from the host itself, and from `wasmod_testing::TestModule` calls.
    ///
    /// ```
    /// #[wasmod::module]
    /// mod greetings {
    ///     use wasmod::prelude::*;
    ///
    ///     #[reducer]
    ///     fn hello(ctx: &ReducerContext) {
    ///         match ctx.connection_id() {
    ///             Some(connection) => wasmod::info!("hello from connection {connection:?}"),
    ///             None => wasmod::info!("hello from a one-off call"),
    ///         }
    ///     }
    /// }
    /// # fn main() {}
    /// ```
    pub fn connection_id(&self) -> Option<ConnectionId> {
        self.connection_id
    }

    /// When the call started, as the host saw it. Use this rather than a clock: it is the same
    /// for every read in the call. (See the example on [`ReducerContext`].)
    pub fn timestamp(&self) -> Timestamp {
        self.timestamp
    }
}

/// What a per-caller view gets: the caller and read-only access to the database.
///
/// A view's result depends on who asks, so the host computes it per caller. Its `db` has no
/// writing methods: `ctx.db.note().insert(..)` does not compile in a view.
///
/// ```
/// use wasmod::prelude::*;
/// use wasmod_testing::TestModule;
///
/// #[wasmod::module]
/// mod notes {
///     use wasmod::prelude::*;
///
///     #[table]
///     pub struct Note {
///         #[primary_key]
///         pub id: u64,
///         #[index(btree)]
///         pub author: Identity,
///         pub text: String,
///     }
///
///     #[view]
///     fn my_notes(ctx: &ViewContext) -> Vec<String> {
///         ctx.db.note().author().filter(ctx.sender()).map(|note| note.text).collect()
///     }
/// }
/// use notes::{Note, NoteAccess};
///
/// let module = TestModule::<notes::Module>::new();
/// let (ann, bob) = (Identity::from_bytes([1; 32]), Identity::from_bytes([2; 32]));
/// module.write(|db| {
///     db.note().insert(Note { id: 1, author: ann, text: "ann's".into() });
///     db.note().insert(Note { id: 2, author: bob, text: "bob's".into() });
/// });
/// let mine: Vec<String> = module.call_view(ann, "my_notes", ()).unwrap();
/// assert_eq!(mine, ["ann's"]);
/// ```
#[non_exhaustive]
pub struct ViewContext {
    /// The database, read-only.
    pub db: Db<ReadOnly>,
    sender: Identity,
}

impl ViewContext {
    #[doc(hidden)]
    pub fn __new(sender: Identity) -> Self {
        Self {
            db: Db::new(),
            sender,
        }
    }

    /// The claims of the caller the view is computed for, as [`ReducerContext::claims`]: a
    /// view runs when it is called (over HTTP or a socket, never as part of a subscription),
    /// so these are always the claims of the token of the call that asked for it (over a
    /// socket, the token the connection was opened with). Two callers of one identity with
    /// different claims may get different results. (The example on [`Claims::subject`] uses
    /// it.)
    pub fn claims(&self) -> Option<Claims> {
        caller_claims()
    }

    /// The identity of the caller the view is computed for (see the example on
    /// [`ViewContext`]).
    pub fn sender(&self) -> Identity {
        self.sender
    }
}

/// What an anonymous view gets: read-only access to the database, and nothing about the caller,
/// so that its result can be shared by every caller.
///
/// ```
/// use wasmod::prelude::*;
/// use wasmod_testing::TestModule;
///
/// #[wasmod::module]
/// mod scores {
///     use wasmod::prelude::*;
///
///     #[table(public)]
///     pub struct Score {
///         #[primary_key]
///         pub player: String,
///         #[index(btree)]
///         pub points: u32,
///     }
///
///     #[view]
///     fn at_least(ctx: &AnonymousViewContext, points: u32) -> Vec<String> {
///         ctx.db.score().points().filter(points..).map(|score| score.player).collect()
///     }
/// }
/// use scores::{Score, ScoreAccess};
///
/// let module = TestModule::<scores::Module>::new();
/// module.write(|db| {
///     db.score().insert(Score { player: "ann".into(), points: 30 });
///     db.score().insert(Score { player: "bob".into(), points: 10 });
/// });
/// let high: Vec<String> = module.call_anonymous_view("at_least", (20u32,)).unwrap();
/// assert_eq!(high, ["ann"]);
/// ```
#[non_exhaustive]
pub struct AnonymousViewContext {
    /// The database, read-only.
    pub db: Db<ReadOnly>,
}

impl AnonymousViewContext {
    #[doc(hidden)]
    pub fn __new() -> Self {
        Self { db: Db::new() }
    }
}

/// Access to the database inside a transaction opened by a procedure or an HTTP handler,
/// with [`ProcedureContext::with_tx`] or [`ProcedureContext::try_with_tx`] (or the same
/// methods of [`HttpContext`]): their examples use it.
#[non_exhaustive]
pub struct TxContext {
    /// The database, readable and writable.
    pub db: Db<ReadWrite>,
    timestamp: Timestamp,
}

impl TxContext {
    /// When the transaction started: the time its commit is stamped with.
    ///
    /// ```
    /// #[wasmod::module]
    /// mod clock {
    ///     use wasmod::prelude::*;
    ///
    ///     #[procedure]
    ///     fn started(ctx: &mut ProcedureContext) -> bool {
    ///         let tx_time = ctx.with_tx(|tx| tx.timestamp());
    ///         tx_time >= ctx.timestamp()
    ///     }
    /// }
    /// # fn main() {}
    /// ```
    pub fn timestamp(&self) -> Timestamp {
        self.timestamp
    }
}

/// Read-only access to the database inside a read-only transaction opened by a procedure or an
/// HTTP handler ([`ProcedureContext::with_read_tx`], [`HttpContext::with_read_tx`]).
#[non_exhaustive]
pub struct ReadTxContext {
    /// The database, read-only.
    pub db: Db<ReadOnly>,
    timestamp: Timestamp,
}

impl ReadTxContext {
    /// When the transaction started.
    ///
    /// ```
    /// #[wasmod::module]
    /// mod clock {
    ///     use wasmod::prelude::*;
    ///
    ///     #[procedure]
    ///     fn read_at(ctx: &mut ProcedureContext) -> Timestamp {
    ///         ctx.with_read_tx(|tx| tx.timestamp())
    ///     }
    /// }
    /// # fn main() {}
    /// ```
    pub fn timestamp(&self) -> Timestamp {
        self.timestamp
    }
}

/// Why a transaction opened by a procedure or an HTTP handler could not run: the host's
/// error code.
///
/// It is never an error of the transaction's body (those are `body`'s own `Result`, see
/// [`ProcedureContext::try_with_tx`]), but the host refusing to open or end the transaction.
/// The codes:
///
/// - [`Errno::NOT_ALLOWED`](crate::Errno::NOT_ALLOWED): the commit was refused because the
///   module's commit log failed (the host logs why, and refuses every later commit): the
///   changes are not durable and must not be acknowledged. Also what a call that is not a
///   procedure or an HTTP handler would get, which the context types rule out.
/// - [`Errno::TX_ALREADY_OPEN`](crate::Errno::TX_ALREADY_OPEN) and
///   [`Errno::NO_TX`](crate::Errno::NO_TX): a transaction opened inside another, or ended
///   twice. The API rules these out too (the transaction methods take `&mut self`, and the
///   body gets a [`TxContext`] without them), so they mean a bug.
///
/// ```
/// use wasmod::{Errno, TxError};
///
/// let error = TxError(Errno::NOT_ALLOWED);
/// assert_eq!(error.0, Errno::NOT_ALLOWED);
/// assert!(error.to_string().starts_with("transaction failed: NOT_ALLOWED"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxError(pub crate::Errno);

impl core::fmt::Display for TxError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "transaction failed: {}", self.0)
    }
}

impl std::error::Error for TxError {}

/// Runs `body` in a transaction: committed if it returns `Ok`, rolled back if `Err`.
fn run_in_tx<T, E>(body: impl FnOnce(&TxContext) -> Result<T, E>) -> Result<Result<T, E>, TxError> {
    let timestamp = sys::procedure_start_tx().map_err(TxError)?;
    let tx = TxContext {
        db: Db::new(),
        timestamp: Timestamp::from_micros_since_unix_epoch(timestamp),
    };
    let result = body(&tx);
    match &result {
        Ok(_) => sys::procedure_commit_tx().map_err(TxError)?,
        Err(_) => sys::procedure_abort_tx().map_err(TxError)?,
    }
    Ok(result)
}

/// Runs `body` in a read-only transaction, ended when it returns.
fn run_in_read_tx<T>(body: impl FnOnce(&ReadTxContext) -> T) -> Result<T, TxError> {
    let timestamp = sys::procedure_start_read_tx().map_err(TxError)?;
    let tx = ReadTxContext {
        db: Db::new(),
        timestamp: Timestamp::from_micros_since_unix_epoch(timestamp),
    };
    let value = body(&tx);
    sys::procedure_commit_tx().map_err(TxError)?;
    Ok(value)
}

/// Sends an HTTP request through the host.
fn send_http(request: &crate::http::Request) -> Result<crate::http::Response, HttpError> {
    let source = sys::procedure_http_request(&wasmod_abi::encoding::to_vec(request))
        .map_err(HttpError::Refused)?;
    let bytes = sys::read_source(source).map_err(HttpError::Refused)?;
    wasmod_abi::encoding::from_slice(&bytes).map_err(HttpError::BadResponse)
}

/// Why an outbound HTTP request failed ([`ProcedureContext::send_http`], whose example shows
/// a refusal).
///
/// ```
/// use wasmod::{Errno, HttpError};
///
/// let error = HttpError::Refused(Errno::HTTP_FAILED);
/// assert!(error.to_string().starts_with("the HTTP request failed: HTTP_FAILED"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpError {
    /// The host refused or could not complete the request (for example: the destination is not
    /// on the operator's allow list, or the connection failed).
    Refused(crate::Errno),
    /// The host's answer did not decode as a response.
    BadResponse(crate::DecodeError),
}

impl core::fmt::Display for HttpError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Refused(errno) => write!(f, "the HTTP request failed: {errno}"),
            Self::BadResponse(error) => write!(f, "the HTTP response did not decode: {error}"),
        }
    }
}

impl std::error::Error for HttpError {}

/// The methods procedures and HTTP handlers share: explicit transactions and outbound HTTP.
macro_rules! explicit_tx_methods {
    () => {
        /// When the call started (each transaction has its own time too:
        /// [`TxContext::timestamp`]).
        pub fn timestamp(&self) -> Timestamp {
            self.timestamp
        }

        /// Runs `body` in a transaction and commits it, whatever `body` returns.
        ///
        /// `body`'s value is passed through untouched: if it is a `Result`, an `Err` is
        /// committed like an `Ok` (what `body` wrote before returning it stays written). To
        /// roll back on `Err`, use [`try_with_tx`](Self::try_with_tx). Transactions cannot
        /// nest: `body` gets a [`TxContext`], not the context that opened it.
        ///
        /// # Panics
        ///
        /// If the host refuses to open or commit the transaction (a [`TxError`]; the commit of
        /// a module whose commit log failed, for one). Use [`try_with_tx`](Self::try_with_tx)
        /// to handle that.
        ///
        /// # Example
        ///
        /// ```
        /// # use wasmod::prelude::*;
        /// # use wasmod_testing::TestModule;
        /// #[wasmod::module]
        /// mod bank {
        ///     use wasmod::prelude::*;
        ///
        ///     #[table]
        ///     pub struct Account {
        ///         #[primary_key]
        ///         pub name: String,
        ///         pub balance: u64,
        ///     }
        ///
        ///     #[procedure]
        ///     fn open(ctx: &mut ProcedureContext, name: String, balance: u64) -> Result<(), String> {
        ///         // `Result<Account, InsertError>` is just a value here: an `Err` commits.
        ///         ctx.with_tx(|tx| tx.db.account().try_insert(Account { name, balance }))
        ///             .map(|_| ())
        ///             .map_err(|error| error.to_string())
        ///     }
        /// }
        /// use bank::AccountAccess;
        ///
        /// let module = TestModule::<bank::Module>::new();
        /// let ann = Identity::from_bytes([1; 32]);
        /// let open = |name: &str, balance: u64| {
        ///     module.call_procedure::<Result<(), String>>(ann, "open", (name.to_string(), balance))
        /// };
        /// assert_eq!(open("ann", 5).unwrap(), Ok(()));
        /// // The clash is the procedure's returned value (a procedure's `Result` is data).
        /// let clash = open("ann", 9).unwrap().unwrap_err();
        /// assert!(clash.contains("same unique key"), "{clash}");
        /// assert_eq!(module.read(|db| db.account().count()), 1);
        /// ```
        pub fn with_tx<T>(&mut self, body: impl FnOnce(&TxContext) -> T) -> T {
            match run_in_tx(|tx| Ok::<T, core::convert::Infallible>(body(tx))) {
                Ok(Ok(value)) => value,
                Ok(Err(never)) => match never {},
                Err(error) => panic!("{error}"),
            }
        }

        /// Runs `body` in a transaction: committed if it returns `Ok`, rolled back if `Err`.
        ///
        /// The inner `Result` is `body`'s. The outer one is `Err(`[`TxError`]`)` if the host
        /// could not open the transaction (`body` did not run) or could not end it (after an
        /// `Ok`: the commit was refused, for example because the module's commit log failed;
        /// the changes are then not acknowledged as durable).
        ///
        /// # Example
        ///
        /// ```
        /// # use wasmod::prelude::*;
        /// # use wasmod_testing::TestModule;
        /// #[wasmod::module]
        /// mod bank {
        ///     use wasmod::prelude::*;
        ///
        ///     #[table]
        ///     pub struct Account {
        ///         #[primary_key]
        ///         pub name: String,
        ///         pub balance: u64,
        ///     }
        ///
        ///     #[procedure]
        ///     fn transfer(ctx: &mut ProcedureContext, from: String, to: String, amount: u64)
        ///         -> Result<(), String>
        ///     {
        ///         let moved = ctx.try_with_tx(|tx| {
        ///             let accounts = tx.db.account();
        ///             let mut payee = accounts.name().find(&to).ok_or("no payee")?;
        ///             payee.balance += amount;
        ///             accounts.name().update(payee);
        ///             // Fails after the payee was credited: the `Err` rolls the credit back.
        ///             let mut payer = accounts.name().find(&from).ok_or("no payer")?;
        ///             payer.balance = payer.balance.checked_sub(amount).ok_or("overdrawn")?;
        ///             accounts.name().update(payer);
        ///             Ok::<(), &str>(())
        ///         });
        ///         match moved {
        ///             Ok(result) => result.map_err(str::to_owned),
        ///             Err(tx_error) => Err(tx_error.to_string()),
        ///         }
        ///     }
        /// }
        /// use bank::{Account, AccountAccess};
        ///
        /// let module = TestModule::<bank::Module>::new();
        /// module.write(|db| {
        ///     db.account().insert(Account { name: "ann".into(), balance: 5 });
        ///     db.account().insert(Account { name: "bob".into(), balance: 0 });
        /// });
        /// let args = ("ann".to_string(), "bob".to_string(), 8u64);
        /// let overdrawn = module.call_procedure::<Result<(), String>>(Identity::ZERO, "transfer", args);
        /// assert_eq!(overdrawn.unwrap(), Err("overdrawn".to_string()));
        /// let bob = module.read(|db| db.account().name().find("bob"));
        /// assert_eq!(bob.map(|bob| bob.balance), Some(0));
        /// ```
        pub fn try_with_tx<T, E>(
            &mut self,
            body: impl FnOnce(&TxContext) -> Result<T, E>,
        ) -> Result<Result<T, E>, TxError> {
            run_in_tx(body)
        }

        /// Runs `body` in a read-only transaction: it sees one committed state of the tables,
        /// its writes fail, and it shares the tables with other readers instead of taking the
        /// writer's place (what a handler that only reports, such as a statistics page,
        /// should use).
        ///
        /// # Panics
        ///
        /// If the host refuses to open the transaction (a [`TxError`]). Use
        /// [`try_with_read_tx`](Self::try_with_read_tx) to handle that.
        ///
        /// # Example
        ///
        /// ```
        /// # use wasmod::prelude::*;
        /// # use wasmod_testing::TestModule;
        /// #[wasmod::module]
        /// mod bank {
        ///     use wasmod::prelude::*;
        ///
        ///     #[table]
        ///     pub struct Account {
        ///         #[primary_key]
        ///         pub name: String,
        ///         pub balance: u64,
        ///     }
        ///
        ///     #[procedure]
        ///     fn total(ctx: &mut ProcedureContext) -> u64 {
        ///         ctx.with_read_tx(|tx| tx.db.account().iter().map(|a| a.balance).sum())
        ///     }
        /// }
        /// use bank::{Account, AccountAccess};
        ///
        /// let module = TestModule::<bank::Module>::new();
        /// module.write(|db| db.account().insert(Account { name: "ann".into(), balance: 7 }));
        /// assert_eq!(module.call_procedure::<u64>(Identity::ZERO, "total", ()).ok(), Some(7));
        /// ```
        pub fn with_read_tx<T>(&mut self, body: impl FnOnce(&ReadTxContext) -> T) -> T {
            run_in_read_tx(body).unwrap_or_else(|error| panic!("{error}"))
        }

        /// Runs `body` in a read-only transaction, like [`with_read_tx`](Self::with_read_tx);
        /// `Err` reports a transaction the host could not open (`body` did not run).
        ///
        /// # Example
        ///
        /// ```
        /// # use wasmod::prelude::*;
        /// # use wasmod_testing::TestModule;
        /// #[wasmod::module]
        /// mod bank {
        ///     use wasmod::prelude::*;
        ///
        ///     #[table]
        ///     pub struct Account {
        ///         #[primary_key]
        ///         pub name: String,
        ///         pub balance: u64,
        ///     }
        ///
        ///     #[procedure]
        ///     fn balance(ctx: &mut ProcedureContext, name: String) -> Result<u64, String> {
        ///         let found = ctx
        ///             .try_with_read_tx(|tx| tx.db.account().name().find(&name))
        ///             .map_err(|error| error.to_string())?;
        ///         found.map(|account| account.balance).ok_or(format!("no account `{name}`"))
        ///     }
        /// }
        ///
        /// let module = TestModule::<bank::Module>::new();
        /// let missing = module.call_procedure::<Result<u64, String>>(
        ///     Identity::ZERO,
        ///     "balance",
        ///     ("eve".to_string(),),
        /// );
        /// assert_eq!(missing.unwrap(), Err("no account `eve`".to_string()));
        /// ```
        pub fn try_with_read_tx<T>(
            &mut self,
            body: impl FnOnce(&ReadTxContext) -> T,
        ) -> Result<T, TxError> {
            run_in_read_tx(body)
        }

        /// Sends an HTTP request to a host the operator allows, and waits for the response.
        ///
        /// No transaction is open while it waits (the transaction methods take `&mut self`,
        /// so a request cannot be sent from inside one).
        ///
        /// # Errors
        ///
        /// [`HttpError::Refused`] if the host refused or could not complete the request: the
        /// destination is not on the operator's allow list (`wasmod serve --allow-http`), the
        /// connection failed, the call is past its deadline, or the response is larger than
        /// the call may hold; the host logs which. [`HttpError::BadResponse`] if the host's
        /// answer did not decode.
        ///
        /// # Example
        ///
        /// ```
        /// #[wasmod::module]
        /// mod hooks {
        ///     use wasmod::prelude::*;
        ///
        ///     #[procedure]
        ///     fn notify(ctx: &mut ProcedureContext, text: String) -> Result<u16, String> {
        ///         let mut request = Request::new(Method::Post, "https://hooks.example.com/notify");
        ///         request.headers.push(("content-type".into(), "text/plain".into()));
        ///         request.body = text.into_bytes();
        ///         let response = ctx.send_http(&request).map_err(|error| error.to_string())?;
        ///         Ok(response.status)
        ///     }
        /// }
        /// # fn main() {}
        /// ```
        pub fn send_http(
            &mut self,
            request: &crate::http::Request,
        ) -> Result<crate::http::Response, HttpError> {
            send_http(request)
        }

        /// Sends a `GET` request for `url`, like [`send_http`](Self::send_http) (same errors).
        ///
        /// # Example
        ///
        /// ```
        /// use wasmod_testing::TestModule;
        /// use wasmod::Identity;
        ///
        /// #[wasmod::module]
        /// mod rates {
        ///     use wasmod::prelude::*;
        ///
        ///     #[procedure]
        ///     fn fetch_rate(ctx: &mut ProcedureContext) -> Result<String, String> {
        ///         let response = ctx
        ///             .http_get("https://rates.example.com/eur")
        ///             .map_err(|error| error.to_string())?;
        ///         String::from_utf8(response.body).map_err(|_| "not text".to_string())
        ///     }
        /// }
        ///
        /// // A test host allows no destination: the request is refused, and says so.
        /// let module = TestModule::<rates::Module>::new();
        /// let refused = module.call_procedure::<Result<String, String>>(Identity::ZERO, "fetch_rate", ());
        /// let refused = refused.unwrap().unwrap_err();
        /// assert!(refused.starts_with("the HTTP request failed"), "{refused}");
        /// ```
        pub fn http_get(&mut self, url: &str) -> Result<crate::http::Response, HttpError> {
            send_http(&crate::http::Request::new(crate::http::Method::Get, url))
        }
    };
}

/// What a procedure gets: the caller, the time, explicit transactions and outbound HTTP.
///
/// A procedure runs outside any transaction. Open one with [`with_tx`](Self::with_tx) or
/// [`try_with_tx`](Self::try_with_tx); a transaction is never held across an HTTP request.
/// Each transaction commits on its own: a procedure that fails after one has committed does
/// not undo it. What a procedure returns, a `Result` included, is its value to the caller: an
/// `Err` is returned data, not a failed call (only a panic fails the call).
///
/// ```
/// use wasmod::prelude::*;
/// use wasmod_testing::TestModule;
///
/// #[wasmod::module]
/// mod visits {
///     use wasmod::prelude::*;
///
///     #[table]
///     pub struct Visit {
///         #[primary_key]
///         pub who: Identity,
///         pub count: u32,
///     }
///
///     #[procedure]
///     fn visit(ctx: &mut ProcedureContext) -> u32 {
///         let who = ctx.sender();
///         ctx.with_tx(|tx| {
///             let count = tx.db.visit().who().find(who).map_or(0, |visit| visit.count) + 1;
///             tx.db.visit().who().delete(who);
///             tx.db.visit().insert(Visit { who, count }).count
///         })
///     }
/// }
///
/// let module = TestModule::<visits::Module>::new();
/// let ann = Identity::from_bytes([1; 32]);
/// assert_eq!(module.call_procedure::<u32>(ann, "visit", ()).unwrap(), 1);
/// assert_eq!(module.call_procedure::<u32>(ann, "visit", ()).unwrap(), 2);
/// ```
#[non_exhaustive]
pub struct ProcedureContext {
    sender: Identity,
    connection_id: Option<ConnectionId>,
    timestamp: Timestamp,
}

impl ProcedureContext {
    #[doc(hidden)]
    pub fn __new(sender: Identity, connection_id: ConnectionId, timestamp: Timestamp) -> Self {
        let connection_id = connection(connection_id);
        Self {
            sender,
            connection_id,
            timestamp,
        }
    }

    /// The claims of the caller's verified token, as [`ReducerContext::claims`] (the example
    /// on [`Claims`] uses it).
    pub fn claims(&self) -> Option<Claims> {
        caller_claims()
    }

    /// The identity of the caller (see the example on [`ProcedureContext`]).
    pub fn sender(&self) -> Identity {
        self.sender
    }

    /// The caller's connection, if the call came over one, as
    /// [`ReducerContext::connection_id`].
    pub fn connection_id(&self) -> Option<ConnectionId> {
        self.connection_id
    }

    explicit_tx_methods!();
}

/// What an HTTP handler gets: the time, the parameters of its route, explicit transactions
/// and outbound HTTP.
///
/// Like a procedure, a handler runs outside any transaction and opens them explicitly. Routing,
/// the request and response types and the status codes are in `docs/http-handlers.md`.
///
/// ```
/// use wasmod::prelude::*;
/// use wasmod_testing::TestModule;
///
/// #[wasmod::module]
/// mod stock {
///     use wasmod::prelude::*;
///
///     #[table]
///     pub struct Item {
///         #[primary_key]
///         pub sku: String,
///         pub count: u32,
///     }
///
///     #[http_handler(GET, "/items/{sku}")]
///     fn item(ctx: &mut HttpContext, _request: Request) -> Response {
///         let Some(sku) = ctx.param("sku").map(str::to_owned) else {
///             return Response::new(400);
///         };
///         match ctx.with_read_tx(|tx| tx.db.item().sku().find(&sku)) {
///             Some(item) => Response::text(item.count.to_string()),
///             None => Response::new(404),
///         }
///     }
/// }
/// use stock::{Item, ItemAccess};
///
/// let module = TestModule::<stock::Module>::new();
/// module.write(|db| db.item().insert(Item { sku: "nut m3".into(), count: 12 }));
/// let found = module.call_http(Request::new(Method::Get, "/items/nut%20m3")).unwrap();
/// assert_eq!((found.status, found.body), (200, b"12".to_vec()));
/// let missing = module.call_http(Request::new(Method::Get, "/items/bolt")).unwrap();
/// assert_eq!(missing.status, 404);
/// ```
#[non_exhaustive]
pub struct HttpContext {
    timestamp: Timestamp,
    params: Vec<(String, String)>,
}

impl HttpContext {
    #[doc(hidden)]
    pub fn __new(timestamp: Timestamp) -> Self {
        Self {
            timestamp,
            params: Vec::new(),
        }
    }

    /// The claims of the request's verified OpenID Connect token, if it came with one
    /// (`Authorization: Bearer <token>`, which the server checks before the handler runs: a
    /// request with a bad token never reaches it). `None` for a request without a token or
    /// with a token of the server's own. A handler has no identity (the ABI gives it none),
    /// so these are what it knows of who sent the request.
    ///
    /// ```
    /// use wasmod::prelude::*;
    /// use wasmod_testing::TestModule;
    ///
    /// #[wasmod::module]
    /// mod hello {
    ///     use wasmod::prelude::*;
    ///
    ///     #[http_handler(GET, "/hello")]
    ///     fn hello(ctx: &mut HttpContext, _request: Request) -> Response {
    ///         let claims = ctx.claims();
    ///         match claims.as_ref().and_then(|claims| claims.get_str("name")) {
    ///             Some(name) => Response::text(format!("hello, {name}")),
    ///             None => Response::new(401),
    ///         }
    ///     }
    /// }
    ///
    /// let module = TestModule::<hello::Module>::new();
    /// let request = || Request::new(Method::Get, "/hello");
    /// let claims = r#"{"iss":"https://id.example.com","sub":"1","name":"Ann"}"#;
    /// let greeted = module.with_claims(claims).call_http(request()).unwrap();
    /// assert_eq!(greeted.body, b"hello, Ann");
    /// assert_eq!(module.call_http(request()).unwrap().status, 401);
    /// ```
    pub fn claims(&self) -> Option<Claims> {
        caller_claims()
    }

    /// Captures the parameters `path` gives the route `pattern` (the generated dispatch calls
    /// this for handlers whose pattern has parameters).
    #[doc(hidden)]
    pub fn __capture(&mut self, pattern: &str, path: &str) {
        self.params = wasmod_abi::route::Pattern::parse(pattern)
            .ok()
            .and_then(|pattern| pattern.captures(path))
            .unwrap_or_default();
    }

    /// The value of parameter `name` of the handler's route, percent-decoded: for
    /// `#[http_handler(GET, "/accounts/{name}")]` and a request for `/accounts/ann%20lee`,
    /// `ctx.param("name")` is `Some("ann lee")`. `None` for a name the route does not have,
    /// or a value that is not UTF-8 once decoded. Parse it for a typed value:
    /// `ctx.param("id").and_then(|id| id.parse::<u64>().ok())`. (The example on
    /// [`HttpContext`] uses it.)
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(param, _)| param == name)
            .map(|(_, value)| value.as_str())
    }

    explicit_tx_methods!();
}
