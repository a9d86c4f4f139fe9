//! The module's exports: the one code generator behind both forms of `#[wasmod::module]`.
//!
//! From the module's lists it generates, in one expansion:
//!
//! - each registered item's `Registered` impl, whose `ID` is its position in its list;
//! - `__describe_module__`, which pushes each item's description in list order;
//! - one `__call_*__` export per category: `match id { <id> => run_*::<Item>(..), .. }`;
//! - the `ModuleExports` impl of the marker type, for native execution;
//! - compile-time checks: unique names, one reducer per lifecycle role.
//!
//! Ids, description order and dispatch arms are all read off the same list here, so they agree
//! by construction. The exports use the `"C-unwind"` ABI: in wasm (built with `panic = "abort"`)
//! it is the plain C ABI, and natively it lets a panic in module code unwind to the host, which
//! reports it as an aborted call, as a trap would be in wasm. An item under `#[cfg]` keeps the same `#[cfg]` on its arm, its description
//! push and its `Registered` impl; the ids of the items after it count it only when it is
//! enabled.

use crate::ir::kind::EntryKind;
use crate::ir::module::{Category, Form, Module, Registration};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The module item, with the generated exports placed inside it (inline form) or beside it
/// (marker form).
pub fn generate(module: &Module) -> TokenStream {
    let exports = exports(module);
    match &module.form {
        Form::Inline(item) => {
            let mut item = item.clone();
            if let Some((_, items)) = &mut item.content {
                items.push(syn::Item::Verbatim(quote! {
                    /// The marker type of this module: its exports as Rust functions
                    /// (`wasmod::abi::ModuleExports`), for running it natively in tests.
                    pub struct Module;
                }));
                items.push(syn::Item::Verbatim(exports));
            }
            quote!(#item)
        }
        Form::Marker(item) => quote! {
            #item
            #exports
        },
    }
}

/// The id of each item of a list: a literal while no `#[cfg]` came before, then a constant that
/// counts the enabled items before it.
struct Ids {
    /// Each item's id expression.
    exprs: Vec<TokenStream>,
    /// The constants that define the non-literal ids.
    consts: TokenStream,
    /// Each item's id as a match pattern: the literal or the constant's name.
    patterns: Vec<TokenStream>,
}

fn ids(category: Category, list: &[Registration]) -> Ids {
    let mut exprs = Vec::new();
    let mut patterns = Vec::new();
    let mut consts = TokenStream::new();
    let mut literal = 0u32;
    let mut conditional: Vec<TokenStream> = Vec::new();
    for (position, registration) in list.iter().enumerate() {
        if conditional.is_empty() {
            exprs.push(quote!(#literal));
            patterns.push(quote!(#literal));
        } else {
            let name = format_ident!(
                "__WASMOD_{}_{}",
                category.keyword().to_uppercase(),
                position
            );
            consts.extend(quote! {
                const #name: u32 = #literal #(+ #conditional)*;
            });
            exprs.push(quote!(#name));
            patterns.push(quote!(#name));
        }
        match cfg_predicate(&registration.cfgs) {
            Some(predicate) => conditional.push(quote!((::core::cfg!(#predicate) as u32))),
            None => literal += 1,
        }
    }
    Ids {
        exprs,
        consts,
        patterns,
    }
}

/// `all(p1, p2, ..)` for the `#[cfg(p)]` attributes given, `None` for none.
fn cfg_predicate(cfgs: &[syn::Attribute]) -> Option<TokenStream> {
    if cfgs.is_empty() {
        return None;
    }
    let predicates = cfgs.iter().filter_map(|attr| match &attr.meta {
        syn::Meta::List(list) => Some(list.tokens.clone()),
        _ => None,
    });
    Some(quote!(all(#(#predicates),*)))
}

fn exports(module: &Module) -> TokenStream {
    let marker = match &module.form {
        Form::Inline(_) => quote!(Module),
        Form::Marker(item) => {
            let ident = &item.ident;
            quote!(#ident)
        }
    };
    let ids: Vec<Ids> = Category::all()
        .map(|category| ids(category, module.list(category)))
        .collect();
    let id_consts = ids.iter().map(|ids| &ids.consts);

    let registrations = Category::all().zip(&ids).flat_map(|(category, ids)| {
        module
            .list(category)
            .iter()
            .zip(&ids.exprs)
            .map(|(registration, id)| {
                let Registration { path, cfgs, .. } = registration;
                quote! {
                    #(#cfgs)*
                    impl ::wasmod::rt::Registered for #path {
                        const ID: u32 = #id;
                    }
                }
            })
    });

    let describe = describe(module);
    let checks = if module.reported_errors {
        TokenStream::new()
    } else {
        checks(module)
    };
    let (functions, methods): (Vec<_>, Vec<_>) = EntryKind::ALL
        .into_iter()
        .map(|kind| export(module, &ids, kind))
        .unzip();
    let kind_check = EntryKind::agreement_check();

    quote! {
        const _: () = {
            #kind_check
            #(#id_consts)*
            #(#registrations)*
            #checks

            #describe

            #(#functions)*

            impl ::wasmod::rt::ModuleExports for #marker {
                fn describe_module(sink: u32) -> i16 {
                    __wasmod_describe_module(sink)
                }

                #(#methods)*
            }
        };
    }
}

/// The parameters of a kind's dispatch export after the timestamp, as `docs/abi.md` names
/// them: the byte source it reads and the byte sink it writes.
fn io_params(kind: EntryKind) -> (&'static str, &'static str) {
    match kind {
        EntryKind::Reducer => ("args", "error"),
        EntryKind::Procedure | EntryKind::View | EntryKind::AnonymousView => ("args", "result"),
        EntryKind::HttpHandler => ("request", "response"),
    }
}

/// The runtime thunk the arms of a kind's export call.
fn thunk(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::Reducer => "run_reducer",
        EntryKind::Procedure => "run_procedure",
        EntryKind::View => "run_view",
        EntryKind::AnonymousView => "run_anonymous_view",
        EntryKind::HttpHandler => "run_http_handler",
    }
}

/// The `extern` function of one dispatch export, and the `ModuleExports` method that calls it.
///
/// The method is named after the export (`__call_reducer__` is `call_reducer`), and the
/// function after the method. The export takes the caller's identity and connection as words,
/// as the ABI passes them; the method takes them as arrays, as [`ModuleExports`] does.
fn export(module: &Module, ids: &[Ids], kind: EntryKind) -> (TokenStream, TokenStream) {
    let export_name = kind.export();
    let category = Category::Entries(kind);
    let method = format_ident!("{}", export_name.trim_matches('_'));
    let function = format_ident!("__wasmod_{}", method);
    let (input, output) = io_params(kind);
    let (input, output) = (format_ident!("{}", input), format_ident!("{}", output));
    let run = format_ident!("{}", thunk(kind));
    let patterns = &ids[category.index()].patterns;
    let (caller_params, caller_arrays, caller_args, method_params, method_words, words) = if kind
        .takes_caller()
    {
        (
            quote!(sender_0: u64, sender_1: u64, sender_2: u64, sender_3: u64, connection_id_0: u64, connection_id_1: u64,),
            quote! {
                let sender = [sender_0, sender_1, sender_2, sender_3];
                let connection_id = [connection_id_0, connection_id_1];
            },
            quote!(sender, connection_id,),
            quote!(sender: [u64; 4], connection_id: [u64; 2],),
            quote! {
                let [sender_0, sender_1, sender_2, sender_3] = sender;
                let [connection_id_0, connection_id_1] = connection_id;
            },
            quote!(
                sender_0,
                sender_1,
                sender_2,
                sender_3,
                connection_id_0,
                connection_id_1,
            ),
        )
    } else {
        Default::default()
    };
    let arms = module.list(category).iter().zip(patterns).map(
        |(Registration { path, cfgs, .. }, pattern)| {
            quote! {
                #(#cfgs)*
                #pattern => ::wasmod::rt::#run::<#path>(#caller_args timestamp, #input, #output),
            }
        },
    );
    let function_tokens = quote! {
        #[cfg_attr(target_arch = "wasm32", unsafe(export_name = #export_name))]
        extern "C-unwind" fn #function(id: u32, #caller_params timestamp: i64, #input: u32, #output: u32) -> i16 {
            #caller_arrays
            match id {
                #(#arms)*
                _ => ::wasmod::rt::no_such_entry(#output),
            }
        }
    };
    let method_tokens = quote! {
        fn #method(id: u32, #method_params timestamp: i64, #input: u32, #output: u32) -> i16 {
            #method_words
            #function(id, #words timestamp, #input, #output)
        }
    };
    (function_tokens, method_tokens)
}

/// `__describe_module__`: each item's description, pushed in list order.
fn describe(module: &Module) -> TokenStream {
    let lists = Category::all().map(|category| format_ident!("{}", category.keyword()));
    let pushes = Category::all().map(|category| {
        let list = format_ident!("{}", category.keyword());
        let call = trait_of(category);
        let pushes = module
            .list(category)
            .iter()
            .map(|Registration { path, cfgs, .. }| {
                quote! {
                    #(#cfgs)*
                    #list.push(<#path as #call>::describe(&mut typespace));
                }
            });
        quote! {
            let mut #list = ::wasmod::rt::Vec::new();
            #(#pushes)*
        }
    });
    quote! {
        #[cfg_attr(target_arch = "wasm32", unsafe(export_name = "__describe_module__"))]
        extern "C-unwind" fn __wasmod_describe_module(sink: u32) -> i16 {
            let mut typespace = ::wasmod::rt::Typespace::default();
            #(#pushes)*
            let module = ::wasmod::rt::ModuleDef {
                typespace,
                #(#lists,)*
            };
            ::wasmod::rt::write_description(&module, sink)
        }
    }
}

/// The runtime trait the items of `category` implement.
fn trait_of(category: Category) -> TokenStream {
    match category {
        Category::Tables => quote!(::wasmod::rt::TableRow),
        Category::Entries(kind) => kind.trait_path(),
    }
}

/// Checks that need the items' constants: unique names across entry points and tables, and at
/// most one reducer per lifecycle role.
///
/// Each check takes an array of `Option`s, one per item: an item under `#[cfg]` contributes
/// `None` when it is disabled, through a pair of constants, since array elements cannot carry
/// `#[cfg]`.
fn checks(module: &Module) -> TokenStream {
    let mut items = TokenStream::new();
    let mut values = |category: Category,
                      call: TokenStream,
                      constant: TokenStream,
                      ty: TokenStream|
     -> Vec<TokenStream> {
        module
            .list(category)
            .iter()
            .enumerate()
            .map(|(position, Registration { path, cfgs, .. })| {
                let value = quote!(::wasmod::rt::Some(<#path as #call>::#constant));
                match cfg_predicate(cfgs) {
                    None => value,
                    Some(predicate) => {
                        let name = format_ident!(
                            "__WASMOD_{}_{}_{}",
                            category.keyword().to_uppercase(),
                            constant.to_string(),
                            position
                        );
                        items.extend(quote! {
                            #[cfg(#predicate)]
                            const #name: ::wasmod::rt::Option<#ty> = #value;
                            #[cfg(not(#predicate))]
                            const #name: ::wasmod::rt::Option<#ty> = ::wasmod::rt::None;
                        });
                        quote!(#name)
                    }
                }
            })
            .collect()
    };
    let name = quote!(&'static str);
    let entry_names: Vec<TokenStream> = EntryKind::ALL
        .into_iter()
        .flat_map(|kind| {
            let category = Category::Entries(kind);
            values(category, trait_of(category), quote!(NAME), name.clone())
        })
        .collect();
    let table_names = values(
        Category::Tables,
        trait_of(Category::Tables),
        quote!(TABLE_NAME),
        name,
    );
    let lifecycle = quote!(::wasmod::rt::Option<::wasmod::rt::Lifecycle>);
    let reducers = Category::Entries(EntryKind::Reducer);
    let lifecycles = values(reducers, trait_of(reducers), quote!(LIFECYCLE), lifecycle);
    quote! {
        #items
        const _: () = ::wasmod::rt::assert_names_unique(&[#(#entry_names),*]);
        const _: () = ::wasmod::rt::assert_table_names_unique(&[#(#table_names),*]);
        const _: () = ::wasmod::rt::assert_lifecycles_unique(&[#(#lifecycles),*]);
    }
}
