//! The data sets of the standard workloads.

use benchmarks::synthetic::{BtreeU32U64U64, UniqueU32U64Str, UniqueU32U64U64};

/// Rows preloaded before an insert is measured.
pub const PRELOAD: u32 = 2048;
/// Rows inserted, iterated or (about) filtered by one measured call.
pub const BATCH: u32 = 256;
/// How many distinct values a filtered column takes: `PRELOAD / BUCKETS` rows match a filter.
pub const BUCKETS: u64 = 8;

/// `(id, age, name)` rows with ids in `ids`; `age` and `name` take [`BUCKETS`] values.
pub fn people(ids: std::ops::Range<u32>) -> Vec<UniqueU32U64Str> {
    ids.map(|id| {
        let bucket = u64::from(id) % BUCKETS;
        UniqueU32U64Str {
            id,
            age: bucket,
            name: format!("name-{bucket}"),
        }
    })
    .collect()
}

/// `(id, x, y)` rows with ids in `ids`; `x` and `y` take [`BUCKETS`] values.
pub fn points(ids: std::ops::Range<u32>) -> Vec<UniqueU32U64U64> {
    ids.map(|id| {
        let bucket = u64::from(id) % BUCKETS;
        UniqueU32U64U64 {
            id,
            x: bucket,
            y: bucket,
        }
    })
    .collect()
}

/// The same rows for the btree-indexed table.
pub fn btree_points(ids: std::ops::Range<u32>) -> Vec<BtreeU32U64U64> {
    points(ids)
        .into_iter()
        .map(|p| BtreeU32U64U64 {
            id: p.id,
            x: p.x,
            y: p.y,
        })
        .collect()
}
