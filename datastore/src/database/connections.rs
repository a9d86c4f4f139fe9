//! The connections table: which clients are connected, kept with the data.
//!
//! A module's `client_connected` reducer and `client_disconnected` reducer must run exactly once
//! per connection, even across a crash of the host: a connection that was open when the process
//! died must still be disconnected, on the next start. So the database keeps a system table of
//! open connections, `__wasmod_connection (connection_id, identity)`, changed **in the same
//! transaction** as the lifecycle reducer's own writes: a connection is recorded if and only if
//! its `client_connected` committed, and forgotten if and only if its `client_disconnected`
//! (or the host's fallback, when that reducer fails) committed. The rows left after recovery are
//! the connections a crash cut, which the host then disconnects (as SpacetimeDB does with its
//! `st_client` table).
//!
//! System tables come after the module's tables, so the module's table ids (positions in its
//! description) are unchanged; the host refuses modules access to them, and the `__wasmod_`
//! prefix is reserved, so no module table can share the name.

use crate::error::Error;
use crate::tx::{MutTx, Tables};
use wasmod_abi::encoding::{from_slice, to_vec};
use wasmod_abi::{AlgebraicType, ConnectionId, Errno, Identity, IndexDef, ModuleDef, TableDef};

/// The reserved prefix of the names of the host's own tables and types.
pub const SYSTEM_PREFIX: &str = "__wasmod_";

/// The name of the connections table.
pub const CONNECTION_TABLE: &str = "__wasmod_connection";

/// The tables the database stores for `module`: the module's own, then the system tables.
pub(crate) fn stored_tables(module: &ModuleDef) -> ModuleDef {
    let mut stored = module.clone();
    let columns = [
        ("connection_id", AlgebraicType::ConnectionId),
        ("identity", AlgebraicType::Identity),
    ];
    let table = TableDef::of_columns(
        &mut stored.typespace,
        "__wasmod_Connection",
        CONNECTION_TABLE,
        &columns,
    );
    stored.tables.push(TableDef {
        primary_key: Some(0),
        indexes: vec![IndexDef {
            name: "__wasmod_connection_connection_id".into(),
            columns: vec![0],
            unique: true,
        }],
        public: false,
        ..table
    });
    stored
}

/// The row that records connection `connection_id` of `identity`.
fn row(identity: Identity, connection_id: ConnectionId) -> Vec<u8> {
    to_vec(&(connection_id, identity))
}

/// The index scan (see `docs/abi.md`) of the primary key that selects `connection_id`.
fn key_scan(connection_id: ConnectionId) -> Vec<u8> {
    let mut scan = 1u32.to_le_bytes().to_vec();
    scan.extend_from_slice(&connection_id.to_bytes());
    // Both ends unbounded past the prefix.
    scan.extend_from_slice(&[0, 0]);
    scan
}

/// Records, in `tx`, that `identity` is connected over `connection_id`. Errors:
/// `UNIQUE_VIOLATION` if that connection is recorded already (by anyone).
pub(crate) fn record(
    tx: &mut MutTx,
    table: u32,
    identity: Identity,
    connection_id: ConnectionId,
) -> Result<(), Error> {
    if tx
        .index_rows(table, 0, &key_scan(connection_id))?
        .next()
        .is_some()
    {
        return Err(Error::new(
            Errno::UNIQUE_VIOLATION,
            format!(
                "connection {} is recorded as open already",
                connection_id.to_hex()
            ),
        ));
    }
    tx.insert(table, &mut row(identity, connection_id))
}

/// Forgets, in `tx`, connection `connection_id` of `identity`; whether it was recorded.
pub(crate) fn forget(
    tx: &mut MutTx,
    table: u32,
    identity: Identity,
    connection_id: ConnectionId,
) -> Result<bool, Error> {
    Ok(tx.delete_rows(table, &row(identity, connection_id))? > 0)
}

/// Every connection recorded in `tables`, oldest first.
pub(crate) fn recorded(tables: &Tables, table: u32) -> Vec<(Identity, ConnectionId)> {
    let Ok(rows) = tables.rows(table) else {
        return Vec::new();
    };
    rows.filter_map(|row| from_slice::<(ConnectionId, Identity)>(row).ok())
        .map(|(connection_id, identity)| (identity, connection_id))
        .collect()
}
