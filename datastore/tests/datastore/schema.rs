//! Descriptions the datastore refuses, with messages that name the culprit.

use crate::fixtures::*;
use wasmod_abi::{AlgebraicType, Field, IndexDef, ModuleDef, TypeDef};
use wasmod_datastore::Datastore;

fn refused(def: &ModuleDef) -> String {
    Datastore::new(def)
        .expect_err("the description is refused")
        .to_string()
}

fn assert_refused(change: impl FnOnce(&mut ModuleDef), expected: &[&str]) {
    let mut def = module();
    change(&mut def);
    let message = refused(&def);
    for part in expected {
        assert!(
            message.contains(part),
            "`{message}` should mention `{part}`"
        );
    }
}

#[test]
fn the_fixture_is_valid_and_ids_are_positions() {
    let store = datastore();
    assert_eq!(store.table_count(), 3);
    assert_eq!(store.table_id("point"), Some(POINT));
    assert_eq!(store.table_id("nope"), None);
    assert_eq!(store.table_def(COUNTER).unwrap().name, "counter");
    assert!(store.table_def(3).is_none());
    assert_eq!(store.typespace().types.len(), 3);
}

#[test]
fn duplicate_table_names() {
    assert_refused(
        |def| def.tables[1].name = "player".into(),
        &["two tables are named `player`"],
    );
}

#[test]
fn dangling_references() {
    assert_refused(
        |def| def.tables[0].row_type = AlgebraicType::Ref(40),
        &["`player`", "type #40"],
    );
    assert_refused(
        |def| def.tables[1].columns[2].ty = AlgebraicType::Option(Box::new(AlgebraicType::Ref(9))),
        &["`point`", "column `label`", "type #9"],
    );
    assert_refused(
        |def| {
            def.typespace.types.push(TypeDef {
                name: "Loop".into(),
                ty: AlgebraicType::Ref(3),
            })
        },
        &["`Loop`", "refers only to itself"],
    );
}

#[test]
fn types_nested_too_deeply() {
    assert_refused(
        |def| {
            let mut ty = AlgebraicType::U8;
            for _ in 0..100 {
                ty = AlgebraicType::Array(Box::new(ty));
            }
            def.typespace.types.push(TypeDef {
                name: "Deep".into(),
                ty,
            });
        },
        &["`Deep`", "deeper than"],
    );
}

#[test]
fn row_types_that_do_not_match_the_columns() {
    assert_refused(
        |def| def.tables[2].row_type = AlgebraicType::U8,
        &["`counter`", "not a product"],
    );
    assert_refused(
        |def| {
            def.tables[2].columns.pop();
        },
        &["`counter`", "2 fields", "1 columns"],
    );
    assert_refused(
        |def| def.tables[2].columns[1].ty = AlgebraicType::U8,
        &["`counter`", "column 1 `tag`"],
    );
    assert_refused(
        |def| {
            def.typespace.types[2].ty = AlgebraicType::Product(vec![
                Field::named("n", AlgebraicType::U8),
                Field::named("flag", AlgebraicType::Bool),
            ])
        },
        &["`counter`", "`tag`", "flag"],
    );
}

#[test]
fn indexes_on_missing_or_repeated_columns() {
    assert_refused(
        |def| def.tables[1].indexes[1].columns = vec![3],
        &["`point`", "`point_label`", "column 3"],
    );
    assert_refused(
        |def| def.tables[1].indexes[0].columns = vec![0, 0],
        &["`point_xy`", "column `x` twice"],
    );
    assert_refused(
        |def| def.tables[1].indexes[0].columns.clear(),
        &["`point_xy`", "no columns"],
    );
    assert_refused(
        |def| def.tables[1].indexes[1].name = "point_xy".into(),
        &["`point`", "two indexes are named `point_xy`"],
    );
}

#[test]
fn primary_keys() {
    assert_refused(
        |def| def.tables[0].primary_key = Some(7),
        &["`player`", "primary key is column 7"],
    );
    assert_refused(
        |def| def.tables[0].primary_key = Some(2),
        &["`player`", "primary key `age`"],
    );
    assert_refused(
        |def| {
            def.tables[0].indexes[0] = IndexDef {
                name: "player_id".into(),
                columns: vec![0],
                unique: false,
            }
        },
        &["primary key `id` must be the first index"],
    );
}

#[test]
fn auto_increments() {
    assert_refused(
        |def| def.tables[0].auto_inc = vec![5],
        &["`player`", "auto_inc names column 5"],
    );
    assert_refused(
        |def| def.tables[0].auto_inc = vec![1],
        &["`player`", "column `name`", "integer"],
    );
    assert_refused(
        |def| def.tables[0].auto_inc = vec![0, 0],
        &["`player`", "column `id` twice"],
    );
}
