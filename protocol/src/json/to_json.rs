//! Encoded values → JSON text, as the host answers clients.
//!
//! The writer itself is [`wasmod_abi::json::write_value`], which modules' HTTP handlers use
//! too, so that JSON reads the same whoever wrote it. Here it gets the host's errors (which
//! name the row of a list that failed) and its ready-to-embed form, a [`RawValue`].

use super::error::Segment;
use super::JsonError;
use serde_json::value::RawValue;
use wasmod_abi::{AlgebraicType, Typespace};

/// Appends the JSON of the encoded value `bytes`, of type `ty`, to `out`.
///
/// Errors if `bytes` is not exactly one value of `ty` (the module broke its own description);
/// `out` is then as it was.
pub fn write_value(
    out: &mut Vec<u8>,
    ty: &AlgebraicType,
    typespace: &Typespace,
    bytes: &[u8],
) -> Result<(), JsonError> {
    wasmod_abi::json::write_value(out, ty, typespace, bytes).map_err(|error| {
        JsonError::new(format!(
            "the bytes are not a value of the expected type: {error}"
        ))
    })
}

/// Appends a JSON array of `rows`, each the encoding of one value of `row_type` (a table's
/// rows, a view's rows), to `out`.
///
/// An error names the row (`at [3]: ...`); `out` is then as it was.
pub fn write_rows<'r>(
    out: &mut Vec<u8>,
    row_type: &AlgebraicType,
    typespace: &Typespace,
    rows: impl IntoIterator<Item = &'r [u8]>,
) -> Result<(), JsonError> {
    let start = out.len();
    out.push(b'[');
    for (index, row) in rows.into_iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        if let Err(error) = write_value(out, row_type, typespace, row) {
            out.truncate(start);
            return Err(error.within(Segment::Index(index)));
        }
    }
    out.push(b']');
    Ok(())
}

/// The JSON of one encoded value, as [`write_value`] writes it, ready to embed in a message.
pub fn value_json(
    ty: &AlgebraicType,
    typespace: &Typespace,
    bytes: &[u8],
) -> Result<Box<RawValue>, JsonError> {
    let mut out = Vec::with_capacity(bytes.len() * 2);
    write_value(&mut out, ty, typespace, bytes)?;
    raw(out)
}

/// The JSON array of encoded rows, as [`write_rows`] writes it, ready to embed in a message.
pub fn rows_json<'r>(
    row_type: &AlgebraicType,
    typespace: &Typespace,
    rows: impl IntoIterator<Item = &'r [u8]>,
) -> Result<Box<RawValue>, JsonError> {
    let mut out = Vec::new();
    write_rows(&mut out, row_type, typespace, rows)?;
    raw(out)
}

/// The written text as a [`RawValue`] (which checks it once more).
fn raw(out: Vec<u8>) -> Result<Box<RawValue>, JsonError> {
    String::from_utf8(out)
        .ok()
        .and_then(|text| RawValue::from_string(text).ok())
        .ok_or_else(|| JsonError::new("the JSON writer wrote invalid JSON (a bug)".to_owned()))
}
