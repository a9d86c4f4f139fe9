//! Code for a [`TypeDecl`]: its `Encode`, `Decode` and `SchemaType` impls, and for an enum
//! without fields, the runtime's `IndexKey`.
//!
//! A struct whose layout is plain (see `wasmod_abi::encoding::Layout`) is encoded and decoded
//! with one copy; the generated `LAYOUT` constant decides that at compile time from the
//! `#[repr]`, the fields' own layouts and the absence of padding, so the same code serves plain
//! and structured types and the branch folds away.

use crate::ir::schema_type::{Fields, Shape, Style, TypeDecl};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

/// The three impls, inside one `const _: () = { .. };`.
pub fn generate(decl: &TypeDecl) -> TokenStream {
    let encode = encode_impl(decl);
    let decode = decode_impl(decl);
    let schema = schema_impl(decl);
    quote! {
        #[allow(non_local_definitions)]
        const _: () = {
            #encode
            #decode
            #schema
        };
    }
}

/// `impl<..> Trait for Type<..> where <params>: Trait`: serde's rule for bounds.
fn impl_header(decl: &TypeDecl, trait_path: TokenStream) -> TokenStream {
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
            .push(syn::parse_quote!(#param: #trait_path));
    }
    let (impl_generics, type_generics, where_clause) = generics.split_for_impl();
    quote! { impl #impl_generics #trait_path for #ident #type_generics #where_clause }
}

/// `impl IndexKey for Type {}` if the type is an enum without fields and without generics,
/// whose values the host compares exactly (by variant, in declaration order); nothing for any
/// other type, so using one as a key fails on the missing `IndexKey` impl, whose message says
/// which types are keys.
pub fn index_key_impl(decl: &TypeDecl, runtime: &syn::Path) -> TokenStream {
    let fieldless = match &decl.shape {
        Shape::Enum(variants) => variants
            .iter()
            .all(|variant| variant.fields.fields.is_empty()),
        Shape::Struct(_) => false,
    };
    if !fieldless || !decl.generics.params.is_empty() {
        return TokenStream::new();
    }
    let ident = &decl.ident;
    quote! {
        #[automatically_derived]
        impl #runtime::table::IndexKey for #ident {}
    }
}

/// A reference to field `member` of `self`. Packed fields may be unaligned: they are copied
/// out instead of borrowed.
fn field_ref(decl: &TypeDecl, member: &syn::Member) -> TokenStream {
    if decl.repr.packed {
        quote!(&{ self.#member })
    } else {
        quote!(&self.#member)
    }
}

fn encode_impl(decl: &TypeDecl) -> TokenStream {
    let krate = &decl.krate;
    let p = quote!(#krate::__private);
    let header = impl_header(decl, quote!(#p::Encode));
    let body = match &decl.shape {
        Shape::Struct(fields) => {
            let writes = fields.fields.iter().map(|field| {
                let value = field_ref(decl, &field.member);
                quote_spanned! { field.ty.span()=> #p::Encode::encode(#value, out); }
            });
            if may_be_plain(decl, fields) {
                quote! {
                    if <Self as #p::Decode>::LAYOUT.is_plain() {
                        #p::encode_plain(self, out);
                        return;
                    }
                    #(#writes)*
                }
            } else {
                quote!(#(#writes)*)
            }
        }
        Shape::Enum(variants) => {
            let arms = variants.iter().enumerate().map(|(tag, variant)| {
                let tag = tag as u8;
                let ident = &variant.ident;
                let bindings = bindings(&variant.fields);
                let pattern = pattern(quote!(Self::#ident), &variant.fields, &bindings);
                quote! {
                    #pattern => {
                        out.push(#tag);
                        #(#p::Encode::encode(#bindings, out);)*
                    }
                }
            });
            quote! {
                match self {
                    #(#arms)*
                }
            }
        }
    };
    let len = match &decl.shape {
        Shape::Struct(fields) => {
            let lens = fields.fields.iter().map(|field| {
                let value = field_ref(decl, &field.member);
                quote_spanned! { field.ty.span()=> + #p::Encode::encoded_len(#value) }
            });
            quote!(0 #(#lens)*)
        }
        Shape::Enum(variants) => {
            let arms = variants.iter().map(|variant| {
                let ident = &variant.ident;
                let bindings = bindings(&variant.fields);
                let pattern = pattern(quote!(Self::#ident), &variant.fields, &bindings);
                quote! {
                    #pattern => 1 #(+ #p::Encode::encoded_len(#bindings))*,
                }
            });
            quote! {
                match self {
                    #(#arms)*
                }
            }
        }
    };
    let slice = match &decl.shape {
        Shape::Struct(fields) if may_be_plain(decl, fields) => quote! {
            #[inline]
            fn encode_slice(items: &[Self], out: &mut ::std::vec::Vec<u8>) {
                if <Self as #p::Decode>::LAYOUT.is_plain() {
                    #p::encode_plain_slice(items, out);
                } else {
                    for item in items {
                        #p::Encode::encode(item, out);
                    }
                }
            }
        },
        Shape::Struct(_) | Shape::Enum(_) => TokenStream::new(),
    };
    quote! {
        #[automatically_derived]
        #header {
            #[inline]
            fn encode(&self, out: &mut ::std::vec::Vec<u8>) {
                #body
            }

            #[inline]
            fn encoded_len(&self) -> usize {
                #len
            }
            #slice
        }
    }
}

fn decode_impl(decl: &TypeDecl) -> TokenStream {
    let krate = &decl.krate;
    let p = quote!(#krate::__private);
    let header = impl_header(decl, quote!(#p::Decode));
    let read = quote!(#p::Decode::decode(reader)?);
    match &decl.shape {
        Shape::Struct(fields) if !may_be_plain(decl, fields) => {
            let construct = construct(quote!(Self), fields, &read);
            quote! {
                #[automatically_derived]
                #header {
                    #[inline]
                    fn decode(reader: &mut #p::Reader<'_>) -> #p::Result<Self, #p::DecodeError> {
                        #p::Ok(#construct)
                    }
                }
            }
        }
        Shape::Struct(fields) => {
            let construct = construct(quote!(Self), fields, &read);
            let layout = plain_layout(decl, fields);
            quote! {
                #[automatically_derived]
                #header {
                    #layout

                    #[inline]
                    fn decode(reader: &mut #p::Reader<'_>) -> #p::Result<Self, #p::DecodeError> {
                        if <Self as #p::Decode>::LAYOUT.is_plain() {
                            return #p::decode_plain(reader);
                        }
                        #p::Ok(#construct)
                    }

                    #[inline]
                    fn decode_vec(
                        reader: &mut #p::Reader<'_>,
                        len: usize,
                    ) -> #p::Result<::std::vec::Vec<Self>, #p::DecodeError> {
                        if <Self as #p::Decode>::LAYOUT.is_plain() {
                            #p::decode_plain_vec(reader, len)
                        } else {
                            #p::decode_each(reader, len)
                        }
                    }
                }
            }
        }
        Shape::Enum(variants) => {
            let name = decl.ident.to_string();
            let arms = variants.iter().enumerate().map(|(tag, variant)| {
                let tag = tag as u8;
                let ident = &variant.ident;
                let construct = construct(quote!(Self::#ident), &variant.fields, &read);
                quote! { [#tag] => #p::Ok(#construct), }
            });
            quote! {
                #[automatically_derived]
                #header {
                    #[inline]
                    fn decode(reader: &mut #p::Reader<'_>) -> #p::Result<Self, #p::DecodeError> {
                        match reader.take_array::<1>()? {
                            #(#arms)*
                            [tag] => #p::Err(#p::DecodeError::InvalidTag { tag, type_name: #name }),
                        }
                    }
                }
            }
        }
    }
}

/// Whether the struct can be plain at all: its fields lie in declaration order (`#[repr(C)]`),
/// it has some, and it is not generic (whose plainness would depend on its parameters). Only
/// then does the generated code test `LAYOUT`.
fn may_be_plain(decl: &TypeDecl, fields: &Fields) -> bool {
    decl.repr.ordered && !fields.fields.is_empty() && decl.generics.params.is_empty()
}

/// The `LAYOUT` constant of a struct that may be plain: plain exactly when each field is plain
/// and their sizes add up to the struct's (no padding).
fn plain_layout(decl: &TypeDecl, fields: &Fields) -> TokenStream {
    let krate = &decl.krate;
    let p = quote!(#krate::__private);
    let types: Vec<_> = fields.fields.iter().map(|field| &field.ty).collect();
    quote! {
        // SAFETY: the fields lie in declaration order (`#[repr]`), each is plain, and their
        // sizes add up to the struct's, so there is no padding and every byte is a plain field's.
        const LAYOUT: #p::Layout = unsafe {
            #p::Layout::plain_if(
                #(<#types as #p::Decode>::LAYOUT.is_plain())&&*
                    && #p::size_of::<Self>() == 0 #(+ #p::size_of::<#types>())*
            )
        };
    }
}

fn schema_impl(decl: &TypeDecl) -> TokenStream {
    let krate = &decl.krate;
    let p = quote!(#krate::__private);
    let header = impl_header(decl, quote!(#p::SchemaType));
    let structure = match &decl.shape {
        Shape::Struct(fields) => product(&p, fields),
        Shape::Enum(variants) => {
            let variants = variants.iter().map(|variant| {
                let name = variant.ident.to_string();
                let payload = match (variant.fields.style, variant.fields.fields.as_slice()) {
                    (Style::Unnamed, [only]) => {
                        let ty = &only.ty;
                        quote!(<#ty as #p::SchemaType>::schema(typespace))
                    }
                    _ => product(&p, &variant.fields),
                };
                quote!(#p::Field::named(#name, #payload))
            });
            quote!(#p::AlgebraicType::Sum(::std::vec![#(#variants),*]))
        }
    };
    quote! {
        #[automatically_derived]
        #header {
            fn schema(typespace: &mut #p::Typespace) -> #p::AlgebraicType {
                typespace.register(#p::type_name::<Self>(), |typespace| #structure)
            }
        }
    }
}

fn product(p: &TokenStream, fields: &Fields) -> TokenStream {
    let fields = fields.fields.iter().map(|field| {
        let ty = &field.ty;
        let schema = quote!(<#ty as #p::SchemaType>::schema(typespace));
        match &field.name {
            Some(name) => quote!(#p::Field::named(#name, #schema)),
            None => quote!(#p::Field::unnamed(#schema)),
        }
    });
    quote!(#p::AlgebraicType::Product(::std::vec![#(#fields),*]))
}

/// `__wasmod_0, __wasmod_1, ..`: names for a variant's fields in a pattern.
fn bindings(fields: &Fields) -> Vec<syn::Ident> {
    (0..fields.fields.len())
        .map(|index| format_ident!("__wasmod_{}", index))
        .collect()
}

/// A pattern that binds every field of `path` to `bindings`.
fn pattern(path: TokenStream, fields: &Fields, bindings: &[syn::Ident]) -> TokenStream {
    let members = fields.fields.iter().map(|field| &field.member);
    match fields.style {
        Style::Named => quote!(#path { #(#members: #bindings),* }),
        Style::Unnamed => quote!(#path ( #(#bindings),* )),
        Style::Unit => path,
    }
}

/// An expression building `path` with every field read by `read`, each read spanned at its
/// field's type so that a type that cannot be decoded is reported there.
pub(super) fn construct(path: TokenStream, fields: &Fields, read: &TokenStream) -> TokenStream {
    let members = fields.fields.iter().map(|field| &field.member);
    match fields.style {
        Style::Named | Style::Unnamed => {
            let reads = fields
                .fields
                .iter()
                .map(|field| quote_spanned!(field.ty.span()=> #read));
            quote!(#path { #(#members: #reads),* })
        }
        Style::Unit => path,
    }
}
