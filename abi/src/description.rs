//! The module description: what a module declares, as the host learns it.
//!
//! A module's `__describe_module__` export writes one encoded [`ModuleDef`] to the byte sink
//! it is given. The host decodes it when it loads the module, validates it, creates the tables,
//! and maps entry-point names to ids.
//!
//! **Ids are positions.** The id of a reducer is its position in [`ModuleDef::reducers`], and
//! likewise for procedures, views, anonymous views and http handlers, each in its own list. The
//! id of a table is its position in [`ModuleDef::tables`], and the id of an index is its
//! position in its table's [`TableDef::indexes`]. The description and the dispatch `match` of
//! a module are generated from one list in one macro expansion, so they cannot disagree.

use crate::schema::{AlgebraicType, Field, TypeDef, Typespace};

/// Everything a module declares.
#[derive(Clone, Debug, Default, PartialEq, Eq, crate::SchemaType)]
#[wasmod(crate = crate)]
pub struct ModuleDef {
    /// The named types that [`AlgebraicType::Ref`]s in this description point into.
    pub typespace: Typespace,
    /// Tables; a table's id is its position.
    pub tables: Vec<TableDef>,
    /// Reducers; the id given to `__call_reducer__` is the position.
    pub reducers: Vec<ReducerDef>,
    /// Procedures; the id given to `__call_procedure__` is the position.
    pub procedures: Vec<ProcedureDef>,
    /// Views that see their caller; the id given to `__call_view__` is the position.
    pub views: Vec<ViewDef>,
    /// Views that do not see their caller; the id given to `__call_view_anon__` is the position.
    pub anonymous_views: Vec<ViewDef>,
    /// HTTP handlers; the id given to `__call_http_handler__` is the position.
    pub http_handlers: Vec<HttpHandlerDef>,
}

/// A table.
#[derive(Clone, Debug, PartialEq, Eq, crate::SchemaType)]
#[wasmod(crate = crate)]
pub struct TableDef {
    /// The table's name, unique in the module (by default the row type's name in snake case).
    pub name: String,
    /// The row type: a [`AlgebraicType::Ref`] to a product in the typespace.
    pub row_type: AlgebraicType,
    /// The columns, in row order; their names and types repeat the row type's fields.
    pub columns: Vec<ColumnDef>,
    /// The column that is the primary key, if any. It is also the first entry of `indexes`.
    pub primary_key: Option<u16>,
    /// Indexes: the primary key's first, then unique columns, then btree indexes, in
    /// declaration order. An index's id is its position.
    pub indexes: Vec<IndexDef>,
    /// Columns whose value the host generates from a sequence when a row is inserted with `0`.
    pub auto_inc: Vec<u16>,
    /// Whether clients may read the table; private tables are only for the module.
    pub public: bool,
}

impl TableDef {
    /// The table `name` whose rows are the product of `columns` (names and types, in row
    /// order), which is added to `typespace` as the named type `type_name`: no primary key, no
    /// indexes, no auto-increment, public. Set those fields on the result. For hosts and tools
    /// that write a description by hand; a module's comes from `#[table]`.
    pub fn of_columns(
        typespace: &mut Typespace,
        type_name: &str,
        name: &str,
        columns: &[(&str, AlgebraicType)],
    ) -> Self {
        let fields = columns
            .iter()
            .map(|(name, ty)| Field::named(name, ty.clone()))
            .collect();
        typespace.types.push(TypeDef {
            name: type_name.to_owned(),
            ty: AlgebraicType::Product(fields),
        });
        Self {
            name: name.to_owned(),
            row_type: AlgebraicType::Ref(typespace.types.len() as u32 - 1),
            columns: columns
                .iter()
                .map(|(name, ty)| ColumnDef {
                    name: (*name).to_owned(),
                    ty: ty.clone(),
                })
                .collect(),
            primary_key: None,
            indexes: Vec::new(),
            auto_inc: Vec::new(),
            public: true,
        }
    }
}

/// A column of a table.
#[derive(Clone, Debug, PartialEq, Eq, crate::SchemaType)]
#[wasmod(crate = crate)]
pub struct ColumnDef {
    /// The column's name.
    pub name: String,
    /// The column's type.
    pub ty: AlgebraicType,
}

/// An index over one or several columns.
#[derive(Clone, Debug, PartialEq, Eq, crate::SchemaType)]
#[wasmod(crate = crate)]
pub struct IndexDef {
    /// The index's name, unique in its table.
    pub name: String,
    /// The indexed columns, in key order.
    pub columns: Vec<u16>,
    /// Whether two rows may share a key.
    pub unique: bool,
}

/// The role of a lifecycle reducer. Lifecycle reducers are called by the host, never by
/// clients.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, crate::SchemaType)]
#[wasmod(crate = crate)]
pub enum Lifecycle {
    /// Runs once, when the module is first started over an empty database.
    Init,
    /// Runs when a client connects.
    ClientConnected,
    /// Runs when a client disconnects.
    ClientDisconnected,
}

/// A parameter of an entry point.
#[derive(Clone, Debug, PartialEq, Eq, crate::SchemaType)]
#[wasmod(crate = crate)]
pub struct ParamDef {
    /// The parameter's name, as written in Rust.
    pub name: String,
    /// The parameter's type.
    pub ty: AlgebraicType,
}

/// A reducer: a transactional function.
#[derive(Clone, Debug, PartialEq, Eq, crate::SchemaType)]
#[wasmod(crate = crate)]
pub struct ReducerDef {
    /// The reducer's name.
    pub name: String,
    /// Its parameters after the context; arguments are encoded as a product of them.
    pub params: Vec<ParamDef>,
    /// Its lifecycle role, if it has one.
    pub lifecycle: Option<Lifecycle>,
}

/// A procedure: a non-transactional function that returns a value.
#[derive(Clone, Debug, PartialEq, Eq, crate::SchemaType)]
#[wasmod(crate = crate)]
pub struct ProcedureDef {
    /// The procedure's name.
    pub name: String,
    /// Its parameters after the context.
    pub params: Vec<ParamDef>,
    /// The type of the value it returns.
    pub returns: AlgebraicType,
}

/// A view: a read-only function that computes rows.
#[derive(Clone, Debug, PartialEq, Eq, crate::SchemaType)]
#[wasmod(crate = crate)]
pub struct ViewDef {
    /// The view's name.
    pub name: String,
    /// Its parameters after the context.
    pub params: Vec<ParamDef>,
    /// The type of the value it returns: a `Vec` or an `Option` of rows.
    pub returns: AlgebraicType,
}

/// An HTTP handler, routed by method and path.
#[derive(Clone, Debug, PartialEq, Eq, crate::SchemaType)]
#[wasmod(crate = crate)]
pub struct HttpHandlerDef {
    /// The handler's name.
    pub name: String,
    /// The method it answers.
    pub method: crate::http::Method,
    /// The path it answers, starting with `/`, relative to the module's prefix.
    pub path: String,
}

impl ModuleDef {
    /// Every entry point's name with the list it is in, in description order.
    pub fn entry_point_names(&self) -> impl Iterator<Item = (&'static str, &str)> {
        let reducers = self
            .reducers
            .iter()
            .map(|def| ("reducer", def.name.as_str()));
        let procedures = self
            .procedures
            .iter()
            .map(|def| ("procedure", def.name.as_str()));
        let views = self.views.iter().map(|def| ("view", def.name.as_str()));
        let anonymous = self
            .anonymous_views
            .iter()
            .map(|def| ("anonymous view", def.name.as_str()));
        let http = self
            .http_handlers
            .iter()
            .map(|def| ("http handler", def.name.as_str()));
        reducers
            .chain(procedures)
            .chain(views)
            .chain(anonymous)
            .chain(http)
    }
}
