//! Code for a table: the row struct with its `SchemaType` impls, its `TableRow` impl (the
//! table's description), a handle type `<Row>Table` with one accessor per index, and the trait
//! `<Row>Access` that gives `Db` its `ctx.db.<table>()` method.
//!
//! The trait is named after the row type, not the table, so that it never collides with an
//! entry point's type of the same name as the table (both live in the type namespace).

use crate::codegen::schema_type;
use crate::ir::table::Table;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned as _;

/// Everything `#[table]` expands to.
pub fn generate(table: &Table) -> TokenStream {
    let item = &table.item;
    let row = &item.ident;
    let vis = &item.vis;
    let cfgs = &table.cfgs;
    let accessor = &table.name;
    let handle = format_ident!("{}Table", row);
    let access = format_ident!("{}Access", row);
    let schema = schema_type::generate(&table.row);
    let describe = describe(table);
    let schedule_check = table.schedule.as_ref().map(|schedule| {
        let ty = &table.columns[schedule.at].ty;
        quote::quote_spanned! {syn::spanned::Spanned::span(ty)=>
            // The schedule column is `wasmod::ScheduleAt`, not another type of that name.
            const _: fn(#ty) -> ::wasmod::ScheduleAt = |column| column;
        }
    });
    let index_accessors = table.indexes.iter().enumerate().map(|(id, index)| {
        let id = id as u32;
        let name = &index.accessor;
        let types: Vec<_> = index
            .columns
            .iter()
            .map(|&column| &table.columns[column].ty)
            .collect();
        if index.unique {
            let key = types[0];
            let doc = format!(
                "The unique column `{name}`: find, update or delete the row with a given `{name}`."
            );
            quote! {
                #[doc = #doc]
                pub fn #name(&self) -> ::wasmod::table::UniqueColumn<#row, #key, A> {
                    ::wasmod::table::UniqueColumn::__new(#id)
                }
            }
        } else {
            let doc =
                format!("The btree index `{name}`: filter or delete the rows in a range of it.");
            quote! {
                #[doc = #doc]
                pub fn #name(&self) -> ::wasmod::table::BTreeIndex<#row, (#(#types,)*), A> {
                    ::wasmod::table::BTreeIndex::__new(#id)
                }
            }
        }
    });
    let handle_doc = format!("A handle to the table `{accessor}` of `{row}` rows, from `ctx.db.{accessor}()`. Dereferences to [`Table`](::wasmod::table::Table) for `insert`, `iter`, `count`, `delete` and `clear`; its own methods are the table's indexes.");
    let trait_doc = format!("Gives [`Db`](::wasmod::Db) the accessor `{accessor}()` of the table of `{row}` rows. Bring it into scope (`use ..::{access}`) where the table is used outside its module.");
    quote! {
        #item

        #(#cfgs)*
        #schema

        #[doc = #handle_doc]
        #(#cfgs)*
        #vis struct #handle<A> {
            table: ::wasmod::table::Table<#row, A>,
        }

        #(#cfgs)*
        impl<A: ::wasmod::rt::Access> ::core::ops::Deref for #handle<A> {
            type Target = ::wasmod::table::Table<#row, A>;

            fn deref(&self) -> &Self::Target {
                &self.table
            }
        }

        #(#cfgs)*
        impl<A: ::wasmod::rt::Access> #handle<A> {
            #(#index_accessors)*
        }

        #[doc = #trait_doc]
        #(#cfgs)*
        #vis trait #access {
            /// The access the handle grants.
            type Access;

            #[doc = #handle_doc]
            fn #accessor(&self) -> #handle<Self::Access>;
        }

        #(#cfgs)*
        const _: () = {
            impl<A: ::wasmod::rt::Access> #access for ::wasmod::Db<A> {
                type Access = A;

                #[inline]
                fn #accessor(&self) -> #handle<A> {
                    #handle { table: ::wasmod::table::Table::__new() }
                }
            }

            #describe
            #schedule_check
        };
    }
}

/// A column's `ColumnDef::default`: `expr` as a value of the column's type, encoded. The `let`
/// with the column's type makes a mismatch an error at the expression.
fn default(ty: &syn::Type, expr: Option<&syn::Expr>) -> TokenStream {
    match expr {
        Some(expr) => {
            let value = quote_spanned! { expr.span()=>
                {
                    let __wasmod_default: #ty = #expr;
                    ::wasmod::rt::encode(&__wasmod_default)
                }
            };
            quote!(::wasmod::rt::Some(#value))
        }
        None => quote!(::wasmod::rt::None),
    }
}

/// The `TableRow` impl: the table's name and description.
fn describe(table: &Table) -> TokenStream {
    let row = &table.item.ident;
    let name = table.name.to_string();
    let public = table.public;
    let columns = table.columns.iter().map(|column| {
        let name = &column.name;
        let ty = &column.ty;
        let default = default(ty, column.default.as_ref());
        quote! {
            ::wasmod::rt::ColumnDef {
                name: ::std::string::String::from(#name),
                ty: <#ty as ::wasmod::rt::SchemaType>::schema(typespace),
                default: #default,
            }
        }
    });
    let primary_key = match table.primary_key {
        Some(column) => {
            let column = column as u16;
            quote!(::wasmod::rt::Some(#column))
        }
        None => quote!(::wasmod::rt::None),
    };
    let indexes = table.indexes.iter().map(|index| {
        let name = index.accessor.to_string();
        let columns = index.columns.iter().map(|&column| column as u16);
        let unique = index.unique;
        quote! {
            ::wasmod::rt::IndexDef {
                name: ::std::string::String::from(#name),
                columns: ::std::vec![#(#columns),*],
                unique: #unique,
            }
        }
    });
    let schedule = match &table.schedule {
        Some(schedule) => {
            let reducer = syn::ext::IdentExt::unraw(&schedule.reducer).to_string();
            let at = schedule.at as u16;
            quote! {
                ::wasmod::rt::Some(::wasmod::rt::ScheduleDef {
                    reducer: ::std::string::String::from(#reducer),
                    at: #at,
                })
            }
        }
        None => quote!(::wasmod::rt::None),
    };
    let visibility = match &table.visibility {
        Some(filter) => quote!(::wasmod::rt::Some(::std::string::String::from(#filter))),
        None => quote!(::wasmod::rt::None),
    };
    let has_auto_inc = !table.auto_inc.is_empty();
    let auto_inc = table.auto_inc.iter().map(|&column| column as u16);
    quote! {
        impl ::wasmod::rt::TableRow for #row {
            const TABLE_NAME: &'static str = #name;
            const HAS_AUTO_INC: bool = #has_auto_inc;

            fn describe(typespace: &mut ::wasmod::rt::Typespace) -> ::wasmod::rt::TableDef {
                ::wasmod::rt::TableDef {
                    name: ::std::string::String::from(#name),
                    row_type: <#row as ::wasmod::rt::SchemaType>::schema(typespace),
                    columns: ::std::vec![#(#columns),*],
                    primary_key: #primary_key,
                    indexes: ::std::vec![#(#indexes),*],
                    auto_inc: ::std::vec![#(#auto_inc),*],
                    public: #public,
                    schedule: #schedule,
                    visibility: #visibility,
                }
            }
        }
    }
}
