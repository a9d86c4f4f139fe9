//! The database as an entry point sees it.
//!
//! [`Db`] has no methods of its own: each `#[table]` adds an accessor named after the table
//! (`ctx.db.message()`) through a small trait it generates, so a module's tables are ordinary,
//! statically-typed method calls. The access marker ([`ReadWrite`] or [`ReadOnly`]) travels
//! from the context to every handle, so a view cannot even name `insert`.

use core::marker::PhantomData;

/// The database of the module, with access `A`: `ctx.db` of every context. Each table adds an
/// accessor, from a trait named after its row type (`ItemAccess` for `Item`), which the
/// module's own code sees and other code imports.
///
/// ```
/// #[wasmod::module]
/// mod shop {
///     use wasmod::prelude::*;
///
///     #[table]
///     pub struct Item {
///         #[primary_key]
///         pub sku: String,
///     }
///
///     #[view]
///     fn skus(ctx: &AnonymousViewContext) -> Vec<String> {
///         ctx.db.item().iter().map(|item| item.sku).collect()
///     }
/// }
///
/// // Outside the module, import the accessor's trait.
/// use shop::ItemAccess;
/// fn items(db: &wasmod::Db<wasmod::ReadOnly>) -> u64 {
///     db.item().count()
/// }
/// # fn main() {}
/// ```
pub struct Db<A> {
    access: PhantomData<A>,
}

impl<A: Access> Db<A> {
    pub(crate) const fn new() -> Self {
        Self {
            access: PhantomData,
        }
    }

    #[doc(hidden)]
    pub const fn __new() -> Self {
        Self::new()
    }
}

/// Read and write access: reducers ([`ReducerContext`](crate::ReducerContext)) and explicit
/// transactions ([`TxContext`](crate::TxContext)).
pub enum ReadWrite {}

/// Read-only access: views and read-only transactions. Handles with it have no writing
/// methods, so a write in a view does not compile:
///
/// ```compile_fail,E0599
/// #[wasmod::module]
/// mod shop {
///     use wasmod::prelude::*;
///
///     #[table]
///     pub struct Item {
///         #[primary_key]
///         pub sku: String,
///     }
///
///     #[view]
///     fn sneaky(ctx: &AnonymousViewContext) -> Vec<String> {
///         ctx.db.item().clear();
///         Vec::new()
///     }
/// }
/// # fn main() {}
/// ```
pub enum ReadOnly {}

/// The kind of access a [`Db`] or a table handle grants. Sealed.
pub trait Access: sealed::Sealed + 'static {}

impl Access for ReadWrite {}
impl Access for ReadOnly {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::ReadWrite {}
    impl Sealed for super::ReadOnly {}
}
