//! The report: what an inspection found, as data (serialisable to JSON) and as text
//! (see [`crate::display`]).

use crate::body::IndirectKind;
use crate::entry::Evidence;
use crate::module::{Import, Module, SectionSize};
use serde::Serialize;

/// Everything an inspection found in one module.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The size of the binary in bytes.
    pub total_size: usize,
    /// Every section, in file order, with the size of its contents.
    pub sections: Vec<SectionSize>,
    /// What the module imports.
    pub imports: Vec<Import>,
    /// The dispatch exports the module has, in the order of [`crate::DISPATCH_EXPORTS`].
    pub exports: Vec<ExportReport>,
    /// `__describe_module__`, walked the same way; its indirect calls are listed in its
    /// `violations` but are not dispatch violations (see [`crate::DESCRIBE_EXPORT`]).
    pub describe: Option<ExportReport>,
}

impl Report {
    /// The report of the export named `name`, if the module has it.
    pub fn export(&self, name: &str) -> Option<&ExportReport> {
        self.exports.iter().find(|export| export.name == name)
    }

    /// Every violation, dispatch export by dispatch export.
    pub fn violations(&self) -> impl Iterator<Item = &Violation> {
        self.exports.iter().flat_map(|export| &export.violations)
    }

    /// Whether no dispatch path has an indirect call.
    pub fn is_clean(&self) -> bool {
        self.violations().next().is_none()
    }

    /// The size of the first section called `name` (`code`, `data`, `custom:name`, ...).
    pub fn section_size(&self, name: &str) -> Option<usize> {
        self.sections
            .iter()
            .find(|section| section.name == name)
            .map(|section| section.size)
    }

    /// The report as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        // Serialising plain data with string keys cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

/// A function of the module: its index and its demangled name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FunctionRef {
    /// The function index (imports first, as in the binary).
    pub index: u32,
    /// The demangled name, without hash; `func[N]` if the name section has none.
    pub name: String,
}

impl FunctionRef {
    /// The reference to function `index` of `module`.
    pub(crate) fn new(module: &Module, index: u32) -> Self {
        Self {
            index,
            name: module.name(index).to_owned(),
        }
    }
}

/// What was found for one export.
#[derive(Clone, Debug, Serialize)]
pub struct ExportReport {
    /// The export's name, e.g. `__call_reducer__`.
    pub name: String,
    /// The exported function.
    pub function: FunctionRef,
    /// The dispatch, for a `__call_*__` export; `None` for `__describe_module__`.
    pub dispatch: Option<Dispatch>,
    /// Every indirect call reachable from the export through direct calls before the author's
    /// functions, outside panic machinery.
    pub violations: Vec<Violation>,
    /// The panic machinery the walk did not enter, and why.
    pub excluded: Vec<Exclusion>,
    /// How many indirect calls lie behind those exclusions (found by the same walk entering
    /// panic machinery): the price of the exemption, for the record.
    pub indirect_calls_behind_exclusions: usize,
}

/// How a `__call_*__` export reaches its entry points.
#[derive(Clone, Debug, Serialize)]
pub struct Dispatch {
    /// The function that holds the `match`: the export itself, or a helper it calls if the
    /// compiler outlined the `match`.
    pub function: FunctionRef,
    /// How the id picks an arm.
    pub shape: Shape,
    /// Each arm's entry point, in id order.
    pub entries: Vec<EntryPoint>,
}

/// How a dispatch turns the id into a call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    /// A `br_table` on the id: target `i` is the arm of id `i`.
    BrTable {
        /// The arms, in id order.
        arms: Vec<Arm>,
        /// What an id past the table calls.
        default: Vec<FunctionRef>,
    },
    /// Tests of the id against constants (`br_if`, `if`, `i32.eq`, `i32.ne`, `i32.eqz`).
    CompareChain {
        /// The arms, in id order.
        arms: Vec<Arm>,
        /// What runs when no test matches.
        default: Vec<FunctionRef>,
    },
    /// Neither: no `br_table` on the id and no test of it, in the export or in a function it
    /// alone calls. The dispatch is not the one the macros generate.
    Unrecognised,
}

impl Shape {
    /// The arms, in id order (none if unrecognised).
    pub fn arms(&self) -> &[Arm] {
        match self {
            Self::BrTable { arms, .. } | Self::CompareChain { arms, .. } => arms,
            Self::Unrecognised => &[],
        }
    }
}

/// One arm of a dispatch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Arm {
    /// The id it handles.
    pub id: u32,
    /// Its direct calls, in order, up to the end of the arm; the first is the thunk.
    pub callees: Vec<FunctionRef>,
}

/// One entry point: arm, thunk, author's function.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EntryPoint {
    /// The id of its arm.
    pub id: u32,
    /// The first function its arm calls: the generated thunk.
    pub thunk: FunctionRef,
    /// The entry's type path (also the author's function's name), if recognised.
    pub entry: Option<String>,
    /// The author's function, where the walk stops.
    pub author: Option<FunctionRef>,
    /// How the author's function was recognised.
    pub evidence: Evidence,
}

/// An indirect call on a dispatch path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The instruction.
    pub kind: IndirectKind,
    /// Its byte offset in the binary.
    pub offset: usize,
    /// The function that contains it.
    pub function: FunctionRef,
    /// The direct calls from the export to that function: the export first, it last.
    pub path: Vec<FunctionRef>,
}

/// A call into panic machinery that the walk did not follow.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Exclusion {
    /// The panic function.
    pub function: FunctionRef,
    /// The rule that matched it: a module (`core::panicking`), a symbol (`rust_begin_unwind`)
    /// or `abort`.
    pub rule: &'static str,
    /// The first function found calling it.
    pub reached_from: FunctionRef,
}
