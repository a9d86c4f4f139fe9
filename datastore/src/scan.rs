//! Parsing an encoded index scan (see `docs/abi.md`) into the two ends of an index range.
//!
//! ```text
//! prefix_len: u32, prefix: k values, lower: u8 tag [+ value], upper: u8 tag [+ value]
//! ```
//!
//! Bound tags: `0` unbounded, `1` included, `2` excluded. The values are checked against the
//! index's column types; anything malformed is `BAD_ENCODING`.

use crate::error::Error;
use crate::index::KeyRange;
use crate::key::{push_encoded, Key};
use crate::row::read_value;
use crate::schema::{IndexSchema, TableSchema};
use std::ops::Bound;
use wasmod_abi::{Decode, DecodeError, Errno, Reader, Typespace};

/// Parses `bytes` as a scan of `index` of `table`, into the range of keys it selects.
///
/// With `P` the prefix's key bytes and `V` the bound's value's, and `succ(k)` the
/// [successor](Key::successor) of `k` (the end of the keys starting with `k`): the lower end
/// is `P` (unbounded), `P V` (included) or `succ(P V)` (excluded); the upper end is `succ(P)`
/// (unbounded), `succ(P V)` (included) or `P V` (excluded).
pub(crate) fn parse_scan(
    table: &TableSchema,
    index: &IndexSchema,
    typespace: &Typespace,
    bytes: &[u8],
) -> Result<KeyRange, Error> {
    let error = |message: String| {
        Error::new(
            Errno::BAD_ENCODING,
            format!(
                "table `{}`, index `{}`: bad index scan: {message}",
                table.def.name, index.name
            ),
        )
    };
    let decode_error = |error_: DecodeError| error(error_.to_string());
    // Checks the next value, of the index's column at `position`, and appends its key bytes.
    let push = |position: usize, reader: &mut Reader<'_>, key: &mut Key| {
        let column = index.columns[position];
        let (shape, ty) = (table.shapes[column], &table.def.columns[column].ty);
        let value = read_value(shape, ty, typespace, reader)?;
        push_encoded(shape, ty, typespace, value, key);
        Ok::<(), DecodeError>(())
    };

    let mut reader = Reader::new(bytes);
    let prefix_len = reader.read_len().map_err(decode_error)?;
    if prefix_len > index.columns.len() {
        return Err(error(format!(
            "a prefix of {prefix_len} columns, but the index has {}",
            index.columns.len()
        )));
    }
    let mut prefix = Key::new();
    for position in 0..prefix_len {
        push(position, &mut reader, &mut prefix).map_err(|e| {
            error(format!(
                "prefix column `{}`: {e}",
                table.column_name(index.columns[position])
            ))
        })?;
    }
    let mut bound = |which: &str| -> Result<Bound<Key>, Error> {
        let tag = u8::decode(&mut reader).map_err(decode_error)?;
        if tag != 0 && prefix_len == index.columns.len() {
            return Err(error(format!(
                "a {which} bound after a prefix of every column"
            )));
        }
        let mut value = || {
            let mut key = prefix.clone();
            push(prefix_len, &mut reader, &mut key)
                .map_err(|e| error(format!("{which} bound: {e}")))?;
            Ok::<Key, Error>(key)
        };
        match tag {
            0 => Ok(Bound::Unbounded),
            1 => Ok(Bound::Included(value()?)),
            2 => Ok(Bound::Excluded(value()?)),
            other => Err(error(format!(
                "{which} bound tag {other} (expected 0, 1 or 2)"
            ))),
        }
    };
    let lower = bound("lower")?;
    let upper = bound("upper")?;
    reader.finish().map_err(decode_error)?;

    let low = match lower {
        Bound::Unbounded => prefix.clone(),
        Bound::Included(key) => key,
        // No successor: no key lies after this one's extensions, so the range is empty.
        Bound::Excluded(key) => match key.successor() {
            Some(next) => next,
            None => {
                return Ok(KeyRange {
                    high: Some(key.clone()),
                    low: key,
                    whole: false,
                })
            }
        },
    };
    let high = match upper {
        Bound::Unbounded => prefix.successor(),
        Bound::Included(key) => key.successor(),
        Bound::Excluded(key) => Some(key),
    };
    // A prefix of every column has no bounds (refused above): it is one whole key.
    let whole = prefix_len == index.columns.len();
    Ok(KeyRange { low, high, whole })
}
