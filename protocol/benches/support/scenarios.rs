//! The scenarios of SpacetimeDB's client SDK benchmarks (issue 12's "seed 000" table), as the
//! client decodes them: chat-like rows of about 60 bytes, a `TransactionUpdate` and a
//! `SubscribeApplied` of 1, 100 and 10,000 of them, and a connection's first message. Shared
//! by the native decode bench (`decode.rs`) and the browser's (`client/web/src/bench.rs`, which
//! includes this file and `mod.rs` beside it), so that both measure the same bytes.

use wasmod_abi::{ConnectionId, Identity};
use wasmod_protocol::ws::{BinaryServerMessage, RowList, ServerMessage, TableRows};

/// The row counts measured.
pub const ROWS: [usize; 3] = [1, 100, 10_000];

/// An encoded chat row: an id, a sender, a short text.
pub fn row(id: u64) -> Vec<u8> {
    let mut row = id.to_le_bytes().to_vec();
    row.extend_from_slice(&[(id % 7) as u8; 32]);
    let text = format!("message number {id} from the dragon");
    row.extend_from_slice(&(text.len() as u32).to_le_bytes());
    row.extend_from_slice(text.as_bytes());
    row
}

/// A list of `count` rows.
pub fn rows(count: usize) -> RowList {
    let rows: Vec<Vec<u8>> = (0..count as u64).map(row).collect();
    RowList::from_rows(rows.iter().map(Vec::as_slice)).expect("small")
}

/// A `SubscribeApplied` of `count` rows of one table.
pub fn applied(count: usize) -> BinaryServerMessage {
    ServerMessage::SubscribeApplied {
        query_set_id: 1,
        offset: 42,
        tables: vec![TableRows {
            table: "message".into(),
            rows: rows(count),
        }],
        deletes: vec![],
        resumed: false,
    }
}

/// A committed `TransactionUpdate` inserting `count` rows into one table of one query set.
pub fn update(count: usize) -> BinaryServerMessage {
    super::support::message_update(rows(count))
}

/// A connection's first message.
pub fn identity_token() -> BinaryServerMessage {
    ServerMessage::IdentityToken {
        identity: Identity::from_bytes([3; 32]),
        token: "x".repeat(180),
        connection_id: ConnectionId::from_bytes([4; 16]),
    }
}
