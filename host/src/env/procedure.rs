//! What only procedures (and HTTP handlers) may do: open their own transactions and send
//! HTTP requests.
//!
//! Outbound HTTP goes through an [`HttpClient`], the seam where a host plugs in a real client
//! with the operator's allow list. The default, [`DenyAllHttp`], refuses every request, so a
//! host never reaches the network unless it is configured to.

use super::{CallKind, Durable, InstanceEnv, LogLevel, Tx};
use std::time::Instant;
use wasmod_abi::encoding::{from_slice, to_vec};
use wasmod_abi::http::{Request, Response};
use wasmod_abi::{Errno, Timestamp};

/// Sends procedures' outbound HTTP requests.
pub trait HttpClient: Send + Sync {
    /// Sends `request` (whose `uri` is a full URL) and waits for the response, but not past
    /// `deadline` when there is one: the calling procedure's, which it must not hold the
    /// module's only thread beyond (imports are not interrupted). `Err` explains a refusal or
    /// a failure, for the logs.
    fn send(&self, request: Request, deadline: Option<Instant>) -> Result<Response, String>;
}

/// Refuses every request: the default until a host configures outbound HTTP.
#[derive(Clone, Copy, Debug, Default)]
pub struct DenyAllHttp;

impl HttpClient for DenyAllHttp {
    fn send(&self, request: Request, _deadline: Option<Instant>) -> Result<Response, String> {
        Err(format!(
            "outbound HTTP is not configured on this host: {} {} was refused",
            request.method.as_str(),
            request.uri
        ))
    }
}

impl InstanceEnv {
    /// `procedure_start_tx`: opens a transaction and returns its timestamp. Errors:
    /// `NOT_ALLOWED` (not in a procedure), `TX_ALREADY_OPEN`.
    pub fn procedure_start_tx(&mut self) -> Result<Timestamp, Errno> {
        self.no_procedure_tx()?;
        let timestamp = Timestamp::now();
        self.tx = Tx::Procedure(self.database.begin_mut(), timestamp);
        Ok(timestamp)
    }

    /// `procedure_start_read_tx`: opens a read-only transaction of the committed state, which
    /// other readers share (it waits only while a writer is committing), and returns its
    /// timestamp. End it with `procedure_commit_tx` or `procedure_abort_tx`. Errors:
    /// `NOT_ALLOWED` (not in a procedure), `TX_ALREADY_OPEN`.
    pub fn procedure_start_read_tx(&mut self) -> Result<Timestamp, Errno> {
        self.no_procedure_tx()?;
        self.tx = Tx::ProcedureRead(self.database.begin_read());
        Ok(Timestamp::now())
    }

    /// `procedure_commit_tx`: commits the procedure's transaction (publishing it, and, with a
    /// commit log, waiting until it is durable, even with deferred durability: the procedure
    /// goes on, and may tell others, once this returns), or ends its read-only one. Errors:
    /// `NOT_ALLOWED` (also when the commit log failed: the reason is logged), `NO_TX`.
    pub fn procedure_commit_tx(&mut self) -> Result<(), Errno> {
        let (tx, timestamp) = match self.take_procedure_tx()? {
            Tx::Procedure(tx, timestamp) => (tx, timestamp),
            _ => return Ok(()),
        };
        match self.commit(tx, timestamp, Durable::Now) {
            Ok(_) => Ok(()),
            Err(error) => {
                // The ABI has no code for "not durable": the procedure is told the commit was
                // not allowed, the log refuses every later one, and with deferred durability
                // the call's answer reports the failure.
                self.host_log(LogLevel::Error, error.to_string());
                Err(Errno::NOT_ALLOWED)
            }
        }
    }

    /// `procedure_abort_tx`: rolls the procedure's transaction back, or ends its read-only
    /// one. Errors: `NOT_ALLOWED`, `NO_TX`.
    pub fn procedure_abort_tx(&mut self) -> Result<(), Errno> {
        self.take_procedure_tx()?;
        Ok(())
    }

    /// `procedure_http_request`: sends the encoded request through the [`HttpClient`] and
    /// returns a byte source holding the encoded response. The request gets no more time than
    /// the call has left before its deadline, and one made after the deadline is refused
    /// without being sent. Errors: `NOT_ALLOWED` (not in a procedure, or while a transaction
    /// is open: it would hold the database during network I/O), `BAD_ENCODING`,
    /// `HTTP_FAILED` (the reason is logged), `TOO_LARGE` (the call has as many handles open
    /// as it may, or the response does not fit in its budget of host memory: see
    /// [`Limits`](super::Limits); logged too).
    pub fn procedure_http_request(&mut self, request: &[u8]) -> Result<u32, Errno> {
        self.in_procedure()?;
        if !matches!(self.tx, Tx::None) {
            self.host_log(
                LogLevel::Warn,
                "outbound HTTP refused: a transaction is open (commit or abort it first)".into(),
            );
            return Err(Errno::NOT_ALLOWED);
        }
        let request: Request = from_slice(request).map_err(|_| Errno::BAD_ENCODING)?;
        if self
            .deadline
            .is_some_and(|deadline| Instant::now() >= deadline)
        {
            self.host_log(
                LogLevel::Warn,
                format!(
                    "outbound HTTP {} {} refused: the call is past its deadline",
                    request.method.as_str(),
                    request.uri
                ),
            );
            return Err(Errno::HTTP_FAILED);
        }
        if let Err(errno) = self.room_for_handle() {
            self.host_log(
                LogLevel::Warn,
                format!(
                    "outbound HTTP refused: the call has {} handles open, the most it may (read or close some first)",
                    self.limits.max_live_handles
                ),
            );
            return Err(errno);
        }
        match self.http.send(request, self.deadline) {
            Ok(response) => {
                let bytes = to_vec(&response);
                let size = bytes.len();
                self.open_source(bytes).inspect_err(|_| {
                    let message = format!(
                        "outbound HTTP response of {size} bytes dropped: the call's handles hold {} bytes, and may hold {} (read or close some first)",
                        self.held_bytes, self.limits.max_held_bytes
                    );
                    self.host_log(LogLevel::Warn, message);
                })
            }
            Err(reason) => {
                self.host_log(LogLevel::Warn, reason);
                Err(Errno::HTTP_FAILED)
            }
        }
    }

    fn in_procedure(&self) -> Result<(), Errno> {
        match self.call {
            Some(CallKind::Procedure) => Ok(()),
            _ => Err(Errno::NOT_ALLOWED),
        }
    }

    /// In a procedure with no transaction open: `NOT_ALLOWED`, `TX_ALREADY_OPEN`.
    fn no_procedure_tx(&self) -> Result<(), Errno> {
        self.in_procedure()?;
        match self.tx {
            Tx::None => Ok(()),
            _ => Err(Errno::TX_ALREADY_OPEN),
        }
    }

    /// Takes the procedure's open transaction, of either kind: `NOT_ALLOWED`, `NO_TX`.
    fn take_procedure_tx(&mut self) -> Result<Tx, Errno> {
        self.in_procedure()?;
        match std::mem::replace(&mut self.tx, Tx::None) {
            tx @ (Tx::Procedure(..) | Tx::ProcedureRead(_)) => Ok(tx),
            other => {
                self.tx = other;
                Err(Errno::NO_TX)
            }
        }
    }
}
