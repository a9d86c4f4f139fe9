//! Rows on the wire: [`RowList`], many encoded rows in one shared buffer, and their JSON.
//!
//! A subscription's rows are encoded once per commit and sent to every client whose queries
//! match, so a row list is built once and then shared: its bytes and its row ends are
//! reference-counted, and cloning one (into each client's message) copies two pointers. Its
//! binary encoding is the row ends then the bytes, so a receiver slices rows out of one buffer
//! instead of decoding one allocation per row.
//!
//! In JSON, rows are values of the table's row type in the JSON mapping ([`crate::json`]):
//! [`RowList::to_json`] writes them from the bytes in one pass. The protocol does not know a
//! table's row type by its name; [`RowTypes`] finds it in a module's description.

use super::server::{TableRows, TableUpdate};
use crate::json::{rows_json, JsonError};
use serde_json::value::RawValue;
use std::sync::Arc;
use wasmod_abi::{
    AlgebraicType, Decode, DecodeError, Encode, Field, ModuleDef, Reader, SchemaType, Typespace,
};

/// Encoded rows of one row type, sharing one buffer: cheap to clone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowList {
    /// The rows' encodings, one after the other.
    bytes: Arc<[u8]>,
    /// Where each row ends in `bytes`: non-decreasing, the last one `bytes.len()`.
    ends: Arc<[u32]>,
}

impl RowList {
    /// A list of `rows`, copied once into one buffer; `None` if they pass 4 GiB in all,
    /// more than one message can carry (the sender splits such results).
    pub fn from_rows<'r>(rows: impl IntoIterator<Item = &'r [u8]>) -> Option<Self> {
        let mut bytes = Vec::new();
        let mut ends = Vec::new();
        for row in rows {
            bytes.extend_from_slice(row);
            ends.push(u32::try_from(bytes.len()).ok()?);
        }
        Some(Self {
            bytes: bytes.into(),
            ends: ends.into(),
        })
    }

    /// How many rows the list holds.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the list holds no row.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The rows' encodings, in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(self.ends.iter().copied())
            .map(|(start, end)| self.bytes.get(start as usize..end as usize).unwrap_or(&[]))
    }

    /// The rows as a JSON array of values of `row_type`, written from their bytes.
    pub fn to_json(
        &self,
        row_type: &AlgebraicType,
        typespace: &Typespace,
    ) -> Result<Box<RawValue>, JsonError> {
        rows_json(row_type, typespace, self.iter())
    }
}

impl Encode for RowList {
    fn encode(&self, out: &mut Vec<u8>) {
        self.ends.encode(out);
        self.bytes.encode(out);
    }

    fn encoded_len(&self) -> usize {
        self.ends.encoded_len() + self.bytes.encoded_len()
    }
}

impl Decode for RowList {
    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let ends = Vec::<u32>::decode(reader)?;
        let bytes = Vec::<u8>::decode(reader)?;
        let ordered = ends.windows(2).all(|pair| pair[0] <= pair[1]);
        let last = ends.last().map_or(0, |&end| end as usize);
        if !ordered || last != bytes.len() {
            return Err(DecodeError::LengthOverflow);
        }
        Ok(Self {
            bytes: bytes.into(),
            ends: ends.into(),
        })
    }
}

impl SchemaType for RowList {
    fn schema(typespace: &mut Typespace) -> AlgebraicType {
        AlgebraicType::Product(vec![
            Field::named("ends", Vec::<u32>::schema(typespace)),
            Field::named("bytes", Vec::<u8>::schema(typespace)),
        ])
    }
}

/// Finds a table's row type by its name, in a module's description, to render its rows as
/// JSON.
#[derive(Clone, Copy, Debug)]
pub struct RowTypes<'m> {
    module: &'m ModuleDef,
}

impl<'m> RowTypes<'m> {
    /// The row types of `module`'s tables.
    pub fn new(module: &'m ModuleDef) -> Self {
        Self { module }
    }

    /// A table's rows, in JSON.
    pub fn table_rows(
        &self,
        rows: &TableRows<RowList>,
    ) -> Result<TableRows<Box<RawValue>>, JsonError> {
        Ok(TableRows {
            table: rows.table.clone(),
            rows: self.to_json(&rows.table, &rows.rows)?,
        })
    }

    /// A table's changes, in JSON.
    pub fn table_update(
        &self,
        update: &TableUpdate<RowList>,
    ) -> Result<TableUpdate<Box<RawValue>>, JsonError> {
        Ok(TableUpdate {
            table: update.table.clone(),
            inserts: self.to_json(&update.table, &update.inserts)?,
            deletes: self.to_json(&update.table, &update.deletes)?,
        })
    }

    /// The rows of table `table` as a JSON array; an error for a table the module does not
    /// have.
    pub fn to_json(&self, table: &str, rows: &RowList) -> Result<Box<RawValue>, JsonError> {
        let row_type = self
            .module
            .tables
            .iter()
            .find(|def| def.name == table)
            .map(|def| &def.row_type)
            .ok_or_else(|| JsonError::unknown_table(table))?;
        rows.to_json(row_type, &self.module.typespace)
    }
}
