//! Puts the pieces together for one export: find the `match`, name its arms, identify the
//! entry points, walk the dispatch path.

use crate::entry::identify;
use crate::module::Module;
use crate::panic::panic_rule;
use crate::reach::walk;
use crate::report::{Arm, Dispatch, EntryPoint, ExportReport, FunctionRef, Shape};
use crate::shape::{recognise, Kind, RawArm, RawShape};
use std::collections::HashSet;

/// How many calls deep the `match` is looked for, when the export (or a helper) does nothing
/// but call one function: the compiler may outline the body of an export.
const MAX_OUTLINED: usize = 4;

/// The report of export `name`, whose function is `function`; `dispatch` tells whether it is a
/// `__call_*__` export (with a `match`) or `__describe_module__` (without).
pub(crate) fn export_report(
    module: &Module,
    name: &str,
    function: u32,
    dispatch: bool,
) -> ExportReport {
    let dispatch = dispatch.then(|| analyse_dispatch(module, function));
    let boundary = dispatch
        .as_ref()
        .map(|dispatch| boundary(module, dispatch))
        .unwrap_or_default();
    let walk = walk(module, function, &boundary);
    ExportReport {
        name: name.to_owned(),
        function: FunctionRef::new(module, function),
        dispatch,
        violations: walk.violations,
        excluded: walk.excluded,
        indirect_calls_behind_exclusions: walk.behind_exclusions,
    }
}

/// Finds the `match` behind `export` and identifies each arm's entry point.
fn analyse_dispatch(module: &Module, export: u32) -> Dispatch {
    let (function, raw) = find_match(module, export);
    let name_all = |callees: Vec<u32>| {
        callees
            .into_iter()
            .map(|f| FunctionRef::new(module, f))
            .collect()
    };
    let name_arms = |arms: Vec<RawArm>| {
        arms.into_iter()
            .map(|arm| Arm {
                id: arm.id,
                callees: name_all(arm.callees),
            })
            .collect()
    };
    let shape = match raw {
        Some(RawShape {
            kind,
            arms,
            default,
        }) => {
            let (arms, default) = (name_arms(arms), name_all(default));
            match kind {
                Kind::BrTable => Shape::BrTable { arms, default },
                Kind::CompareChain => Shape::CompareChain { arms, default },
            }
        }
        None => Shape::Unrecognised,
    };
    let entries = shape
        .arms()
        .iter()
        .filter_map(|arm| {
            let thunk = arm.callees.first()?.clone();
            let identified = identify(module, thunk.index);
            Some(EntryPoint {
                id: arm.id,
                author: identified
                    .author
                    .map(|author| FunctionRef::new(module, author)),
                entry: identified.entry,
                evidence: identified.evidence,
                thunk,
            })
        })
        .collect();
    Dispatch {
        function: FunctionRef::new(module, function),
        shape,
        entries,
    }
}

/// The function holding the `match` and its shape: the export, or the function it alone
/// calls (panic machinery aside), up to [`MAX_OUTLINED`] calls deep.
fn find_match(module: &Module, export: u32) -> (u32, Option<RawShape>) {
    let mut function = export;
    for _ in 0..=MAX_OUTLINED {
        let Some(body) = module.function(function).map(|function| &function.body) else {
            break;
        };
        if let Some(shape) = recognise(&body.instrs) {
            return (function, Some(shape));
        }
        let callees: HashSet<u32> = body
            .callees()
            .filter(|&callee| panic_rule(module.name(callee)).is_none())
            .collect();
        match callees.into_iter().collect::<Vec<_>>()[..] {
            [only] => function = only,
            _ => break,
        }
    }
    (export, None)
}

/// Where the walk stops: the author's functions found, and every function named like an
/// entry's type path.
fn boundary(module: &Module, dispatch: &Dispatch) -> HashSet<u32> {
    let entries: HashSet<&str> = dispatch
        .entries
        .iter()
        .filter_map(|entry| entry.entry.as_deref())
        .collect();
    let named = (0u32..)
        .zip(&module.functions)
        .filter(|(_, function)| entries.contains(function.name.as_str()));
    let authors = dispatch
        .entries
        .iter()
        .filter_map(|entry| entry.author.as_ref());
    named
        .map(|(index, _)| index)
        .chain(authors.map(|author| author.index))
        .collect()
}
