//! Binary server messages in the JSON protocol's form ([`JsonModule::message_json`]): what a
//! client received, written for people and for tools that compare messages as JSON (the
//! shared test vectors of `client/vectors/`).
//!
//! Rows become values of their table's row type in the JSON mapping, as a `v1.json.wasmod`
//! client receives them. The one thing a message alone cannot render so is a procedure's or
//! view's returned value (a `CallResult` names its request, not its entry point, so not the
//! value's type): it is written as the hex digits of its encoding.

use super::JsonModule;
use crate::Error;
use serde_json::value::RawValue;
use std::fmt::Write;
use wasmod_protocol::ws::{
    BinaryServerMessage, JsonServerMessage, QuerySetUpdate, RowList, ServerMessage, TableRows,
    TableUpdate, TransactionUpdate,
};

/// Rows in JSON, per table.
type JsonTables = Vec<TableRows<Box<RawValue>>>;

impl JsonModule {
    /// `message` as the JSON protocol writes it (its text), its rows in the JSON mapping of
    /// their tables' row types; a returned value as the hex of its encoding. An error if a
    /// row does not decode as its table's rows, or names no table of the module.
    pub fn message_json(&self, message: &BinaryServerMessage) -> Result<String, Error> {
        let json: JsonServerMessage = match message {
            ServerMessage::IdentityToken {
                identity,
                token,
                connection_id,
            } => ServerMessage::IdentityToken {
                identity: *identity,
                token: token.clone(),
                connection_id: *connection_id,
            },
            ServerMessage::SubscribeApplied {
                query_set_id,
                offset,
                tables,
                deletes,
                resumed,
            } => ServerMessage::SubscribeApplied {
                query_set_id: *query_set_id,
                offset: *offset,
                tables: self.tables_json(tables)?,
                deletes: self.tables_json(deletes)?,
                resumed: *resumed,
            },
            ServerMessage::SubscribeRows {
                query_set_id,
                tables,
                deletes,
            } => ServerMessage::SubscribeRows {
                query_set_id: *query_set_id,
                tables: self.tables_json(tables)?,
                deletes: self.tables_json(deletes)?,
            },
            ServerMessage::TransactionUpdate(update) => {
                ServerMessage::TransactionUpdate(self.update_json(update)?)
            }
            ServerMessage::CallResult {
                request_id,
                offset,
                result,
            } => ServerMessage::CallResult {
                request_id: *request_id,
                offset: *offset,
                result: match result {
                    Ok(value) => Ok(hex_json(value)),
                    Err(error) => Err(error.clone()),
                },
            },
            ServerMessage::SubscriptionError {
                query_set_id,
                message,
            } => ServerMessage::SubscriptionError {
                query_set_id: *query_set_id,
                message: message.clone(),
            },
            ServerMessage::OneOffQueryResult { request_id, result } => {
                ServerMessage::OneOffQueryResult {
                    request_id: *request_id,
                    result: match result {
                        Ok(tables) => Ok(self.tables_json(tables)?),
                        Err(message) => Err(message.clone()),
                    },
                }
            }
            ServerMessage::CaughtUp { request_id, offset } => ServerMessage::CaughtUp {
                request_id: *request_id,
                offset: *offset,
            },
            other => {
                return Err(Error::Protocol(format!(
                    "a message this client does not know: {}",
                    other.kind()
                )))
            }
        };
        Ok(json.to_json())
    }

    /// The rows of `table` in `rows` as a JSON array.
    fn rows_json(&self, table: &str, rows: &RowList) -> Result<Box<RawValue>, Error> {
        let row_type = self
            .row_type(table)
            .ok_or_else(|| Error::Protocol(format!("rows of `{table}`, a table of no module")))?;
        rows.to_json(row_type, self.typespace())
            .map_err(|error| Error::Protocol(format!("a row of `{table}`: {error}")))
    }

    fn tables_json(&self, tables: &[TableRows<RowList>]) -> Result<JsonTables, Error> {
        tables
            .iter()
            .map(|entry| {
                Ok(TableRows {
                    table: entry.table.clone(),
                    rows: self.rows_json(&entry.table, &entry.rows)?,
                })
            })
            .collect()
    }

    fn update_json(
        &self,
        update: &TransactionUpdate<RowList>,
    ) -> Result<TransactionUpdate<Box<RawValue>>, Error> {
        let changes = update
            .changes
            .iter()
            .map(|change| {
                let tables = change
                    .tables
                    .iter()
                    .map(|table| {
                        Ok(TableUpdate {
                            table: table.table.clone(),
                            inserts: self.rows_json(&table.table, &table.inserts)?,
                            deletes: self.rows_json(&table.table, &table.deletes)?,
                        })
                    })
                    .collect::<Result<_, Error>>()?;
                Ok(QuerySetUpdate {
                    query_set_id: change.query_set_id,
                    tables,
                })
            })
            .collect::<Result<_, Error>>()?;
        Ok(TransactionUpdate {
            offset: update.offset,
            timestamp: update.timestamp,
            caller_identity: update.caller_identity,
            caller_connection_id: update.caller_connection_id,
            entry_point: update.entry_point.clone(),
            status: update.status.clone(),
            request_id: update.request_id,
            changes,
        })
    }
}

/// `bytes` as a JSON string of their hex digits.
fn hex_json(bytes: &[u8]) -> Box<RawValue> {
    let mut hex = String::with_capacity(2 * bytes.len());
    for byte in bytes {
        let _ = write!(hex, "{byte:02x}");
    }
    // A string always serialises.
    serde_json::value::to_raw_value(&hex).unwrap_or_default()
}
