//! Entry points: from an arm's thunk to the module author's function, where the walk stops.
//!
//! The author's function is the boundary of the dispatch path: the walk does not look past it.
//! It is found, for the thunk each arm calls first, by the first of these that applies:
//!
//! 1. [`Evidence::ThunkGenericArgument`]: the thunk's name carries its generic argument
//!    (v0 mangling: `wasmod::rt::thunks::run_reducer::<quickstart::chat::send>`); the entry
//!    is that type path, and the author's function is the function of that name reachable
//!    from the thunk.
//! 2. [`Evidence::EntryTraitImpl`]: the thunk reaches the `invoke` of the entry trait impl the
//!    module macro generates (`<impl wasmod::rt::entry::Reducer for P>::invoke`), directly or,
//!    in unoptimised builds, through `Result::and_then` and a closure; the nearest one
//!    (breadth-first) gives the entry `P`, and the author's function is the function named `P`
//!    reachable from it.
//! 3. [`Evidence::ModuleCallee`]: with the default (legacy) mangling a thunk is just
//!    `wasmod::rt::thunks::run_reducer`, and in release builds `invoke` is inlined into it, so
//!    the author's function is a direct callee of the thunk. It is recognised as the only
//!    direct callee that is a plain function path outside the runtime and standard crates
//!    ([`RUNTIME_CRATES`]); if there is not exactly one, the entry stays unknown.
//!
//! The same type path names the zero-sized type and the function (the macro gives them one
//! name), which is why "the function whose name equals the entry path" is the boundary.

use crate::module::Module;
use crate::names::{crate_of, entry_impl_self_type, generic_argument, is_plain_path};
use crate::panic::panic_rule;
use serde::Serialize;
use std::collections::{HashSet, VecDeque};

/// Crates whose functions are part of the dispatch path, never the author's code: the wasmod
/// runtime and ABI, the standard library, and what the standard library links in on wasm32.
pub(crate) const RUNTIME_CRATES: [&str; 8] = [
    "wasmod",
    "wasmod_abi",
    "core",
    "alloc",
    "std",
    "compiler_builtins",
    "dlmalloc",
    "__rustc",
];

/// How an entry point's author function was recognised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    /// From the thunk's generic argument (v0 symbol mangling).
    ThunkGenericArgument,
    /// From the entry trait impl's `invoke` the thunk reaches
    /// (`<impl wasmod::rt::entry::Reducer for P>::invoke`).
    EntryTraitImpl,
    /// As the thunk's only direct callee outside the runtime and standard crates (legacy
    /// mangling with `invoke` inlined).
    ModuleCallee,
    /// Not recognised: the walk goes on past the thunk as if there were no author's code.
    Unknown,
}

/// What is known of one entry point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Identified {
    /// The entry's type path, e.g. `quickstart::chat::send`.
    pub entry: Option<String>,
    /// The author's function.
    pub author: Option<u32>,
    /// How they were found.
    pub evidence: Evidence,
}

/// Identifies the entry point whose thunk is `thunk`.
pub(crate) fn identify(module: &Module, thunk: u32) -> Identified {
    let found = |entry: &str, from: u32, evidence| Identified {
        author: find_reachable(module, from, entry),
        entry: Some(entry.to_owned()),
        evidence,
    };
    if let Some(entry) = generic_argument(module.name(thunk)) {
        return found(entry, thunk, Evidence::ThunkGenericArgument);
    }
    // Not through module functions: past them is the author's code, not the thunk's.
    let runtime = |name: &str| !is_module_function(name);
    let invoke = breadth_first(module, thunk, runtime, |function| {
        let name = module.name(function);
        let entry = entry_impl_self_type(name).filter(|_| name.ends_with("::invoke"))?;
        Some((function, entry))
    });
    if let Some((invoke, entry)) = invoke {
        return found(entry, invoke, Evidence::EntryTraitImpl);
    }
    let callees = distinct_callees(module, thunk);
    let mut foreign = callees
        .iter()
        .filter(|&&callee| is_module_function(module.name(callee)));
    match (foreign.next(), foreign.next()) {
        (Some(&author), None) => Identified {
            entry: Some(module.name(author).to_owned()),
            author: Some(author),
            evidence: Evidence::ModuleCallee,
        },
        _ => Identified {
            entry: None,
            author: None,
            evidence: Evidence::Unknown,
        },
    }
}

/// Whether `name` is a plain function path of a crate other than the runtime's.
fn is_module_function(name: &str) -> bool {
    is_plain_path(name) && !RUNTIME_CRATES.contains(&crate_of(name))
}

/// The direct callees of `function`, each once, in the order of their first call.
fn distinct_callees(module: &Module, function: u32) -> Vec<u32> {
    let mut seen = HashSet::new();
    module
        .function(function)
        .map(|function| {
            function
                .body
                .callees()
                .filter(|callee| seen.insert(*callee))
                .collect()
        })
        .unwrap_or_default()
}

/// The first function named `name` reachable from `from`.
fn find_reachable(module: &Module, from: u32, name: &str) -> Option<u32> {
    breadth_first(
        module,
        from,
        |_| true,
        |function| (module.name(function) == name).then_some(function),
    )
}

/// The first answer of `probe` on the functions reachable from `from` through direct calls,
/// breadth-first in call order, entering only functions whose names `enter` accepts, and
/// never panic machinery.
fn breadth_first<T>(
    module: &Module,
    from: u32,
    enter: impl Fn(&str) -> bool,
    probe: impl Fn(u32) -> Option<T>,
) -> Option<T> {
    let mut seen = HashSet::from([from]);
    let mut queue = VecDeque::from([from]);
    while let Some(function) = queue.pop_front() {
        if let Some(answer) = probe(function) {
            return Some(answer);
        }
        for callee in distinct_callees(module, function) {
            let name = module.name(callee);
            if enter(name) && panic_rule(name).is_none() && seen.insert(callee) {
                queue.push_back(callee);
            }
        }
    }
    None
}
