//! The database as an entry point sees it.
//!
//! [`Db`] has no methods of its own: each `#[table]` adds an accessor named after the table
//! (`ctx.db.message()`) through a small trait it generates, so a module's tables are ordinary,
//! statically-typed method calls. The access marker ([`ReadWrite`] or [`ReadOnly`]) travels
//! from the context to every handle, so a view cannot even name `insert`.

use core::marker::PhantomData;

/// The database of the module, with access `A`.
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

/// Read and write access: reducers and explicit transactions.
pub enum ReadWrite {}

/// Read-only access: views.
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
