//! A module's description for people and clients, as typed data: types written as in Rust,
//! columns by name, ids shown.
//!
//! The ABI's [`ModuleDef`](wasmod_abi::ModuleDef) is built for the host (types are trees of
//! [`AlgebraicType`](wasmod_abi::AlgebraicType)s with references into a typespace, columns
//! are positions). Clients want names: `Vec<Message>`, not `Array(Ref(0))`;
//! `primary_key: "id"`, not `Some(0)`. [`describe`] builds a [`ModuleDescription`] that way;
//! the server's `GET /v1/module` answers it (public tables only), `wasmod describe --json`
//! prints it (every table), and `wasmod describe` and `wasmod call` read it back, typed.
//! [`type_name`] is the one type renderer all of them use.
//!
//! Fields are declared in alphabetical order, which is also the order they are written in:
//! the order the description has always had, when it was built as `serde_json` maps.

mod build;
mod parse;
mod read;
mod type_name;

pub use build::{describe, Tables};
pub use parse::DescribedTypes;
pub use type_name::type_name;

use serde::{Serialize, Serializer};
use wasmod_abi::{EntryKind, Lifecycle};

/// A module's description: its tables, its entry points by category with their ids, and its
/// named types.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ModuleDescription {
    /// Views that do not see their caller.
    pub anonymous_views: Vec<FunctionDescription>,
    /// HTTP handlers.
    pub http_handlers: Vec<HttpHandlerDescription>,
    /// Procedures.
    pub procedures: Vec<FunctionDescription>,
    /// Reducers, lifecycle ones included.
    pub reducers: Vec<ReducerDescription>,
    /// Tables (only the public ones, as the server describes the module to clients).
    pub tables: Vec<TableDescription>,
    /// Named types: structs, enums and aliases.
    pub types: Vec<TypeDescription>,
    /// Views that see their caller.
    pub views: Vec<FunctionDescription>,
}

impl ModuleDescription {
    /// The kind of the entry point named `name` that clients call by name (a reducer, a
    /// procedure or a view), if the module has one.
    pub fn callable_kind(&self, name: &str) -> Option<EntryKind> {
        let named = |list: &[FunctionDescription]| list.iter().any(|entry| entry.name == name);
        if self.reducers.iter().any(|reducer| reducer.name == name) {
            Some(EntryKind::Reducer)
        } else if named(&self.procedures) {
            Some(EntryKind::Procedure)
        } else if named(&self.views) {
            Some(EntryKind::View)
        } else if named(&self.anonymous_views) {
            Some(EntryKind::AnonymousView)
        } else {
            None
        }
    }
}

/// A table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TableDescription {
    /// The columns whose values the host generates, by name.
    pub auto_inc: Vec<String>,
    /// The columns, in order.
    pub columns: Vec<Typed>,
    /// The table's id.
    pub id: u32,
    /// Its indexes.
    pub indexes: Vec<IndexDescription>,
    /// Its name.
    pub name: String,
    /// The primary key column, by name.
    pub primary_key: Option<String>,
    /// Whether clients may read it.
    pub public: bool,
    /// The type of its rows, written as in Rust.
    pub row_type: String,
    /// If the table is a schedule: the reducer the host calls with its rows, and when.
    pub schedule: Option<ScheduleDescription>,
    /// The condition a row meets for a client to read it (`:sender` is the client), if the
    /// table has one.
    pub visibility: Option<String>,
}

/// What makes a table a schedule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScheduleDescription {
    /// The column that says when each row is due, by name.
    pub at: String,
    /// The reducer the host calls with each row.
    pub reducer: String,
}

/// A name with a type written as in Rust: a column, a parameter, a struct's field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Typed {
    /// The name.
    pub name: String,
    /// The type, such as `Vec<Message>`.
    #[serde(rename = "type")]
    pub ty: String,
}

/// An index of a table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IndexDescription {
    /// The indexed columns, by name, in key order.
    pub columns: Vec<String>,
    /// The index's id within its table.
    pub id: u32,
    /// Its name.
    pub name: String,
    /// Whether two rows may not share a key.
    pub unique: bool,
}

/// A reducer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReducerDescription {
    /// Its id among the reducers.
    pub id: u32,
    /// Its lifecycle role: `"init"`, `"client_connected"`, `"client_disconnected"` or `null`.
    #[serde(serialize_with = "lifecycle")]
    pub lifecycle: Option<Lifecycle>,
    /// Its name.
    pub name: String,
    /// Its parameters, after the context.
    pub params: Vec<Typed>,
}

/// A procedure or a view: an entry point that returns a value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FunctionDescription {
    /// Its id among the entry points of its kind.
    pub id: u32,
    /// Its name.
    pub name: String,
    /// Its parameters, after the context.
    pub params: Vec<Typed>,
    /// The type it returns, written as in Rust.
    pub returns: String,
}

/// An HTTP handler.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HttpHandlerDescription {
    /// Its id among the HTTP handlers.
    pub id: u32,
    /// The method it answers, such as `GET`.
    pub method: String,
    /// Its name.
    pub name: String,
    /// The path it answers, under `/v1/http`.
    pub path: String,
}

/// A named type of the module: `{"kind": "struct" | "enum" | "alias", "name": .., ..}`
/// (written and read by hand: `Serialize` below, `Deserialize` with the description's, in
/// `read`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeDescription {
    /// A struct (a product with named or positional fields).
    Struct {
        /// The type's name.
        name: String,
        /// Its fields, in order (positional ones named by position).
        fields: Vec<Typed>,
    },
    /// An enum.
    Enum {
        /// The type's name.
        name: String,
        /// Its variants, in order.
        variants: Vec<VariantDescription>,
    },
    /// Another name for a type.
    Alias {
        /// The type's name.
        name: String,
        /// The type it names.
        ty: String,
    },
}

impl TypeDescription {
    /// The type's name.
    pub fn name(&self) -> &str {
        match self {
            Self::Struct { name, .. } | Self::Enum { name, .. } | Self::Alias { name, .. } => name,
        }
    }
}

/// Written with its keys in alphabetical order, `kind` among them (a derived, internally
/// tagged `Serialize` would write `kind` first).
impl Serialize for TypeDescription {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("TypeDescription", 3)?;
        match self {
            Self::Struct { name, fields } => {
                out.serialize_field("fields", fields)?;
                out.serialize_field("kind", "struct")?;
                out.serialize_field("name", name)?;
            }
            Self::Enum { name, variants } => {
                out.serialize_field("kind", "enum")?;
                out.serialize_field("name", name)?;
                out.serialize_field("variants", variants)?;
            }
            Self::Alias { name, ty } => {
                out.serialize_field("kind", "alias")?;
                out.serialize_field("name", name)?;
                out.serialize_field("type", ty)?;
            }
        }
        out.end()
    }
}

/// A variant of an enum.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VariantDescription {
    /// The variant's name (its position, for an unnamed one).
    pub name: String,
    /// Its payload's type, or `None` for a unit variant.
    #[serde(rename = "type")]
    pub payload: Option<String>,
}

/// A lifecycle role written as its name: `init`, `client_connected`, `client_disconnected`.
fn lifecycle<S: Serializer>(role: &Option<Lifecycle>, serializer: S) -> Result<S::Ok, S::Error> {
    match role {
        None => serializer.serialize_none(),
        Some(role) => serializer.serialize_some(role.as_str()),
    }
}

/// The typespace the description's tests share: a struct `geo::Point { x: u32, y: u32 }` and
/// an enum `Shape { Dot(Point), Empty }`.
#[cfg(test)]
fn example_typespace() -> wasmod_abi::Typespace {
    use wasmod_abi::{AlgebraicType, Field, TypeDef};
    wasmod_abi::Typespace {
        types: vec![
            TypeDef {
                name: "geo::Point".into(),
                ty: AlgebraicType::Product(vec![
                    Field::named("x", AlgebraicType::U32),
                    Field::named("y", AlgebraicType::U32),
                ]),
            },
            TypeDef {
                name: "Shape".into(),
                ty: AlgebraicType::Sum(vec![
                    Field::named("Dot", AlgebraicType::Ref(0)),
                    Field::named("Empty", AlgebraicType::Product(vec![])),
                ]),
            },
        ],
    }
}
