//! The one exclusion: panic machinery.
//!
//! A panic formats its message (`core::fmt`, which calls through `&dyn Display` and function
//! pointers), runs the panic hook (a `Box<dyn Fn>`) and traps. Those indirect calls are on
//! every path that can panic, including the bounds checks and `unwrap`s of the runtime, and the
//! dispatch contract exempts them: a panic is the end of the call, not dispatch.
//!
//! The rule is narrow on purpose. The walk does not descend into a function whose demangled
//! name is:
//!
//! - an item of `core::panicking`: every function there starts a panic (`panic`, `panic_fmt`,
//!   `panic_bounds_check`, `assert_failed`, `panic_const::*`, ...);
//! - one of the functions of `std::panicking` that start or carry on a panic: `begin_panic`,
//!   `begin_panic_handler`, `rust_panic_with_hook`, `rust_panic`. Not the rest of the module:
//!   `std::panicking::set_hook` and `take_hook` run on ordinary paths, and are walked;
//! - a symbol of the panic runtime, `rust_begin_unwind` or `__rust_start_panic` (recent
//!   toolchains name them `__rustc::rust_begin_unwind` and the like);
//! - `alloc::alloc::handle_alloc_error`: allocation failure, which calls the allocation error
//!   hook through a pointer and aborts (`-> !`), like a panic;
//! - `abort` or `std::process::abort`.
//!
//! Whatever is reachable only through those (`core::fmt`, the hooks, the payload boxing) is
//! therefore not visited; the same code reached by any other path is. Functions that merely
//! prepare a panic (`core::option::unwrap_failed`, `core::slice::index::slice_index_fail`,
//! `alloc::raw_vec::capacity_overflow`, ...) are walked like any other and are clean when all
//! they do is call into `core::panicking`. Every exclusion applied is listed in the report.

/// Modules whose every item is a panic entry point.
const PANIC_MODULES: [&str; 1] = ["core::panicking"];

/// Functions that start or carry on a panic, or end the process, matched exactly (generic
/// arguments aside).
const PANIC_FUNCTIONS: [&str; 7] = [
    "std::panicking::begin_panic",
    "std::panicking::begin_panic_handler",
    "std::panicking::rust_panic_with_hook",
    "std::panicking::rust_panic",
    "alloc::alloc::handle_alloc_error",
    "std::process::abort",
    "abort",
];

/// Symbols of the panic runtime, matched as the last path segment.
const PANIC_SYMBOLS: [&str; 2] = ["rust_begin_unwind", "__rust_start_panic"];

/// Why a function is panic machinery, if it is: the module, function or symbol that matched.
pub(crate) fn panic_rule(name: &str) -> Option<&'static str> {
    let in_module = PANIC_MODULES.iter().find(|module| {
        name.strip_prefix(**module)
            .is_some_and(|rest| rest.starts_with("::"))
    });
    let function = PANIC_FUNCTIONS.iter().find(|function| {
        name.strip_prefix(**function)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with("::<"))
    });
    let symbol = PANIC_SYMBOLS.iter().find(|symbol| {
        name.strip_suffix(**symbol)
            .is_some_and(|rest| rest.is_empty() || rest.ends_with("::"))
    });
    in_module.or(function).or(symbol).copied()
}

#[cfg(test)]
mod tests {
    use super::panic_rule;

    #[test]
    fn matches_panic_entry_points_only() {
        let cases = [
            ("core::panicking::panic_fmt", Some("core::panicking")),
            (
                "core::panicking::panic_const::panic_const_add_overflow",
                Some("core::panicking"),
            ),
            (
                "std::panicking::begin_panic::<&str>",
                Some("std::panicking::begin_panic"),
            ),
            (
                "std::panicking::rust_panic_with_hook",
                Some("std::panicking::rust_panic_with_hook"),
            ),
            ("__rustc::rust_begin_unwind", Some("rust_begin_unwind")),
            ("rust_begin_unwind", Some("rust_begin_unwind")),
            (
                "alloc::alloc::handle_alloc_error",
                Some("alloc::alloc::handle_alloc_error"),
            ),
            ("abort", Some("abort")),
            ("std::panicking::set_hook", None),
            ("std::panicking::begin_panic_extra", None),
            ("core::panicking_extra::f", None),
            ("core::fmt::write", None),
            ("core::option::unwrap_failed", None),
            ("my_crate::abort", None),
            ("not_rust_begin_unwind", None),
        ];
        for (name, rule) in cases {
            assert_eq!(panic_rule(name), rule, "{name}");
        }
    }
}
