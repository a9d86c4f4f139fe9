//! Inserts, constraints, sequences, updates and deletes.

use crate::fixtures::*;
use wasmod_abi::encoding::to_vec;
use wasmod_abi::Errno;

#[test]
fn insert_scan_and_count() {
    let store = datastore();
    let mut tx = store.begin_mut();
    tx.insert(POINT, &mut point(1, 2, "a")).unwrap();
    tx.insert(POINT, &mut point(0, 0, "b")).unwrap();
    assert_eq!(tx.row_count(POINT).unwrap(), 2);
    assert_eq!(
        all(&tx, POINT),
        [point(1, 2, "a"), point(0, 0, "b")],
        "oldest first"
    );
    assert_eq!(tx.row_count(PLAYER).unwrap(), 0);
}

#[test]
fn unknown_tables_and_indexes_are_refused() {
    let store = datastore();
    let mut tx = store.begin_mut();
    assert_eq!(errno(tx.row_count(3)), Errno::NO_SUCH_TABLE);
    assert_eq!(errno(tx.scan(u32::MAX)), Errno::NO_SUCH_TABLE);
    assert_eq!(
        errno(tx.insert(9, &mut point(0, 0, ""))),
        Errno::NO_SUCH_TABLE
    );
    assert_eq!(errno(tx.clear(9)), Errno::NO_SUCH_TABLE);
    assert_eq!(
        errno(tx.index_scan(POINT, 2, &point_scan(&[1u32]))),
        Errno::NO_SUCH_INDEX
    );
    assert_eq!(
        errno(tx.delete_by_index_scan(POINT, 7, &[])),
        Errno::NO_SUCH_INDEX
    );
    assert_eq!(
        errno(tx.update_by_unique(PLAYER, 3, &player(1, "a", 1))),
        Errno::NO_SUCH_INDEX
    );
    let error = tx.index_scan(POINT, 2, &[]).unwrap_err();
    assert!(error.message().contains("`point`"), "{error}");
}

#[test]
fn malformed_rows_are_bad_encoding() {
    let store = datastore();
    let mut tx = store.begin_mut();
    let row = point(1, 2, "abc");
    for len in 0..row.len() {
        assert_eq!(
            errno(tx.insert(POINT, &mut row[..len].to_vec())),
            Errno::BAD_ENCODING
        );
    }
    let mut longer = row.clone();
    longer.push(0);
    let error = tx.insert(POINT, &mut longer).unwrap_err();
    assert_eq!(error.errno(), Errno::BAD_ENCODING);
    assert!(error.message().contains("left after the row"), "{error}");

    let mut bad_utf8 = to_vec(&(1u32, 2i32, 2u32));
    bad_utf8.extend_from_slice(&[0xff, 0xfe]);
    let error = tx.insert(POINT, &mut bad_utf8).unwrap_err();
    assert!(error.message().contains("column `label`"), "{error}");

    let mut bad_bool = vec![1, 2];
    assert_eq!(
        errno(tx.insert(COUNTER, &mut bad_bool)),
        Errno::BAD_ENCODING
    );
    assert_eq!(
        tx.row_count(POINT).unwrap() + tx.row_count(COUNTER).unwrap(),
        0
    );
}

#[test]
fn unique_violations_change_nothing() {
    let store = datastore();
    let mut tx = store.begin_mut();
    tx.insert(PLAYER, &mut player(1, "ada", 30)).unwrap();

    let mut same_id = player(1, "bob", 40);
    let error = tx.insert(PLAYER, &mut same_id).unwrap_err();
    assert_eq!(error.errno(), Errno::UNIQUE_VIOLATION);
    assert!(error.message().contains("`player_id`"), "{error}");
    assert_eq!(same_id, player(1, "bob", 40));

    let mut same_name = player(0, "ada", 40);
    let error = tx.insert(PLAYER, &mut same_name).unwrap_err();
    assert!(error.message().contains("`player_name`"), "{error}");
    assert_eq!(
        same_name,
        player(0, "ada", 40),
        "the caller's row is untouched"
    );

    assert_eq!(all(&tx, PLAYER), [player(1, "ada", 30)]);
    let mut next = player(0, "cy", 1);
    tx.insert(PLAYER, &mut next).unwrap();
    assert_eq!(
        next,
        player(2, "cy", 1),
        "the failed insert did not use a sequence value"
    );
}

#[test]
fn inserting_an_existing_row_is_a_no_op() {
    let store = datastore();
    let mut tx = store.begin_mut();
    tx.insert(PLAYER, &mut player(1, "ada", 30)).unwrap();
    tx.insert(PLAYER, &mut player(1, "ada", 30)).unwrap();
    tx.insert(POINT, &mut point(1, 1, "p")).unwrap();
    tx.insert(POINT, &mut point(1, 1, "p")).unwrap();
    assert_eq!(tx.row_count(PLAYER).unwrap(), 1);
    assert_eq!(tx.row_count(POINT).unwrap(), 1);
}

#[test]
fn auto_increment_writes_back_in_place() {
    let store = datastore();
    let mut tx = store.begin_mut();
    let mut first = player(0, "a", 1);
    tx.insert(PLAYER, &mut first).unwrap();
    assert_eq!(first, player(1, "a", 1));
    let mut second = player(0, "b", 1);
    tx.insert(PLAYER, &mut second).unwrap();
    assert_eq!(second, player(2, "b", 1));

    let mut explicit = player(10, "c", 1);
    tx.insert(PLAYER, &mut explicit).unwrap();
    assert_eq!(explicit, player(10, "c", 1), "explicit values are kept");
    let mut after = player(0, "d", 1);
    tx.insert(PLAYER, &mut after).unwrap();
    assert_eq!(
        after,
        player(11, "d", 1),
        "the sequence moved past the explicit value"
    );
    assert_eq!(
        bytes(
            tx.index_scan(PLAYER, PLAYER_ID, &point_scan(&[11u32]))
                .unwrap()
        ),
        [player(11, "d", 1)],
        "the generated value is in the index"
    );
}

#[test]
fn an_exhausted_sequence_is_reported() {
    let store = datastore();
    let mut tx = store.begin_mut();
    tx.insert(COUNTER, &mut [254, 0]).unwrap();
    let mut row = vec![0, 1];
    tx.insert(COUNTER, &mut row).unwrap();
    assert_eq!(row, [255, 1]);
    let mut row = vec![0, 0];
    let error = tx.insert(COUNTER, &mut row).unwrap_err();
    assert_eq!(error.errno(), Errno::SEQUENCE_EXHAUSTED);
    assert!(error.message().contains("column `n`"), "{error}");
    assert_eq!(row, [0, 0]);
    tx.insert(COUNTER, &mut [7, 0]).unwrap();
}

#[test]
fn update_by_unique_replaces_the_row_with_the_key() {
    let store = datastore();
    let mut tx = store.begin_mut();
    tx.insert(PLAYER, &mut player(1, "ada", 30)).unwrap();
    tx.insert(PLAYER, &mut player(2, "bob", 40)).unwrap();

    tx.update_by_unique(PLAYER, PLAYER_ID, &player(1, "ada", 31))
        .unwrap();
    tx.update_by_unique(PLAYER, PLAYER_NAME, &player(2, "bob", 41))
        .unwrap();
    let by_age = bytes(
        tx.index_scan(PLAYER, PLAYER_AGE, &scan_bytes::<u64, u64>(&[], None, None))
            .unwrap(),
    );
    assert_eq!(by_age, [player(1, "ada", 31), player(2, "bob", 41)]);
    assert!(tx
        .index_scan(PLAYER, PLAYER_AGE, &point_scan(&[30u64]))
        .unwrap()
        .is_empty());

    // The same row again: nothing to do.
    tx.update_by_unique(PLAYER, PLAYER_ID, &player(1, "ada", 31))
        .unwrap();
    // Renaming through the primary key: the name index follows, the old name is free.
    tx.update_by_unique(PLAYER, PLAYER_ID, &player(1, "ann", 31))
        .unwrap();
    assert_eq!(tx.row_count(PLAYER).unwrap(), 2);
    let by_name = |name: &str| {
        bytes(
            tx.index_scan(PLAYER, PLAYER_NAME, &point_scan(&[name]))
                .unwrap(),
        )
    };
    assert_eq!(by_name("ann"), [player(1, "ann", 31)]);
    assert!(by_name("ada").is_empty());
    let by_id = bytes(
        tx.index_scan(PLAYER, PLAYER_ID, &point_scan(&[1u32]))
            .unwrap(),
    );
    assert_eq!(by_id, [player(1, "ann", 31)]);
    tx.insert(PLAYER, &mut player(3, "ada", 30)).unwrap();
    // Updated rows are the newest.
    assert_eq!(
        all(&tx, PLAYER),
        [
            player(2, "bob", 41),
            player(1, "ann", 31),
            player(3, "ada", 30)
        ]
    );
}

#[test]
fn update_by_unique_errors_change_nothing() {
    let store = datastore();
    let mut tx = store.begin_mut();
    tx.insert(PLAYER, &mut player(1, "ada", 30)).unwrap();
    tx.insert(PLAYER, &mut player(2, "bob", 40)).unwrap();
    let before = all(&tx, PLAYER);

    assert_eq!(
        errno(tx.update_by_unique(PLAYER, PLAYER_ID, &player(3, "cy", 1))),
        Errno::NO_SUCH_ROW
    );
    let clash = tx
        .update_by_unique(PLAYER, PLAYER_ID, &player(1, "bob", 1))
        .unwrap_err();
    assert_eq!(clash.errno(), Errno::UNIQUE_VIOLATION);
    assert!(clash.message().contains("`player_name`"), "{clash}");
    let not_unique = tx
        .update_by_unique(PLAYER, PLAYER_AGE, &player(1, "ada", 30))
        .unwrap_err();
    assert_eq!(not_unique.errno(), Errno::NO_SUCH_INDEX);
    assert!(not_unique.message().contains("not unique"), "{not_unique}");
    assert_eq!(
        errno(tx.update_by_unique(PLAYER, PLAYER_ID, &[1, 0])),
        Errno::BAD_ENCODING
    );
    assert_eq!(all(&tx, PLAYER), before);
}

#[test]
fn delete_by_index_scan_counts_what_it_deletes() {
    let store = datastore();
    let mut tx = store.begin_mut();
    for (x, y) in [(1, 1), (1, 2), (2, 1), (3, 3)] {
        tx.insert(POINT, &mut point(x, y, "p")).unwrap();
    }
    assert_eq!(
        tx.delete_by_index_scan(POINT, POINT_XY, &point_scan(&[1u32]))
            .unwrap(),
        2
    );
    assert_eq!(
        tx.delete_by_index_scan(POINT, POINT_XY, &point_scan(&[1u32]))
            .unwrap(),
        0
    );
    assert_eq!(all(&tx, POINT), [point(2, 1, "p"), point(3, 3, "p")]);
    assert_eq!(
        errno(tx.delete_by_index_scan(POINT, POINT_XY, &[0])),
        Errno::BAD_ENCODING
    );
    assert_eq!(
        tx.delete_by_index_scan(POINT, POINT_LABEL, &point_scan(&["p"]))
            .unwrap(),
        2
    );
    assert_eq!(tx.row_count(POINT).unwrap(), 0);
}

#[test]
fn delete_rows_deletes_equal_rows() {
    let store = datastore();
    let mut tx = store.begin_mut();
    for (x, label) in [(1, "a"), (2, "b"), (3, "c")] {
        tx.insert(POINT, &mut point(x, 0, label)).unwrap();
    }
    let mut rows = point(1, 0, "a");
    rows.extend(point(3, 0, "c"));
    rows.extend(point(9, 0, "absent"));
    rows.extend(point(1, 0, "a"));
    assert_eq!(tx.delete_rows(POINT, &rows).unwrap(), 2);
    assert_eq!(all(&tx, POINT), [point(2, 0, "b")]);

    let mut malformed = point(2, 0, "b");
    malformed.extend([1, 2, 3]);
    assert_eq!(
        errno(tx.delete_rows(POINT, &malformed)),
        Errno::BAD_ENCODING
    );
    assert_eq!(
        tx.row_count(POINT).unwrap(),
        1,
        "a malformed batch deletes nothing"
    );
    assert_eq!(tx.delete_rows(POINT, &[]).unwrap(), 0);
}

#[test]
fn clear_deletes_everything() {
    let store = datastore();
    let mut tx = store.begin_mut();
    for id in 1..=5 {
        tx.insert(PLAYER, &mut player(id, &format!("p{id}"), 1))
            .unwrap();
    }
    assert_eq!(tx.clear(PLAYER).unwrap(), 5);
    assert_eq!(tx.row_count(PLAYER).unwrap(), 0);
    assert!(tx
        .index_scan(PLAYER, PLAYER_NAME, &point_scan(&["p1"]))
        .unwrap()
        .is_empty());
    assert_eq!(tx.clear(PLAYER).unwrap(), 0);
    tx.insert(PLAYER, &mut player(1, "p1", 1)).unwrap();
}

#[test]
fn rows_of_a_zero_sized_table_cannot_be_split() {
    let mut typespace = wasmod_abi::Typespace::default();
    let unit = table(&mut typespace, "unit", &[], None, &[], &[]);
    let def = wasmod_abi::ModuleDef {
        typespace,
        tables: vec![unit],
        ..Default::default()
    };
    let store = wasmod_datastore::Datastore::new(&def).unwrap();
    let mut tx = store.begin_mut();
    tx.insert(0, &mut []).unwrap();
    assert_eq!(tx.row_count(0).unwrap(), 1);
    assert_eq!(errno(tx.delete_rows(0, &[1])), Errno::BAD_ENCODING);
    assert_eq!(tx.delete_rows(0, &[]).unwrap(), 0);
}
