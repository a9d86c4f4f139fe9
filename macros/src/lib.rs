//! Procedural macros of [wasmod](https://docs.rs/wasmod). Use them through the `wasmod` crate,
//! which re-exports them and documents them with examples.
//!
//! Each macro is a thin entry point: it parses its input into the [IR](ir), which validates it
//! and collects every error with its span, then hands the IR to [code generation](codegen).

mod codegen;
mod diagnostics;
mod ir;

use diagnostics::{expand, Errors};
use ir::entry::{Attr, AttrArgs, EntryPoint};
use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;

/// Derives `Encode`, `Decode` and `SchemaType` for a struct or an enum, so that it can be a
/// column, a parameter or a return value. See the `wasmod` crate's documentation.
#[proc_macro_derive(SchemaType, attributes(wasmod))]
pub fn derive_schema_type(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    let mut errors = Errors::default();
    let options = ir::schema_type::TypeOptions::from_attrs(&input.attrs, &mut errors);
    let decl = ir::schema_type::TypeDecl::parse(&input, options.krate, &mut errors);
    let result = errors.finish(decl).map(|decl| decl.map(|decl| codegen::schema_type::generate(&decl)).unwrap_or_default());
    expand(result, TokenStream2::new()).into()
}

/// Declares a table. See the `wasmod` crate's documentation.
#[proc_macro_attribute]
pub fn table(args: TokenStream, item: TokenStream) -> TokenStream {
    let item2 = TokenStream2::from(item.clone());
    let result = syn::parse::<syn::ItemStruct>(item).and_then(|item| {
        let mut errors = Errors::default();
        let table = ir::table::Table::parse(args.into(), item, &mut errors);
        errors.finish(table).map(|table| table.map(|table| codegen::table::generate(&table)).unwrap_or_default())
    });
    expand(result, strip_column_attrs(item2)).into()
}

/// Declares a reducer. See the `wasmod` crate's documentation.
#[proc_macro_attribute]
pub fn reducer(args: TokenStream, item: TokenStream) -> TokenStream {
    entry_point(Attr::Reducer, args, item)
}

/// Declares a procedure. See the `wasmod` crate's documentation.
#[proc_macro_attribute]
pub fn procedure(args: TokenStream, item: TokenStream) -> TokenStream {
    entry_point(Attr::Procedure, args, item)
}

/// Declares a view. See the `wasmod` crate's documentation.
#[proc_macro_attribute]
pub fn view(args: TokenStream, item: TokenStream) -> TokenStream {
    entry_point(Attr::View, args, item)
}

/// Declares an HTTP handler. See the `wasmod` crate's documentation.
#[proc_macro_attribute]
pub fn http_handler(args: TokenStream, item: TokenStream) -> TokenStream {
    entry_point(Attr::HttpHandler, args, item)
}

/// Declares the module: its tables and entry points, its description and its dispatch exports.
/// See the `wasmod` crate's documentation.
#[proc_macro_attribute]
pub fn module(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = TokenStream2::from(item);
    let mut errors = Errors::default();
    let module = ir::module::Module::parse(args.into(), item.clone(), &mut errors);
    let result = errors.finish(module).map(|module| module.map(|module| codegen::module::generate(&module)).unwrap_or_default());
    expand(result, item).into()
}

fn entry_point(attr: Attr, args: TokenStream, item: TokenStream) -> TokenStream {
    let item2 = TokenStream2::from(item.clone());
    let result = syn::parse::<syn::ItemFn>(item).and_then(|func| {
        let mut errors = Errors::default();
        let args = AttrArgs::parse(attr, args.into(), &mut errors);
        let entry = EntryPoint::parse(attr, args, func, &mut errors);
        errors.finish(entry).map(|entry| entry.map(|entry| codegen::entry::generate(&entry)).unwrap_or_default())
    });
    expand(result, item2).into()
}

/// The struct of a failed `#[table]`, without its column attributes, so that the only errors
/// reported are the table's own.
fn strip_column_attrs(item: TokenStream2) -> TokenStream2 {
    match syn::parse2::<syn::ItemStruct>(item.clone()) {
        Ok(mut item) => {
            for field in item.fields.iter_mut() {
                field.attrs.retain(|attr| !["primary_key", "unique", "auto_inc", "index"].iter().any(|name| attr.path().is_ident(name)));
            }
            quote::quote!(#item)
        }
        Err(_) => item,
    }
}

#[cfg(test)]
mod tests;
