//! Every workload of the benchmark module, run natively against the real host, with its
//! effect checked: the benchmarks measure these calls, so they must do what they claim.

use benchmarks::circles::{CircleAccess, EntityAccess, FoodAccess};
use benchmarks::ia_loop::{AgentAccess, AgentAction, PositionAccess, TargetableAccess};
use benchmarks::synthetic::*;
use benchmarks::Benchmarks;
use wasmod::Identity;
use wasmod_testing::{Outcome, TestModule};

const CALLER: Identity = Identity::ZERO;

fn ok(outcome: Outcome) {
    assert!(outcome.is_success(), "{outcome}");
}

fn people(range: std::ops::Range<u32>, buckets: u64) -> Vec<UniqueU32U64Str> {
    range
        .map(|id| UniqueU32U64Str {
            id,
            age: u64::from(id) % buckets,
            name: format!("name-{}", u64::from(id) % buckets),
        })
        .collect()
}

fn points(range: std::ops::Range<u32>, buckets: u64) -> Vec<UniqueU32U64U64> {
    range
        .map(|id| UniqueU32U64U64 {
            id,
            x: u64::from(id) % buckets,
            y: u64::from(id) % buckets,
        })
        .collect()
}

#[test]
fn bulk_inserts_fill_every_table() {
    let module = TestModule::<Benchmarks>::new();
    let str_rows = people(0..100, 8);
    let u64_rows = points(0..100, 8);
    ok(module.call_reducer(
        CALLER,
        "insert_bulk_unique_0_u32_u64_str",
        (str_rows.clone(),),
    ));
    ok(module.call_reducer(
        CALLER,
        "insert_bulk_no_index_u32_u64_str",
        (str_rows.clone(),),
    ));
    ok(module.call_reducer(
        CALLER,
        "insert_bulk_btree_each_column_u32_u64_str",
        (str_rows,),
    ));
    ok(module.call_reducer(
        CALLER,
        "insert_bulk_unique_0_u32_u64_u64",
        (u64_rows.clone(),),
    ));
    ok(module.call_reducer(
        CALLER,
        "insert_bulk_no_index_u32_u64_u64",
        (u64_rows.clone(),),
    ));
    ok(module.call_reducer(
        CALLER,
        "insert_bulk_btree_each_column_u32_u64_u64",
        (u64_rows,),
    ));
    let counts = module.read(|db| {
        [
            db.unique_0_u32_u64_str().count(),
            db.no_index_u32_u64_str().count(),
            db.btree_each_column_u32_u64_str().count(),
            db.unique_0_u32_u64_u64().count(),
            db.no_index_u32_u64_u64().count(),
            db.btree_each_column_u32_u64_u64().count(),
        ]
    });
    assert_eq!(counts, [100; 6]);
    let mut clash = people(100..102, 8);
    clash.push(UniqueU32U64Str {
        id: 5,
        age: 1,
        name: "another five".into(),
    });
    let duplicate = module.call_reducer(CALLER, "insert_bulk_unique_0_u32_u64_str", (clash,));
    assert!(
        matches!(duplicate, Outcome::Aborted { .. }),
        "a clashing primary key must abort the whole bulk insert: {duplicate}"
    );
    assert_eq!(module.read(|db| db.unique_0_u32_u64_str().count()), 100);
}

#[test]
fn updates_deletes_iterations_and_clears() {
    let module = TestModule::<Benchmarks>::new();
    ok(module.call_reducer(
        CALLER,
        "insert_bulk_unique_0_u32_u64_str",
        (people(0..50, 8),),
    ));
    ok(module.call_reducer(
        CALLER,
        "insert_bulk_unique_0_u32_u64_u64",
        (points(0..50, 8),),
    ));
    ok(module.call_reducer(CALLER, "update_bulk_unique_0_u32_u64_str", (50u32,)));
    ok(module.call_reducer(CALLER, "update_bulk_unique_0_u32_u64_u64", (50u32,)));
    let (ages, xs) = module.read(|db| {
        let ages: u64 = db.unique_0_u32_u64_str().iter().map(|row| row.age).sum();
        let xs: u64 = db.unique_0_u32_u64_u64().iter().map(|row| row.x).sum();
        (ages, xs)
    });
    let base: u64 = (0..50u64).map(|id| id % 8).sum();
    assert_eq!((ages, xs), (base + 50, base + 50));

    ok(module.call_reducer(CALLER, "iterate_unique_0_u32_u64_str", ()));
    ok(module.call_reducer(CALLER, "iterate_unique_0_u32_u64_u64", ()));
    ok(module.call_reducer(CALLER, "delete_unique_0_u32_u64_str_by_id", (7u32,)));
    ok(module.call_reducer(CALLER, "delete_unique_0_u32_u64_u64_by_id", (7u32,)));
    assert_eq!(
        module.read(|db| db.unique_0_u32_u64_str().id().find(7u32)),
        None
    );
    assert_eq!(module.read(|db| db.unique_0_u32_u64_u64().count()), 49);
    ok(module.call_reducer(CALLER, "clear_unique_0_u32_u64_str", ()));
    assert_eq!(module.read(|db| db.unique_0_u32_u64_str().count()), 0);
}

#[test]
fn filters_select_one_bucket() {
    let module = TestModule::<Benchmarks>::new();
    let rows: Vec<BtreeU32U64Str> = people(0..2048, 8)
        .into_iter()
        .map(|p| BtreeU32U64Str {
            id: p.id,
            age: p.age,
            name: p.name,
        })
        .collect();
    ok(module.call_reducer(CALLER, "insert_bulk_btree_each_column_u32_u64_str", (rows,)));
    let points: Vec<BtreeU32U64U64> = points(0..2048, 8)
        .into_iter()
        .map(|p| BtreeU32U64U64 {
            id: p.id,
            x: p.x,
            y: p.y,
        })
        .collect();
    ok(module.call_reducer(
        CALLER,
        "insert_bulk_btree_each_column_u32_u64_u64",
        (points,),
    ));
    let (by_name, by_y) = module.read(|db| {
        (
            db.btree_each_column_u32_u64_str()
                .name()
                .filter("name-3")
                .count(),
            db.btree_each_column_u32_u64_u64().y().filter(3u64).count(),
        )
    });
    assert_eq!((by_name, by_y), (256, 256));
    ok(module.call_reducer(
        CALLER,
        "filter_btree_each_column_u32_u64_str_by_name",
        ("name-3".to_string(),),
    ));
    ok(module.call_reducer(
        CALLER,
        "filter_btree_each_column_u32_u64_str_by_age",
        (3u64,),
    ));
    ok(module.call_reducer(CALLER, "filter_btree_each_column_u32_u64_u64_by_y", (3u64,)));
    ok(module.call_reducer(CALLER, "filter_btree_each_column_u32_u64_u64_by_x", (3u64,)));
}

#[test]
fn misc_reducers() {
    let module = TestModule::<Benchmarks>::new();
    ok(module.call_reducer(CALLER, "empty", ()));
    ok(module.call_reducer(CALLER, "fn_with_1_arg", ("x".repeat(64 * 1024),)));
    ok(module.call_reducer(CALLER, "print_many", (100u32,)));
    assert_eq!(module.logs().len(), 100);
    assert_eq!(module.logs()[99].message, "print_many: line 99 of 100");
}

#[test]
fn circles_seed_and_tick() {
    let module = TestModule::<Benchmarks>::new();
    ok(module.call_reducer(CALLER, "init_game_circles", (100u32,)));
    assert_eq!(
        module.read(|db| (db.entity().count(), db.food().count(), db.circle().count())),
        (100, 100, 10)
    );
    ok(module.call_reducer(CALLER, "run_game_circles", (100u32,)));
    let wrong = module.call_reducer(CALLER, "run_game_circles", (99u32,));
    assert!(matches!(wrong, Outcome::Failed { .. }), "{wrong}");
}

#[test]
fn ia_loop_seeds_and_ticks() {
    let module = TestModule::<Benchmarks>::new();
    ok(module.call_reducer(CALLER, "init_game_ia_loop", (500u32,)));
    ok(module.call_reducer(CALLER, "run_game_ia_loop", (10u32,)));
    let (agent, position, targetables) = module.read(|db| {
        (
            db.agent().entity_id().find(3u64),
            db.position().entity_id().find(3u64),
            db.targetable().count(),
        )
    });
    let agent = agent.unwrap();
    assert_eq!(agent.action, AgentAction::Fighting);
    assert_eq!(agent.last_moves.len(), 4);
    assert_eq!(position.map(|p| p.x), Some(4.0));
    assert_eq!(targetables, 500);
    ok(module.call_reducer(CALLER, "run_game_ia_loop", (100u32,)));
    assert_eq!(
        module.read(|db| db.agent().entity_id().find(200u64).map(|a| a.action)),
        Some(AgentAction::Moving)
    );
}
