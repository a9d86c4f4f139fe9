//! Records: one committed transaction's changes as a frame's payload.
//!
//! `[tx offset u64][table count u32]` then, per table, `[table u32][inserted count u32]`, the
//! inserted rows, `[deleted count u32]`, the deleted rows; each row `[len u32][bytes]`, all
//! little-endian. Rows are already encoded by the module (the datastore stores their bytes),
//! so a record is those bytes, length-prefixed: no re-encoding, and the schema hash in the
//! segment header says how to read them. The offset (the transaction's position in the log,
//! from 0) lets recovery check that no record is missing or repeated.

use crate::tx::{TableChanges, TxData};
use crate::Row;

/// Appends the payload of transaction number `offset`, which made `changes`, to `out`.
pub(crate) fn encode(out: &mut Vec<u8>, offset: u64, changes: &TxData) {
    out.extend_from_slice(&offset.to_le_bytes());
    put_len(out, changes.tables.len());
    for table in &changes.tables {
        out.extend_from_slice(&table.table.to_le_bytes());
        put_rows(out, &table.inserted);
        put_rows(out, &table.deleted);
    }
}

/// The offset and changes of an encoded record; `Err` says what is malformed.
pub(crate) fn decode(payload: &[u8]) -> Result<(u64, TxData), &'static str> {
    let mut reader = Reader(payload);
    let offset = u64::from_le_bytes(reader.array()?);
    let count = reader.len()?;
    let mut tables = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        let table = u32::from_le_bytes(reader.array()?);
        let inserted = reader.rows()?;
        let deleted = reader.rows()?;
        tables.push(TableChanges {
            table,
            inserted,
            deleted,
        });
    }
    if !reader.0.is_empty() {
        return Err("the record has trailing bytes");
    }
    Ok((offset, TxData { tables }))
}

fn put_len(out: &mut Vec<u8>, len: usize) {
    // Rows and tables held in memory are far below 2^32; saturating keeps this total.
    out.extend_from_slice(&u32::try_from(len).unwrap_or(u32::MAX).to_le_bytes());
}

fn put_rows(out: &mut Vec<u8>, rows: &[Row]) {
    put_len(out, rows.len());
    for row in rows {
        put_len(out, row.len());
        out.extend_from_slice(row);
    }
}

/// A cursor over a payload that fails, rather than panics, when it runs out.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize) -> Result<&'a [u8], &'static str> {
        if self.0.len() < len {
            return Err("the record ends early");
        }
        let (head, rest) = self.0.split_at(len);
        self.0 = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], &'static str> {
        self.take(N)?
            .try_into()
            .map_err(|_| "the record ends early")
    }

    fn len(&mut self) -> Result<usize, &'static str> {
        Ok(u32::from_le_bytes(self.array()?) as usize)
    }

    fn rows(&mut self) -> Result<Vec<Row>, &'static str> {
        let count = self.len()?;
        // Each row takes at least its 4-byte length: a count larger than that is damage, and
        // must not make us reserve memory for it.
        if count > self.0.len() / 4 {
            return Err("a row count is larger than the record");
        }
        let mut rows = Vec::with_capacity(count);
        for _ in 0..count {
            let len = self.len()?;
            rows.push(Row::from(self.take(len)?));
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips() {
        let changes = TxData {
            tables: vec![
                TableChanges {
                    table: 0,
                    inserted: vec![Row::from(&[1u8, 2, 3][..]), Row::from(&[][..])],
                    deleted: vec![],
                },
                TableChanges {
                    table: 3,
                    inserted: vec![],
                    deleted: vec![Row::from(&[9u8; 40][..])],
                },
            ],
        };
        let mut out = Vec::new();
        encode(&mut out, 41, &changes);
        assert_eq!(decode(&out), Ok((41, changes)));
    }

    #[test]
    fn malformed_records_are_errors() {
        let mut out = Vec::new();
        encode(&mut out, 1, &TxData::default());
        for cut in 0..out.len() {
            assert!(decode(&out[..cut]).is_err());
        }
        let mut huge = out.clone();
        huge[8..12].copy_from_slice(&1u32.to_le_bytes());
        huge.extend_from_slice(&[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        assert!(decode(&huge).is_err());
        out.push(0);
        assert_eq!(decode(&out), Err("the record has trailing bytes"));
    }
}
