//! Client → server: [`ClientMessage`].

use serde::{Deserialize, Serialize};

/// What a client sends over its WebSocket.
///
/// `Args` is how a call's arguments travel: their encoding (the product of the parameters,
/// as `__call_*__` takes them) in binary, a JSON array or object in JSON (as the HTTP API
/// takes them). See [`BinaryClientMessage`](super::BinaryClientMessage) and
/// [`JsonClientMessage`](super::JsonClientMessage).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, wasmod_abi::SchemaType)]
#[wasmod(crate = wasmod_abi)]
#[non_exhaustive]
pub enum ClientMessage<Args> {
    /// Calls a reducer. The caller hears of it in the [`TransactionUpdate`] of its commit
    /// (or of its failure), with this `request_id`.
    ///
    /// [`TransactionUpdate`]: super::ServerMessage::TransactionUpdate
    CallReducer {
        /// Chosen by the client, echoed in the answer.
        request_id: u32,
        /// The reducer's name.
        name: String,
        /// Its arguments.
        args: Args,
    },
    /// Calls a procedure; answered by a [`CallResult`](super::ServerMessage::CallResult).
    CallProcedure {
        /// Chosen by the client, echoed in the answer.
        request_id: u32,
        /// The procedure's name.
        name: String,
        /// Its arguments.
        args: Args,
    },
    /// Calls a view (per caller or anonymous); answered by a
    /// [`CallResult`](super::ServerMessage::CallResult).
    CallView {
        /// Chosen by the client, echoed in the answer.
        request_id: u32,
        /// The view's name.
        name: String,
        /// Its arguments.
        args: Args,
    },
    /// Subscribes to the rows `queries` select, as one query set; answered by a
    /// [`SubscribeApplied`](super::ServerMessage::SubscribeApplied) (or a
    /// [`SubscriptionError`](super::ServerMessage::SubscriptionError)), then by the query
    /// set's changes in each [`TransactionUpdate`](super::ServerMessage::TransactionUpdate).
    Subscribe {
        /// Chosen by the client, names the query set in later messages.
        query_set_id: u32,
        /// The queries, in the SQL subset.
        queries: Vec<String>,
        /// A reconnecting client's last applied transaction offset: the server then sends
        /// only what changed since (`resumed` in the answer), when it still can.
        resume_from: Option<u64>,
    },
    /// Ends the query set `query_set_id`.
    Unsubscribe {
        /// The query set's id, as given to [`ClientMessage::Subscribe`].
        query_set_id: u32,
    },
    /// Runs `query` once against the committed state; answered by a
    /// [`OneOffQueryResult`](super::ServerMessage::OneOffQueryResult).
    OneOffQuery {
        /// Chosen by the client, echoed in the answer.
        request_id: u32,
        /// The query, in the SQL subset.
        query: String,
    },
    /// Asks to be told when this connection has been sent every update of the commits up to
    /// `offset` (such as the offset in the answer to a call made over HTTP, or over another
    /// connection): answered by a [`CaughtUp`](super::ServerMessage::CaughtUp) once they all
    /// are, in order with the updates, so that a client that applies messages in order has
    /// then applied every change up to `offset`. An offset not committed yet is waited for.
    WaitFor {
        /// Chosen by the client, echoed in the answer.
        request_id: u32,
        /// The commit offset to catch up to.
        offset: u64,
    },
}
