//! Commit, rollback, what readers see, and the changes a commit reports.

use crate::fixtures::*;
use std::sync::Arc;
use wasmod_datastore::{Datastore, Tables, TxData};

/// Everything observable about the tables: rows, the players in each index's order, and the
/// next sequence values.
#[derive(Debug, PartialEq)]
struct Observed {
    rows: Vec<Vec<Vec<u8>>>,
    by_index: Vec<Vec<Vec<u8>>>,
    next_player: Vec<u8>,
}

fn observe(store: &Datastore) -> Observed {
    let (rows, by_index) = {
        let tx = store.begin_read();
        let rows = (0..3).map(|table| all(&tx, table)).collect();
        let by_index = [PLAYER_ID, PLAYER_NAME, PLAYER_AGE]
            .iter()
            .map(|&index| {
                bytes(
                    tx.index_scan(PLAYER, index, &point_scan::<u64>(&[]))
                        .unwrap(),
                )
            })
            .collect();
        (rows, by_index)
    };
    let mut tx = store.begin_mut();
    let mut next_player = player(0, "probe", 0);
    tx.insert(PLAYER, &mut next_player).unwrap();
    tx.rollback();
    Observed {
        rows,
        by_index,
        next_player,
    }
}

fn seeded() -> Datastore {
    let store = datastore();
    let mut tx = store.begin_mut();
    for (name, age) in [("ada", 30), ("bob", 40), ("cy", 50)] {
        tx.insert(PLAYER, &mut player(0, name, age)).unwrap();
    }
    tx.insert(POINT, &mut point(1, 1, "p")).unwrap();
    tx.insert(COUNTER, &mut [0, 1]).unwrap();
    tx.commit();
    store
}

fn scribble(tables: &mut wasmod_datastore::MutTx) {
    tables.insert(PLAYER, &mut player(0, "dee", 60)).unwrap();
    tables
        .update_by_unique(PLAYER, PLAYER_ID, &player(1, "ada", 31))
        .unwrap();
    tables.delete_rows(PLAYER, &player(2, "bob", 40)).unwrap();
    tables.clear(POINT).unwrap();
    tables.insert(POINT, &mut point(2, 2, "q")).unwrap();
    tables.insert(COUNTER, &mut [100, 0]).unwrap();
    tables
        .delete_by_index_scan(PLAYER, PLAYER_NAME, &point_scan(&["cy"]))
        .unwrap();
}

#[test]
fn rollback_restores_exactly_the_state_before() {
    let store = seeded();
    let before = observe(&store);
    let mut tx = store.begin_mut();
    scribble(&mut tx);
    assert_ne!(
        all(&tx, PLAYER),
        before.rows[0],
        "the transaction sees its own writes"
    );
    tx.rollback();
    assert_eq!(observe(&store), before);
}

#[test]
fn rollback_after_deleting_most_rows_restores_them_all() {
    let store = datastore();
    let mut tx = store.begin_mut();
    for age in 0..200 {
        tx.insert(PLAYER, &mut player(0, &format!("p{age}"), age))
            .unwrap();
    }
    tx.commit();
    let before = observe(&store);
    let mut tx = store.begin_mut();
    // Enough deletions that the table reclaims the room of some of them, then more rows.
    tx.delete_by_index_scan(
        PLAYER,
        PLAYER_AGE,
        &scan_bytes::<u64, u64>(&[], None, Some((1, 150))),
    )
    .unwrap();
    tx.update_by_unique(PLAYER, PLAYER_ID, &player(180, "renamed", 7))
        .unwrap();
    tx.insert(PLAYER, &mut player(0, "new", 1)).unwrap();
    assert_eq!(tx.row_count(PLAYER).unwrap(), 50);
    tx.rollback();
    assert_eq!(observe(&store), before);
}

#[test]
fn dropping_a_transaction_rolls_it_back() {
    let store = seeded();
    let before = observe(&store);
    {
        let mut tx = store.begin_mut();
        scribble(&mut tx);
    }
    assert_eq!(observe(&store), before);
}

#[test]
fn commit_makes_writes_visible_and_reports_them() {
    let store = seeded();
    let mut tx = store.begin_mut();
    scribble(&mut tx);
    let data = tx.commit();

    let players = data.table(PLAYER).unwrap();
    assert_eq!(
        bytes(players.inserted.clone()),
        [player(4, "dee", 60), player(1, "ada", 31)]
    );
    let mut deleted = bytes(players.deleted.clone());
    deleted.sort();
    let mut expected = vec![
        player(1, "ada", 30),
        player(2, "bob", 40),
        player(3, "cy", 50),
    ];
    expected.sort();
    assert_eq!(deleted, expected);
    let points = data.table(POINT).unwrap();
    assert_eq!(bytes(points.inserted.clone()), [point(2, 2, "q")]);
    assert_eq!(bytes(points.deleted.clone()), [point(1, 1, "p")]);
    assert_eq!(
        bytes(data.table(COUNTER).unwrap().inserted.clone()),
        [vec![100, 0]]
    );
    assert_eq!(
        data.tables.iter().map(|t| t.table).collect::<Vec<_>>(),
        [0, 1, 2]
    );

    let read = store.begin_read();
    assert_eq!(
        all(&read, PLAYER),
        [player(4, "dee", 60), player(1, "ada", 31)]
    );
}

#[test]
fn tx_data_is_the_net_change() {
    let store = seeded();
    let mut tx = store.begin_mut();
    // Inserted then deleted: nowhere.
    tx.insert(POINT, &mut point(7, 7, "tmp")).unwrap();
    tx.delete_rows(POINT, &point(7, 7, "tmp")).unwrap();
    // Deleted then inserted again unchanged: nowhere.
    tx.delete_rows(POINT, &point(1, 1, "p")).unwrap();
    tx.insert(POINT, &mut point(1, 1, "p")).unwrap();
    // Updated to the same row: nowhere.
    tx.update_by_unique(PLAYER, PLAYER_ID, &player(1, "ada", 30))
        .unwrap();
    // Cleared and refilled identically: nowhere.
    tx.clear(COUNTER).unwrap();
    tx.insert(COUNTER, &mut [1, 1]).unwrap();
    assert_eq!(tx.commit(), TxData::default());
    assert!(TxData::default().is_empty());
}

#[test]
fn an_empty_transaction_commits_nothing() {
    let store = seeded();
    assert!(store.begin_mut().commit().is_empty());
}

#[test]
fn readers_see_only_committed_state() {
    let store = Arc::new(seeded());
    let mut tx = store.begin_mut();
    tx.insert(POINT, &mut point(5, 5, "new")).unwrap();
    // A reader started now waits for the writer, then sees its commit whole.
    let reader = {
        let store = store.clone();
        std::thread::spawn(move || store.begin_read().row_count(POINT).unwrap())
    };
    std::thread::sleep(std::time::Duration::from_millis(20));
    tx.insert(POINT, &mut point(6, 6, "new")).unwrap();
    tx.commit();
    assert_eq!(reader.join().unwrap(), 3);

    let mut tx = store.begin_mut();
    tx.clear(POINT).unwrap();
    drop(tx);
    assert_eq!(store.begin_read().row_count(POINT).unwrap(), 3);
}

#[test]
fn transactions_outlive_borrows_of_the_datastore() {
    struct Holder {
        tx: Option<wasmod_datastore::MutTx>,
    }
    fn open(store: &Datastore) -> Holder {
        Holder {
            tx: Some(store.begin_mut()),
        }
    }
    let store = seeded();
    let mut holder = open(&store);
    drop(store);
    let tx = holder.tx.as_mut().unwrap();
    tx.insert(POINT, &mut point(9, 9, "kept")).unwrap();
    let tables: &Tables = tx;
    assert_eq!(tables.row_count(POINT).unwrap(), 2);
    fn assert_send<T: Send>(_: &T) {}
    assert_send(&holder);
}
