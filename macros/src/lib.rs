//! Procedural macros of [wasmod](https://docs.rs/wasmod). Use them through the `wasmod` crate,
//! which re-exports them and documents them with examples.
//!
//! Each macro is a thin entry point: it parses its input into the [IR](ir), which validates it
//! and collects every error with its span, then hands the IR to [code generation](codegen).

mod codegen;
mod diagnostics;
mod ir;

use proc_macro::TokenStream;

/// Derives `Encode`, `Decode` and `SchemaType` for a struct or an enum, so that it can be a
/// column, a parameter or a return value.
#[proc_macro_derive(SchemaType, attributes(wasmod))]
pub fn derive_schema_type(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    let mut errors = diagnostics::Errors::default();
    let options = ir::schema_type::TypeOptions::from_attrs(&input.attrs, &mut errors);
    let decl = ir::schema_type::TypeDecl::parse(&input, options.krate, &mut errors);
    let result = errors.finish(()).map(|()| decl.map(|decl| codegen::schema_type::generate(&decl)).unwrap_or_default());
    diagnostics::expand(result, proc_macro2::TokenStream::new()).into()
}
