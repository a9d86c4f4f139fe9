//! What the protocol's benches share: the `TransactionUpdate` they encode, compress and
//! decode.

use wasmod_abi::{ConnectionId, EntryKind, Identity, Timestamp};
use wasmod_protocol::ws::{
    BinaryServerMessage, EntryPointName, QuerySetUpdate, RowList, ServerMessage, TableUpdate,
    TransactionUpdate, UpdateStatus,
};

/// A committed `TransactionUpdate` of one query set that inserts `inserts` into `message`.
pub fn message_update(inserts: RowList) -> BinaryServerMessage {
    ServerMessage::TransactionUpdate(TransactionUpdate {
        offset: 1234,
        timestamp: Timestamp::from_micros_since_unix_epoch(1_764_590_000_000_000),
        caller_identity: Identity::from_bytes([9; 32]),
        caller_connection_id: ConnectionId::from_bytes([5; 16]),
        entry_point: EntryPointName {
            kind: EntryKind::Reducer,
            name: "send_message".into(),
        },
        status: UpdateStatus::Committed,
        request_id: None,
        changes: vec![QuerySetUpdate {
            query_set_id: 1,
            tables: vec![TableUpdate {
                table: "message".into(),
                inserts,
                deletes: RowList::default(),
            }],
        }],
    })
}
