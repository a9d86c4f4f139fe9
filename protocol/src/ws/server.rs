//! Server → client: [`ServerMessage`] and the parts of its messages.

use super::fields::{entry_kind, micros, result};
use crate::errors::ApiError;
use serde::{Deserialize, Serialize};
use wasmod_abi::{ConnectionId, EntryKind, Identity, Timestamp};

/// What the server sends over a client's WebSocket.
///
/// `Rows` is how rows travel ([`RowList`](super::RowList) in binary, a JSON array of values
/// in JSON) and `Value` how a call's returned value does (its encoding in binary, its JSON in
/// JSON). See [`BinaryServerMessage`](super::BinaryServerMessage) and
/// [`JsonServerMessage`](super::JsonServerMessage).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, wasmod_abi::SchemaType)]
#[wasmod(crate = wasmod_abi)]
#[serde(bound(
    serialize = "Rows: Serialize, Value: Serialize",
    deserialize = "Rows: Deserialize<'de>, Value: Deserialize<'de>"
))]
#[non_exhaustive]
pub enum ServerMessage<Rows, Value> {
    /// The connection's identity, a token for it, and the connection's id: the first message
    /// of every connection.
    IdentityToken {
        /// The identity the connection runs as.
        #[serde(with = "crate::hex")]
        identity: Identity,
        /// A token for it, for later connections and HTTP calls.
        token: String,
        /// This connection's id.
        #[serde(with = "crate::hex")]
        connection_id: ConnectionId,
    },
    /// A query set's rows, once it is subscribed: with the parts sent before it
    /// ([`SubscribeRows`](Self::SubscribeRows)), all of them.
    SubscribeApplied {
        /// The query set's id, as the client gave it.
        query_set_id: u32,
        /// The transaction offset the rows are as of: later updates follow it.
        offset: u64,
        /// The matching rows (or the last part of them), per table: a table appears in one
        /// entry or more per query that reads it; when `resumed`, only the rows that entered
        /// the query set's result since `resume_from`.
        tables: Vec<TableRows<Rows>>,
        /// When `resumed`, the rows that left the query set's result since `resume_from`
        /// (or the last part of them), per table like `tables`; empty otherwise.
        deletes: Vec<TableRows<Rows>>,
        /// Whether the server resumed from the client's `resume_from` offset: `tables` and
        /// `deletes` are then the changes since it, to apply to what the client holds (remove
        /// `deletes`, add `tables`), rather than the whole state.
        resumed: bool,
    },
    /// A commit, or the failure of the caller's own reducer call.
    TransactionUpdate(TransactionUpdate<Rows>),
    /// The answer to a procedure or view call, or the refusal of any call (or of a
    /// [`WaitFor`](super::ClientMessage::WaitFor)) before it ran.
    CallResult {
        /// The call's `request_id`.
        request_id: u32,
        /// The offset of the last commit when the call ended: every commit the call made (a
        /// procedure's transactions) is at or before it, and so is the state a view read. A
        /// client that reads over its subscriptions waits for it with
        /// [`WaitFor`](super::ClientMessage::WaitFor) to see its own writes.
        offset: u64,
        /// The returned value, or why the call failed.
        #[serde(with = "result")]
        result: Result<Value, ApiError>,
    },
    /// A query set could not be subscribed (or can no longer be evaluated).
    SubscriptionError {
        /// The query set's id.
        query_set_id: u32,
        /// Why, for people.
        message: String,
    },
    /// The answer to a one-off query.
    OneOffQueryResult {
        /// The query's `request_id`.
        request_id: u32,
        /// The selected rows per table, or why the query failed.
        #[serde(with = "result")]
        result: Result<Vec<TableRows<Rows>>, String>,
    },
    /// Part of a query set's rows, ahead of its `SubscribeApplied`, when the rows are more
    /// than one message should carry: the server sends them in parts, all as of the same
    /// offset, and the query set's `SubscribeApplied` brings the last part. A client gathers
    /// the parts and applies them together with `SubscribeApplied` (whose `resumed` says how),
    /// so that what it holds changes once, as one transaction.
    SubscribeRows {
        /// The query set's id.
        query_set_id: u32,
        /// Rows that are in the query set's result (when resumed: that entered it), per
        /// table; a table may appear in several entries and several parts.
        tables: Vec<TableRows<Rows>>,
        /// When resumed, rows that left the query set's result, per table; empty otherwise.
        deletes: Vec<TableRows<Rows>>,
    },
    /// The answer to a [`WaitFor`](super::ClientMessage::WaitFor): every update of the
    /// commits up to `offset` that this connection's query sets had has been sent before it.
    CaughtUp {
        /// The `WaitFor`'s `request_id`.
        request_id: u32,
        /// The offset waited for.
        offset: u64,
    },
}

impl<Rows, Value> ServerMessage<Rows, Value> {
    /// The message's name, as the JSON protocol tags it (`IdentityToken`,
    /// `TransactionUpdate`, ...): what a client says of a message it did not expect, rather
    /// than the whole message.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::IdentityToken { .. } => "IdentityToken",
            Self::SubscribeApplied { .. } => "SubscribeApplied",
            Self::TransactionUpdate(_) => "TransactionUpdate",
            Self::CallResult { .. } => "CallResult",
            Self::SubscriptionError { .. } => "SubscriptionError",
            Self::OneOffQueryResult { .. } => "OneOffQueryResult",
            Self::SubscribeRows { .. } => "SubscribeRows",
            Self::CaughtUp { .. } => "CaughtUp",
        }
    }
}

/// One table's rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, wasmod_abi::SchemaType)]
#[wasmod(crate = wasmod_abi)]
pub struct TableRows<Rows> {
    /// The table's name.
    pub table: String,
    /// Its rows.
    pub rows: Rows,
}

/// A transaction: what made it, how it ended, and what it changed in the client's query
/// sets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, wasmod_abi::SchemaType)]
#[wasmod(crate = wasmod_abi)]
pub struct TransactionUpdate<Rows> {
    /// The transaction's offset in the commit log; for a failed or aborted call (sent to its
    /// caller only), the offset of the last commit before it.
    pub offset: u64,
    /// When the transaction ran.
    #[serde(with = "micros")]
    pub timestamp: Timestamp,
    /// Who made the call.
    #[serde(with = "crate::hex")]
    pub caller_identity: Identity,
    /// Over which connection (zero for calls without one, such as HTTP calls).
    #[serde(with = "crate::hex")]
    pub caller_connection_id: ConnectionId,
    /// The entry point that ran.
    pub entry_point: EntryPointName,
    /// How it ended.
    pub status: UpdateStatus,
    /// In the update sent to the caller of a reducer over this connection, the call's
    /// `request_id`: the status is then the call's answer.
    pub request_id: Option<u32>,
    /// What changed in each of the client's query sets that the transaction touched.
    pub changes: Vec<QuerySetUpdate<Rows>>,
}

/// An entry point by kind and name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, wasmod_abi::SchemaType)]
#[wasmod(crate = wasmod_abi)]
pub struct EntryPointName {
    /// Its kind, written as its word in JSON (`"reducer"`, `"http handler"`).
    #[serde(with = "entry_kind")]
    pub kind: EntryKind,
    /// Its name.
    pub name: String,
}

/// How a transaction ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, wasmod_abi::SchemaType)]
#[wasmod(crate = wasmod_abi)]
#[non_exhaustive]
pub enum UpdateStatus {
    /// It committed.
    Committed,
    /// The entry point returned an error; nothing was committed.
    Failed {
        /// The module's message.
        message: String,
    },
    /// The module trapped, panicked or ran out of time or memory; nothing was committed.
    Aborted {
        /// Why.
        reason: String,
    },
}

/// What one transaction changed in one query set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, wasmod_abi::SchemaType)]
#[wasmod(crate = wasmod_abi)]
pub struct QuerySetUpdate<Rows> {
    /// The query set's id.
    pub query_set_id: u32,
    /// The changes, per table.
    pub tables: Vec<TableUpdate<Rows>>,
}

/// What one transaction changed in one table, as far as a query set sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, wasmod_abi::SchemaType)]
#[wasmod(crate = wasmod_abi)]
pub struct TableUpdate<Rows> {
    /// The table's name.
    pub table: String,
    /// The rows that entered the query set.
    pub inserts: Rows,
    /// The rows that left it.
    pub deletes: Rows,
}
