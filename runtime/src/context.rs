//! The contexts entry points receive: who called, when, and access to the database.
//!
//! Each kind of entry point gets its own context type, and the macros check that the first
//! parameter is the right one, so the kind of access a function has is visible in its
//! signature: reducers write ([`ReducerContext`]), views only read ([`ViewContext`],
//! [`AnonymousViewContext`]), procedures and HTTP handlers open transactions explicitly
//! ([`ProcedureContext`], [`HttpContext`]), read-write ([`TxContext`]) or read-only
//! ([`ReadTxContext`]).

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

    /// The identity of the caller ([`Identity::ZERO`] for calls made by the host itself).
    pub fn sender(&self) -> Identity {
        self.sender
    }

    /// The caller's connection, if the call came over one.
    pub fn connection_id(&self) -> Option<ConnectionId> {
        self.connection_id
    }

    /// When the call started, as the host saw it. Use this rather than a clock: it is the same
    /// for every read in the call.
    pub fn timestamp(&self) -> Timestamp {
        self.timestamp
    }
}

/// What a per-caller view gets: the caller and read-only access to the database.
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

    /// The identity of the caller the view is computed for.
    pub fn sender(&self) -> Identity {
        self.sender
    }
}

/// What an anonymous view gets: read-only access to the database, and nothing about the caller,
/// so that its result can be shared by every caller.
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

/// Access to the database inside a transaction opened by a procedure or an HTTP handler.
#[non_exhaustive]
pub struct TxContext {
    /// The database, readable and writable.
    pub db: Db<ReadWrite>,
    timestamp: Timestamp,
}

impl TxContext {
    /// When the transaction started.
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
    pub fn timestamp(&self) -> Timestamp {
        self.timestamp
    }
}

/// Why a transaction opened by a procedure or an HTTP handler could not run.
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
    let bytes = crate::rt::read_source(source).map_err(HttpError::Refused)?;
    wasmod_abi::encoding::from_slice(&bytes).map_err(HttpError::BadResponse)
}

/// Why an outbound HTTP request failed.
#[derive(Clone, Debug, PartialEq, Eq)]
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
        /// When the call started.
        pub fn timestamp(&self) -> Timestamp {
            self.timestamp
        }

        /// Runs `body` in a transaction and commits it.
        ///
        /// # Panics
        ///
        /// If a transaction is already open (transactions do not nest) or the host refuses to
        /// open or commit one. Use [`try_with_tx`](Self::try_with_tx) to handle those.
        pub fn with_tx<T>(&mut self, body: impl FnOnce(&TxContext) -> T) -> T {
            match run_in_tx(|tx| Ok::<T, core::convert::Infallible>(body(tx))) {
                Ok(Ok(value)) => value,
                Ok(Err(never)) => match never {},
                Err(error) => panic!("{error}"),
            }
        }

        /// Runs `body` in a transaction: committed if it returns `Ok`, rolled back if `Err`.
        /// The outer `Result` reports a transaction the host could not open or commit.
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
        /// If a transaction is already open (transactions do not nest) or the host refuses to
        /// open one. Use [`try_with_read_tx`](Self::try_with_read_tx) to handle those.
        pub fn with_read_tx<T>(&mut self, body: impl FnOnce(&ReadTxContext) -> T) -> T {
            run_in_read_tx(body).unwrap_or_else(|error| panic!("{error}"))
        }

        /// Runs `body` in a read-only transaction, like [`with_read_tx`](Self::with_read_tx);
        /// `Err` reports a transaction the host could not open.
        pub fn try_with_read_tx<T>(
            &mut self,
            body: impl FnOnce(&ReadTxContext) -> T,
        ) -> Result<T, TxError> {
            run_in_read_tx(body)
        }

        /// Sends an HTTP request to a host the operator allows, and waits for the response.
        pub fn send_http(
            &mut self,
            request: &crate::http::Request,
        ) -> Result<crate::http::Response, HttpError> {
            send_http(request)
        }

        /// Sends a `GET` request for `url`.
        pub fn http_get(&mut self, url: &str) -> Result<crate::http::Response, HttpError> {
            send_http(&crate::http::Request::new(crate::http::Method::Get, url))
        }
    };
}

/// What a procedure gets: the caller, the time, explicit transactions and outbound HTTP.
///
/// A procedure runs outside any transaction. Open one with [`with_tx`](Self::with_tx) or
/// [`try_with_tx`](Self::try_with_tx); a transaction is never held across an HTTP request.
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

    /// The identity of the caller.
    pub fn sender(&self) -> Identity {
        self.sender
    }

    /// The caller's connection, if the call came over one.
    pub fn connection_id(&self) -> Option<ConnectionId> {
        self.connection_id
    }

    explicit_tx_methods!();
}

/// What an HTTP handler gets: the time, the parameters of its route, explicit transactions
/// and outbound HTTP.
///
/// Like a procedure, a handler runs outside any transaction and opens them explicitly.
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
    /// `ctx.param("id").and_then(|id| id.parse::<u64>().ok())`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(param, _)| param == name)
            .map(|(_, value)| value.as_str())
    }

    explicit_tx_methods!();
}
