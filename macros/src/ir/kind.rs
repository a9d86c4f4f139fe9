//! The kinds of entry point, as the macros know them, and the lifecycle roles of reducers.
//!
//! The table of kinds is `wasmod_abi::EntryKind`, and the macros would read it if they could.
//! They cannot: `wasmod-abi` depends on this crate (for `#[derive(SchemaType)]`), so this crate
//! depending on it would be a cycle, and a source file shared by the two crates would not
//! survive `cargo package` (a published crate holds only its own files). Some of it must also
//! be known while the macro expands, not when the generated code runs: `#[export_name]` takes a
//! literal. So [`EntryKind`] repeats what the expansion needs (the `wasmod_abi::EntryKind`
//! variant, the export, the list, the word, whether the caller is passed), and every module
//! expansion checks at compile time that it agrees with `wasmod_abi::EntryKind`
//! (`wasmod::rt::assert_kind_table`): a kind added on one side only, or spelled differently,
//! stops every module from compiling with a message that says which.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

/// A kind of entry point: the macros' row of `wasmod_abi::EntryKind`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EntryKind {
    /// `#[reducer]`.
    Reducer,
    /// `#[procedure]`.
    Procedure,
    /// `#[view]` taking `&ViewContext`.
    View,
    /// `#[view]` taking `&AnonymousViewContext`.
    AnonymousView,
    /// `#[http_handler]`.
    HttpHandler,
}

impl EntryKind {
    /// Every kind, in the order of `wasmod_abi::EntryKind::ALL` (the description's order).
    pub const ALL: [Self; 5] = [
        Self::Reducer,
        Self::Procedure,
        Self::View,
        Self::AnonymousView,
        Self::HttpHandler,
    ];

    /// The name of the `wasmod_abi::EntryKind` variant, which is also the name of the runtime
    /// trait its entry points implement (both views implement `View`).
    fn variant(self) -> &'static str {
        match self {
            Self::Reducer => "Reducer",
            Self::Procedure => "Procedure",
            Self::View => "View",
            Self::AnonymousView => "AnonymousView",
            Self::HttpHandler => "HttpHandler",
        }
    }

    /// The dispatch export (`wasmod_abi::EntryKind::export`).
    pub fn export(self) -> &'static str {
        match self {
            Self::Reducer => "__call_reducer__",
            Self::Procedure => "__call_procedure__",
            Self::View => "__call_view__",
            Self::AnonymousView => "__call_view_anon__",
            Self::HttpHandler => "__call_http_handler__",
        }
    }

    /// The description's list, and the list form's keyword (`wasmod_abi::EntryKind::list`).
    pub fn list(self) -> &'static str {
        match self {
            Self::Reducer => "reducers",
            Self::Procedure => "procedures",
            Self::View => "views",
            Self::AnonymousView => "anonymous_views",
            Self::HttpHandler => "http_handlers",
        }
    }

    /// The word messages use (`wasmod_abi::EntryKind::as_str`).
    pub fn word(self) -> &'static str {
        match self {
            Self::Reducer => "reducer",
            Self::Procedure => "procedure",
            Self::View => "view",
            Self::AnonymousView => "anonymous view",
            Self::HttpHandler => "http handler",
        }
    }

    /// Whether the export passes the caller (`wasmod_abi::EntryKind::takes_caller`).
    pub fn takes_caller(self) -> bool {
        matches!(self, Self::Reducer | Self::Procedure | Self::View)
    }

    /// `::wasmod::rt::EntryKind::<Variant>`: the kind as generated code names it.
    pub fn path(self) -> TokenStream {
        let variant = format_ident!("{}", self.variant());
        quote!(::wasmod::rt::EntryKind::#variant)
    }

    /// `::wasmod::rt::<Trait>`: the runtime trait entry points of this kind implement.
    pub fn trait_path(self) -> TokenStream {
        let name = match self {
            Self::AnonymousView => "View",
            other => other.variant(),
        };
        let name = format_ident!("{}", name);
        quote!(::wasmod::rt::#name)
    }

    /// The compile-time check that this table agrees with `wasmod_abi::EntryKind`.
    pub fn agreement_check() -> TokenStream {
        let rows = Self::ALL.iter().map(|kind| {
            let (path, export, list, word) = (kind.path(), kind.export(), kind.list(), kind.word());
            let takes_caller = kind.takes_caller();
            quote!((#path, #export, #list, #word, #takes_caller))
        });
        quote! {
            const _: () = ::wasmod::rt::assert_kind_table(&[#(#rows),*]);
        }
    }
}

/// A reducer's lifecycle role, as `#[reducer(..)]` names it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Role {
    /// `init`.
    Init,
    /// `client_connected`.
    ClientConnected,
    /// `client_disconnected`.
    ClientDisconnected,
}

impl Role {
    /// Every role, in the order messages list them.
    pub const ALL: [Self; 3] = [Self::Init, Self::ClientConnected, Self::ClientDisconnected];

    /// The role's argument in `#[reducer(..)]`.
    pub fn keyword(self) -> &'static str {
        match self {
            Self::Init => "init",
            Self::ClientConnected => "client_connected",
            Self::ClientDisconnected => "client_disconnected",
        }
    }

    /// The role `ident` names, if it names one.
    pub fn from_ident(ident: &syn::Ident) -> Option<Self> {
        Self::ALL.into_iter().find(|role| ident == role.keyword())
    }

    /// The variant of `wasmod_abi::Lifecycle`.
    fn variant(self) -> &'static str {
        match self {
            Self::Init => "Init",
            Self::ClientConnected => "ClientConnected",
            Self::ClientDisconnected => "ClientDisconnected",
        }
    }
}

/// A lifecycle role where the attribute names it.
#[derive(Clone, Copy, Debug)]
pub struct Lifecycle {
    /// The role.
    pub role: Role,
    /// The span of its keyword.
    pub span: Span,
}

impl Lifecycle {
    /// `::wasmod::rt::Lifecycle::<Variant>`, spanned at the keyword.
    pub fn path(self) -> TokenStream {
        let variant = syn::Ident::new(self.role.variant(), self.span);
        quote_spanned!(self.span=> ::wasmod::rt::Lifecycle::#variant)
    }
}

#[cfg(test)]
mod tests {
    use super::{EntryKind, Role};

    #[test]
    fn the_table_has_one_row_per_kind() {
        for (index, kind) in EntryKind::ALL.into_iter().enumerate() {
            assert_eq!(kind as usize, index, "`ALL` is in declaration order");
            for other in &EntryKind::ALL[index + 1..] {
                assert_ne!(kind.export(), other.export());
                assert_ne!(kind.list(), other.list());
                assert_ne!(kind.word(), other.word());
            }
        }
    }

    #[test]
    fn roles_are_found_by_keyword() {
        for role in Role::ALL {
            let ident = syn::Ident::new(role.keyword(), proc_macro2::Span::call_site());
            assert_eq!(Role::from_ident(&ident), Some(role));
        }
        let other = syn::Ident::new("name", proc_macro2::Span::call_site());
        assert_eq!(Role::from_ident(&other), None);
    }
}
