//! The shape of a dispatch export: how its body turns the id into a call.
//!
//! A `match id { 0 => .., 1 => .., _ => .. }` over dense ids compiles to a `br_table` whose
//! target `i` leads to the code of arm `i`. With one arm (or, at some optimisation levels, a
//! few), LLVM emits tests of the id instead (`local.get id` then `br_if`, or `i32.eq`/`i32.ne`
//! against a constant): a compare chain. Each arm's code starts where its branch lands and
//! runs until its first unconditional transfer; its direct calls are the arm's callees, the
//! first being the thunk.
//!
//! The id is the export's first parameter, local 0. Unoptimised builds may copy it to other
//! locals first; copies made by `local.set`/`local.tee` straight from `local.get` of the id are
//! followed.

use crate::body::Instr;
use crate::flow::{Flow, Landing};

/// How one arm was reached, before its callees are named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RawArm {
    /// The id the arm handles.
    pub id: u32,
    /// The arm's direct calls, in order.
    pub callees: Vec<u32>,
}

/// Which way a dispatch tests the id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A `br_table` on the id.
    BrTable,
    /// Tests of the id against constants.
    CompareChain,
}

/// A recognised dispatch, before callees are named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RawShape {
    /// How the id is tested.
    pub kind: Kind,
    /// The arms, in id order.
    pub arms: Vec<RawArm>,
    /// The calls made for an id no arm handles.
    pub default: Vec<u32>,
}

/// Recognises the dispatch in a body, if it has one: the first `br_table` on the id, or else
/// the tests of the id.
pub(crate) fn recognise(instrs: &[Instr]) -> Option<RawShape> {
    let flow = Flow::new(instrs);
    let ids = IdLocals::of(instrs);
    br_table(&flow, &ids).or_else(|| compare_chain(&flow, &ids))
}

/// The locals known to hold the id.
struct IdLocals(Vec<u32>);

impl IdLocals {
    /// Local 0, and every local set straight from another id local.
    fn of(instrs: &[Instr]) -> Self {
        let mut locals = vec![0];
        for pair in instrs.windows(2) {
            if let [Instr::LocalGet(from), Instr::LocalSet(to) | Instr::LocalTee(to)] = pair {
                if locals.contains(from) && !locals.contains(to) {
                    locals.push(*to);
                }
            }
        }
        Self(locals)
    }

    /// Whether the instruction reads the id.
    fn reads(&self, instr: Option<&Instr>) -> bool {
        matches!(instr, Some(Instr::LocalGet(local) | Instr::LocalTee(local)) if self.0.contains(local))
    }
}

/// The first `br_table` whose index is the id.
fn br_table(flow: &Flow<'_>, ids: &IdLocals) -> Option<RawShape> {
    let instrs = flow.instrs();
    instrs.iter().enumerate().find_map(|(at, instr)| {
        let Instr::BrTable { targets, default } = instr else {
            return None;
        };
        if !ids.reads(at.checked_sub(1).and_then(|before| instrs.get(before))) {
            return None;
        }
        let arms = (0u32..)
            .zip(targets)
            .map(|(id, &depth)| RawArm {
                id,
                callees: flow.calls_from(flow.branch(at, depth)),
            })
            .collect();
        Some(RawShape {
            kind: Kind::BrTable,
            arms,
            default: flow.calls_from(flow.branch(at, *default)),
        })
    })
}

/// One test of the id: which id it picks, where that id goes, and where the others go.
struct Test {
    /// The id the test singles out.
    id: u32,
    /// Where control goes for that id.
    matched: Landing,
    /// Where control goes for any other id.
    unmatched: Landing,
}

/// Tests of the id, in instruction order, turned into arms in id order.
fn compare_chain(flow: &Flow<'_>, ids: &IdLocals) -> Option<RawShape> {
    let tests: Vec<Test> = (0..flow.instrs().len())
        .filter_map(|at| test_at(flow, ids, at))
        .collect();
    let last = tests.last()?;
    let default = flow.calls_from(last.unmatched);
    let mut arms: Vec<RawArm> = Vec::new();
    for test in &tests {
        if arms.iter().all(|arm| arm.id != test.id) {
            arms.push(RawArm {
                id: test.id,
                callees: flow.calls_from(test.matched),
            });
        }
    }
    arms.sort_by_key(|arm| arm.id);
    Some(RawShape {
        kind: Kind::CompareChain,
        arms,
        default,
    })
}

/// The test of the id made by the `br_if` or `if` at `at`, if it is one.
fn test_at(flow: &Flow<'_>, ids: &IdLocals, at: usize) -> Option<Test> {
    let instrs = flow.instrs();
    let (taken, not_taken) = match instrs.get(at)? {
        Instr::BrIf(depth) => (flow.branch(at, *depth), Landing::At(at + 1)),
        Instr::If => (Landing::At(at + 1), flow.if_false(at)),
        _ => return None,
    };
    let before = |back: usize| {
        at.checked_sub(back)
            .and_then(|position| instrs.get(position))
    };
    // The condition is non-zero for the id `id` (`equal`) or for every other id (`!equal`).
    let (id, equal) = match before(1)? {
        _ if ids.reads(before(1)) => (0, false),
        Instr::I32Eqz if ids.reads(before(2)) => (0, true),
        Instr::I32Eq | Instr::I32Ne => {
            let constant = match (before(2)?, before(3)?) {
                (Instr::I32Const(value), operand) | (operand, Instr::I32Const(value))
                    if ids.reads(Some(operand)) =>
                {
                    u32::try_from(*value).ok()?
                }
                _ => return None,
            };
            (constant, matches!(before(1)?, Instr::I32Eq))
        }
        _ => return None,
    };
    let (matched, unmatched) = if equal {
        (taken, not_taken)
    } else {
        (not_taken, taken)
    };
    Some(Test {
        id,
        matched,
        unmatched,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::Instr::*;

    fn call(callee: u32) -> Instr {
        Call {
            callee,
            tail: false,
        }
    }

    #[test]
    fn br_table_arms_follow_their_targets() {
        // block block block (local.get 0) br_table 1 2 0 end call 7 br 1 end call 5 br 0 end
        // call 6 end(func)
        let instrs = [
            Block,
            Block,
            Block,
            LocalGet(0),
            BrTable {
                targets: vec![1, 2],
                default: 0,
            },
            End,
            call(7),
            Br(1),
            End,
            call(5),
            Br(0),
            End,
            call(6),
            End,
        ];
        let shape = recognise(&instrs).expect("a br_table");
        assert_eq!(shape.kind, Kind::BrTable);
        let RawShape { arms, default, .. } = shape;
        assert_eq!(
            arms,
            vec![
                RawArm {
                    id: 0,
                    callees: vec![5]
                },
                RawArm {
                    id: 1,
                    callees: vec![6]
                }
            ]
        );
        assert_eq!(default, vec![7]);
    }

    #[test]
    fn a_single_arm_is_a_test_of_the_id() {
        // block block (local.get 0) br_if 0 call 3 br 1 end call 4 end end(func)
        let instrs = [
            Block,
            Block,
            LocalGet(0),
            BrIf(0),
            call(3),
            Br(1),
            End,
            call(4),
            End,
            End,
        ];
        let shape = recognise(&instrs).expect("a compare chain");
        assert_eq!(
            shape,
            RawShape {
                kind: Kind::CompareChain,
                arms: vec![RawArm {
                    id: 0,
                    callees: vec![3]
                }],
                default: vec![4]
            }
        );
    }

    #[test]
    fn equality_tests_through_a_copied_id() {
        // local.get 0 local.set 4; block (local.get 4) (i32.const 1) i32.eq br_if 0
        // (local.get 4) i32.eqz if call 2 end call 9 return end call 3 end(func)
        let instrs = [
            LocalGet(0),
            LocalSet(4),
            Block,
            LocalGet(4),
            I32Const(1),
            I32Eq,
            BrIf(0),
            LocalGet(4),
            I32Eqz,
            If,
            call(2),
            End,
            call(9),
            Exit,
            End,
            call(3),
            End,
        ];
        let RawShape { kind, arms, .. } = recognise(&instrs).expect("a chain");
        assert_eq!(kind, Kind::CompareChain);
        assert_eq!(
            arms[0],
            RawArm {
                id: 0,
                callees: vec![2, 9]
            }
        );
        assert_eq!(
            arms[1],
            RawArm {
                id: 1,
                callees: vec![3]
            }
        );
    }

    #[test]
    fn a_br_table_on_something_else_is_not_a_dispatch() {
        let instrs = [
            Block,
            LocalGet(3),
            BrTable {
                targets: vec![0],
                default: 0,
            },
            End,
            End,
        ];
        assert_eq!(recognise(&instrs), None);
    }
}
