//! The encoding benchmark's data and its allocation records.
//!
//! Rows of both shapes as `Vec<Row>`, encoded and decoded whole, as rows travel between a
//! module and its host (a bulk insert's argument, a buffer of rows from an iterator). The
//! `(u32,u64,u64)` row is plain (`#[repr(C, packed)]`): its vector is encoded and decoded with
//! one copy of bytes. The `(u32,u64,String)` row is encoded field by field and decoded with one
//! `String` each.
//!
//! Time is criterion's. Allocations are counted by a counting global allocator in the bench
//! binary (`benches/encoding.rs`), one operation at a time, and saved next to criterion's
//! results ([`save_allocations`]) so that `benches/results.rs` can put them in the table.

use crate::data::{Rows, Shape};
use benchmarks::synthetic::{UniqueU32U64Str, UniqueU32U64U64};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// How many rows one operation encodes or decodes.
pub const SIZES: [u32; 3] = [1, 100, 10_000];

/// An operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    /// `Vec<Row>` to bytes.
    Encode,
    /// Bytes to `Vec<Row>`.
    Decode,
}

impl Op {
    /// Both, in report order.
    pub const ALL: [Op; 2] = [Op::Encode, Op::Decode];

    /// The operation's part of group names.
    pub fn name(self) -> &'static str {
        match self {
            Op::Encode => "encode",
            Op::Decode => "decode",
        }
    }
}

/// The criterion group of `op` on rows of `shape`.
pub fn group(op: Op, shape: Shape) -> String {
    format!("{}_{}", op.name(), shape.name())
}

/// The criterion function of an operation on `rows` rows.
pub fn function(rows: u32) -> String {
    format!("rows_{rows}")
}

/// Encodes `rows` as a `Vec<Row>`.
pub fn encode(rows: &Rows) -> Vec<u8> {
    rows.encoded_args()
}

/// Decodes a `Vec<Row>` of `shape` from `bytes`.
pub fn decode(shape: Shape, bytes: &[u8]) -> Rows {
    let decoded = match shape {
        Shape::Str => {
            wasmod_abi::encoding::from_slice::<Vec<UniqueU32U64Str>>(bytes).map(Rows::Str)
        }
        Shape::U64 => {
            wasmod_abi::encoding::from_slice::<Vec<UniqueU32U64U64>>(bytes).map(Rows::U64)
        }
    };
    decoded.expect("the rows decode")
}

/// What one operation allocated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allocations {
    /// The criterion group.
    pub group: String,
    /// The criterion function.
    pub function: String,
    /// Calls of `alloc` (and `alloc_zeroed`).
    pub allocs: u64,
    /// Calls of `realloc`.
    pub reallocs: u64,
    /// Bytes asked for by those calls (a `realloc` counts its new size).
    pub bytes: u64,
}

/// Where the allocation counts are kept: criterion's directory, as criterion finds it
/// (`$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`, else `target/criterion` in the
/// workspace).
pub fn criterion_home() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return home.into();
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| wasmod_wasm_tests::workspace_root().join("target"));
    target.join("criterion")
}

fn allocations_path() -> PathBuf {
    criterion_home().join("encoding_allocations.json")
}

/// Saves the allocation counts of a run.
pub fn save_allocations(counts: &[Allocations]) -> std::io::Result<PathBuf> {
    let path = allocations_path();
    std::fs::create_dir_all(criterion_home())?;
    let json = serde_json::to_string_pretty(counts).expect("the counts serialise");
    std::fs::write(&path, json)?;
    Ok(path)
}

/// The allocation counts of the last run, if any.
pub fn load_allocations() -> Option<Vec<Allocations>> {
    let json = std::fs::read_to_string(allocations_path()).ok()?;
    serde_json::from_str(&json).ok()
}
