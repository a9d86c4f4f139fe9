//! The IR of a table: its row struct, columns, keys and indexes.

use super::schema_type::TypeDecl;
use crate::diagnostics::Errors;
use heck::ToSnakeCase as _;
use syn::ext::IdentExt as _;
use syn::spanned::Spanned;

/// A validated table.
pub struct Table {
    /// The row struct, with the column attributes removed (they are not real attributes).
    pub item: syn::ItemStruct,
    /// The row type, for its `SchemaType` impls.
    pub row: TypeDecl,
    /// The table's name, which is also its accessor: `ctx.db.<name>()`.
    pub name: syn::Ident,
    /// Whether clients may read it.
    pub public: bool,
    /// Which of its rows a client may read: a condition of the subscription SQL over its
    /// columns (`owner = :sender`), which the host checks when it loads the module.
    pub visibility: Option<syn::LitStr>,
    /// The columns, in order.
    pub columns: Vec<Column>,
    /// The primary key's column, if any.
    pub primary_key: Option<usize>,
    /// Indexes, in description order: the primary key's, unique columns', btree indexes'.
    pub indexes: Vec<Index>,
    /// Auto-increment columns.
    pub auto_inc: Vec<usize>,
    /// The reducer the host calls with each row, for a schedule table.
    pub schedule: Option<Schedule>,
    /// Its `#[cfg]` attributes, repeated on everything generated for it.
    pub cfgs: Vec<syn::Attribute>,
}

/// A column.
pub struct Column {
    /// The field.
    pub ident: syn::Ident,
    /// The column's name.
    pub name: String,
    /// Its type.
    pub ty: syn::Type,
    /// Its default value, from `#[default(expr)]`: what an upgrade gives the rows that were
    /// stored before the column was added.
    pub default: Option<syn::Expr>,
}

/// What makes a table a schedule: `#[table(scheduled(reducer, at = column))]`.
pub struct Schedule {
    /// The reducer the host calls with each row when the row's time comes.
    pub reducer: syn::Ident,
    /// The column of type `ScheduleAt` that says when, by position.
    pub at: usize,
}

/// An index.
pub struct Index {
    /// The index's name, which is also its accessor on the table handle.
    pub accessor: syn::Ident,
    /// Its columns, by position.
    pub columns: Vec<usize>,
    /// Unique (primary key or `#[unique]`) or btree.
    pub unique: bool,
}

/// Accessors every table handle already has: an index named like one would hide it.
const HANDLE_METHODS: [&str; 6] = ["count", "iter", "insert", "try_insert", "delete", "clear"];

const INTEGERS: [&str; 10] = [
    "u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "u128", "i128",
];

/// The arguments of `#[table(..)]`.
struct TableArgs {
    name: Option<syn::Ident>,
    public: bool,
    /// `visibility = "…"`.
    visibility: Option<syn::LitStr>,
    indexes: Vec<(syn::Ident, Vec<syn::Ident>)>,
    scheduled: Option<ScheduledArgs>,
}

/// The arguments of `scheduled(..)`, before the columns are known.
struct ScheduledArgs {
    /// The `scheduled` keyword, where errors about the whole schedule point.
    span: proc_macro2::Span,
    reducer: syn::Ident,
    at: Option<syn::Ident>,
}

const SCHEDULED_SYNTAX: &str =
    "`scheduled` names the reducer to call: `scheduled(reducer)` or `scheduled(reducer, at = column)`";

impl ScheduledArgs {
    /// Parses the parenthesised part of `scheduled(..)`.
    fn parse(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<Self> {
        if !meta.input.peek(syn::token::Paren) {
            return Err(meta.error(SCHEDULED_SYNTAX));
        }
        let span = meta.path.span();
        let mut reducer = None;
        let mut at = None;
        meta.parse_nested_meta(|inner| {
            if inner.path.is_ident("at") && inner.input.peek(syn::Token![=]) {
                if at.is_some() {
                    return Err(inner.error("`at = column` is given twice"));
                }
                at = Some(inner.value()?.call(syn::Ident::parse_any)?);
                Ok(())
            } else if reducer.is_some() || at.is_some() {
                Err(inner.error(SCHEDULED_SYNTAX))
            } else {
                reducer = Some(inner.path.require_ident()?.clone());
                Ok(())
            }
        })?;
        let reducer = reducer.ok_or_else(|| syn::Error::new(span, SCHEDULED_SYNTAX))?;
        Ok(Self { span, reducer, at })
    }

    /// The schedule of a table of `columns` with the primary key `primary_key`: the column
    /// `at` names, or else the one column of type `ScheduleAt`.
    fn resolve(
        self,
        columns: &[Column],
        primary_key: Option<usize>,
        errors: &mut Errors,
    ) -> Option<Schedule> {
        if primary_key.is_none() {
            errors.push(syn::Error::new(
                self.span,
                "a schedule table needs a `#[primary_key]`: the host identifies its rows by it",
            ));
        }
        let at = match &self.at {
            Some(name) => {
                let found = columns.iter().position(|column| column.ident == *name);
                if found.is_none() {
                    errors.error_at(name, format!("no column `{name}` in this table"));
                }
                found?
            }
            None => {
                let candidates: Vec<usize> = (0..columns.len())
                    .filter(|&position| is_schedule_at(&columns[position].ty))
                    .collect();
                match candidates[..] {
                    [at] => at,
                    [] => {
                        errors.push(syn::Error::new(
                            self.span,
                            "a schedule table needs a column of type `ScheduleAt` saying when to call the reducer",
                        ));
                        return None;
                    }
                    [_, second, ..] => {
                        errors.error_at(
                            &columns[second].ident,
                            "a second `ScheduleAt` column: say which one schedules the row with `scheduled(reducer, at = column)`",
                        );
                        return None;
                    }
                }
            }
        };
        Some(Schedule {
            reducer: self.reducer,
            at,
        })
    }
}

impl TableArgs {
    fn parse(tokens: proc_macro2::TokenStream, errors: &mut Errors) -> Self {
        let mut args = Self {
            name: None,
            public: false,
            visibility: None,
            indexes: Vec::new(),
            scheduled: None,
        };
        let parser = syn::meta::parser(|meta| {
            if meta.path.is_ident("public") {
                args.public = true;
                Ok(())
            } else if meta.path.is_ident("private") {
                args.public = false;
                Ok(())
            } else if meta.path.is_ident("visibility") {
                args.visibility = Some(visibility_filter(meta.value()?.parse()?)?);
                Ok(())
            } else if meta.path.is_ident("name") {
                args.name = Some(meta.value()?.call(syn::Ident::parse_any)?);
                Ok(())
            } else if meta.path.is_ident("index") {
                let mut name = None;
                let mut columns = Vec::new();
                meta.parse_nested_meta(|inner| {
                    if inner.path.is_ident("name") {
                        name = Some(inner.value()?.call(syn::Ident::parse_any)?);
                        Ok(())
                    } else if inner.path.is_ident("columns") {
                        inner.parse_nested_meta(|column| {
                            columns.push(column.path.require_ident()?.clone());
                            Ok(())
                        })
                    } else {
                        Err(inner
                            .error("`index(..)` takes `name = accessor` and `columns(a, b, ..)`"))
                    }
                })?;
                let name =
                    name.ok_or_else(|| meta.error("a multi-column index needs `name = accessor`"))?;
                if columns.is_empty() {
                    return Err(meta.error("an index needs at least one column: `columns(a, b)`"));
                }
                args.indexes.push((name, columns));
                Ok(())
            } else if meta.path.is_ident("scheduled") {
                if args.scheduled.is_some() {
                    return Err(meta.error("a table is the schedule of one reducer"));
                }
                args.scheduled = Some(ScheduledArgs::parse(&meta)?);
                Ok(())
            } else {
                Err(meta.error("unknown argument; `#[table]` accepts `public`, `private`, `visibility = \"condition\"`, `name = accessor`, `index(name = .., columns(..))` and `scheduled(reducer)`"))
            }
        });
        errors.take(syn::parse::Parser::parse2(parser, tokens));
        args
    }
}

/// The filter of `visibility = <expr>`: a string literal, since the host parses it as SQL.
fn visibility_filter(expr: syn::Expr) -> syn::Result<syn::LitStr> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(filter),
            ..
        }) => Ok(filter),
        other => Err(syn::Error::new_spanned(
            other,
            "`visibility` takes a string literal: the SQL condition a row must meet for a client to read it, as in `visibility = \"owner = :sender\"`",
        )),
    }
}

/// What the attributes of one field say.
#[derive(Default)]
struct ColumnAttrs {
    primary_key: Option<proc_macro2::Span>,
    unique: Option<proc_macro2::Span>,
    auto_inc: Option<proc_macro2::Span>,
    btree: Option<proc_macro2::Span>,
    default: Option<syn::Expr>,
}

/// The attributes `#[table]` reads on fields and removes from the struct.
pub const COLUMN_ATTRS: [&str; 5] = ["primary_key", "unique", "auto_inc", "index", "default"];

impl ColumnAttrs {
    /// Reads and removes the column attributes of `field`.
    fn take(field: &mut syn::Field, errors: &mut Errors) -> Self {
        let mut attrs = Self::default();
        for attr in &field.attrs {
            let Some(ident) = attr.path().get_ident() else {
                continue;
            };
            let span = attr.span();
            if ident == "default" {
                attrs.take_default(attr, errors);
                continue;
            }
            let slot = match ident.to_string().as_str() {
                "primary_key" => &mut attrs.primary_key,
                "unique" => &mut attrs.unique,
                "auto_inc" => &mut attrs.auto_inc,
                "index" => {
                    let parsed = attr.parse_nested_meta(|meta| {
                        if meta.path.is_ident("btree") {
                            Ok(())
                        } else {
                            Err(meta.error("only btree indexes exist: `#[index(btree)]`"))
                        }
                    });
                    if let syn::Meta::Path(_) = attr.meta {
                        errors.error_at(attr, "say which kind of index: `#[index(btree)]`");
                    }
                    errors.take(parsed);
                    &mut attrs.btree
                }
                _ => continue,
            };
            if let syn::Meta::List(_) | syn::Meta::NameValue(_) = &attr.meta {
                if ident != "index" {
                    errors.error_at(attr, format!("`#[{ident}]` takes no arguments"));
                }
            }
            if slot.replace(span).is_some() {
                errors.error_at(attr, format!("`#[{ident}]` is given twice"));
            }
        }
        field.attrs.retain(|attr| {
            !attr
                .path()
                .get_ident()
                .is_some_and(|ident| COLUMN_ATTRS.iter().any(|name| ident == name))
        });
        attrs
    }

    /// Reads `#[default(expr)]`: one expression, given once.
    fn take_default(&mut self, attr: &syn::Attribute, errors: &mut Errors) {
        let syn::Meta::List(_) = &attr.meta else {
            errors.error_at(attr, "give the column's default value: `#[default(expr)]`");
            return;
        };
        let Some(expr) = errors.take(attr.parse_args::<syn::Expr>()) else {
            return;
        };
        if self.default.replace(expr).is_some() {
            errors.error_at(attr, "`#[default]` is given twice");
        }
    }
}

impl Table {
    /// Parses and validates a `#[table]` struct.
    pub fn parse(
        args: proc_macro2::TokenStream,
        mut item: syn::ItemStruct,
        errors: &mut Errors,
    ) -> Option<Self> {
        let args = TableArgs::parse(args, errors);
        if !item.generics.params.is_empty() || item.generics.where_clause.is_some() {
            errors.error_at(
                &item.generics,
                "a table cannot be generic: its row type is fixed in the module description",
            );
        }
        let syn::Fields::Named(_) = &item.fields else {
            errors.error_at(
                &item.fields,
                "a table is a struct with named fields: each field is a column",
            );
            return None;
        };

        let mut columns = Vec::new();
        let mut primary_key = None;
        let mut unique = Vec::new();
        let mut btrees = Vec::new();
        let mut auto_inc = Vec::new();
        for (position, field) in item.fields.iter_mut().enumerate() {
            let attrs = ColumnAttrs::take(field, errors);
            let ident = field.ident.clone()?;
            if let Some(span) = attrs.primary_key {
                match primary_key {
                    None => primary_key = Some(position),
                    Some(_) => {
                        errors.push(syn::Error::new(span, "a table has at most one primary key"))
                    }
                }
                if let Some(span) = attrs.unique {
                    errors.push(syn::Error::new(
                        span,
                        "a primary key is already unique: remove `#[unique]`",
                    ));
                }
            } else if attrs.unique.is_some() {
                unique.push(position);
            }
            if let Some(span) = attrs.btree {
                if attrs.primary_key.is_some() || attrs.unique.is_some() {
                    errors.push(syn::Error::new(
                        span,
                        "a unique column is already indexed: remove `#[index(btree)]`",
                    ));
                } else {
                    btrees.push(position);
                }
            }
            if let Some(span) = attrs.auto_inc {
                if is_integer(&field.ty) {
                    auto_inc.push(position);
                } else {
                    errors.push(syn::Error::new(
                        span,
                        "`#[auto_inc]` needs an integer column",
                    ));
                }
            }
            columns.push(Column {
                name: ident.unraw().to_string(),
                ident,
                ty: field.ty.clone(),
                default: attrs.default,
            });
        }

        let column_index =
            |ident: &syn::Ident| columns.iter().position(|column| column.ident == *ident);
        let single = |position: usize, unique: bool| Index {
            accessor: columns[position].ident.clone(),
            columns: vec![position],
            unique,
        };
        let mut indexes: Vec<Index> = primary_key
            .map(|position| single(position, true))
            .into_iter()
            .collect();
        indexes.extend(unique.iter().map(|&position| single(position, true)));
        indexes.extend(btrees.iter().map(|&position| single(position, false)));
        for (accessor, names) in &args.indexes {
            let positions: Vec<usize> = names
                .iter()
                .filter_map(|name| {
                    let found = column_index(name);
                    if found.is_none() {
                        errors.error_at(
                            name,
                            format!("no column `{name}` in table `{}`", item.ident),
                        );
                    }
                    found
                })
                .collect();
            indexes.push(Index {
                accessor: accessor.clone(),
                columns: positions,
                unique: false,
            });
        }
        check_accessors(&indexes, errors);
        let schedule = args
            .scheduled
            .and_then(|scheduled| scheduled.resolve(&columns, primary_key, errors));

        let name = args.name.unwrap_or_else(|| {
            syn::Ident::new(&item.ident.to_string().to_snake_case(), item.ident.span())
        });
        if let (Some(filter), false) = (&args.visibility, args.public) {
            errors.error_at(
                filter,
                "a private table is invisible to clients already: a visibility filter needs `#[table(public, visibility = ..)]`",
            );
        }
        let cfgs = super::entry::cfg_attrs(&item.attrs);
        let input: syn::DeriveInput = item.clone().into();
        let row = TypeDecl::parse(&input, syn::parse_quote!(::wasmod::abi), errors)?;
        Some(Self {
            item,
            row,
            name,
            public: args.public,
            visibility: args.visibility,
            columns,
            primary_key,
            indexes,
            auto_inc,
            schedule,
            cfgs,
        })
    }
}

/// Index accessors must be unique and must not hide the handle's own methods.
fn check_accessors(indexes: &[Index], errors: &mut Errors) {
    for (position, index) in indexes.iter().enumerate() {
        let name = index.accessor.to_string();
        if HANDLE_METHODS.contains(&name.as_str()) {
            errors.error_at(&index.accessor, format!("an index named `{name}` would hide the table handle's `{name}` method; rename the column, or index it with `#[table(index(name = other_name, columns({name})))]`"));
        }
        if indexes[..position]
            .iter()
            .any(|earlier| earlier.accessor == index.accessor)
        {
            errors.error_at(
                &index.accessor,
                format!("two indexes of this table are named `{name}`"),
            );
        }
    }
}

/// Whether `ty` is written `ScheduleAt` (any path ending so). The generated code then checks
/// that it is `wasmod::ScheduleAt`.
fn is_schedule_at(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(path) => {
            path.qself.is_none()
                && path.path.segments.last().is_some_and(|segment| {
                    segment.ident == "ScheduleAt" && segment.arguments.is_none()
                })
        }
        _ => false,
    }
}

fn is_integer(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(path) => {
            path.qself.is_none()
                && path
                    .path
                    .get_ident()
                    .is_some_and(|ident| INTEGERS.iter().any(|name| ident == name))
        }
        _ => false,
    }
}
