//! Where a table's primary key is in its rows' encoding, so that the cache can pair a delete
//! and an insert of one key into an update without decoding rows into user types.

use std::ops::Range;
use wasmod_abi::{AlgebraicType, Reader, Typespace, Value};

/// How to find a table's primary key in its rows' encoding: the row type and the position of
/// the key column among its fields.
#[derive(Clone, Debug)]
pub struct PrimaryKey {
    /// The row type's fields, resolved.
    fields: Vec<AlgebraicType>,
    /// The typespace the fields' references point into.
    typespace: Typespace,
    /// Which field is the key.
    column: usize,
}

impl PrimaryKey {
    /// The key of rows of `row_type` (a product, possibly behind a reference in `typespace`)
    /// at field `column`; `None` if the type is not a product with that many fields.
    pub fn new(row_type: &AlgebraicType, typespace: Typespace, column: usize) -> Option<Self> {
        let AlgebraicType::Product(fields) = typespace.resolve(row_type)? else {
            return None;
        };
        let fields: Vec<AlgebraicType> = fields.iter().map(|field| field.ty.clone()).collect();
        (column < fields.len()).then_some(Self {
            fields,
            typespace,
            column,
        })
    }

    /// The index of the column named `name` among the fields of `row_type`.
    pub fn column_named(
        row_type: &AlgebraicType,
        typespace: &Typespace,
        name: &str,
    ) -> Option<usize> {
        let AlgebraicType::Product(fields) = typespace.resolve(row_type)? else {
            return None;
        };
        fields
            .iter()
            .position(|field| field.name.as_deref() == Some(name))
    }

    /// The key of rows of `row_type` at its field named `column`; `None` if the type is not a
    /// product with such a field.
    pub fn named(row_type: &AlgebraicType, typespace: Typespace, column: &str) -> Option<Self> {
        let index = Self::column_named(row_type, &typespace, column)?;
        Self::new(row_type, typespace, index)
    }

    /// The key column's encoding within `row`; `None` if the row does not decode that far.
    pub fn key<'r>(&self, row: &'r [u8]) -> Option<&'r [u8]> {
        row.get(self.key_range(row)?)
    }

    /// Where the key column's encoding is within `row`; `None` if the row does not decode
    /// that far.
    pub(crate) fn key_range(&self, row: &[u8]) -> Option<Range<usize>> {
        let mut reader = Reader::new(row);
        for ty in &self.fields[..self.column] {
            Value::skip(ty, &self.typespace, &mut reader).ok()?;
        }
        let start = row.len() - reader.remaining();
        Value::skip(&self.fields[self.column], &self.typespace, &mut reader).ok()?;
        Some(start..row.len() - reader.remaining())
    }
}
