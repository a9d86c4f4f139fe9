//! Inspection of compiled wasmod modules: does each dispatch export reach its entry points
//! through a `br_table` and direct calls only?
//!
//! # Why
//!
//! The dispatch contract (see `DESIGN.md`, "The dispatch contract", and `docs/abi.md`) says
//! that a `__call_*__` export is a `match` on the entry id whose every arm is a direct call of
//! a thunk specialised for one entry point, and that nothing between the export and the
//! module author's function calls through a function pointer, a `dyn` or `core::fmt`. Source
//! review cannot check that: inlining, LTO and the standard library decide what the binary
//! does. This crate checks the binary.
//!
//! # What it does
//!
//! [`inspect`] parses and validates a module, then, for each export of
//! [`DISPATCH_EXPORTS`] present (and, for information, [`DESCRIBE_EXPORT`]):
//!
//! 1. finds the `match`: a `br_table` on the id, or a chain of tests of the id (one or two
//!    arms), in the export or in the one function it calls (see [`Shape`]);
//! 2. follows each arm to its direct callees; the first is the entry point's thunk;
//! 3. identifies the author's function behind each thunk ([`Evidence`] says how);
//! 4. walks every function reachable from the export through `call` and `return_call`,
//!    stopping at the author's functions and at panic machinery, and reports every
//!    `call_indirect`, `return_call_indirect`, `call_ref` and `return_call_ref` it meets as a
//!    [`Violation`], with the function containing it and the call path to it. What the
//!    panic exclusion left out is listed ([`Exclusion`]).
//!
//! The [`Report`] also has the size of every section, the imports and, per export, the
//! entry points in id order (arm, thunk, author's function). It prints as text
//! ([`std::fmt::Display`]) or JSON ([`Report::to_json`]). `docs/inspect.md` explains how to read
//! it and how to follow the same path by eye with `wasm-tools print`.
//!
//! The module must keep its `name` section (function names): a stripped binary is an error
//! ([`InspectError::NoNames`]), since runtime code and the author's code could not be told
//! apart.
//!
//! ```no_run
//! let wasm = std::fs::read("target/wasm32-unknown-unknown/release/quickstart.wasm")?;
//! let report = wasmod_inspect::inspect(&wasm)?;
//! println!("{report}");
//! assert!(report.is_clean(), "{} indirect calls on dispatch paths", report.violations().count());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod analysis;
mod body;
mod display;
mod entry;
mod error;
mod flow;
mod module;
mod names;
mod panic;
mod reach;
mod report;
mod shape;

pub use body::IndirectKind;
pub use entry::Evidence;
pub use error::InspectError;
pub use module::{Import, SectionSize};
pub use report::{
    Arm, Dispatch, EntryPoint, Exclusion, ExportReport, FunctionRef, Report, Shape, Violation,
};

/// The dispatch exports of `docs/abi.md`, in report order: one per kind of entry point
/// ([`wasmod_abi::EntryKind::export`]).
pub const DISPATCH_EXPORTS: [&str; wasmod_abi::EntryKind::ALL.len()] =
    wasmod_abi::kind::DISPATCH_EXPORTS;

/// The export that describes the module. It is not a dispatch path (the host calls it once,
/// when it loads the module, and the runtime installs its panic hook there, through a `Box<dyn
/// Fn>`), so its indirect calls are reported for information and are not violations.
pub const DESCRIBE_EXPORT: &str = wasmod_abi::names::DESCRIBE_MODULE;

/// Inspects a compiled module.
///
/// Fails only if `wasm` is not a valid module or has no function names; everything else,
/// including a missing export or an unrecognised dispatch, is in the report.
pub fn inspect(wasm: &[u8]) -> Result<Report, InspectError> {
    let module = module::Module::parse(wasm)?;
    let export = |name: &str| {
        let found = module.exports.iter().find(|(export, _)| export == name);
        found.map(|&(_, function)| function)
    };
    let exports = DISPATCH_EXPORTS
        .iter()
        .filter_map(|&name| Some(analysis::export_report(&module, name, export(name)?, true)))
        .collect();
    let describe = export(DESCRIBE_EXPORT)
        .map(|function| analysis::export_report(&module, DESCRIBE_EXPORT, function, false));
    Ok(Report {
        total_size: module.total_size,
        sections: module.sections,
        imports: module.imports,
        exports,
        describe,
    })
}
