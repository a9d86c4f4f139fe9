//! Code for `#[derive(DecodeBorrowed)]`: a struct with one lifetime, the input's, decoded
//! field by field with `DecodeBorrowed`, so that its `&str` and `&[u8]` fields borrow the
//! input and its other fields decode as they always do.

use super::schema_type::construct;
use crate::diagnostics::Errors;
use crate::ir::schema_type::{Shape, TypeDecl};
use proc_macro2::TokenStream;
use quote::quote;

/// `impl<'a, ..> DecodeBorrowed<'a> for Type<'a, ..>`, or the reason it cannot be derived.
pub fn generate(decl: &TypeDecl, errors: &mut Errors) -> TokenStream {
    let Shape::Struct(fields) = &decl.shape else {
        errors.error_at(
            &decl.ident,
            "`DecodeBorrowed` is derived for structs (a table's row type); an enum derives `SchemaType`",
        );
        return TokenStream::new();
    };
    let mut lifetimes = decl.generics.lifetimes();
    let (Some(input), None) = (lifetimes.next(), lifetimes.next()) else {
        let message = "a borrowing struct has exactly one lifetime parameter: the input's";
        if decl.generics.params.is_empty() {
            errors.error_at(&decl.ident, message);
        } else {
            errors.error_at(&decl.generics, message);
        }
        return TokenStream::new();
    };
    let input = &input.lifetime;
    let krate = &decl.krate;
    let p = quote!(#krate::__private);
    let ident = &decl.ident;
    let mut generics = decl.generics.clone();
    let params: Vec<_> = generics
        .type_params()
        .map(|param| param.ident.clone())
        .collect();
    let where_clause = generics.make_where_clause();
    for param in params {
        where_clause
            .predicates
            .push(syn::parse_quote!(#param: #p::DecodeBorrowed<#input>));
    }
    let (impl_generics, type_generics, where_clause) = generics.split_for_impl();
    let read = quote!(#p::DecodeBorrowed::decode_borrowed(reader)?);
    let construct = construct(quote!(Self), fields, &read);
    quote! {
        #[allow(non_local_definitions)]
        const _: () = {
            #[automatically_derived]
            impl #impl_generics #p::DecodeBorrowed<#input> for #ident #type_generics #where_clause {
                #[inline]
                fn decode_borrowed(
                    reader: &mut #p::Reader<#input>,
                ) -> #p::Result<Self, #p::DecodeError> {
                    #p::Ok(#construct)
                }
            }
        };
    }
}
