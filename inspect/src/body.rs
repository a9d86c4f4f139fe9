//! Function bodies reduced to what the analysis reads: structure, branches, calls and the
//! few comparisons a `match` compiles to.
//!
//! Every body is decoded once, into a flat list of [`Instr`]s that keeps the instruction order
//! (so "the first call of an arm" means what it says) and forgets every operand the analysis
//! does not use. The call graph, the dispatch shape and the reachability walk all read this one
//! list, so they cannot disagree about what a body contains.

use serde::Serialize;
use std::fmt;
use wasmparser::{FunctionBody, Operator};

/// An instruction that calls through a table or a reference: what the dispatch path must not
/// contain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IndirectKind {
    /// `call_indirect`: a call through a function table, what `fn` pointers and `dyn` become.
    CallIndirect,
    /// `return_call_indirect`: the tail-call form of `call_indirect`.
    ReturnCallIndirect,
    /// `call_ref`: a call through a typed function reference.
    CallRef,
    /// `return_call_ref`: the tail-call form of `call_ref`.
    ReturnCallRef,
}

impl IndirectKind {
    /// The instruction's name in the WebAssembly text format.
    pub fn mnemonic(self) -> &'static str {
        match self {
            Self::CallIndirect => "call_indirect",
            Self::ReturnCallIndirect => "return_call_indirect",
            Self::CallRef => "call_ref",
            Self::ReturnCallRef => "return_call_ref",
        }
    }
}

impl fmt::Display for IndirectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mnemonic())
    }
}

/// One instruction, as far as the analysis cares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Instr {
    /// Opens a construct whose branches land after its `end` (`block`, `try`, `try_table`).
    Block,
    /// Opens a `loop`, whose branches land at its start.
    Loop,
    /// Opens an `if`.
    If,
    /// Separates the arms of an `if` (or starts a legacy `catch`/`catch_all` clause).
    Else,
    /// Closes the innermost construct, or the function body.
    End,
    /// Unconditional branch to a relative depth.
    Br(u32),
    /// Conditional branch to a relative depth (`br_if`, `br_on_null`, `br_on_cast`, ...).
    BrIf(u32),
    /// Branch through a table: one relative depth per index, then the default.
    BrTable {
        /// The depth for each index, in index order.
        targets: Vec<u32>,
        /// The depth for an index past the table.
        default: u32,
    },
    /// A direct call (`call`), or a direct tail call (`return_call`) when `tail`.
    Call {
        /// The callee's function index.
        callee: u32,
        /// Whether it is `return_call`.
        tail: bool,
    },
    /// A call through a table or a reference.
    Indirect(IndirectKind),
    /// `local.get`.
    LocalGet(u32),
    /// `local.set`.
    LocalSet(u32),
    /// `local.tee`.
    LocalTee(u32),
    /// `i32.const`.
    I32Const(i32),
    /// `i32.eq`.
    I32Eq,
    /// `i32.ne`.
    I32Ne,
    /// `i32.eqz`.
    I32Eqz,
    /// `return`, `unreachable`, `throw` and the like: the path ends here.
    Exit,
    /// Anything else: it matters only as a position.
    Other,
}

/// A decoded body: its instructions and the byte offset of each in the module.
#[derive(Clone, Debug, Default)]
pub(crate) struct Body {
    /// The instructions, in order; the last one is the body's own `end`.
    pub instrs: Vec<Instr>,
    /// The module offset of each instruction, parallel to `instrs`.
    pub offsets: Vec<usize>,
}

impl Body {
    /// Decodes a function body.
    pub fn decode(body: &FunctionBody<'_>) -> wasmparser::Result<Self> {
        let mut reader = body.get_operators_reader()?;
        let mut decoded = Self::default();
        while !reader.eof() {
            let offset = reader.original_position();
            let instr = reduce(reader.read()?)?;
            decoded.instrs.push(instr);
            decoded.offsets.push(offset);
        }
        Ok(decoded)
    }

    /// The direct callees, in instruction order, with repeats.
    pub fn callees(&self) -> impl Iterator<Item = u32> + '_ {
        self.instrs.iter().filter_map(|instr| match instr {
            Instr::Call { callee, .. } => Some(*callee),
            _ => None,
        })
    }

    /// The indirect calls, in instruction order, with their module offsets.
    pub fn indirect_calls(&self) -> impl Iterator<Item = (IndirectKind, usize)> + '_ {
        self.instrs
            .iter()
            .zip(&self.offsets)
            .filter_map(|(instr, offset)| match instr {
                Instr::Indirect(kind) => Some((*kind, *offset)),
                _ => None,
            })
    }
}

/// Keeps what the analysis needs of one operator.
fn reduce(op: Operator<'_>) -> wasmparser::Result<Instr> {
    Ok(match op {
        Operator::Block { .. } | Operator::Try { .. } | Operator::TryTable { .. } => Instr::Block,
        Operator::Loop { .. } => Instr::Loop,
        Operator::If { .. } => Instr::If,
        Operator::Else | Operator::Catch { .. } | Operator::CatchAll => Instr::Else,
        // `delegate` closes a legacy `try` like `end` does.
        Operator::End | Operator::Delegate { .. } => Instr::End,
        Operator::Br { relative_depth } => Instr::Br(relative_depth),
        Operator::BrIf { relative_depth }
        | Operator::BrOnNull { relative_depth }
        | Operator::BrOnNonNull { relative_depth }
        | Operator::BrOnCast { relative_depth, .. }
        | Operator::BrOnCastFail { relative_depth, .. } => Instr::BrIf(relative_depth),
        Operator::BrTable { targets } => Instr::BrTable {
            default: targets.default(),
            targets: targets.targets().collect::<wasmparser::Result<_>>()?,
        },
        Operator::Call { function_index } => Instr::Call {
            callee: function_index,
            tail: false,
        },
        Operator::ReturnCall { function_index } => Instr::Call {
            callee: function_index,
            tail: true,
        },
        Operator::CallIndirect { .. } => Instr::Indirect(IndirectKind::CallIndirect),
        Operator::ReturnCallIndirect { .. } => Instr::Indirect(IndirectKind::ReturnCallIndirect),
        Operator::CallRef { .. } => Instr::Indirect(IndirectKind::CallRef),
        Operator::ReturnCallRef { .. } => Instr::Indirect(IndirectKind::ReturnCallRef),
        Operator::LocalGet { local_index } => Instr::LocalGet(local_index),
        Operator::LocalSet { local_index } => Instr::LocalSet(local_index),
        Operator::LocalTee { local_index } => Instr::LocalTee(local_index),
        Operator::I32Const { value } => Instr::I32Const(value),
        Operator::I32Eq => Instr::I32Eq,
        Operator::I32Ne => Instr::I32Ne,
        Operator::I32Eqz => Instr::I32Eqz,
        Operator::Return
        | Operator::Unreachable
        | Operator::Throw { .. }
        | Operator::ThrowRef
        | Operator::Rethrow { .. } => Instr::Exit,
        _ => Instr::Other,
    })
}
