//! The kinds of entry point, enumerated once.
//!
//! Every place that needs to know something per kind of entry point (which export dispatches
//! it, whether it sees its caller, what transaction it runs in, the word messages use for it,
//! the description's list of them) reads it from [`EntryKind`], instead of spelling the kinds
//! out again.
//!
//! | kind | export | caller | transaction | list | word |
//! |---|---|---|---|---|---|
//! | [`Reducer`](EntryKind::Reducer) | `__call_reducer__` | yes | mutable, by the host | `reducers` | `reducer` |
//! | [`Procedure`](EntryKind::Procedure) | `__call_procedure__` | yes | explicit | `procedures` | `procedure` |
//! | [`View`](EntryKind::View) | `__call_view__` | yes | read-only | `views` | `view` |
//! | [`AnonymousView`](EntryKind::AnonymousView) | `__call_view_anon__` | no | read-only | `anonymous_views` | `anonymous view` |
//! | [`HttpHandler`](EntryKind::HttpHandler) | `__call_http_handler__` | no | explicit | `http_handlers` | `http handler` |
//!
//! Adding a kind (scheduled reducers, say) is a variant here, its row in each `match` below
//! and in [`ModuleDef::entry_point`](crate::ModuleDef::entry_point), an export in
//! [`names`], and then what the compiler asks for: the macros' own table of the kinds
//! (`macros/src/ir/kind.rs`, which every module expansion checks against this one at compile
//! time) and the host's transports.

use crate::names;

/// A kind of entry point a module declares.
///
/// Deliberately exhaustive: every crate of the workspace must handle every kind, so adding
/// one (scheduled reducers, say) is the table below plus the places the compiler then points
/// at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, crate::SchemaType)]
#[wasmod(crate = crate)]
pub enum EntryKind {
    /// `#[reducer]`: runs in one transaction the host opens and commits.
    Reducer,
    /// `#[procedure]`: runs outside a transaction, may open its own, returns a value.
    Procedure,
    /// `#[view]` that sees its caller: read-only, returns rows.
    View,
    /// `#[view]` that does not see its caller.
    AnonymousView,
    /// `#[http_handler]`: answers HTTP requests routed to the module.
    HttpHandler,
}

/// The transaction an entry point of a kind runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TxKind {
    /// One mutable transaction, opened and committed (or rolled back) by the host.
    Mutable,
    /// One read-only transaction of the committed state.
    ReadOnly,
    /// None unless the entry point opens one.
    Explicit,
}

impl EntryKind {
    /// Every kind, in the order of the module description's lists.
    pub const ALL: [EntryKind; 5] = [
        Self::Reducer,
        Self::Procedure,
        Self::View,
        Self::AnonymousView,
        Self::HttpHandler,
    ];

    /// The word messages and metrics use: `reducer`, `procedure`, `view`, `anonymous view`,
    /// `http handler`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Reducer => "reducer",
            Self::Procedure => "procedure",
            Self::View => "view",
            Self::AnonymousView => "anonymous view",
            Self::HttpHandler => "http handler",
        }
    }

    /// The name of the module description's list of entry points of this kind: the field of
    /// [`ModuleDef`](crate::ModuleDef), the key of the description as JSON, and the keyword of
    /// the list form of `#[wasmod::module]`: `reducers`, `procedures`, `views`,
    /// `anonymous_views`, `http_handlers`.
    pub const fn list(self) -> &'static str {
        match self {
            Self::Reducer => "reducers",
            Self::Procedure => "procedures",
            Self::View => "views",
            Self::AnonymousView => "anonymous_views",
            Self::HttpHandler => "http_handlers",
        }
    }

    /// The dispatch export that calls entry points of this kind.
    pub const fn export(self) -> &'static str {
        match self {
            Self::Reducer => names::CALL_REDUCER,
            Self::Procedure => names::CALL_PROCEDURE,
            Self::View => names::CALL_VIEW,
            Self::AnonymousView => names::CALL_VIEW_ANON,
            Self::HttpHandler => names::CALL_HTTP_HANDLER,
        }
    }

    /// Whether the export passes the caller's identity and connection id.
    pub const fn takes_caller(self) -> bool {
        matches!(self, Self::Reducer | Self::Procedure | Self::View)
    }

    /// The transaction a call of this kind runs in.
    pub const fn tx(self) -> TxKind {
        match self {
            Self::Reducer => TxKind::Mutable,
            Self::View | Self::AnonymousView => TxKind::ReadOnly,
            Self::Procedure | Self::HttpHandler => TxKind::Explicit,
        }
    }
}

impl core::fmt::Display for EntryKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every dispatch export, in the order of [`EntryKind::ALL`] (read off
/// [`EntryKind::export`]).
pub const DISPATCH_EXPORTS: [&str; EntryKind::ALL.len()] = {
    let mut exports = [""; EntryKind::ALL.len()];
    let mut index = 0;
    while index < exports.len() {
        exports[index] = EntryKind::ALL[index].export();
        index += 1;
    }
    exports
};

#[cfg(test)]
mod tests {
    use super::EntryKind;

    /// A kind's position in [`EntryKind::ALL`], by an exhaustive `match`: a new variant that
    /// `ALL` misses fails the test below.
    fn position(kind: EntryKind) -> usize {
        match kind {
            EntryKind::Reducer => 0,
            EntryKind::Procedure => 1,
            EntryKind::View => 2,
            EntryKind::AnonymousView => 3,
            EntryKind::HttpHandler => 4,
        }
    }

    #[test]
    fn all_lists_every_kind_once_in_order() {
        for (index, kind) in EntryKind::ALL.into_iter().enumerate() {
            assert_eq!(position(kind), index, "{kind}");
        }
    }

    #[test]
    fn exports_lists_and_words_are_distinct() {
        for (index, kind) in EntryKind::ALL.into_iter().enumerate() {
            for other in &EntryKind::ALL[index + 1..] {
                assert_ne!(kind.export(), other.export());
                assert_ne!(kind.list(), other.list());
                assert_ne!(kind.as_str(), other.as_str());
            }
        }
    }
}
