//! The standard module-benchmark workloads, written with wasmod.
//!
//! - [`synthetic`]: two row shapes, `(id u32, age u64, name String)` and `(id u32, x u64, y u64)`,
//!   each in three tables (a unique primary key on `id`, a btree index on every column, no
//!   index), with bulk inserts, updates through the primary key, full iteration, index filters,
//!   deletes and clears;
//! - [`misc`]: an empty reducer, a reducer with one (large) string argument, and one that logs
//!   `n` lines;
//! - [`circles`] and [`ia_loop`]: game-shaped loads.
//!
//! The synthetic reducers are generated per table by a `macro_rules!`, so the module is
//! declared with the list form of `#[wasmod::module]` (an inline module only sees the items
//! written in it, not those a macro would generate).

pub mod circles;
pub mod ia_loop;
pub mod misc;
pub mod synthetic;

/// The module: every table and reducer, listed.
#[wasmod::module(
    tables(
        synthetic::UniqueU32U64Str,
        synthetic::NoIndexU32U64Str,
        synthetic::BtreeU32U64Str,
        synthetic::UniqueU32U64U64,
        synthetic::NoIndexU32U64U64,
        synthetic::BtreeU32U64U64,
        circles::Entity,
        circles::Circle,
        circles::Food,
        ia_loop::Agent,
        ia_loop::Position,
        ia_loop::Velocity,
        ia_loop::Targetable,
    ),
    reducers(
        misc::empty,
        misc::fn_with_1_arg,
        misc::print_many,
        synthetic::insert_bulk_unique_0_u32_u64_str,
        synthetic::insert_bulk_no_index_u32_u64_str,
        synthetic::insert_bulk_btree_each_column_u32_u64_str,
        synthetic::insert_bulk_unique_0_u32_u64_u64,
        synthetic::insert_bulk_no_index_u32_u64_u64,
        synthetic::insert_bulk_btree_each_column_u32_u64_u64,
        synthetic::iterate_unique_0_u32_u64_str,
        synthetic::iterate_no_index_u32_u64_str,
        synthetic::iterate_btree_each_column_u32_u64_str,
        synthetic::iterate_unique_0_u32_u64_u64,
        synthetic::iterate_no_index_u32_u64_u64,
        synthetic::iterate_btree_each_column_u32_u64_u64,
        synthetic::clear_unique_0_u32_u64_str,
        synthetic::clear_no_index_u32_u64_str,
        synthetic::clear_btree_each_column_u32_u64_str,
        synthetic::clear_unique_0_u32_u64_u64,
        synthetic::clear_no_index_u32_u64_u64,
        synthetic::clear_btree_each_column_u32_u64_u64,
        synthetic::update_bulk_unique_0_u32_u64_str,
        synthetic::update_bulk_unique_0_u32_u64_u64,
        synthetic::delete_unique_0_u32_u64_str_by_id,
        synthetic::delete_unique_0_u32_u64_u64_by_id,
        synthetic::filter_btree_each_column_u32_u64_str_by_name,
        synthetic::filter_btree_each_column_u32_u64_str_by_age,
        synthetic::filter_btree_each_column_u32_u64_u64_by_y,
        synthetic::filter_btree_each_column_u32_u64_u64_by_x,
        circles::init_game_circles,
        circles::run_game_circles,
        ia_loop::init_game_ia_loop,
        ia_loop::run_game_ia_loop,
    )
)]
pub struct Benchmarks;
