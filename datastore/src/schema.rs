//! Validating a module description and deriving what the tables need from it.
//!
//! A description comes from module code, which the host does not trust: every reference,
//! column number and type is checked here once, so that the operations on rows can rely on
//! them. Errors name the table, column or index at fault.

use crate::error::SchemaError;
use crate::sequence::IntKind;
use std::collections::HashSet;
use wasmod_abi::value::MAX_DEPTH;
use wasmod_abi::{AlgebraicType, ModuleDef, TableDef, Typespace};

/// The validated tables of a module.
#[derive(Debug)]
pub(crate) struct Schema {
    pub(crate) typespace: Typespace,
    pub(crate) tables: Vec<TableSchema>,
}

/// A validated table.
#[derive(Debug)]
pub(crate) struct TableSchema {
    pub(crate) def: TableDef,
    /// For each column, its position among the columns decoded on insert (those in an index
    /// or a sequence), if it is one of them.
    pub(crate) slots: Vec<Option<usize>>,
    pub(crate) indexes: Vec<IndexSchema>,
    pub(crate) sequences: Vec<SequenceSchema>,
}

/// A validated index.
#[derive(Debug)]
pub(crate) struct IndexSchema {
    pub(crate) name: String,
    /// The indexed columns, in key order.
    pub(crate) columns: Vec<usize>,
    /// The same columns' slots among the decoded columns.
    pub(crate) slots: Vec<usize>,
    pub(crate) unique: bool,
}

/// A validated auto-increment column.
#[derive(Debug)]
pub(crate) struct SequenceSchema {
    pub(crate) column: usize,
    pub(crate) slot: usize,
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
                TableSchema::new(table, &def.typespace)
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            typespace: def.typespace.clone(),
            tables,
        })
    }
}

impl TableSchema {
    fn new(def: &TableDef, typespace: &Typespace) -> Result<Self, SchemaError> {
        let table = &def.name;
        let error = |message: String| SchemaError::new(format!("table `{table}`: {message}"));
        check_row_type(def, typespace).map_err(error)?;
        let indexes = check_indexes(def).map_err(error)?;
        let sequences = check_sequences(def, typespace).map_err(error)?;

        let mut decoded = vec![false; def.columns.len()];
        let keys = indexes.iter().flat_map(|(_, columns, _)| columns.iter());
        for &column in keys.chain(sequences.iter().map(|(column, _)| column)) {
            decoded[column] = true;
        }
        let mut next_slot = 0..;
        let slots: Vec<Option<usize>> = decoded
            .into_iter()
            .map(|decoded| decoded.then(|| next_slot.next()).flatten())
            .collect();
        let slot = |column: usize| slots[column].unwrap_or_default();
        let indexes = indexes
            .into_iter()
            .map(|(name, columns, unique)| IndexSchema {
                slots: columns.iter().map(|&column| slot(column)).collect(),
                name,
                columns,
                unique,
            })
            .collect();
        let sequences = sequences
            .into_iter()
            .map(|(column, kind)| SequenceSchema {
                column,
                slot: slot(column),
                kind,
            })
            .collect();
        Ok(Self {
            def: def.clone(),
            slots,
            indexes,
            sequences,
        })
    }

    /// How many columns are decoded on insert.
    pub(crate) fn decoded_len(&self) -> usize {
        self.slots.iter().flatten().count()
    }

    /// The column's name, for messages.
    pub(crate) fn column_name(&self, column: usize) -> &str {
        self.def
            .columns
            .get(column)
            .map_or("?", |column| column.name.as_str())
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
