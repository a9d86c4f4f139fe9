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
//!
//! **The encoding is versioned.** What `__describe_module__` writes is [`FORMAT_VERSION`] as a
//! little-endian `u32`, then the encoded [`ModuleDef`] ([`encode`]). A reader checks the version
//! before it decodes anything else ([`decode`]), so that a host meeting a description newer
//! than it understands says so, instead of failing somewhere inside the decoding.

use crate::elements;
use crate::encoding::{self, DecodeError, Encode, Reader};
use crate::kind::EntryKind;
use crate::schema::{AlgebraicType, Field, TypeDef, Typespace};
use core::fmt;

/// The version of the description's format that this crate writes, and the newest it reads.
/// It changes whenever [`ModuleDef`] or anything in it changes its encoding.
pub const FORMAT_VERSION: u32 = 2;

/// Encodes `def` as `__describe_module__` writes it: [`FORMAT_VERSION`] (`u32`, little-endian),
/// then the encoded [`ModuleDef`].
pub fn encode(def: &ModuleDef) -> Vec<u8> {
    let mut out = Vec::with_capacity(FORMAT_VERSION.encoded_len() + def.encoded_len());
    FORMAT_VERSION.encode(&mut out);
    def.encode(&mut out);
    out
}

/// Decodes what [`encode`] wrote. A version other than [`FORMAT_VERSION`] is refused before
/// the rest is looked at: version 1 lacked the tables' schedules, visibility filters and column
/// defaults, so a module that wrote it is rebuilt against this crate.
pub fn decode(bytes: &[u8]) -> Result<ModuleDef, DescriptionError> {
    let mut reader = Reader::new(bytes);
    let version: u32 = encoding::Decode::decode(&mut reader).map_err(DescriptionError::Decode)?;
    if version != FORMAT_VERSION {
        return Err(DescriptionError::Version(version));
    }
    let def = encoding::Decode::decode(&mut reader).map_err(DescriptionError::Decode)?;
    reader.finish().map_err(DescriptionError::Decode)?;
    Ok(def)
}

/// Why a module's description could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DescriptionError {
    /// The description is in a format version this crate does not read: a newer one (a module
    /// built against a newer `wasmod`), an older one (built against an older `wasmod`), or `0`,
    /// which no version of the format is.
    Version(u32),
    /// The description did not decode.
    Decode(DecodeError),
}

impl fmt::Display for DescriptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Version(version) if *version > FORMAT_VERSION => write!(
                f,
                "the module's description is format version {version}; this host reads version {FORMAT_VERSION}: upgrade the host"
            ),
            Self::Version(0) => write!(
                f,
                "the module's description is format version 0, which does not exist (versions start at 1)"
            ),
            Self::Version(version) => write!(
                f,
                "the module's description is format version {version}, older than the version {FORMAT_VERSION} this host reads: rebuild the module against this version of wasmod"
            ),
            Self::Decode(error) => write!(f, "the module's description does not decode: {error}"),
        }
    }
}

impl std::error::Error for DescriptionError {}

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
    /// If the table is a schedule (`#[table(scheduled(..))]`): the reducer the host calls with
    /// each row when the row's time comes.
    pub schedule: Option<ScheduleDef>,
    /// Which of a public table's rows a client may read (`#[table(visibility = "..")]`): a
    /// SQL condition over the table's columns in which `:sender` stands for the reader's
    /// identity, such as `owner = :sender`. `None`: every row.
    pub visibility: Option<String>,
}

/// What makes a table a schedule: the reducer the host calls with each of its rows, and the
/// column that says when.
#[derive(Clone, Debug, PartialEq, Eq, crate::SchemaType)]
#[wasmod(crate = crate)]
pub struct ScheduleDef {
    /// The name of the reducer the host calls, with the row as its one argument.
    pub reducer: String,
    /// The column holding the row's `ScheduleAt`: when, or how often, the reducer runs.
    pub at: u16,
}

impl TableDef {
    /// The table `name` whose rows are the product of `columns` (names and types, in row
    /// order), which is added to `typespace` as the named type `type_name`: no primary key, no
    /// indexes, no auto-increment, no schedule, no column defaults, every row visible to
    /// clients, public. Set those fields on the result. For hosts and tools
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
                    default: None,
                })
                .collect(),
            primary_key: None,
            indexes: Vec::new(),
            auto_inc: Vec::new(),
            public: true,
            schedule: None,
            visibility: None,
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
    /// The value rows written before the column existed take when a module upgrade adds it
    /// (`#[default(..)]`), encoded as the column's type.
    pub default: Option<Vec<u8>>,
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
#[non_exhaustive]
pub enum Lifecycle {
    /// Runs once, when the module is first started over an empty database.
    Init,
    /// Runs when a client connects.
    ClientConnected,
    /// Runs when a client disconnects.
    ClientDisconnected,
}

impl Lifecycle {
    /// Every role.
    pub const ALL: [Lifecycle; 3] = [Self::Init, Self::ClientConnected, Self::ClientDisconnected];

    /// The role's name, as `#[reducer(..)]` and the description as JSON write it: `init`,
    /// `client_connected`, `client_disconnected`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Init => "init",
            Self::ClientConnected => "client_connected",
            Self::ClientDisconnected => "client_disconnected",
        }
    }
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

/// An entry point of any kind, as the description declares it: what every kind has in common.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryPoint<'a> {
    /// Its kind, which says which list of the description it is in.
    pub kind: EntryKind,
    /// Its id: its position in that list.
    pub id: u32,
    /// Its name.
    pub name: &'a str,
    /// Its parameters after the context; none for an HTTP handler, whose one argument is the
    /// request.
    pub params: &'a [ParamDef],
    /// The type of the value it returns; `None` for reducers (which return nothing) and HTTP
    /// handlers (which return a [`Response`](crate::http::Response)).
    pub returns: Option<&'a AlgebraicType>,
    /// Its lifecycle role: only reducers have one.
    pub lifecycle: Option<Lifecycle>,
}

impl ModuleDef {
    /// The entry point of `kind` with id `id`, if there is one.
    pub fn entry_point(&self, kind: EntryKind, id: u32) -> Option<EntryPoint<'_>> {
        let index = usize::try_from(id).ok()?;
        let (name, params, returns, lifecycle) = match kind {
            EntryKind::Reducer => self
                .reducers
                .get(index)
                .map(|def| (&def.name, &def.params[..], None, def.lifecycle))?,
            EntryKind::Procedure => self
                .procedures
                .get(index)
                .map(|def| (&def.name, &def.params[..], Some(&def.returns), None))?,
            EntryKind::View => self
                .views
                .get(index)
                .map(|def| (&def.name, &def.params[..], Some(&def.returns), None))?,
            EntryKind::AnonymousView => self
                .anonymous_views
                .get(index)
                .map(|def| (&def.name, &def.params[..], Some(&def.returns), None))?,
            EntryKind::HttpHandler => self
                .http_handlers
                .get(index)
                .map(|def| (&def.name, &[][..], None, None))?,
        };
        Some(EntryPoint {
            kind,
            id,
            name,
            params,
            returns,
            lifecycle,
        })
    }

    /// The entry points of `kind`, in id order.
    pub fn entry_points_of(&self, kind: EntryKind) -> impl Iterator<Item = EntryPoint<'_>> {
        (0u32..).map_while(move |id| self.entry_point(kind, id))
    }

    /// Every entry point, kind by kind in the order of [`EntryKind::ALL`], each kind in id
    /// order: the description's order.
    pub fn entry_points(&self) -> impl Iterator<Item = EntryPoint<'_>> {
        EntryKind::ALL
            .into_iter()
            .flat_map(move |kind| self.entry_points_of(kind))
    }

    /// The HTTP handlers by method and route pattern, to find the one for a request.
    pub fn http_routes(&self) -> crate::route::Routes<crate::http::Method> {
        crate::route::Routes::new(
            self.http_handlers
                .iter()
                .map(|handler| (handler.path.as_str(), handler.method)),
        )
    }

    /// Every entry point's kind and name, in description order.
    pub fn entry_point_names(&self) -> impl Iterator<Item = (EntryKind, &str)> {
        self.entry_points().map(|entry| (entry.kind, entry.name))
    }
}

/// Checks every type of a module's description against the bounds on the elements of a
/// decoded value ([`elements::check_type`]): the named types, each entry point's arguments
/// (decoded as one product of its parameters) and each return type. The error names the type
/// or the entry point at fault.
pub fn check_elements(def: &ModuleDef) -> Result<(), String> {
    let typespace = &def.typespace;
    for (index, named) in typespace.types.iter().enumerate() {
        elements::check_type(&named.ty, typespace).map_err(|error| {
            format!("type `{}` (#{index} of the typespace): {error}", named.name)
        })?;
    }
    for entry in def.entry_points() {
        let arguments = AlgebraicType::Product(
            entry
                .params
                .iter()
                .map(|param| Field::named(&param.name, param.ty.clone()))
                .collect(),
        );
        elements::check_type(&arguments, typespace).map_err(|error| {
            format!("the arguments of {} `{}`: {error}", entry.kind, entry.name)
        })?;
        if let Some(returns) = entry.returns {
            elements::check_type(returns, typespace).map_err(|error| {
                format!(
                    "the return type of {} `{}`: {error}",
                    entry.kind, entry.name
                )
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(name: &str) -> ViewDef {
        ViewDef {
            name: name.into(),
            params: Vec::new(),
            returns: AlgebraicType::U8,
        }
    }

    #[test]
    fn entry_points_come_kind_by_kind_in_id_order() {
        let module = ModuleDef {
            reducers: vec![ReducerDef {
                name: "init".into(),
                params: Vec::new(),
                lifecycle: Some(Lifecycle::Init),
            }],
            views: vec![view("mine"), view("theirs")],
            anonymous_views: vec![view("all")],
            http_handlers: vec![HttpHandlerDef {
                name: "stats".into(),
                method: crate::http::Method::Get,
                path: "/stats".into(),
            }],
            ..ModuleDef::default()
        };
        let found: Vec<(EntryKind, u32, &str)> = module
            .entry_points()
            .map(|entry| (entry.kind, entry.id, entry.name))
            .collect();
        assert_eq!(
            found,
            [
                (EntryKind::Reducer, 0, "init"),
                (EntryKind::View, 0, "mine"),
                (EntryKind::View, 1, "theirs"),
                (EntryKind::AnonymousView, 0, "all"),
                (EntryKind::HttpHandler, 0, "stats"),
            ]
        );
        let init = module.entry_point(EntryKind::Reducer, 0).unwrap();
        assert_eq!(
            (init.lifecycle, init.returns),
            (Some(Lifecycle::Init), None)
        );
        let theirs = module.entry_point(EntryKind::View, 1).unwrap();
        assert_eq!(theirs.returns, Some(&AlgebraicType::U8));
        assert_eq!(module.entry_point(EntryKind::View, 2), None);
        assert_eq!(module.entry_point(EntryKind::Procedure, 0), None);
    }
}
