//! Structured control flow of one body: where each branch lands, and which calls a path makes.
//!
//! WebAssembly branches name a relative depth, not an address. A branch to a `block` or an
//! `if` continues after the construct's `end`; a branch to a `loop` continues at the loop's
//! start; a branch past the outermost construct returns. [`Flow`] resolves depths to
//! instruction positions once, so that the dispatch analysis can ask "where does target 3 of
//! this `br_table` go, and what does that code call?".

use crate::body::Instr;

/// Where control goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Landing {
    /// To the instruction at this position.
    At(usize),
    /// Out of the function.
    Return,
}

/// The resolved structure of one body.
pub(crate) struct Flow<'a> {
    /// The body's instructions.
    instrs: &'a [Instr],
    /// For each instruction, the position of the construct (`block`, `loop`, `if`) that
    /// encloses it, `None` at the top level of the body. `else` and `end` belong to the
    /// construct they continue or close.
    parent: Vec<Option<usize>>,
    /// For each `block`, `loop`, `if` and `else`, the position of the matching `end`.
    end: Vec<Option<usize>>,
    /// For each `if`, the position of its `else`, if it has one.
    else_of: Vec<Option<usize>>,
}

impl<'a> Flow<'a> {
    /// Resolves the structure of a well-formed (validated) body.
    pub fn new(instrs: &'a [Instr]) -> Self {
        let mut parent = vec![None; instrs.len()];
        let mut end = vec![None; instrs.len()];
        let mut else_of = vec![None; instrs.len()];
        let mut open: Vec<usize> = Vec::new();
        let mut pending_else: Vec<Option<usize>> = Vec::new();
        for (at, instr) in instrs.iter().enumerate() {
            parent[at] = open.last().copied();
            match instr {
                Instr::Block | Instr::Loop | Instr::If => {
                    open.push(at);
                    pending_else.push(None);
                }
                Instr::Else => {
                    if let (Some(&start), Some(slot)) = (open.last(), pending_else.last_mut()) {
                        else_of[start] = else_of[start].or(Some(at));
                        *slot = Some(at);
                    }
                }
                Instr::End => {
                    if let Some(start) = open.pop() {
                        end[start] = Some(at);
                        if let Some(Some(at_else)) = pending_else.pop() {
                            end[at_else] = Some(at);
                        }
                    }
                }
                _ => {}
            }
        }
        Self {
            instrs,
            parent,
            end,
            else_of,
        }
    }

    /// The instructions.
    pub fn instrs(&self) -> &'a [Instr] {
        self.instrs
    }

    /// Where a branch of relative `depth` taken at position `at` lands.
    pub fn branch(&self, at: usize, depth: u32) -> Landing {
        let mut frame = self.parent.get(at).copied().flatten();
        for _ in 0..depth {
            frame = frame.and_then(|start| self.parent.get(start).copied().flatten());
        }
        let Some(start) = frame else {
            return Landing::Return;
        };
        match self.instrs.get(start) {
            Some(Instr::Loop) => Landing::At(start + 1),
            _ => self.after_end(start),
        }
    }

    /// Where the false side of the `if` at position `at` starts.
    pub fn if_false(&self, at: usize) -> Landing {
        match self.else_of.get(at).copied().flatten() {
            Some(at_else) => Landing::At(at_else + 1),
            None => self.after_end(at),
        }
    }

    /// The direct calls made by the straight-line code starting at `from`, up to the first
    /// unconditional transfer (`br`, `br_table`, `return`, `unreachable`, an indirect call, or
    /// the end of a then-branch). Conditional branches are not taken; `end`s are walked past,
    /// since falling out of a construct continues after it.
    pub fn calls_from(&self, from: Landing) -> Vec<u32> {
        let mut calls = Vec::new();
        let Landing::At(mut at) = from else {
            return calls;
        };
        while let Some(instr) = self.instrs.get(at) {
            match instr {
                Instr::Call { callee, tail } => {
                    calls.push(*callee);
                    if *tail {
                        break;
                    }
                }
                Instr::Br(_) | Instr::BrTable { .. } | Instr::Exit | Instr::Indirect(_) => break,
                Instr::Else => break,
                _ => {}
            }
            at += 1;
        }
        calls
    }

    /// Where control goes after the construct opened at `start` closes.
    fn after_end(&self, start: usize) -> Landing {
        match self.end.get(start).copied().flatten() {
            Some(at_end) if at_end + 1 < self.instrs.len() => Landing::At(at_end + 1),
            _ => Landing::Return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::Instr::*;

    #[test]
    fn branches_land_after_blocks_and_at_loops() {
        // 0 block, 1 loop, 2 br 0, 3 br 1, 4 br 2, 5 end, 6 end, 7 call, 8 end
        let instrs = [
            Block,
            Loop,
            Br(0),
            Br(1),
            Br(2),
            End,
            End,
            Call {
                callee: 9,
                tail: false,
            },
            End,
        ];
        let flow = Flow::new(&instrs);
        assert_eq!(flow.branch(2, 0), Landing::At(2));
        assert_eq!(flow.branch(3, 1), Landing::At(7));
        assert_eq!(flow.branch(4, 2), Landing::Return);
        assert_eq!(flow.calls_from(Landing::At(7)), vec![9]);
    }

    #[test]
    fn if_false_goes_to_else_or_after_end() {
        // 0 if, 1 call 1, 2 else, 3 call 2, 4 end, 5 if, 6 end, 7 call 3, 8 end
        let call = |callee| Call {
            callee,
            tail: false,
        };
        let instrs = [If, call(1), Else, call(2), End, If, End, call(3), End];
        let flow = Flow::new(&instrs);
        assert_eq!(flow.if_false(0), Landing::At(3));
        assert_eq!(flow.if_false(5), Landing::At(7));
        assert_eq!(flow.calls_from(Landing::At(1)), vec![1]);
        assert_eq!(flow.calls_from(Landing::At(3)), vec![2, 3]);
    }
}
