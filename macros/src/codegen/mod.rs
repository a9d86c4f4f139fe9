//! Code generation from the [IR](crate::ir). Generated code names everything by absolute path
//! (`::wasmod::..`), keeps its helpers inside `const _: () = { .. };`, and uses the reserved
//! `__wasmod_` prefix for any name it must introduce beside the user's items.

pub mod decode_borrowed;
pub mod entry;
pub mod module;
pub mod schema_type;
pub mod table;
