//! Parsing an encoded index scan (see `docs/abi.md`) into the two ends of an index range.
//!
//! ```text
//! prefix_len: u32, prefix: k values, lower: u8 tag [+ value], upper: u8 tag [+ value]
//! ```
//!
//! Bound tags: `0` unbounded, `1` included, `2` excluded. The values are checked against the
//! index's column types; anything malformed is `BAD_ENCODING`.

use crate::error::Error;
use crate::index::{Entry, Tail};
use crate::schema::{IndexSchema, TableSchema};
use std::ops::Bound;
use wasmod_abi::{Decode, DecodeError, Errno, Reader, Typespace, Value};

/// The ends of the range a scan selects, both included.
pub(crate) struct ScanRange {
    pub(crate) low: Entry,
    pub(crate) high: Entry,
}

/// Parses `bytes` as a scan of `index` of `table`.
pub(crate) fn parse_scan(
    table: &TableSchema,
    index: &IndexSchema,
    typespace: &Typespace,
    bytes: &[u8],
) -> Result<ScanRange, Error> {
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
    let column_type = |position: usize| &table.def.columns[index.columns[position]].ty;

    let mut reader = Reader::new(bytes);
    let prefix_len = reader.read_len().map_err(decode_error)?;
    if prefix_len > index.columns.len() {
        return Err(error(format!(
            "a prefix of {prefix_len} columns, but the index has {}",
            index.columns.len()
        )));
    }
    let mut prefix = Vec::with_capacity(prefix_len + 1);
    for position in 0..prefix_len {
        let value = Value::decode(column_type(position), typespace, &mut reader);
        prefix.push(value.map_err(|e| {
            error(format!(
                "prefix column `{}`: {e}",
                table.column_name(index.columns[position])
            ))
        })?);
    }
    let mut bound = |which: &str| -> Result<Bound<Value>, Error> {
        let tag = u8::decode(&mut reader).map_err(decode_error)?;
        if tag != 0 && prefix_len == index.columns.len() {
            return Err(error(format!(
                "a {which} bound after a prefix of every column"
            )));
        }
        let mut value = || {
            Value::decode(column_type(prefix_len), typespace, &mut reader)
                .map_err(|e| error(format!("{which} bound: {e}")))
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

    let end = |bound: Bound<Value>, included: Tail, excluded: Tail, unbounded: Tail| {
        let mut key = prefix.clone();
        let tail = match bound {
            Bound::Unbounded => unbounded,
            Bound::Included(value) => {
                key.push(value);
                included
            }
            Bound::Excluded(value) => {
                key.push(value);
                excluded
            }
        };
        Entry { key, tail }
    };
    Ok(ScanRange {
        low: end(lower, Tail::Low, Tail::High, Tail::Low),
        high: end(upper, Tail::High, Tail::Low, Tail::High),
    })
}
