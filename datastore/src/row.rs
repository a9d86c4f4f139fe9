//! Rows: stored as their encoded bytes, checked on the way in, read in place afterwards.
//!
//! Every row is checked against the table's column types when it comes in, so stored rows are
//! always well formed. Checking a row also finds where each column lies in its bytes (its
//! *spans*); keys and sequence values are read from there, without building
//! [`Value`]s. A table whose columns all have a fixed width has the same spans in every row,
//! so checking one of its rows is a length check (and a check of its `bool` bytes).

use crate::error::Error;
use crate::key::{fixed_word, push_encoded, Key, Shape};
use crate::schema::{IndexSchema, TableSchema};
use std::ops::Range;
use std::sync::Arc;
use wasmod_abi::{AlgebraicType, Decode, DecodeError, Errno, Reader, Typespace, Value};

/// A stored row's encoded bytes, shared between the table and whoever scanned it.
pub type Row = Arc<[u8]>;

/// A row's id in its table: never reused, growing with each insert.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct RowId(pub(crate) u64);

/// How rows are hashed, where rows are hash keys (a table without a unique index finds its rows
/// by their bytes; a commit matches the rows it deleted with those it inserted).
///
/// Much faster than the standard library's SipHash on short rows. Rows come from modules, so
/// the seed is random (per process and per map), which keeps keys that all collide hard to
/// build.
pub(crate) type RowHasher = foldhash::fast::RandomState;

/// Checks one value of type `ty` (of shape `shape`) at the front of `reader`, and returns its
/// bytes. Accepts exactly what [`Value::decode`] accepts.
pub(crate) fn read_value<'a>(
    shape: Shape,
    ty: &AlgebraicType,
    typespace: &Typespace,
    reader: &mut Reader<'a>,
) -> Result<&'a [u8], DecodeError> {
    let rest = reader.rest();
    match shape {
        Shape::Bool => {
            bool::decode(reader)?;
        }
        Shape::String => {
            let text = reader.read_len_prefixed()?;
            std::str::from_utf8(text).map_err(|_| DecodeError::InvalidUtf8)?;
        }
        Shape::Compound => Value::skip(ty, typespace, reader)?,
        fixed => {
            reader.take(fixed.width().unwrap_or_default())?;
        }
    }
    Ok(&rest[..rest.len() - reader.remaining()])
}

/// Checks that `bytes` is exactly one row of `table`, and returns its spans (where each
/// column lies, by column), either the table's fixed ones or ones written into `scratch`.
pub(crate) fn check_row<'a>(
    table: &'a TableSchema,
    typespace: &Typespace,
    bytes: &[u8],
    scratch: &'a mut Vec<Range<usize>>,
) -> Result<&'a [Range<usize>], Error> {
    if let Some(fixed) = &table.fixed {
        if bytes.len() == fixed.len && fixed.bools.iter().all(|&at| bytes[at] <= 1) {
            return Ok(&fixed.spans);
        }
    }
    let mut reader = Reader::new(bytes);
    read_row(table, typespace, &mut reader, scratch)?;
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
    Ok(scratch)
}

/// Reads one row from `reader`, checking every column, and writes its spans (relative to where
/// the row starts) into `spans`.
fn read_row(
    table: &TableSchema,
    typespace: &Typespace,
    reader: &mut Reader<'_>,
    spans: &mut Vec<Range<usize>>,
) -> Result<(), Error> {
    spans.clear();
    let start = reader.remaining();
    for (column, (def, &shape)) in table.def.columns.iter().zip(&table.shapes).enumerate() {
        let offset = start - reader.remaining();
        let value = read_value(shape, &def.ty, typespace, reader).map_err(|error| {
            Error::new(
                Errno::BAD_ENCODING,
                format!(
                    "table `{}`: column `{}` of the row does not decode: {error}",
                    table.def.name,
                    table.column_name(column)
                ),
            )
        })?;
        spans.push(offset..offset + value.len());
    }
    Ok(())
}

/// Splits concatenated encoded rows, checking each.
pub(crate) fn split_rows<'a>(
    table: &TableSchema,
    typespace: &Typespace,
    bytes: &'a [u8],
) -> Result<Vec<&'a [u8]>, Error> {
    let mut reader = Reader::new(bytes);
    let mut rows = Vec::new();
    let mut spans = Vec::with_capacity(table.shapes.len());
    while reader.remaining() > 0 {
        let rest = reader.rest();
        read_row(table, typespace, &mut reader, &mut spans)?;
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

/// The key of the checked row `bytes`, whose spans are `spans`, in index `index`.
pub(crate) fn index_key(
    table: &TableSchema,
    typespace: &Typespace,
    index: &IndexSchema,
    bytes: &[u8],
    spans: &[Range<usize>],
) -> Key {
    let mut key = Key::new();
    for &column in &index.columns {
        push_encoded(
            table.shapes[column],
            &table.def.columns[column].ty,
            typespace,
            &bytes[spans[column].clone()],
            &mut key,
        );
    }
    key
}

/// The key of the checked row `bytes`, whose spans are `spans`, in index `index`, whose
/// columns all have a fixed width and take at most 16 bytes together: the key bytes,
/// zero-padded to 16, as a big-endian integer (as an index of words stores them).
pub(crate) fn index_word(
    table: &TableSchema,
    index: &IndexSchema,
    bytes: &[u8],
    spans: &[Range<usize>],
) -> u128 {
    let mut word = 0u128;
    let mut width = 0;
    for &column in &index.columns {
        let span = spans[column].clone();
        let bits = 8 * span.len() as u32;
        word = word.checked_shl(bits).unwrap_or(0) | fixed_word(table.shapes[column], &bytes[span]);
        width += bits;
    }
    128u32
        .checked_sub(width)
        .and_then(|padding| word.checked_shl(padding))
        .unwrap_or(0)
}

/// The values of the key of the checked row `bytes` in index `index`, for messages.
pub(crate) fn describe_key(
    table: &TableSchema,
    typespace: &Typespace,
    index: &IndexSchema,
    bytes: &[u8],
    spans: &[Range<usize>],
) -> String {
    let values: Vec<Value> = index
        .columns
        .iter()
        .filter_map(|&column| {
            let mut reader = Reader::new(&bytes[spans[column].clone()]);
            Value::decode(&table.def.columns[column].ty, typespace, &mut reader).ok()
        })
        .collect();
    format!("{values:?}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{IndexKey, Stored};
    use crate::schema::Schema;
    use wasmod_abi::encoding::to_vec;
    use wasmod_abi::{AlgebraicType as T, ConnectionId, IndexDef, ModuleDef, TableDef};

    /// One table of fixed-width columns, with indexes of words over several mixes of them.
    fn module() -> ModuleDef {
        let columns = [
            ("a", T::U8),
            ("b", T::I16),
            ("c", T::F32),
            ("d", T::Bool),
            ("e", T::U64),
            ("f", T::I64),
            ("g", T::ConnectionId),
        ];
        let indexes: [&[u16]; 5] = [&[0, 1, 2, 3], &[4, 5], &[6], &[1], &[5, 0]];
        let mut def = ModuleDef::default();
        let table = TableDef::of_columns(&mut def.typespace, "Row", "row", &columns);
        def.tables.push(TableDef {
            indexes: indexes
                .iter()
                .enumerate()
                .map(|(n, columns)| IndexDef {
                    name: format!("index_{n}"),
                    columns: columns.to_vec(),
                    unique: n % 2 == 0,
                })
                .collect(),
            ..table
        });
        def
    }

    #[test]
    fn index_words_are_the_padded_key_bytes() {
        let schema = Schema::new(&module()).expect("the module is valid");
        let table = &schema.tables[0];
        let mut spans = Vec::new();
        let values = [
            0u64,
            1,
            0x7f,
            0x80,
            0xff,
            0x8000,
            u64::MAX,
            u64::MAX >> 1,
            1 << 63,
        ];
        for (n, &x) in values.iter().enumerate() {
            let y = values[(n * 5 + 3) % values.len()];
            let float = [0.0f32, -0.0, 1.5, -2.25, f32::INFINITY, f32::NAN][n % 6];
            let mut row = Vec::new();
            row.extend(to_vec(&(x as u8)));
            row.extend(to_vec(&(y as i16)));
            row.extend(to_vec(&float));
            row.extend(to_vec(&(x % 2 == 0)));
            row.extend(to_vec(&x));
            row.extend(to_vec(&(y as i64)));
            row.extend(to_vec(&ConnectionId::from_bytes(
                (u128::from(x) << 64 | u128::from(y)).to_le_bytes(),
            )));
            let spans = check_row(table, &schema.typespace, &row, &mut spans).expect("a row");
            for index in &table.indexes {
                let key = index_key(table, &schema.typespace, index, &row, spans);
                assert_eq!(
                    index_word(table, index, &row, spans),
                    u128::store(IndexKey::Bytes(key)),
                    "index {} of row {row:?}",
                    index.name
                );
            }
        }
    }
}
