//! The kinds of entry point, enumerated once.
//!
//! Every place that needs to know something per kind of entry point (which export dispatches
//! it, whether it sees its caller, what transaction it runs in, the word messages use for it)
//! reads it from [`EntryKind`], instead of spelling the kinds out again.

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
