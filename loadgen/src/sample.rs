//! The bytes a floor server broadcasts: the `TransactionUpdate` that `wasmod serve` sends to a
//! subscriber of the quickstart's `message` table when `send` commits one message, built with
//! the protocol's own types, so that the floor moves the same bytes per delivery as wasmod.

use wasmod_abi::encoding::to_vec;
use wasmod_abi::{ConnectionId, EntryKind, Identity, Timestamp};
use wasmod_protocol::ws::{
    BinaryServerMessage, ClientMessage, EntryPointName, QuerySetUpdate, RowList, ServerMessage,
    TableUpdate, TransactionUpdate, UpdateStatus,
};

/// The query set every load client subscribes as.
pub const QUERY_SET: u32 = 1;

/// The quickstart's table that load clients subscribe to.
pub const TABLE: &str = "message";

/// The message that subscribes a load client to every row of [`TABLE`], as [`QUERY_SET`].
pub fn subscribe_to_table<Args>() -> ClientMessage<Args> {
    ClientMessage::Subscribe {
        query_set_id: QUERY_SET,
        queries: vec![format!("SELECT * FROM {TABLE}")],
        resume_from: None,
    }
}

/// The quickstart's reducer that inserts one row into [`TABLE`].
pub const REDUCER: &str = "send";

/// The text of the `n`th message a writer sends: fixed width, so every update has one size.
pub fn message_text(n: u64) -> String {
    format!("load message {n:012}")
}

/// A one-row insert into [`TABLE`] committed at `timestamp` at `offset`, as a subscriber of
/// `SELECT * FROM message` receives it.
pub fn transaction_update(offset: u64, timestamp: Timestamp) -> BinaryServerMessage {
    let sender = Identity::from_bytes([0xab; 32]);
    let row = to_vec(&(offset, sender, timestamp, message_text(offset)));
    let inserts = RowList::from_rows([row.as_slice()]).unwrap_or_default();
    ServerMessage::TransactionUpdate(TransactionUpdate {
        offset,
        timestamp,
        caller_identity: sender,
        caller_connection_id: ConnectionId::from_bytes([0xcd; 16]),
        entry_point: EntryPointName {
            kind: EntryKind::Reducer,
            name: REDUCER.into(),
        },
        status: UpdateStatus::Committed,
        request_id: None,
        changes: vec![QuerySetUpdate {
            query_set_id: QUERY_SET,
            tables: vec![TableUpdate {
                table: TABLE.into(),
                inserts,
                deletes: RowList::default(),
            }],
        }],
    })
}

/// The first message a floor server sends on a socket (wasmod's first is also an
/// `IdentityToken`): the client knows from it that the server will broadcast to it.
pub fn hello() -> BinaryServerMessage {
    ServerMessage::IdentityToken {
        identity: Identity::from_bytes([0xab; 32]),
        token: "floor".into(),
        connection_id: ConnectionId::from_bytes([0xcd; 16]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_update_decodes_to_one_inserted_row_with_its_timestamp() {
        let timestamp = Timestamp::from_micros_since_unix_epoch(1_700_000_000_000_000);
        let bytes = transaction_update(7, timestamp).to_bytes();
        let ServerMessage::TransactionUpdate(update) =
            BinaryServerMessage::from_bytes(&bytes).expect("a message")
        else {
            panic!("not an update");
        };
        assert_eq!(update.timestamp, timestamp);
        assert_eq!(update.changes[0].tables[0].inserts.len(), 1);
        assert_eq!(
            transaction_update(8, timestamp).to_bytes().len(),
            bytes.len(),
            "every update has one size"
        );
        // docs/protocol.md's binary `TransactionUpdate` of one `message` row with the text
        // "hi" is 178 bytes, as its caller gets it (with a 4-byte request id); a subscriber's
        // has no request id, and this one's text is longer.
        let text = message_text(7).len();
        assert_eq!(bytes.len(), 178 - 4 - 2 + text);
    }
}
