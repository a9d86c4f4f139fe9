//! Rows: stored as their encoded bytes, decoded only to check them and to extract keys.
//!
//! Every row is checked against the table's column types when it comes in, so stored rows are
//! always well formed. Only the columns an index or a sequence needs are built into
//! [`Value`]s; the others are walked over without allocating.

use crate::error::Error;
use crate::schema::TableSchema;
use std::sync::Arc;
use wasmod_abi::{Errno, Reader, Typespace, Value};

/// A stored row's encoded bytes, shared between the table and whoever scanned it.
pub type Row = Arc<[u8]>;

/// The key of a row in one index: the indexed columns' values, in key order.
pub(crate) type Key = Vec<Value>;

/// The decoded columns of a row.
pub(crate) struct DecodedRow {
    /// The values of the decoded columns, by slot (see [`TableSchema::slots`]).
    pub(crate) values: Vec<Value>,
    /// Where each decoded column starts in the row's bytes, by slot.
    pub(crate) offsets: Vec<usize>,
}

impl DecodedRow {
    /// The row's key in each index of the table, by index id.
    pub(crate) fn keys(&self, table: &TableSchema) -> Box<[Key]> {
        table
            .indexes
            .iter()
            .map(|index| {
                index
                    .slots
                    .iter()
                    .map(|&slot| self.values[slot].clone())
                    .collect()
            })
            .collect()
    }
}

/// Reads one row from `reader`, checking every column; with `decode`, also builds the
/// columns the table decodes.
pub(crate) fn read_row(
    table: &TableSchema,
    typespace: &Typespace,
    reader: &mut Reader<'_>,
    decode: bool,
) -> Result<DecodedRow, Error> {
    let start = reader.remaining();
    let capacity = if decode { table.decoded_len() } else { 0 };
    let mut row = DecodedRow {
        values: Vec::with_capacity(capacity),
        offsets: Vec::with_capacity(capacity),
    };
    for (column, def) in table.def.columns.iter().enumerate() {
        let offset = start - reader.remaining();
        let result = match table.slots[column] {
            Some(_) if decode => Value::decode(&def.ty, typespace, reader).map(|value| {
                row.values.push(value);
                row.offsets.push(offset);
            }),
            _ => Value::skip(&def.ty, typespace, reader),
        };
        result.map_err(|error| {
            Error::new(
                Errno::BAD_ENCODING,
                format!(
                    "table `{}`: column `{}` of the row does not decode: {error}",
                    table.def.name,
                    table.column_name(column)
                ),
            )
        })?;
    }
    Ok(row)
}

/// Decodes exactly one row from `bytes`: trailing bytes are an error.
pub(crate) fn decode_row(
    table: &TableSchema,
    typespace: &Typespace,
    bytes: &[u8],
) -> Result<DecodedRow, Error> {
    let mut reader = Reader::new(bytes);
    let row = read_row(table, typespace, &mut reader, true)?;
    if reader.remaining() > 0 {
        return Err(Error::new(
            Errno::BAD_ENCODING,
            format!(
                "table `{}`: {} bytes are left after the row",
                table.def.name,
                reader.remaining()
            ),
        ));
    }
    Ok(row)
}

/// Splits concatenated encoded rows, checking each.
pub(crate) fn split_rows<'a>(
    table: &TableSchema,
    typespace: &Typespace,
    bytes: &'a [u8],
) -> Result<Vec<&'a [u8]>, Error> {
    let mut reader = Reader::new(bytes);
    let mut rows = Vec::new();
    while reader.remaining() > 0 {
        let rest = reader.rest();
        read_row(table, typespace, &mut reader, false)?;
        let len = rest.len() - reader.remaining();
        if len == 0 {
            // Rows of this table take no bytes: what is left cannot be rows.
            return Err(Error::new(
                Errno::BAD_ENCODING,
                format!(
                    "table `{}`: {} bytes are left after the rows",
                    table.def.name,
                    rest.len()
                ),
            ));
        }
        rows.push(&rest[..len]);
    }
    Ok(rows)
}
