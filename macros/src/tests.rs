//! Expansion snapshots: what the module macro generates, pinned with `insta`.
//!
//! These show, in reviewable Rust, that each dispatch export is a `match` over literal ids whose
//! arms call one concrete thunk each, in description order. Review a change with
//! `cargo insta review` (or `INSTA_UPDATE=always cargo test -p wasmod-macros` and `git diff`).

use crate::diagnostics::Errors;
use crate::ir::module::Module;
use quote::quote;

fn expand_module(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
    let mut errors = Errors::default();
    let module = Module::parse(args, item, &mut errors);
    let module = errors
        .finish(module)
        .expect("the module parses")
        .expect("the module parses");
    let tokens = crate::codegen::module::generate(&module);
    prettyplease::unparse(&syn::parse2(tokens).expect("the expansion is a file"))
}

#[test]
fn inline_module_dispatch_is_a_match_over_direct_calls() {
    let expansion = expand_module(
        quote!(),
        quote! {
            mod chat {
                use wasmod::prelude::*;

                #[table(public)]
                pub struct Message { #[primary_key] #[auto_inc] id: u64, text: String }

                #[reducer(init)]
                fn init(ctx: &ReducerContext) {}

                #[reducer]
                fn send(ctx: &ReducerContext, text: String) -> Result<(), String> { Ok(()) }

                #[reducer(name = "delete_message")]
                fn delete(ctx: &ReducerContext, id: u64) {}

                #[procedure]
                fn fetch(ctx: &mut ProcedureContext, url: String) -> String { url }

                #[view]
                fn mine(ctx: &ViewContext) -> Vec<Message> { Vec::new() }

                #[view]
                fn recent(ctx: &AnonymousViewContext) -> Vec<Message> { Vec::new() }

                #[http_handler(GET, "/stats")]
                fn stats(ctx: &mut HttpContext, request: Request) -> Response { Response::new(200) }

                mod admin {
                    #[reducer]
                    fn kick(ctx: &ReducerContext, who: Identity) {}
                }
            }
        },
    );
    insta::assert_snapshot!(expansion);
}

#[test]
fn cfg_entries_get_counted_ids() {
    let expansion = expand_module(
        quote!(),
        quote! {
            mod app {
                #[reducer]
                fn first(ctx: &ReducerContext) {}

                #[cfg(feature = "extra")]
                #[reducer]
                fn extra(ctx: &ReducerContext) {}

                #[reducer]
                fn last(ctx: &ReducerContext) {}
            }
        },
    );
    insta::assert_snapshot!(expansion);
}

#[test]
fn list_form_registers_paths() {
    let expansion = expand_module(
        quote!(
            tables(players::Player),
            reducers(
                players::join,
                #[cfg(test)]
                players::reset
            )
        ),
        quote!(
            pub struct Game;
        ),
    );
    insta::assert_snapshot!(expansion);
}

/// The messages of the errors `Module::parse` gives for the inline module `item`.
fn module_errors(item: proc_macro2::TokenStream) -> Vec<String> {
    let mut errors = Errors::default();
    let module = Module::parse(quote!(), item, &mut errors);
    match errors.finish(module) {
        Ok(_) => Vec::new(),
        Err(error) => error.into_iter().map(|error| error.to_string()).collect(),
    }
}

#[test]
fn two_handlers_of_one_method_on_the_same_routes_are_refused() {
    let errors = module_errors(quote!(
        mod app {
            #[http_handler(GET, "/accounts/{name}")]
            fn account(ctx: &mut HttpContext, request: Request) -> Response {
                Response::new(200)
            }
            #[http_handler(GET, "/accounts/{who}")]
            fn same(ctx: &mut HttpContext, request: Request) -> Response {
                Response::new(200)
            }
            #[http_handler(DELETE, "/accounts/{who}")]
            fn other_method(ctx: &mut HttpContext, request: Request) -> Response {
                Response::new(200)
            }
            #[http_handler(GET, "/accounts/new")]
            fn literal(ctx: &mut HttpContext, request: Request) -> Response {
                Response::new(200)
            }
        }
    ));
    assert_eq!(
        errors,
        ["another HTTP handler of this module answers GET `/accounts/{name}`: each method and route pattern has one handler"]
    );
}
