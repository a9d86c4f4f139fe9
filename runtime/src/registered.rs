//! The mark of an item the module-level macro registered: tables and entry points alike.

/// Implemented by the module-level macro for every table and entry point it registers: `ID`
/// is its position in its list of the module description.
///
/// Each `#[table]` and entry-point attribute asserts that its item implements this trait, so
/// an item that no module registers is a compile error, never a silent omission.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not registered in any `#[wasmod::module]`",
    label = "this item is never registered, so the host would never see it",
    note = "put it inside an inline `#[wasmod::module] mod .. {{ }}`, or list it in the module's declaration, e.g. `#[wasmod::module(reducers(path::to::it))]`"
)]
pub trait Registered {
    /// The item's id: its position in the module description's list for its category.
    const ID: u32;
}
