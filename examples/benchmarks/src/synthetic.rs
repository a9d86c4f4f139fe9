//! Synthetic table workloads: two row shapes, three indexing variants each.
//!
//! The `(id, x, y)` rows are `#[repr(C, packed)]`: their 20 bytes in memory are their encoding,
//! so they travel with one copy each way (see `wasmod::abi::encoding::Layout`). With plain
//! `#[repr(C)]` the `u32` before two `u64`s would leave 4 bytes of padding.

use std::hint::black_box;
use wasmod::prelude::*;

/// `(id u32, age u64, name String)` with a unique primary key on `id`.
#[table(name = unique_0_u32_u64_str)]
#[derive(Clone, Debug, PartialEq)]
pub struct UniqueU32U64Str {
    #[primary_key]
    pub id: u32,
    pub age: u64,
    pub name: String,
}

/// `(id u32, age u64, name String)` without indexes.
#[table(name = no_index_u32_u64_str)]
#[derive(Clone, Debug, PartialEq)]
pub struct NoIndexU32U64Str {
    pub id: u32,
    pub age: u64,
    pub name: String,
}

/// `(id u32, age u64, name String)` with a btree index on each column.
#[table(name = btree_each_column_u32_u64_str)]
#[derive(Clone, Debug, PartialEq)]
pub struct BtreeU32U64Str {
    #[index(btree)]
    pub id: u32,
    #[index(btree)]
    pub age: u64,
    #[index(btree)]
    pub name: String,
}

/// `(id u32, x u64, y u64)` with a unique primary key on `id`.
#[table(name = unique_0_u32_u64_u64)]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, packed)]
pub struct UniqueU32U64U64 {
    #[primary_key]
    pub id: u32,
    pub x: u64,
    pub y: u64,
}

/// `(id u32, x u64, y u64)` without indexes.
#[table(name = no_index_u32_u64_u64)]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, packed)]
pub struct NoIndexU32U64U64 {
    pub id: u32,
    pub x: u64,
    pub y: u64,
}

/// `(id u32, x u64, y u64)` with a btree index on each column.
#[table(name = btree_each_column_u32_u64_u64)]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, packed)]
pub struct BtreeU32U64U64 {
    #[index(btree)]
    pub id: u32,
    #[index(btree)]
    pub x: u64,
    #[index(btree)]
    pub y: u64,
}

/// The reducers every table has: bulk insert, iterate, clear.
macro_rules! every_table {
    ($row:ident, $access:ident, $table:ident, $insert_bulk:ident, $iterate:ident, $clear:ident) => {
        #[doc = concat!("Inserts `rows` into `", stringify!($table), "`.")]
        #[reducer]
        pub fn $insert_bulk(ctx: &ReducerContext, rows: Vec<$row>) {
            use super::synthetic::$access as _;
            let table = ctx.db.$table();
            for row in rows {
                table.insert(row);
            }
        }

        #[doc = concat!("Visits every row of `", stringify!($table), "`.")]
        #[reducer]
        pub fn $iterate(ctx: &ReducerContext) {
            use super::synthetic::$access as _;
            for row in ctx.db.$table().iter() {
                black_box(row);
            }
        }

        #[doc = concat!("Deletes every row of `", stringify!($table), "`.")]
        #[reducer]
        pub fn $clear(ctx: &ReducerContext) {
            use super::synthetic::$access as _;
            ctx.db.$table().clear();
        }
    };
}

every_table!(
    UniqueU32U64Str,
    UniqueU32U64StrAccess,
    unique_0_u32_u64_str,
    insert_bulk_unique_0_u32_u64_str,
    iterate_unique_0_u32_u64_str,
    clear_unique_0_u32_u64_str
);
every_table!(
    NoIndexU32U64Str,
    NoIndexU32U64StrAccess,
    no_index_u32_u64_str,
    insert_bulk_no_index_u32_u64_str,
    iterate_no_index_u32_u64_str,
    clear_no_index_u32_u64_str
);
every_table!(
    BtreeU32U64Str,
    BtreeU32U64StrAccess,
    btree_each_column_u32_u64_str,
    insert_bulk_btree_each_column_u32_u64_str,
    iterate_btree_each_column_u32_u64_str,
    clear_btree_each_column_u32_u64_str
);
every_table!(
    UniqueU32U64U64,
    UniqueU32U64U64Access,
    unique_0_u32_u64_u64,
    insert_bulk_unique_0_u32_u64_u64,
    iterate_unique_0_u32_u64_u64,
    clear_unique_0_u32_u64_u64
);
every_table!(
    NoIndexU32U64U64,
    NoIndexU32U64U64Access,
    no_index_u32_u64_u64,
    insert_bulk_no_index_u32_u64_u64,
    iterate_no_index_u32_u64_u64,
    clear_no_index_u32_u64_u64
);
every_table!(
    BtreeU32U64U64,
    BtreeU32U64U64Access,
    btree_each_column_u32_u64_u64,
    insert_bulk_btree_each_column_u32_u64_u64,
    iterate_btree_each_column_u32_u64_u64,
    clear_btree_each_column_u32_u64_u64
);

/// Updates the first `row_count` rows (by id) of `unique_0_u32_u64_str` through the primary key,
/// incrementing `age`.
#[reducer]
pub fn update_bulk_unique_0_u32_u64_str(ctx: &ReducerContext, row_count: u32) {
    let table = ctx.db.unique_0_u32_u64_str();
    let rows: Vec<UniqueU32U64Str> = table.iter().take(row_count as usize).collect();
    for row in rows {
        table.id().update(UniqueU32U64Str {
            age: row.age + 1,
            ..row
        });
    }
}

/// Updates the first `row_count` rows (by id) of `unique_0_u32_u64_u64` through the primary key,
/// incrementing `x`.
#[reducer]
pub fn update_bulk_unique_0_u32_u64_u64(ctx: &ReducerContext, row_count: u32) {
    let table = ctx.db.unique_0_u32_u64_u64();
    let rows: Vec<UniqueU32U64U64> = table.iter().take(row_count as usize).collect();
    for row in rows {
        table.id().update(UniqueU32U64U64 {
            x: row.x + 1,
            ..row
        });
    }
}

/// Deletes the row with `id` from `unique_0_u32_u64_str`.
#[reducer]
pub fn delete_unique_0_u32_u64_str_by_id(ctx: &ReducerContext, id: u32) {
    ctx.db.unique_0_u32_u64_str().id().delete(id);
}

/// Deletes the row with `id` from `unique_0_u32_u64_u64`.
#[reducer]
pub fn delete_unique_0_u32_u64_u64_by_id(ctx: &ReducerContext, id: u32) {
    ctx.db.unique_0_u32_u64_u64().id().delete(id);
}

/// Visits the rows of `btree_each_column_u32_u64_str` named `name`.
#[reducer]
pub fn filter_btree_each_column_u32_u64_str_by_name(ctx: &ReducerContext, name: String) {
    for row in ctx.db.btree_each_column_u32_u64_str().name().filter(&name) {
        black_box(row);
    }
}

/// Visits the rows of `btree_each_column_u32_u64_str` aged `age`.
#[reducer]
pub fn filter_btree_each_column_u32_u64_str_by_age(ctx: &ReducerContext, age: u64) {
    for row in ctx.db.btree_each_column_u32_u64_str().age().filter(age) {
        black_box(row);
    }
}

/// Visits the rows of `btree_each_column_u32_u64_u64` whose `y` is `y`.
#[reducer]
pub fn filter_btree_each_column_u32_u64_u64_by_y(ctx: &ReducerContext, y: u64) {
    for row in ctx.db.btree_each_column_u32_u64_u64().y().filter(y) {
        black_box(row);
    }
}

/// Visits the rows of `btree_each_column_u32_u64_u64` whose `x` is `x`.
#[reducer]
pub fn filter_btree_each_column_u32_u64_u64_by_x(ctx: &ReducerContext, x: u64) {
    for row in ctx.db.btree_each_column_u32_u64_u64().x().filter(x) {
        black_box(row);
    }
}
