//! Validating a module description and deriving what the tables need from it.
//!
//! A description comes from module code, which the host does not trust: every reference,
//! column number and type is checked here once, so that the operations on rows can rely on
//! them. Errors name the table, column or index at fault.

use crate::error::SchemaError;
use crate::key::Shape;
use crate::sequence::IntKind;
use std::collections::HashSet;
use std::ops::Range;
use std::sync::Arc;
use wasmod_abi::value::MAX_DEPTH;
use wasmod_abi::{AlgebraicType, ModuleDef, Reader, TableDef, Typespace, Value};

/// The validated tables of a module.
#[derive(Debug)]
pub(crate) struct Schema {
    pub(crate) typespace: Arc<Typespace>,
    pub(crate) tables: Vec<Arc<TableSchema>>,
}

/// A validated table.
#[derive(Debug)]
pub(crate) struct TableSchema {
    pub(crate) def: TableDef,
    /// Each column's shape, by column.
    pub(crate) shapes: Vec<Shape>,
    /// Where the columns lie in every row, if every column has a fixed width.
    pub(crate) fixed: Option<FixedLayout>,
    pub(crate) indexes: Vec<IndexSchema>,
    /// The first unique index, through which the table finds a row equal to given bytes.
    pub(crate) set_index: Option<usize>,
    pub(crate) sequences: Vec<SequenceSchema>,
}

/// The layout shared by every row of a table whose columns all have a fixed width.
#[derive(Debug)]
pub(crate) struct FixedLayout {
    /// The length of every row.
    pub(crate) len: usize,
    /// Where each column lies, by column.
    pub(crate) spans: Vec<Range<usize>>,
    /// Where the `bool` columns are, whose byte must be checked.
    pub(crate) bools: Vec<usize>,
}

/// A validated index.
#[derive(Debug)]
pub(crate) struct IndexSchema {
    pub(crate) name: String,
    /// The indexed columns, in key order.
    pub(crate) columns: Vec<usize>,
    /// The width of every key, if the indexed columns all have a fixed width.
    pub(crate) width: Option<usize>,
    pub(crate) unique: bool,
}

/// A validated auto-increment column.
#[derive(Debug)]
pub(crate) struct SequenceSchema {
    pub(crate) column: usize,
    pub(crate) kind: IntKind,
}

impl Schema {
    /// Validates `def` and derives the tables' layout.
    pub(crate) fn new(def: &ModuleDef) -> Result<Self, SchemaError> {
        check_typespace(&def.typespace)?;
        let mut names = HashSet::new();
        let tables = def
            .tables
            .iter()
            .map(|table| {
                if !names.insert(table.name.as_str()) {
                    return Err(SchemaError::new(format!(
                        "two tables are named `{}`",
                        table.name
                    )));
                }
                TableSchema::new(table, &def.typespace).map(Arc::new)
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            typespace: Arc::new(def.typespace.clone()),
            tables,
        })
    }
}

impl TableSchema {
    fn new(def: &TableDef, typespace: &Typespace) -> Result<Self, SchemaError> {
        let table = &def.name;
        let error = |message: String| SchemaError::new(format!("table `{table}`: {message}"));
        check_row_type(def, typespace).map_err(error)?;
        let shapes: Vec<Shape> = def
            .columns
            .iter()
            .map(|column| Shape::of(&column.ty, typespace))
            .collect();
        let indexes: Vec<IndexSchema> = check_indexes(def)
            .map_err(error)?
            .into_iter()
            .map(|(name, columns, unique)| IndexSchema {
                width: columns.iter().map(|&column| shapes[column].width()).sum(),
                name,
                columns,
                unique,
            })
            .collect();
        let sequences = check_sequences(def, typespace)
            .map_err(error)?
            .into_iter()
            .map(|(column, kind)| SequenceSchema { column, kind })
            .collect();
        Ok(Self {
            def: def.clone(),
            fixed: FixedLayout::of(&shapes),
            shapes,
            set_index: indexes.iter().position(|index| index.unique),
            indexes,
            sequences,
        })
    }

    /// The column's name, for messages.
    pub(crate) fn column_name(&self, column: usize) -> &str {
        self.def
            .columns
            .get(column)
            .map_or("?", |column| column.name.as_str())
    }
}

impl FixedLayout {
    /// The layout of rows of columns of these shapes, if they all have a fixed width.
    fn of(shapes: &[Shape]) -> Option<Self> {
        let mut len = 0;
        let mut spans = Vec::with_capacity(shapes.len());
        let mut bools = Vec::new();
        for &shape in shapes {
            if shape == Shape::Bool {
                bools.push(len);
            }
            let end = len + shape.width()?;
            spans.push(len..end);
            len = end;
        }
        Some(Self { len, spans, bools })
    }
}

/// Every type of the typespace is well formed, and every entry resolves to a structure.
fn check_typespace(typespace: &Typespace) -> Result<(), SchemaError> {
    for (index, def) in typespace.types.iter().enumerate() {
        let error = |message: String| {
            SchemaError::new(format!(
                "type `{}` (#{index} of the typespace): {message}",
                def.name
            ))
        };
        check_type(&def.ty, typespace, 0).map_err(error)?;
        if typespace
            .resolve(&AlgebraicType::Ref(index as u32))
            .is_none()
        {
            return Err(error(
                "it refers only to itself through other references".into(),
            ));
        }
    }
    Ok(())
}

/// `ty` nests at most [`MAX_DEPTH`] levels and its references name types of `typespace`.
fn check_type(ty: &AlgebraicType, typespace: &Typespace, depth: usize) -> Result<(), String> {
    use AlgebraicType as T;
    if depth > MAX_DEPTH {
        return Err(format!("the type nests deeper than {MAX_DEPTH} levels"));
    }
    match ty {
        T::Ref(index) if *index as usize >= typespace.types.len() => Err(format!(
            "a type refers to type #{index}, but the typespace has {} types",
            typespace.types.len()
        )),
        T::Array(inner) | T::FixedArray(inner, _) | T::Option(inner) => {
            check_type(inner, typespace, depth + 1)
        }
        T::Result(ok, err) => {
            check_type(ok, typespace, depth + 1)?;
            check_type(err, typespace, depth + 1)
        }
        T::Product(fields) | T::Sum(fields) => fields
            .iter()
            .try_for_each(|field| check_type(&field.ty, typespace, depth + 1)),
        _ => Ok(()),
    }
}

/// The row type is a product whose fields are the columns.
fn check_row_type(def: &TableDef, typespace: &Typespace) -> Result<(), String> {
    check_type(&def.row_type, typespace, 0)?;
    for column in &def.columns {
        check_type(&column.ty, typespace, 0)
            .map_err(|e| format!("column `{}`: {e}", column.name))?;
        if let Some(default) = &column.default {
            let mut reader = Reader::new(default);
            let read = Value::skip(&column.ty, typespace, &mut reader);
            if read.is_err() || reader.remaining() > 0 {
                return Err(format!(
                    "column `{}`: its default is not one value of the column's type",
                    column.name
                ));
            }
        }
    }
    let Some(AlgebraicType::Product(fields)) = typespace.resolve(&def.row_type) else {
        return Err(format!(
            "the row type {:?} is not a product type",
            def.row_type
        ));
    };
    if fields.len() != def.columns.len() {
        return Err(format!(
            "the row type has {} fields but the table has {} columns",
            fields.len(),
            def.columns.len()
        ));
    }
    for (position, (field, column)) in fields.iter().zip(&def.columns).enumerate() {
        if field
            .name
            .as_deref()
            .is_some_and(|name| name != column.name)
            || field.ty != column.ty
        {
            return Err(format!(
                "column {position} `{}` of type {:?} does not match the row type's field {:?} of type {:?}",
                column.name,
                column.ty,
                field.name.as_deref().unwrap_or("(unnamed)"),
                field.ty
            ));
        }
    }
    Ok(())
}

/// Indexes name existing columns, have unique names, and the primary key is the first.
fn check_indexes(def: &TableDef) -> Result<Vec<(String, Vec<usize>, bool)>, String> {
    let columns = def.columns.len();
    let mut names = HashSet::new();
    let mut indexes = Vec::with_capacity(def.indexes.len());
    for index in &def.indexes {
        let name = &index.name;
        if !names.insert(name.as_str()) {
            return Err(format!("two indexes are named `{name}`"));
        }
        if index.columns.is_empty() {
            return Err(format!("index `{name}` has no columns"));
        }
        let mut seen = HashSet::new();
        for &column in &index.columns {
            if usize::from(column) >= columns {
                return Err(format!(
                    "index `{name}` is on column {column}, but the table has {columns} columns"
                ));
            }
            if !seen.insert(column) {
                return Err(format!(
                    "index `{name}` lists column `{}` twice",
                    def.columns[usize::from(column)].name
                ));
            }
        }
        let key = index
            .columns
            .iter()
            .map(|&column| usize::from(column))
            .collect();
        indexes.push((name.clone(), key, index.unique));
    }
    if let Some(key) = def.primary_key {
        let Some(column) = def.columns.get(usize::from(key)) else {
            return Err(format!(
                "the primary key is column {key}, but the table has {columns} columns"
            ));
        };
        let first = def.indexes.first();
        if !first.is_some_and(|index| index.unique && index.columns == [key]) {
            return Err(format!(
                "the primary key `{}` must be the first index, unique, on that column alone",
                column.name
            ));
        }
    }
    Ok(indexes)
}

/// Auto-increment columns exist, are integers, and are listed once.
fn check_sequences(def: &TableDef, typespace: &Typespace) -> Result<Vec<(usize, IntKind)>, String> {
    let mut sequences: Vec<(usize, IntKind)> = Vec::with_capacity(def.auto_inc.len());
    for &column in &def.auto_inc {
        let position = usize::from(column);
        let Some(column_def) = def.columns.get(position) else {
            return Err(format!(
                "auto_inc names column {column}, but the table has {} columns",
                def.columns.len()
            ));
        };
        if sequences.iter().any(|(seen, _)| *seen == position) {
            return Err(format!("auto_inc lists column `{}` twice", column_def.name));
        }
        let kind = typespace
            .resolve(&column_def.ty)
            .and_then(IntKind::of)
            .ok_or_else(|| {
                format!(
                    "auto_inc column `{}` has type {:?}; only integer columns can auto-increment",
                    column_def.name, column_def.ty
                )
            })?;
        sequences.push((position, kind));
    }
    Ok(sequences)
}
