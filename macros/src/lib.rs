//! Procedural macros of [wasmod](https://docs.rs/wasmod). Use them through the `wasmod` crate,
//! which re-exports them and documents them with examples.
//!
//! Each macro is a thin entry point: it parses its input into the IR (`ir`), which validates it
//! and collects every error with its span, then hands the IR to code generation (`codegen`).

mod codegen;
mod diagnostics;
mod ir;

use diagnostics::{expand, Errors};
use ir::entry::{Attr, AttrArgs, EntryPoint};
use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;

/// Derives `Encode`, `Decode` and `SchemaType` for a struct or an enum, so that it can be a
/// column, a parameter or a return value.
///
/// ```ignore
/// #[derive(wasmod::SchemaType)]
/// pub enum Shape {
///     Circle { radius: f32 },
///     Rect(f32, f32),
///     Empty,
/// }
///
/// // Plain: `#[repr(C)]`, fixed-size numbers, no padding. Encoded and decoded with one copy.
/// #[derive(wasmod::SchemaType, Clone, Copy)]
/// #[repr(C)]
/// pub struct Vec2 {
///     pub x: f64,
///     pub y: f64,
/// }
/// ```
///
/// Structs are encoded as their fields in order; enums as a `u8` tag (the variant's position)
/// and the variant's fields. Generic types get `T: SchemaType` bounds. A `#[repr(C)]` struct
/// whose fields are all plain and leave no padding is *plain*: the derive checks that at
/// compile time and then copies bytes instead of walking fields. Unions and enums with more
/// than 256 variants or explicit discriminants are refused. An enum without fields (and without
/// generics) is also an index key (`wasmod::table::IndexKey`): a btree index on a column of
/// its type is scanned with `filter(Kind::Savings)` or a range of variants.
#[proc_macro_derive(SchemaType, attributes(wasmod))]
pub fn derive_schema_type(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    let mut errors = Errors::default();
    let options = ir::schema_type::TypeOptions::from_attrs(&input.attrs, &mut errors);
    let decl = ir::schema_type::TypeDecl::parse(&input, options.krate, &mut errors);
    let result = errors.finish(decl).map(|decl| {
        decl.map(|decl| {
            let mut tokens = codegen::schema_type::generate(&decl);
            if let Some(runtime) = &options.runtime {
                tokens.extend(codegen::schema_type::index_key_impl(&decl, runtime));
            }
            tokens
        })
        .unwrap_or_default()
    });
    expand(result, TokenStream2::new()).into()
}

/// Derives `DecodeBorrowed` for a struct with one lifetime parameter, the input's: its
/// `&str` and `&[u8]` fields borrow the bytes being decoded instead of copying them, and its
/// other fields decode as with `SchemaType`.
///
/// ```ignore
/// #[derive(DecodeBorrowed)]
/// struct MessageRef<'a> { id: u64, sender: Identity, text: &'a str }
///
/// let message: MessageRef<'_> = wasmod::abi::encoding::from_slice_borrowed(row)?;
/// ```
///
/// The encoding is the one its owned twin (`text: String`) derives with `SchemaType`.
#[proc_macro_derive(DecodeBorrowed, attributes(wasmod))]
pub fn derive_decode_borrowed(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    let mut errors = Errors::default();
    let options = ir::schema_type::TypeOptions::from_attrs(&input.attrs, &mut errors);
    let decl = ir::schema_type::TypeDecl::parse(&input, options.krate, &mut errors);
    let code = decl
        .map(|decl| codegen::decode_borrowed::generate(&decl, &mut errors))
        .unwrap_or_default();
    let result = errors.finish(code);
    expand(result, TokenStream2::new()).into()
}

/// Declares a table: the struct is its row type, each field a column.
///
/// ```ignore
/// #[table(public, index(name = by_place, columns(x, y)))]
/// pub struct Entity {
///     #[primary_key]
///     #[auto_inc]
///     id: u64,
///     #[unique]
///     name: String,
///     #[index(btree)]
///     owner: Identity,
///     x: i32,
///     y: i32,
/// }
///
/// // In an entry point:
/// let entity = ctx.db.entity().insert(Entity { id: 0, name: "a".into(), owner, x: 1, y: 2 });
/// let same = ctx.db.entity().id().find(entity.id);
/// let by_name = ctx.db.entity().name().find("a");
/// let mine: Vec<Entity> = ctx.db.entity().owner().filter(owner).collect();
/// let row_1: Vec<Entity> = ctx.db.entity().by_place().filter((1,)).collect();
/// let left: Vec<Entity> = ctx.db.entity().by_place().filter(..0).collect();
/// ```
///
/// Arguments: `public` (clients may read the table; tables are private by default),
/// `visibility = "condition"` (on a public table: which rows a client may read, as a condition
/// of the subscription SQL over the table's columns, `:sender` standing for the reader's
/// identity, as in `visibility = "owner = :sender"`; the host checks it when it loads the module
/// and applies it to every read of a client: subscriptions, one-off queries, table reads; see
/// `docs/tables-and-indexes.md`), `name = accessor` (the table's name and its accessor on
/// `ctx.db`; by default the struct's name in snake case), `index(name = accessor, columns(a, b,
/// ..))` for a btree index over several columns, and `scheduled(reducer)` or
/// `scheduled(reducer, at = column)`.
///
/// `scheduled(reducer)` makes the table a schedule: the host calls `reducer` (which takes the
/// context and one row of the table, and which clients may not call) with each row when the
/// row's `ScheduleAt` column says: once at a time (the row is then deleted), or every period.
/// The table needs a `#[primary_key]` and one column of type `wasmod::ScheduleAt` (or the one
/// `at = column` names). `docs/scheduled-reducers.md` has the whole story.
///
/// ```ignore
/// #[table(scheduled(send_reminder))]
/// pub struct Reminder {
///     #[primary_key]
///     #[auto_inc]
///     id: u64,
///     at: ScheduleAt,
///     text: String,
/// }
///
/// #[reducer]
/// fn send_reminder(ctx: &ReducerContext, reminder: Reminder) { /* .. */ }
/// ```
///
/// Column attributes: `#[primary_key]` (at most one; unique), `#[unique]`, `#[auto_inc]`
/// (integer columns: a row inserted with `0` gets the next value), `#[index(btree)]`, and
/// `#[default(expr)]`: the column's default value, an expression of the column's type (a
/// literal, a `const`, `String::from("..")`, `"..".into()`, any call), evaluated when the
/// module describes itself. A new build may add columns at the end of a stored table only if
/// they have one: the rows already stored get it when the data is upgraded
/// (`docs/upgrading.md`).
///
/// ```ignore
/// #[table(public)]
/// pub struct Account {
///     #[primary_key]
///     name: String,
///     balance: u64,
///     // Added by a later build: the accounts stored before it get `"EUR"`.
///     #[default("EUR".into())]
///     currency: String,
/// }
/// ```
///
/// Generated beside the struct: its `SchemaType` impls, a handle type `<Struct>Table` with one
/// accessor per index (named after the column, or the index), and a trait named like the
/// table that gives `ctx.db` its accessor (import it where the table is used outside its
/// module). The table must be registered by a `#[wasmod::module]`; an unregistered table does
/// not compile.
#[proc_macro_attribute]
pub fn table(args: TokenStream, item: TokenStream) -> TokenStream {
    let item2 = TokenStream2::from(item.clone());
    let result = syn::parse::<syn::ItemStruct>(item).and_then(|item| {
        let mut errors = Errors::default();
        let table = ir::table::Table::parse(args.into(), item, &mut errors);
        errors.finish(table).map(|table| {
            table
                .map(|table| codegen::table::generate(&table))
                .unwrap_or_default()
        })
    });
    expand(result, strip_column_attrs(item2)).into()
}

/// Declares a reducer: a function clients call, run in one transaction.
///
/// ```ignore
/// #[reducer]
/// fn send(ctx: &ReducerContext, text: String) -> Result<(), String> {
///     if text.is_empty() {
///         return Err("empty message".into()); // rolls back; the caller gets the message
///     }
///     ctx.db.message().insert(Message { id: 0, sender: ctx.sender(), text });
///     Ok(())
/// }
///
/// #[reducer(init)]
/// fn init(ctx: &ReducerContext) { /* once, on an empty database */ }
///
/// #[reducer(client_connected, name = "on_connect")]
/// fn connected(ctx: &ReducerContext) { /* .. */ }
/// ```
///
/// The first parameter is `&ReducerContext`; the others are the arguments, of owned
/// `SchemaType` types. It returns `()` or `Result<(), E>` with `E` a string type (or
/// implementing `IntoErrorMessage`). Its writes commit together when it returns normally or
/// `Ok`; an `Err` or a panic rolls them back.
///
/// Arguments: a lifecycle role, `init`, `client_connected` or `client_disconnected` (called by
/// the host only, never by clients; they take no arguments; at most one of each per module),
/// and `name = ".."` to give it another name in the module description.
///
/// Beside the function (which is kept out of line with `#[inline(never)]`, so that it stays
/// visible in the binary) the attribute generates a zero-sized type of the same name that the
/// module's dispatch calls. The reducer must be registered by a `#[wasmod::module]`.
#[proc_macro_attribute]
pub fn reducer(args: TokenStream, item: TokenStream) -> TokenStream {
    entry_point(Attr::Reducer, args, item)
}

/// Declares a procedure: a function that runs outside any transaction, may open its own and
/// make outbound HTTP requests, and returns a value.
///
/// ```ignore
/// #[procedure]
/// fn fetch_motd(ctx: &mut ProcedureContext, url: String) -> Result<String, String> {
///     let response = ctx.http_get(&url).map_err(|e| e.to_string())?;
///     let text = String::from_utf8(response.body).map_err(|_| "not UTF-8".to_string())?;
///     ctx.with_tx(|tx| tx.db.motd().insert(Motd { id: 0, text: text.clone() }));
///     Ok(text)
/// }
/// ```
///
/// The first parameter is `&mut ProcedureContext`; the return type is any `SchemaType`
/// (`Result<T, E>` included, encoded as a sum). Argument: `name = ".."`.
#[proc_macro_attribute]
pub fn procedure(args: TokenStream, item: TokenStream) -> TokenStream {
    entry_point(Attr::Procedure, args, item)
}

/// Declares a view: a read-only function that computes rows.
///
/// ```ignore
/// #[view]
/// fn my_messages(ctx: &ViewContext) -> Vec<Message> {
///     ctx.db.message().sender().filter(ctx.sender()).collect()
/// }
///
/// #[view]
/// fn latest(ctx: &AnonymousViewContext) -> Option<Message> {
///     ctx.db.message().iter().max_by_key(|m| m.id)
/// }
/// ```
///
/// A view taking `&ViewContext` sees its caller (`ctx.sender()`) and is dispatched by
/// `__call_view__`; one taking `&AnonymousViewContext` does not, so its result can be shared,
/// and is dispatched by `__call_view_anon__`. It returns `Vec<T>` or `Option<T>`. Its database
/// handle is read-only: writes do not compile. Argument: `name = ".."`.
#[proc_macro_attribute]
pub fn view(args: TokenStream, item: TokenStream) -> TokenStream {
    entry_point(Attr::View, args, item)
}

/// Declares an HTTP handler, routed by method and path under the module's prefix.
///
/// ```ignore
/// #[http_handler(GET, "/stats")]
/// fn stats(ctx: &mut HttpContext, request: Request) -> Response {
///     let count = ctx.with_tx(|tx| tx.db.message().count());
///     Response::new(200).with_body(format!("{{\"messages\":{count}}}"))
/// }
/// ```
///
/// Arguments: the method (`GET`, `POST`, `PUT`, `PATCH`, `DELETE`, `HEAD`, `OPTIONS`), the
/// path (starting with `/`), then optionally `name = ".."`. The handler takes
/// `&mut HttpContext` and the `Request`, runs outside a transaction like a procedure, and
/// returns a `Response` or `Result<Response, E>` (an `Err` is answered with status 500).
#[proc_macro_attribute]
pub fn http_handler(args: TokenStream, item: TokenStream) -> TokenStream {
    entry_point(Attr::HttpHandler, args, item)
}

/// Declares the module: its tables and entry points, its description and its dispatch exports.
///
/// Inline, collecting everything inside the module (nested inline modules included):
///
/// ```ignore
/// #[wasmod::module]
/// mod chat {
///     use wasmod::prelude::*;
///     #[table] pub struct Message { #[primary_key] #[auto_inc] id: u64, text: String }
///     #[reducer] fn send(ctx: &ReducerContext, text: String) { /* .. */ }
/// }
/// // Generates `chat::Module`, the module's marker type.
/// ```
///
/// Listed, for tables and entry points in other files (paths relative to the declaration;
/// `#[cfg(..)]` may precede a listed item and must match the item's own):
///
/// ```ignore
/// #[wasmod::module(
///     tables(players::Player, scores::Score),
///     reducers(players::join, scores::add, #[cfg(feature = "admin")] admin::reset),
///     procedures(scores::export),
///     views(players::me),
///     anonymous_views(scores::top),
///     http_handlers(api::stats),
/// )]
/// pub struct Game;
/// ```
///
/// Both forms can be combined: a list on an inline module adds the listed items (paths
/// relative to the inside of the module) before the collected ones.
///
/// The expansion implements each item's registration (its id: its position in its list),
/// `__describe_module__`, and one export per category, `__call_reducer__`,
/// `__call_procedure__`, `__call_view__`, `__call_view_anon__` and `__call_http_handler__`,
/// each a `match` on the id whose arms call one generated thunk directly. The description and
/// the arms come from the same list, so ids cannot drift. A table or entry point that no module
/// registers, or that is registered twice, does not compile; neither do two entry points with
/// one name or two reducers with one lifecycle role. A binary holds one module.
#[proc_macro_attribute]
pub fn module(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = TokenStream2::from(item);
    let mut errors = Errors::default();
    // Errors in the lists do not stop generation: the module's other items still get their
    // registrations, so the only errors are the real ones.
    let generated = match ir::module::Module::parse(args.into(), item.clone(), &mut errors) {
        Some(module) => codegen::module::generate(&module),
        None => item,
    };
    let errors = errors.into_compile_errors();
    quote::quote!(#generated #errors).into()
}

fn entry_point(attr: Attr, args: TokenStream, item: TokenStream) -> TokenStream {
    let item2 = TokenStream2::from(item.clone());
    let result = syn::parse::<syn::ItemFn>(item).and_then(|func| {
        let mut errors = Errors::default();
        let args = AttrArgs::parse(attr, args.into(), &mut errors);
        let entry = EntryPoint::parse(attr, args, func, &mut errors);
        errors.finish(entry).map(|entry| {
            entry
                .map(|entry| codegen::entry::generate(&entry))
                .unwrap_or_default()
        })
    });
    expand(result, item2).into()
}

/// The struct of a failed `#[table]`, without its column attributes, so that the only errors
/// reported are the table's own.
fn strip_column_attrs(item: TokenStream2) -> TokenStream2 {
    match syn::parse2::<syn::ItemStruct>(item.clone()) {
        Ok(mut item) => {
            for field in item.fields.iter_mut() {
                field.attrs.retain(|attr| {
                    !ir::table::COLUMN_ATTRS
                        .iter()
                        .any(|name| attr.path().is_ident(name))
                });
            }
            quote::quote!(#item)
        }
        Err(_) => item,
    }
}

#[cfg(test)]
mod tests;
