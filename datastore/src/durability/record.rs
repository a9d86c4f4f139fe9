//! Records: one committed transaction's changes as a frame's payload.
//!
//! `[tx offset u64][table count u32]` then, per table, `[table u32][inserted count u32]`, the
//! inserted rows, `[deleted count u32]`, the deleted rows; each row `[len u32][bytes]`, all
//! little-endian. Rows are already encoded by the module (the datastore stores their bytes),
//! so a record is those bytes, length-prefixed: no re-encoding, and the schema hash in the
//! segment header says how to read them. The offset (the transaction's position in the log,
//! from 0) lets recovery check that no record is missing or repeated.
//!
//! A snapshot adds a second payload, its auto-increment sequences ([`encode_sequences`]).

use crate::tx::{SequenceState, TableChanges, TxData};
use crate::Row;

/// The bytes [`encode`] makes of `changes`, computed without encoding them: to refuse a
/// record too large for a frame before anything is written.
pub(crate) fn encoded_len(changes: &TxData) -> u64 {
    let rows = |rows: &[Row]| 4 + rows.iter().map(|row| 4 + row.len() as u64).sum::<u64>();
    let tables: u64 = changes
        .tables
        .iter()
        .map(|table| 4 + rows(&table.inserted) + rows(&table.deleted))
        .sum();
    12 + tables
}

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

/// The bytes of one sequence in [`encode_sequences`]' payload.
const SEQUENCE_LEN: usize = 4 + 4 + 1 + 16;

/// Appends the payload of a snapshot's sequences, `states`: `[count u32]`, then per sequence
/// `[table u32][sequence u32][exhausted u8][next u128]`, little-endian.
pub(crate) fn encode_sequences(out: &mut Vec<u8>, states: &[SequenceState]) {
    put_len(out, states.len());
    for state in states {
        out.extend_from_slice(&state.table.to_le_bytes());
        out.extend_from_slice(&state.sequence.to_le_bytes());
        out.push(u8::from(state.next.is_none()));
        out.extend_from_slice(&state.next.unwrap_or(0).to_le_bytes());
    }
}

/// The sequences of an encoded [`encode_sequences`] payload; `Err` says what is malformed.
pub(crate) fn decode_sequences(payload: &[u8]) -> Result<Vec<SequenceState>, &'static str> {
    let mut reader = Reader(payload);
    let count = reader.len()?;
    if count > reader.0.len() / SEQUENCE_LEN {
        return Err("a sequence count is larger than the record");
    }
    let mut states = Vec::with_capacity(count);
    for _ in 0..count {
        let table = u32::from_le_bytes(reader.array()?);
        let sequence = u32::from_le_bytes(reader.array()?);
        let [exhausted] = reader.array()?;
        let next = u128::from_le_bytes(reader.array()?);
        let next = match exhausted {
            0 => Some(next),
            1 => None,
            _ => return Err("a sequence's state is neither a value nor exhausted"),
        };
        states.push(SequenceState {
            table,
            sequence,
            next,
        });
    }
    if !reader.0.is_empty() {
        return Err("the record has trailing bytes");
    }
    Ok(states)
}

fn put_len(out: &mut Vec<u8>, len: usize) {
    // Never saturates in a frame's payload: a payload is at most `u32::MAX` bytes (checked
    // before it is encoded), and every count or length is at most the bytes it covers.
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
    fn sequences_round_trip_and_damage_is_an_error() {
        let states = vec![
            SequenceState {
                table: 0,
                sequence: 0,
                next: Some(41),
            },
            SequenceState {
                table: 3,
                sequence: 1,
                next: None,
            },
        ];
        let mut payload = Vec::new();
        encode_sequences(&mut payload, &states);
        assert_eq!(payload.len(), 4 + 2 * SEQUENCE_LEN);
        assert_eq!(decode_sequences(&payload), Ok(states));
        assert!(decode_sequences(&payload[..payload.len() - 1]).is_err());
        let mut bad = payload.clone();
        bad[4 + 8] = 2;
        assert!(decode_sequences(&bad).is_err());
        let mut huge = payload;
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_sequences(&huge).is_err());
    }

    #[test]
    fn the_encoded_length_is_computed_exactly() {
        let changes = TxData {
            tables: vec![
                TableChanges {
                    table: 0,
                    inserted: vec![Row::from(&[1u8; 5][..]), Row::from(&[][..])],
                    deleted: vec![Row::from(&[2u8; 9][..])],
                },
                TableChanges::default(),
            ],
        };
        let mut out = Vec::new();
        encode(&mut out, 7, &changes);
        assert_eq!(encoded_len(&changes), out.len() as u64);
        assert_eq!(encoded_len(&TxData::default()), 12);
    }

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
