//! A new build taking over a database in use ([`Database::replace`]): rows carried over,
//! offsets going on, the log moved to the new tables so that a restart with the new build
//! finds everything, and refusals that change nothing.

use crate::fixtures::{all, module, player, PLAYER};
use crate::migrations::{files, leveled, options, with_level};
use std::sync::Arc;
use wasmod_abi::encoding::to_vec;
use wasmod_abi::{IndexDef, ModuleDef};
use wasmod_datastore::durability::{DurabilityError, UpgradeCheck};
use wasmod_datastore::{CommitMeta, Database, ReplaceError};

/// Commits one transaction inserting `rows` into the players.
fn commit(database: &Database, rows: Vec<Vec<u8>>) -> u64 {
    let mut tx = database.begin_mut();
    for mut row in rows {
        tx.insert(PLAYER, &mut row).expect("the insert");
    }
    let committed = database.commit(tx, CommitMeta::host()).expect("committed");
    committed.durable.wait().expect("durable");
    committed.commit.expect("a change").offset
}

fn players(ids: std::ops::RangeInclusive<u32>) -> Vec<Vec<u8>> {
    ids.map(|id| player(id, &format!("p{id}"), u64::from(id)))
        .collect()
}

#[test]
fn a_database_with_a_log_takes_a_new_build_and_a_restart_finds_it() {
    let dir = tempfile::tempdir().expect("a directory");
    let upgraded = with_level();
    {
        let database = Database::open(dir.path(), &module(), options()).expect("opened");
        let mut feed = database.feed().subscribe();
        assert_eq!(commit(&database, players(1..=2)), 0);
        assert_eq!(commit(&database, players(3..=3)), 1);
        let before = database.datastore();

        let replaced = database.replace(&module(), &upgraded).expect("replaced");
        assert_eq!(replaced.offset, 2);
        assert!(
            replaced
                .changes
                .iter()
                .any(|change| change.contains("`level` is added")),
            "{:?}",
            replaced.changes
        );
        assert!(Arc::ptr_eq(&replaced.datastore, &database.datastore()));
        // The old datastore keeps the old build's last state, untouched.
        assert_eq!(all(&before.begin_read(), PLAYER), players(1..=3));
        assert_eq!(
            all(&database.begin_read(), PLAYER),
            (1..=3).map(|id| leveled(id, 7)).collect::<Vec<_>>()
        );

        // Offsets go on; the sequence goes on where the old build left it.
        let mut tx = database.begin_mut();
        tx.insert(PLAYER, &mut leveled(0, 9)).expect("an insert");
        let committed = database.commit(tx, CommitMeta::host()).expect("committed");
        committed.durable.wait().expect("durable");
        let offsets: Vec<u64> = (0..3)
            .map(|_| feed.try_recv().expect("a commit").offset)
            .collect();
        assert_eq!(offsets, [0, 1, 2]);
    }
    assert_eq!(
        Database::check(dir.path(), &upgraded).expect("the check"),
        UpgradeCheck::Unchanged
    );
    let reopened = Database::open(dir.path(), &upgraded, options()).expect("reopened");
    assert_eq!(reopened.next_offset(), 3);
    let mut expected: Vec<Vec<u8>> = (1..=3).map(|id| leveled(id, 7)).collect();
    expected.push(to_vec(&(4u32, "p0".to_owned(), 0u64, 9u16)));
    assert_eq!(all(&reopened.begin_read(), PLAYER), expected);
    drop(reopened);

    // The old build can no longer serve the directory, and says why.
    let old = Database::open(dir.path(), &module(), options()).expect_err("refused");
    assert!(
        matches!(&old, DurabilityError::Incompatible { reason } if reason.contains("`level` was removed")),
        "{old}"
    );
}

#[test]
fn replacing_twice_in_a_row_keeps_every_commit() {
    let dir = tempfile::tempdir().expect("a directory");
    let upgraded = with_level();
    let mut indexed = upgraded.clone();
    indexed.tables[PLAYER as usize].indexes.pop();
    {
        let database = Database::open(dir.path(), &module(), options()).expect("opened");
        commit(&database, players(1..=1));
        database.replace(&module(), &upgraded).expect("replaced");
        // A replacement right after another, with nothing committed between them.
        database.replace(&upgraded, &indexed).expect("replaced");
        let mut tx = database.begin_mut();
        tx.insert(PLAYER, &mut leveled(0, 3)).expect("an insert");
        let _ = database.commit(tx, CommitMeta::host()).expect("committed");
    }
    let reopened = Database::open(dir.path(), &indexed, options()).expect("reopened");
    assert_eq!(all(&reopened.begin_read(), PLAYER).len(), 2);
}

#[test]
fn refused_replacements_change_nothing() {
    let dir = tempfile::tempdir().expect("a directory");
    let database = Database::open(dir.path(), &module(), options()).expect("opened");
    // Two players of the same age, which a unique index on ages refuses.
    let mut tx = database.begin_mut();
    tx.insert(PLAYER, &mut player(1, "a", 5)).expect("insert");
    tx.insert(PLAYER, &mut player(2, "b", 5)).expect("insert");
    let _ = database.commit(tx, CommitMeta::host()).expect("committed");
    let before = database.datastore();
    let files_before = files(dir.path());

    let mut removed = module();
    removed.tables.remove(PLAYER as usize);
    let mut unique_age = module();
    unique_age.tables[PLAYER as usize].indexes.push(IndexDef {
        name: "player_age_unique".into(),
        columns: vec![2],
        unique: true,
    });
    for (new, expected) in [
        (removed, "table `player` was removed"),
        (unique_age, "player_age_unique"),
    ] {
        let error = database.replace(&module(), &new).expect_err("refused");
        assert!(matches!(&error, ReplaceError::Incompatible(_)), "{error:?}");
        assert!(error.to_string().contains(expected), "{error}");
        assert!(Arc::ptr_eq(&before, &database.datastore()));
        assert_eq!(files(dir.path()), files_before);
        assert_eq!(database.log_failure(), None);
    }
    assert_eq!(database.next_offset(), 1);
}

#[test]
fn a_replica_is_not_replaced() {
    let primary = Database::in_memory(&module()).expect("a database");
    let rows = wasmod_datastore::TxData { tables: Vec::new() };
    let replica = Database::replica(&module(), primary.next_offset(), &rows).expect("a replica");
    let error = replica
        .replace(&module(), &with_level())
        .expect_err("refused");
    assert!(matches!(error, ReplaceError::Replica), "{error:?}");
}

#[test]
fn a_database_in_memory_takes_a_new_build() {
    let database = Database::in_memory(&module()).expect("a database");
    commit(&database, players(1..=2));
    let upgraded: ModuleDef = with_level();
    let replaced = database.replace(&module(), &upgraded).expect("replaced");
    assert_eq!(replaced.offset, 1);
    assert_eq!(
        all(&database.begin_read(), PLAYER),
        (1..=2).map(|id| leveled(id, 7)).collect::<Vec<_>>()
    );
    assert_eq!(database.module_tables(), upgraded.tables.len() as u32);
}

#[test]
fn a_build_whose_tables_store_rows_alike_keeps_the_tables_and_the_log() {
    let dir = tempfile::tempdir().expect("a directory");
    let database = Database::open(dir.path(), &module(), options()).expect("opened");
    commit(&database, players(1..=2));
    let before = database.datastore();
    let files_before = files(dir.path());
    let mut public = module();
    public.tables[PLAYER as usize].public = !public.tables[PLAYER as usize].public;

    let replaced = database.replace(&module(), &public).expect("replaced");
    assert!(Arc::ptr_eq(&replaced.datastore, &before));
    assert_eq!(replaced.offset, 1);
    assert_eq!(
        files(dir.path()),
        files_before,
        "no snapshot, no new segment"
    );
}
