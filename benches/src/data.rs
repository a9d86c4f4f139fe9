//! The data sets of the standard workloads: two row shapes, three indexing variants, and the
//! rows every backend is given.
//!
//! The three tables of one shape have the same columns, so their rows have the same encoding:
//! the rows here are built once per shape (as the unique-key table's row type) and their
//! encoding is the argument of any of the three tables' bulk-insert reducers.

use benchmarks::synthetic::{UniqueU32U64Str, UniqueU32U64U64};
use std::ops::Range;

/// Rows preloaded before an insert, an update or a filter is measured.
pub const PRELOAD: u32 = 2048;
/// Rows inserted, updated, iterated or (about) filtered by one measured call.
pub const BATCH: u32 = 256;
/// How many distinct values a filtered column takes: `PRELOAD / BUCKETS` rows match a filter.
pub const BUCKETS: u64 = 8;

/// A row shape of the synthetic tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `(id u32, age u64, name String)`.
    Str,
    /// `(id u32, x u64, y u64)`: a plain row, whose bytes are its encoding.
    U64,
}

/// How a synthetic table is indexed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// A unique primary key on `id`.
    Unique,
    /// A btree index on each column.
    Btree,
    /// No index.
    NoIndex,
}

impl Shape {
    /// Both shapes.
    pub const ALL: [Shape; 2] = [Shape::Str, Shape::U64];

    /// The shape's part of table and reducer names.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Str => "u32_u64_str",
            Shape::U64 => "u32_u64_u64",
        }
    }

    /// The columns, in order.
    pub fn columns(self) -> [&'static str; 3] {
        match self {
            Shape::Str => ["id", "age", "name"],
            Shape::U64 => ["id", "x", "y"],
        }
    }

    /// Rows with ids in `ids`; the two other columns take [`BUCKETS`] values each, in step
    /// (`id % BUCKETS`, and the name `name-{id % BUCKETS}`).
    pub fn rows(self, ids: Range<u32>) -> Rows {
        let bucket = |id: u32| u64::from(id) % BUCKETS;
        match self {
            Shape::Str => Rows::Str(
                ids.map(|id| UniqueU32U64Str {
                    id,
                    age: bucket(id),
                    name: bucket_name(bucket(id)),
                })
                .collect(),
            ),
            Shape::U64 => Rows::U64(
                ids.map(|id| UniqueU32U64U64 {
                    id,
                    x: bucket(id),
                    y: bucket(id),
                })
                .collect(),
            ),
        }
    }
}

/// The `name` of the rows in bucket `bucket`.
pub fn bucket_name(bucket: u64) -> String {
    format!("name-{bucket}")
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 3] = [Variant::Unique, Variant::Btree, Variant::NoIndex];

    /// The variant's part of table and reducer names.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Unique => "unique_0",
            Variant::Btree => "btree_each_column",
            Variant::NoIndex => "no_index",
        }
    }
}

/// One of the six synthetic tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Table {
    /// Its rows.
    pub shape: Shape,
    /// Its indexes.
    pub variant: Variant,
}

impl Table {
    /// The table of `shape` indexed as `variant`.
    pub fn new(shape: Shape, variant: Variant) -> Self {
        Self { shape, variant }
    }

    /// Its name, in the module and in SQLite: `unique_0_u32_u64_str` and so on.
    pub fn name(self) -> String {
        format!("{}_{}", self.variant.name(), self.shape.name())
    }
}

/// Rows of one shape.
#[derive(Clone, Debug, PartialEq)]
pub enum Rows {
    /// `(id, age, name)` rows.
    Str(Vec<UniqueU32U64Str>),
    /// `(id, x, y)` rows.
    U64(Vec<UniqueU32U64U64>),
}

impl Rows {
    /// The encoded arguments of a bulk-insert reducer given these rows: the product `(rows,)`,
    /// whose encoding is that of its one field.
    pub fn encoded_args(&self) -> Vec<u8> {
        match self {
            Rows::Str(rows) => args(rows),
            Rows::U64(rows) => args(rows),
        }
    }
}

/// Encodes the arguments of a call: a tuple of them (`(n,)`, `()`).
pub fn args<T: wasmod_abi::Encode + ?Sized>(args: &T) -> Vec<u8> {
    wasmod_abi::encoding::to_vec(args)
}
