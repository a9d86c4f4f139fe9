//! The walk: every function reachable from an export through direct calls, up to the author's
//! functions and short of panic machinery, and every indirect call among them.
//!
//! The walk is breadth-first in call order, so the path it reports to each function is a
//! shortest one, and the same binary always gives the same paths. Imported functions belong to
//! the host and have no body to look into.

use crate::module::Module;
use crate::panic::panic_rule;
use crate::report::{Exclusion, FunctionRef, Violation};
use std::collections::{HashMap, HashSet, VecDeque};

/// What the walk from one export found.
pub(crate) struct Walk {
    /// Every indirect call on the path, with how it is reached.
    pub violations: Vec<Violation>,
    /// The panic machinery the walk did not enter.
    pub excluded: Vec<Exclusion>,
    /// How many more indirect calls the same walk finds when it does enter panic machinery.
    pub behind_exclusions: usize,
}

/// Walks from `root`, stopping at the functions in `boundary` (the author's).
pub(crate) fn walk(module: &Module, root: u32, boundary: &HashSet<u32>) -> Walk {
    let strict = Search::run(module, root, |callee| {
        boundary.contains(&callee) || panic_rule(module.name(callee)).is_some()
    });
    let unexcluded = Search::run(module, root, |callee| boundary.contains(&callee));
    let violations = strict.violations(module);
    let excluded = strict
        .stops
        .iter()
        .filter_map(|&(callee, caller)| {
            Some(Exclusion {
                rule: panic_rule(module.name(callee))?,
                function: FunctionRef::new(module, callee),
                reached_from: FunctionRef::new(module, caller),
            })
        })
        .collect();
    let behind_exclusions = unexcluded
        .violations(module)
        .len()
        .saturating_sub(violations.len());
    Walk {
        violations,
        excluded,
        behind_exclusions,
    }
}

/// One breadth-first search through direct calls.
struct Search {
    /// The functions visited, in visiting order.
    order: Vec<u32>,
    /// Who first called each visited function (`None` for the root).
    parent: HashMap<u32, Option<u32>>,
    /// The calls not followed: callee and its first caller.
    stops: Vec<(u32, u32)>,
}

impl Search {
    /// Searches from `root`, not following calls to functions for which `stop` holds.
    fn run(module: &Module, root: u32, stop: impl Fn(u32) -> bool) -> Self {
        let mut search = Self {
            order: Vec::new(),
            parent: HashMap::from([(root, None)]),
            stops: Vec::new(),
        };
        let mut stopped = HashSet::new();
        let mut queue = VecDeque::from([root]);
        while let Some(function) = queue.pop_front() {
            search.order.push(function);
            let Some(body) = module.function(function).map(|function| &function.body) else {
                continue;
            };
            for callee in body.callees() {
                if search.parent.contains_key(&callee) || stopped.contains(&callee) {
                    continue;
                }
                if stop(callee) {
                    stopped.insert(callee);
                    search.stops.push((callee, function));
                } else {
                    search.parent.insert(callee, Some(function));
                    queue.push_back(callee);
                }
            }
        }
        search
    }

    /// The indirect calls in the visited functions, in visiting order.
    fn violations(&self, module: &Module) -> Vec<Violation> {
        let mut violations = Vec::new();
        for &function in &self.order {
            let Some(body) = module.function(function).map(|function| &function.body) else {
                continue;
            };
            for (kind, offset) in body.indirect_calls() {
                violations.push(Violation {
                    kind,
                    offset,
                    function: FunctionRef::new(module, function),
                    path: self
                        .path_to(function)
                        .into_iter()
                        .map(|f| FunctionRef::new(module, f))
                        .collect(),
                });
            }
        }
        violations
    }

    /// The calls from the root to `function`, root first, `function` last.
    fn path_to(&self, function: u32) -> Vec<u32> {
        let mut path = vec![function];
        let mut at = function;
        while let Some(&Some(caller)) = self.parent.get(&at) {
            path.push(caller);
            at = caller;
        }
        path.reverse();
        path
    }
}
