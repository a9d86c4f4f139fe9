//! Code for an entry point: the user's function (kept out of line), a zero-sized type of the
//! same name, and that type's impl of the runtime's trait for its kind.
//!
//! The generated `invoke` decodes the arguments and calls the function directly; it is the
//! body of the thunk the module's dispatch `match` calls. It uses no function pointers, no
//! trait objects and no formatting.

use crate::ir::entry::{EntryPoint, Kind};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

/// The function, its type, the trait impl and the registration check.
pub fn generate(entry: &EntryPoint) -> TokenStream {
    let ident = entry.ident();
    let cfgs = &entry.cfgs;
    let mut func = entry.func.clone();
    if !func.attrs.iter().any(|attr| attr.path().is_ident("inline")) {
        // Keeps the author's function identifiable in the binary, so the path from the
        // export to it can be inspected.
        func.attrs.push(syn::parse_quote!(#[inline(never)]));
    }
    let vis = match &func.vis {
        syn::Visibility::Inherited => quote!(pub(crate)),
        vis => quote!(#vis),
    };
    let trait_impl = trait_impl(entry);
    let doc = format!("The {} `{}`: the type `#[wasmod::{}]` generates beside the function, which the module's dispatch calls.", entry.kind.entry_kind().word(), entry.name, entry.kind.attr().name());
    quote! {
        #func

        #[doc = #doc]
        #[allow(non_camel_case_types)]
        #(#cfgs)*
        #vis struct #ident {}

        #(#cfgs)*
        const _: () = {
            #trait_impl
            ::wasmod::rt::assert_registered::<#ident>();
        };
    }
}

fn trait_impl(entry: &EntryPoint) -> TokenStream {
    let ident = entry.ident();
    let name = &entry.name;
    let output = &entry.output;
    let params = describe_params(entry);
    let decode = decode_args(entry);
    let call = call(entry);
    match &entry.kind {
        Kind::Reducer { lifecycle } => {
            let lifecycle = match lifecycle {
                Some(lifecycle) => {
                    let path = lifecycle.path();
                    quote!(::wasmod::rt::Some(#path))
                }
                None => quote!(::wasmod::rt::None),
            };
            quote! {
                impl ::wasmod::rt::Reducer for #ident {
                    const NAME: &'static str = #name;
                    const LIFECYCLE: ::wasmod::rt::Option<::wasmod::rt::Lifecycle> = #lifecycle;
                    #params
                    #[inline]
                    fn invoke(
                        __wasmod_ctx: &::wasmod::rt::ReducerContext,
                        __wasmod_bytes: &[u8],
                    ) -> ::wasmod::rt::Result<(), ::wasmod::rt::CallError> {
                        #decode
                        ::wasmod::rt::ReducerReturn::into_call_result(#call)
                    }
                }
            }
        }
        Kind::Procedure => {
            quote! {
                impl ::wasmod::rt::Procedure for #ident {
                    const NAME: &'static str = #name;
                    #params
                    fn returns(typespace: &mut ::wasmod::rt::Typespace) -> ::wasmod::rt::AlgebraicType {
                        <#output as ::wasmod::rt::SchemaType>::schema(typespace)
                    }
                    #[inline]
                    fn invoke(
                        __wasmod_ctx: &mut ::wasmod::rt::ProcedureContext,
                        __wasmod_bytes: &[u8],
                    ) -> ::wasmod::rt::Result<::wasmod::rt::Vec<u8>, ::wasmod::rt::CallError> {
                        #decode
                        let __wasmod_output: #output = #call;
                        ::wasmod::rt::Ok(::wasmod::rt::encode(&__wasmod_output))
                    }
                }
            }
        }
        Kind::View { anonymous } => {
            let context = if *anonymous {
                quote!(AnonymousViewContext)
            } else {
                quote!(ViewContext)
            };
            quote! {
                impl ::wasmod::rt::View for #ident {
                    const NAME: &'static str = #name;
                    type Context = ::wasmod::rt::#context;
                    #params
                    fn returns(typespace: &mut ::wasmod::rt::Typespace) -> ::wasmod::rt::AlgebraicType {
                        <#output as ::wasmod::rt::ViewReturn>::schema(typespace)
                    }
                    #[inline]
                    fn invoke(
                        __wasmod_ctx: &::wasmod::rt::#context,
                        __wasmod_bytes: &[u8],
                    ) -> ::wasmod::rt::Result<::wasmod::rt::Vec<u8>, ::wasmod::rt::CallError> {
                        #decode
                        let __wasmod_output: #output = #call;
                        ::wasmod::rt::Ok(::wasmod::rt::encode(&__wasmod_output))
                    }
                }
            }
        }
        Kind::HttpHandler { method, path } => {
            // Only a pattern with parameters has anything to capture.
            let captures_params = wasmod_route::Pattern::parse(&path.value())
                .is_ok_and(|pattern| pattern.params().next().is_some());
            let capture = captures_params.then(|| {
                quote! {
                    __wasmod_ctx.__capture(
                        <Self as ::wasmod::rt::HttpHandler>::PATH,
                        &__wasmod_arg_0.uri,
                    );
                }
            });
            quote! {
                impl ::wasmod::rt::HttpHandler for #ident {
                    const NAME: &'static str = #name;
                    const METHOD: ::wasmod::http::Method = ::wasmod::http::Method::#method;
                    const PATH: &'static str = #path;
                    #[inline]
                    fn invoke(
                        __wasmod_ctx: &mut ::wasmod::rt::HttpContext,
                        __wasmod_bytes: &[u8],
                    ) -> ::wasmod::rt::Result<::wasmod::rt::Vec<u8>, ::wasmod::rt::CallError> {
                        #decode
                        #capture
                        let __wasmod_response = ::wasmod::rt::HttpReturn::into_response(#call)?;
                        ::wasmod::rt::Ok(::wasmod::rt::encode(&__wasmod_response))
                    }
                }
            }
        }
    }
}

/// `fn params(..) -> Vec<ParamDef>`, for every kind but HTTP handlers (whose one parameter is
/// the request, not an argument).
fn describe_params(entry: &EntryPoint) -> TokenStream {
    if let Kind::HttpHandler { .. } = entry.kind {
        return TokenStream::new();
    }
    let params = entry.params.iter().map(|param| {
        let name = &param.name;
        let ty = &param.ty;
        quote! {
            ::wasmod::rt::ParamDef {
                name: ::std::string::String::from(#name),
                ty: <#ty as ::wasmod::rt::SchemaType>::schema(typespace),
            }
        }
    });
    quote! {
        fn params(typespace: &mut ::wasmod::rt::Typespace) -> ::wasmod::rt::Vec<::wasmod::rt::ParamDef> {
            ::std::vec![#(#params),*]
        }
    }
}

/// `__wasmod_arg_0`, `__wasmod_arg_1`, ..: the decoded arguments.
fn arg_idents(entry: &EntryPoint) -> Vec<syn::Ident> {
    (0..entry.params.len())
        .map(|index| format_ident!("__wasmod_arg_{}", index))
        .collect()
}

/// The call of the user's function with the context and the decoded arguments.
fn call(entry: &EntryPoint) -> TokenStream {
    let ident = entry.ident();
    let args = arg_idents(entry);
    quote!(#ident(__wasmod_ctx #(, #args)*))
}

/// Decodes `__wasmod_bytes` into `__wasmod_arg_*`.
///
/// When every parameter type is plain, the arguments are one `#[repr(C, packed)]` struct of
/// them, read with one copy; otherwise they are decoded one by one, so an error names its
/// parameter. The choice is a constant, so only one branch survives compilation.
fn decode_args(entry: &EntryPoint) -> TokenStream {
    let kind = entry.kind.entry_kind().path();
    let name = &entry.name;
    let args = arg_idents(entry);
    if args.is_empty() {
        return quote! {
            ::wasmod::rt::Args::new(#kind, #name, __wasmod_bytes).finish()?;
        };
    }
    let types: Vec<_> = entry.params.iter().map(|param| &param.ty).collect();
    let reads = entry.params.iter().map(|param| {
        let (ty, name) = (&param.ty, &param.name);
        quote_spanned!(ty.span()=> __wasmod_args.next::<#ty>(#name)?)
    });
    quote! {
        #[repr(C, packed)]
        struct __wasmod_Params(#(#types),*);
        const __WASMOD_PLAIN: bool = true #(&& <#types as ::wasmod::rt::Decode>::LAYOUT.is_plain())*;
        let mut __wasmod_args = ::wasmod::rt::Args::new(#kind, #name, __wasmod_bytes);
        let (#(#args,)*) = if __WASMOD_PLAIN {
            // SAFETY: every field is plain and the struct is packed, in parameter order, so its
            // bytes are exactly the encoded arguments.
            let __wasmod_Params(#(#args),*) = unsafe { __wasmod_args.all_plain::<__wasmod_Params>()? };
            (#(#args,)*)
        } else {
            (#(#reads,)*)
        };
        __wasmod_args.finish()?;
    }
}
