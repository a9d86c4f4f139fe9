//! The snapshot an edge starts from: every table's rows at one committed state, encoded as
//! the commit log encodes one transaction inserting them all ([`super::SNAPSHOT_TYPE`]), at
//! the state's offset ([`super::OFFSET_HEADER`]).

use crate::health::not_durable;
use wasmod_host::datastore::{durability, Database, TableChanges, TxData};
use wasmod_protocol::errors::ApiError;

/// The offset and the encoded rows of every table of `database` at one committed state,
/// once that state is durable. Reads the tables under one read transaction: call it off the
/// async runtime's threads.
pub(crate) fn take(database: &Database) -> Result<(u64, Vec<u8>), ApiError> {
    let (offset, rows) = {
        let read = database.begin_read();
        let offset = database.next_offset();
        let tables = (0..database.datastore().table_count() as u32)
            .filter_map(|table| {
                let inserted = read.scan(table).ok()?;
                (!inserted.is_empty()).then_some(TableChanges {
                    table,
                    inserted,
                    deleted: Vec::new(),
                })
            })
            .collect();
        (offset, TxData { tables })
    };
    if let Some(last) = offset.checked_sub(1) {
        database
            .durable(last)
            .wait()
            .map_err(|error| not_durable(&error))?;
    }
    Ok((offset, durability::encode_changes(offset, &rows)))
}
