//! What queries need to know of a module's tables, derived once from its description.
//!
//! The description comes from module code, so nothing here trusts it: a type that does not
//! resolve makes its column one that queries cannot compare, never a panic, and a visibility
//! filter that cannot be applied refuses the module ([`crate::visibility`]). Table ids are
//! positions in [`ModuleDef::tables`], as in the datastore (system tables come after the
//! module's, so they have no entry here and no query can name them).

use crate::column::{RowLayout, Scalar};
use crate::plan::{Filter, Operand};
use std::sync::Arc;
use wasmod_abi::{AlgebraicType, ModuleDef, Typespace};

/// The tables of one module, as queries see them. Built once per module and shared.
#[derive(Debug)]
pub struct Catalog {
    tables: Vec<TableInfo>,
}

/// One table.
#[derive(Debug)]
pub(crate) struct TableInfo {
    pub(crate) name: String,
    pub(crate) public: bool,
    pub(crate) columns: Vec<ColumnInfo>,
    pub(crate) layout: RowLayout,
    /// Its visibility filter, checked: every query of it is restricted to the rows that pass.
    pub(crate) visibility: Option<Filter<Operand>>,
}

/// One column.
#[derive(Debug)]
pub(crate) struct ColumnInfo {
    pub(crate) name: String,
    /// The column's type, for messages.
    pub(crate) type_name: String,
    /// How its values compare, if queries can compare them.
    pub(crate) scalar: Option<Scalar>,
    /// An index whose first column this is: it can find the rows with a given value.
    pub(crate) index: Option<u32>,
}

impl Catalog {
    /// The tables of the module `def`, without their visibility filters: [`Catalog::new`]
    /// (in `visibility.rs`) checks them and adds them.
    pub(crate) fn unfiltered(def: &ModuleDef) -> Self {
        let typespace = Arc::new(def.typespace.clone());
        let tables: Vec<TableInfo> = def
            .tables
            .iter()
            .map(|table| {
                let first_index_of = |column: usize| {
                    table
                        .indexes
                        .iter()
                        .position(|index| {
                            index.columns.first().map(|&first| usize::from(first)) == Some(column)
                        })
                        .and_then(|position| u32::try_from(position).ok())
                };
                let columns = table
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(position, column)| ColumnInfo {
                        name: column.name.clone(),
                        type_name: type_name(&column.ty, &typespace),
                        scalar: Scalar::of(&column.ty, &typespace),
                        index: first_index_of(position),
                    })
                    .collect();
                TableInfo {
                    name: table.name.clone(),
                    public: table.public,
                    columns,
                    layout: RowLayout::new(
                        table.columns.iter().map(|column| &column.ty),
                        &typespace,
                    ),
                    visibility: None,
                }
            })
            .collect();
        Self { tables }
    }

    /// The tables, by id, for [`Catalog::new`] to set their visibility filters.
    pub(crate) fn tables_mut(&mut self) -> &mut [TableInfo] {
        &mut self.tables
    }

    /// The table with id `id`.
    pub(crate) fn table(&self, id: u32) -> Option<&TableInfo> {
        self.tables.get(id as usize)
    }

    /// The id and description of the table named `name`.
    pub(crate) fn find(&self, name: &str) -> Option<(u32, &TableInfo)> {
        let position = self.tables.iter().position(|table| table.name == name)?;
        Some((u32::try_from(position).ok()?, &self.tables[position]))
    }

    /// How many tables the module has.
    pub fn table_count(&self) -> usize {
        self.tables.len()
    }
}

impl TableInfo {
    /// The position and description of the column named `name`.
    pub(crate) fn column(&self, name: &str) -> Option<(u16, &ColumnInfo)> {
        let position = self.columns.iter().position(|column| column.name == name)?;
        Some((u16::try_from(position).ok()?, &self.columns[position]))
    }
}

/// A type as a person writes it in Rust.
fn type_name(ty: &AlgebraicType, typespace: &Typespace) -> String {
    use AlgebraicType as T;
    let name = match ty {
        T::Bool => "bool",
        T::I8 => "i8",
        T::U8 => "u8",
        T::I16 => "i16",
        T::U16 => "u16",
        T::I32 => "i32",
        T::U32 => "u32",
        T::I64 => "i64",
        T::U64 => "u64",
        T::I128 => "i128",
        T::U128 => "u128",
        T::F32 => "f32",
        T::F64 => "f64",
        T::String => "String",
        T::Identity => "Identity",
        T::ConnectionId => "ConnectionId",
        T::Timestamp => "Timestamp",
        T::Array(element) => return format!("Vec<{}>", type_name(element, typespace)),
        T::FixedArray(element, len) => {
            return format!("[{}; {len}]", type_name(element, typespace))
        }
        T::Option(inner) => return format!("Option<{}>", type_name(inner, typespace)),
        T::Result(ok, err) => {
            return format!(
                "Result<{}, {}>",
                type_name(ok, typespace),
                type_name(err, typespace)
            )
        }
        T::Product(_) => "a tuple",
        T::Sum(_) => "an enum",
        T::Ref(index) => {
            return typespace
                .types
                .get(*index as usize)
                .map_or_else(|| format!("type #{index}"), |def| def.name.clone())
        }
    };
    name.to_owned()
}
