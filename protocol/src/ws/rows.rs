//! Rows on the wire: [`RowList`], many encoded rows in one shared buffer, and their JSON.
//!
//! A subscription's rows are encoded once per commit and sent to every client whose queries
//! match, so a row list is built once and then shared: its bytes and its row ends are
//! reference-counted buffers ([`Bytes`]), and cloning one (into each client's message) counts
//! one more holder of each. Its binary encoding is the row ends then the bytes, so a receiver
//! slices rows out of one buffer instead of decoding one allocation per row; and a receiver
//! that decodes a frame it holds as [`Bytes`] (`encoding::from_shared`, as
//! [`BinaryServerMessage::from_frame`](super::BinaryServerMessage::from_frame) does) gets row
//! lists that borrow the frame's buffer: their ends and bytes are checked, not copied.
//!
//! In JSON, rows are values of the table's row type in the JSON mapping ([`crate::json`]):
//! [`RowList::to_json`] writes them from the bytes in one pass. The protocol does not know a
//! table's row type by its name; [`RowTypes`] finds it in a module's description.

use super::server::{TableRows, TableUpdate};
use crate::json::{rows_json, JsonError};
use bytes::Bytes;
use serde_json::value::RawValue;
use wasmod_abi::{
    AlgebraicType, Decode, DecodeError, Encode, Field, ModuleDef, Reader, SchemaType, Typespace,
};

/// Encoded rows of one row type, sharing one buffer: cheap to clone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowList {
    /// The rows' encodings, one after the other.
    bytes: Bytes,
    /// Where each row ends in `bytes`, as little-endian `u32`s (their encoding):
    /// non-decreasing, the last one `bytes.len()`.
    ends: Bytes,
}

impl RowList {
    /// A list of `rows`, copied once into one buffer; `None` if they pass 4 GiB in all,
    /// more than one message can carry (the sender splits such results).
    pub fn from_rows<'r>(rows: impl IntoIterator<Item = &'r [u8]>) -> Option<Self> {
        let mut bytes = Vec::new();
        let mut ends = Vec::new();
        for row in rows {
            bytes.extend_from_slice(row);
            ends.extend_from_slice(&u32::try_from(bytes.len()).ok()?.to_le_bytes());
        }
        Some(Self {
            bytes: bytes.into(),
            ends: ends.into(),
        })
    }

    /// How many rows the list holds.
    pub fn len(&self) -> usize {
        self.ends.len() / END
    }

    /// Whether the list holds no row.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The rows' encodings, in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let ends = row_ends(&self.ends);
        let starts = std::iter::once(0).chain(ends.clone());
        starts
            .zip(ends)
            .map(|(start, end)| self.bytes.get(start..end).unwrap_or(&[]))
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

/// The bytes of one row end.
const END: usize = 4;

/// The row ends encoded in `ends`, little-endian `u32`s.
fn row_ends(ends: &[u8]) -> impl Iterator<Item = usize> + Clone + '_ {
    ends.chunks_exact(END)
        .map(|end| u32::from_le_bytes([end[0], end[1], end[2], end[3]]) as usize)
}

/// `part` of what `reader` reads, as a handle on the reader's owner when that is a [`Bytes`]
/// holding it (no copy), or else copied.
fn share(reader: &Reader<'_>, part: &[u8]) -> Bytes {
    let Some(whole) = reader
        .owner()
        .and_then(|owner| owner.downcast_ref::<Bytes>())
    else {
        return Bytes::copy_from_slice(part);
    };
    let offset = (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
    if offset <= whole.len() && part.len() <= whole.len() - offset {
        whole.slice(offset..offset + part.len())
    } else {
        Bytes::copy_from_slice(part)
    }
}

impl Encode for RowList {
    fn encode(&self, out: &mut Vec<u8>) {
        (self.len() as u32).encode(out);
        out.extend_from_slice(&self.ends);
        (self.bytes.len() as u32).encode(out);
        out.extend_from_slice(&self.bytes);
    }

    fn encoded_len(&self) -> usize {
        2 * END + self.ends.len() + self.bytes.len()
    }
}

impl Decode for RowList {
    fn decode(reader: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let count = reader.read_len()?;
        let ends = reader.take(count.saturating_mul(END))?;
        let bytes = reader.read_len_prefixed()?;
        let mut last = 0;
        for end in row_ends(ends) {
            if end < last {
                return Err(DecodeError::LengthOverflow);
            }
            last = end;
        }
        if last != bytes.len() {
            return Err(DecodeError::LengthOverflow);
        }
        Ok(Self {
            bytes: share(reader, bytes),
            ends: share(reader, ends),
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

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_abi::encoding::{from_shared, from_slice, to_vec};

    fn list() -> RowList {
        RowList::from_rows([&b"one"[..], b"", b"three"]).expect("small")
    }

    #[test]
    fn the_encoding_is_the_ends_then_the_bytes() {
        let expected = to_vec(&(vec![3u32, 3, 8], b"onethree".to_vec()));
        assert_eq!(to_vec(&list()), expected);
        assert_eq!(list().encoded_len(), expected.len());
        let list = list();
        let rows: Vec<&[u8]> = list.iter().collect();
        assert_eq!(rows, [&b"one"[..], b"", b"three"]);
    }

    #[test]
    fn a_list_decoded_from_shared_bytes_borrows_them_and_from_a_slice_copies() {
        let frame = Bytes::from(to_vec(&list()));
        let within = |list: &RowList| {
            let range = frame.as_ptr_range();
            list.iter()
                .filter(|row| !row.is_empty())
                .all(|row| range.contains(&row.as_ptr()))
        };
        let shared: RowList = from_shared(&frame).expect("decodes");
        assert_eq!(shared, list());
        assert!(within(&shared), "the rows are the frame's bytes");
        let copied: RowList = from_slice(&frame).expect("decodes");
        assert_eq!(copied, list());
        assert!(!within(&copied), "a slice has no owner to share");
    }

    #[test]
    fn ends_out_of_order_or_short_of_the_bytes_are_errors() {
        for (ends, bytes) in [
            (vec![3u32, 2, 8], b"onethree".to_vec()),
            (vec![3, 3, 7], b"onethree".to_vec()),
            (vec![3, 3, 9], b"onethree".to_vec()),
            (vec![], b"x".to_vec()),
        ] {
            let frame = Bytes::from(to_vec(&(ends.clone(), bytes)));
            assert!(
                from_shared::<RowList, _>(&frame).is_err(),
                "{ends:?} accepted"
            );
        }
    }
}
