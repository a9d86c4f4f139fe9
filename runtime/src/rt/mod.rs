//! What the macros' generated code calls. Not a public API: names and signatures here change
//! with the macros.
//!
//! This module holds the generic halves of every generated item, so that the generated code is
//! small and the logic is written once:
//!
//! - the traits each entry point's zero-sized type implements ([`Reducer`], [`Procedure`],
//!   [`View`], [`HttpHandler`]) and the registration marker
//!   ([`Registered`]);
//! - the out-of-line thunks the dispatch `match` calls ([`run_reducer`] and friends): read the
//!   arguments, build the context, invoke, report;
//! - argument decoding and error reporting, written without `core::fmt`, trait objects or
//!   function pointers, so that the dispatch path has no indirect call;
//! - compile-time checks the module macro emits (unique names, one lifecycle reducer per role,
//!   the macros' table of entry-point kinds agreeing with [`EntryKind`]).

mod args;
mod checks;
mod entry;
mod error;
mod returns;
mod thunks;

pub use crate::registered::Registered;
pub use args::Args;
pub use checks::{
    assert_kind_table, assert_lifecycles_unique, assert_names_unique, assert_registered,
    assert_table_names_unique, KindRow,
};
pub use entry::{HttpHandler, Procedure, Reducer, View};
pub use error::CallError;
pub use returns::{HttpReturn, IntoErrorMessage, ReducerReturn, ViewReturn};
pub use thunks::{
    no_such_entry, run_anonymous_view, run_http_handler, run_procedure, run_reducer, run_view,
    write_description,
};

pub use crate::context::{
    AnonymousViewContext, HttpContext, ProcedureContext, ReducerContext, ViewContext,
};
pub use crate::db::Access;
pub use crate::table::TableRow;
pub use core::option::Option::{self, None, Some};
pub use core::result::Result::{self, Ok};
pub use std::vec::Vec;
pub use wasmod_abi::{
    AlgebraicType, ColumnDef, Decode, EntryKind, IndexDef, Lifecycle, ModuleDef, ModuleExports,
    ParamDef, ScheduleDef, SchemaType, TableDef, Typespace,
};

use wasmod_abi::Encode;

/// Encodes a value: what generated code uses for results.
#[inline]
pub fn encode<T: Encode + ?Sized>(value: &T) -> Vec<u8> {
    wasmod_abi::encoding::to_vec(value)
}
