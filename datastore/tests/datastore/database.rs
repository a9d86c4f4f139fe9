//! The database's commit pipeline: offsets, observers, the feed, connections, system tables.

use crate::fixtures::{module, player, PLAYER};
use std::sync::{Arc, Mutex};
use wasmod_abi::{ConnectionId, EntryKind, Errno, Identity, Timestamp};
use wasmod_datastore::durability::{Mode, Options};
use wasmod_datastore::{
    Commit, CommitMeta, CommitObserver, Database, EntryPoint, FeedError, CONNECTION_TABLE,
};

const ALICE: Identity = Identity::from_bytes([0xa1; 32]);
const CONNECTION: ConnectionId = ConnectionId::from_bytes([0xc1; 16]);

/// What one observer saw: its name and the offsets, in the order it saw them.
struct Recorder {
    name: &'static str,
    seen: Arc<Mutex<Vec<(&'static str, u64)>>>,
}

impl CommitObserver for Recorder {
    fn observe(&self, commit: &Arc<Commit>) {
        self.seen.lock().unwrap().push((self.name, commit.offset));
    }
}

fn meta(name: &str) -> CommitMeta {
    CommitMeta {
        timestamp: Timestamp::from_micros_since_unix_epoch(7),
        caller: ALICE,
        connection_id: CONNECTION,
        entry: Some(EntryPoint::new(EntryKind::Reducer, name)),
    }
}

fn insert_player(database: &Database, id: u32, name: &str) -> Option<Arc<Commit>> {
    let mut tx = database.begin_mut();
    tx.insert(PLAYER, &mut player(id, name, 1)).unwrap();
    let committed = database.commit(tx, meta(name)).expect("committed");
    committed.durable.wait().unwrap();
    committed.commit
}

#[test]
fn commits_get_consecutive_offsets_and_reach_observers_in_order() {
    let database = Database::in_memory(&module()).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    for name in ["first", "second"] {
        let seen = seen.clone();
        database.add_observer(Arc::new(Recorder { name, seen }));
    }
    let mut feed = database.feed().subscribe();

    let commit = insert_player(&database, 1, "a").unwrap();
    assert_eq!(commit.offset, 0);
    assert_eq!(commit.meta, meta("a"));
    assert_eq!(commit.changes.table(PLAYER).unwrap().inserted.len(), 1);

    let unchanged = database
        .commit(database.begin_mut(), meta("nothing"))
        .expect("committed");
    assert!(unchanged.commit.is_none(), "a commit that changed nothing");
    let mut rolled_back = database.begin_mut();
    rolled_back.insert(PLAYER, &mut player(9, "z", 1)).unwrap();
    rolled_back.rollback();
    assert_eq!(insert_player(&database, 2, "b").unwrap().offset, 1);

    assert_eq!(
        *seen.lock().unwrap(),
        [("first", 0), ("second", 0), ("first", 1), ("second", 1)]
    );
    let offsets = [feed.try_recv().unwrap(), feed.try_recv().unwrap()].map(|c| c.offset);
    assert_eq!(offsets, [0, 1]);
    assert_eq!(feed.try_recv().unwrap_err(), FeedError::Empty);
}

#[test]
fn a_subscriber_a_whole_feed_behind_is_told_what_it_missed() {
    let database = Database::in_memory(&module()).unwrap();
    let mut feed = database.feed().subscribe();
    let capacity = wasmod_datastore::FEED_CAPACITY as u32;
    for id in 1..=capacity + 3 {
        insert_player(&database, id, &format!("p{id}"));
    }
    assert_eq!(
        feed.try_recv().unwrap_err(),
        FeedError::Lagged { missed: 3 }
    );
    assert_eq!(feed.try_recv().unwrap().offset, 3, "the oldest still held");
    drop(database);
    let mut drained = 0;
    let end = loop {
        match feed.try_recv() {
            Ok(_) => drained += 1,
            Err(error) => break error,
        }
    };
    assert_eq!(drained, capacity - 1);
    assert_eq!(end, FeedError::Closed);
}

#[test]
fn offsets_go_on_from_the_log_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options::default().with_mode(Mode::Fsync);
    let database = Database::open(dir.path(), &module(), options).unwrap();
    for id in 1..=3 {
        insert_player(&database, id, &format!("p{id}"));
    }
    drop(database);
    let database = Database::open(dir.path(), &module(), options).unwrap();
    assert_eq!(database.recovery().unwrap().transactions, 3);
    assert_eq!(insert_player(&database, 4, "p4").unwrap().offset, 3);
}

/// The offsets of `commits`.
fn offsets(commits: &[Arc<Commit>]) -> Vec<u64> {
    commits.iter().map(|commit| commit.offset).collect()
}

#[test]
fn the_recent_commits_are_the_recovered_ones_then_those_made_before_the_take() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options::default()
        .with_mode(Mode::Fsync)
        .with_recent(4, 1 << 20);
    let database = Database::open(dir.path(), &module(), options).unwrap();
    for id in 1..=5 {
        insert_player(&database, id, &format!("p{id}"));
    }
    drop(database);
    // As after a crash: the start commits (say, disconnecting what the crash left open)
    // before the server takes the commits for its window.
    let database = Database::open(dir.path(), &module(), options).unwrap();
    for id in 6..=7 {
        insert_player(&database, id, &format!("p{id}"));
    }
    let mut recent = database.take_recent();
    assert_eq!(
        offsets(&recent.commits),
        vec![3, 4, 5, 6],
        "the last four: two read back from the log, then the start's own two"
    );
    assert_eq!(recent.commits[1].meta, CommitMeta::recovered());
    assert_eq!(recent.commits[2].meta, meta("p6"), "as it was made");
    assert_eq!(recent.next, 7);
    assert!(recent.feed.try_recv().is_err(), "nothing delivered twice");
    insert_player(&database, 8, "p8");
    assert_eq!(recent.feed.try_recv().unwrap().offset, 7, "nothing missed");
    let again = database.take_recent();
    assert!(again.commits.is_empty(), "taken once");
    assert_eq!(again.next, 8);

    let memory = Database::in_memory(&module()).unwrap();
    insert_player(&memory, 1, "p1");
    let recent = memory.take_recent();
    assert!(recent.commits.is_empty(), "in memory, offsets start again");
    assert_eq!(recent.next, 1);
}

#[test]
fn a_feed_subscriber_waits_for_a_commit_to_be_durable() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options::default().with_mode(Mode::Group);
    let database = Database::open(dir.path(), &module(), options).unwrap();
    let mut feed = database.feed().subscribe();
    let mut tx = database.begin_mut();
    tx.insert(PLAYER, &mut player(1, "p1", 1)).unwrap();
    // The committer does not wait: the subscriber does, from the offset it was given.
    let committed = database.commit(tx, meta("insert")).expect("committed");
    let commit = feed.try_recv().unwrap();
    database.durable(commit.offset).wait().unwrap();
    assert!(database.log().unwrap().syncs() >= 1, "durable means synced");
    drop(committed);
    let recovered = Database::open(dir.path(), &module(), options);
    assert!(
        recovered.is_err(),
        "the directory is locked while the first is open"
    );
    drop(database);
    let recovered = Database::open(dir.path(), &module(), options).unwrap();
    assert_eq!(recovered.recovery().unwrap().transactions, 1);

    let memory = Database::in_memory(&module()).unwrap();
    memory.durable(0).wait().unwrap();
}

#[test]
fn connections_are_recorded_once_and_forgotten_once() {
    let database = Database::in_memory(&module()).unwrap();
    let system = database.module_tables();
    assert!(database.is_system_table(system) && !database.is_system_table(PLAYER));
    assert_eq!(
        database.datastore().table_id(CONNECTION_TABLE),
        Some(system)
    );

    let mut tx = database.begin_mut();
    database
        .record_connection(&mut tx, ALICE, CONNECTION)
        .unwrap();
    let twice = database.record_connection(&mut tx, Identity::ZERO, CONNECTION);
    assert_eq!(twice.unwrap_err().errno(), Errno::UNIQUE_VIOLATION);
    let committed = database.commit(tx, CommitMeta::host()).expect("committed");
    let commit = committed.commit.unwrap();
    assert_eq!(commit.changes.tables[0].table, system);
    assert_eq!(database.recorded_connections(), [(ALICE, CONNECTION)]);

    let mut tx = database.begin_mut();
    assert!(database
        .forget_connection(&mut tx, ALICE, CONNECTION)
        .unwrap());
    assert!(!database
        .forget_connection(&mut tx, ALICE, CONNECTION)
        .unwrap());
    let _ = database.commit(tx, CommitMeta::host()).expect("committed");
    assert!(database.recorded_connections().is_empty());
}

#[test]
fn module_tables_may_not_take_the_hosts_names() {
    let mut module = module();
    module.tables[0].name = "__wasmod_players".into();
    let error = Database::in_memory(&module).unwrap_err();
    assert!(error.message().contains("reserved for the host"), "{error}");
}

/// Every row of every table of `database`, by table.
fn every_row(database: &Database) -> Vec<Vec<Vec<u8>>> {
    let read = database.begin_read();
    (0..database.datastore().table_count() as u32)
        .map(|table| {
            let mut rows: Vec<Vec<u8>> = read
                .scan(table)
                .unwrap()
                .iter()
                .map(|row| row.to_vec())
                .collect();
            rows.sort();
            rows
        })
        .collect()
}

/// The rows of `database` as one transaction inserting them.
fn snapshot(database: &Database) -> wasmod_datastore::TxData {
    let read = database.begin_read();
    let tables = (0..database.datastore().table_count() as u32)
        .map(|table| wasmod_datastore::TableChanges {
            table,
            inserted: read.scan(table).unwrap(),
            deleted: Vec::new(),
        })
        .collect();
    wasmod_datastore::TxData { tables }
}

#[test]
fn a_replica_takes_the_primarys_commits_in_order_and_publishes_them_as_they_were() {
    let primary = Database::in_memory(&module()).unwrap();
    insert_player(&primary, 1, "a").unwrap();
    insert_player(&primary, 2, "b").unwrap();
    let replica = Database::replica(&module(), primary.next_offset(), &snapshot(&primary)).unwrap();
    assert_eq!(replica.next_offset(), 2);
    assert_eq!(every_row(&replica), every_row(&primary));

    let mut primary_feed = primary.feed().subscribe();
    let mut replica_feed = replica.feed().subscribe();
    insert_player(&primary, 3, "c").unwrap();
    let mut tx = primary.begin_mut();
    tx.update_by_unique(PLAYER, 0, &player(1, "renamed", 9))
        .unwrap();
    tx.delete_rows(PLAYER, &player(2, "b", 1)).unwrap();
    primary
        .commit(tx, meta("update"))
        .unwrap()
        .durable
        .wait()
        .unwrap();
    for _ in 0..2 {
        let commit = primary_feed.try_recv().unwrap();
        let applied = replica.apply_replicated((*commit).clone()).unwrap();
        assert_eq!(applied, commit);
        assert_eq!(replica_feed.try_recv().unwrap(), commit);
    }
    assert_eq!(replica.next_offset(), primary.next_offset());
    assert_eq!(every_row(&replica), every_row(&primary));
}

#[test]
fn a_replica_refuses_commits_out_of_order_or_that_do_not_fit_and_changes_nothing() {
    let primary = Database::in_memory(&module()).unwrap();
    let mut feed = primary.feed().subscribe();
    for (id, name) in [(1, "a"), (2, "b"), (3, "c")] {
        insert_player(&primary, id, name).unwrap();
    }
    let commits: Vec<Arc<Commit>> = (0..3).map(|_| feed.try_recv().unwrap()).collect();
    let replica = Database::replica(&module(), 1, &wasmod_datastore::TxData::default()).unwrap();
    let before = every_row(&replica);
    let error = replica.apply_replicated((*commits[2]).clone()).unwrap_err();
    assert!(
        matches!(
            error,
            wasmod_datastore::ReplicaError::OutOfOrder {
                expected: 1,
                given: 2
            }
        ),
        "{error}"
    );
    // Commit 1 needs no row the replica lacks; the same commit deleting a row it does not
    // hold fails, and changes nothing.
    let mut missing = (*commits[1]).clone();
    missing.changes.tables[0].deleted = vec![player(9, "gone", 1).into()];
    let error = replica.apply_replicated(missing).unwrap_err();
    assert!(
        matches!(
            error,
            wasmod_datastore::ReplicaError::DoesNotApply { offset: 1, .. }
        ),
        "{error}"
    );
    assert_eq!(every_row(&replica), before);
    assert_eq!(replica.next_offset(), 1);
    replica.apply_replicated((*commits[1]).clone()).unwrap();
    assert_eq!(replica.next_offset(), 2);
}

#[test]
fn a_replica_resynced_from_a_newer_snapshot_publishes_only_the_difference() {
    let primary = Database::in_memory(&module()).unwrap();
    insert_player(&primary, 1, "a").unwrap();
    insert_player(&primary, 2, "b").unwrap();
    let replica = Database::replica(&module(), primary.next_offset(), &snapshot(&primary)).unwrap();
    assert!(replica.is_replica() && replica.offsets_are_durable());
    // The replica misses three commits: one row stays, one is renamed, one goes, one comes.
    insert_player(&primary, 3, "c").unwrap();
    let mut tx = primary.begin_mut();
    tx.update_by_unique(PLAYER, 0, &player(1, "renamed", 9))
        .unwrap();
    primary
        .commit(tx, meta("rename"))
        .unwrap()
        .durable
        .wait()
        .unwrap();
    let mut tx = primary.begin_mut();
    tx.delete_rows(PLAYER, &player(2, "b", 1)).unwrap();
    primary
        .commit(tx, meta("delete"))
        .unwrap()
        .durable
        .wait()
        .unwrap();

    let mut feed = replica.feed().subscribe();
    let commit = replica
        .resync(primary.next_offset(), &snapshot(&primary))
        .unwrap()
        .expect("the tables changed");
    assert_eq!(commit.offset, primary.next_offset() - 1);
    assert_eq!(feed.try_recv().unwrap(), commit);
    let players = commit.changes.table(PLAYER).unwrap();
    let mut inserted: Vec<Vec<u8>> = players.inserted.iter().map(|row| row.to_vec()).collect();
    inserted.sort();
    let mut expected = vec![player(1, "renamed", 9), player(3, "c", 1)];
    expected.sort();
    assert_eq!(inserted, expected);
    let mut deleted: Vec<Vec<u8>> = players.deleted.iter().map(|row| row.to_vec()).collect();
    deleted.sort();
    let mut expected = vec![player(1, "a", 1), player(2, "b", 1)];
    expected.sort();
    assert_eq!(deleted, expected);
    assert_eq!(every_row(&replica), every_row(&primary));
    assert_eq!(replica.next_offset(), primary.next_offset());

    // The same snapshot again changes nothing and publishes nothing; an older one is refused.
    assert!(replica
        .resync(primary.next_offset(), &snapshot(&primary))
        .unwrap()
        .is_none());
    assert!(feed.try_recv().is_err());
    let error = replica.resync(1, &snapshot(&primary)).unwrap_err();
    assert!(
        matches!(
            error,
            wasmod_datastore::ReplicaError::Behind { snapshot: 1, .. }
        ),
        "{error}"
    );
    // Commits go on from the snapshot's offset.
    let mut primary_feed = primary.feed().subscribe();
    insert_player(&primary, 4, "d").unwrap();
    replica
        .apply_replicated((*primary_feed.try_recv().unwrap()).clone())
        .unwrap();
    assert_eq!(every_row(&replica), every_row(&primary));
}
