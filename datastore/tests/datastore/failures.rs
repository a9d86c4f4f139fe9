//! A log whose disk fails: what is refused, what memory keeps, what a restart finds. The
//! failures are injected at the segment files' writes (`durability::Faults`), so everything
//! above them, the writer, the database and recovery, runs as with a full disk.

use crate::fixtures::{all, module, player, PLAYER};
use std::fs;
use std::path::Path;
use wasmod_datastore::durability::{DurabilityError, Faults, Mode, Options};
use wasmod_datastore::{CommitMeta, Committed, Database};

fn open(dir: &Path, options: Options) -> Database {
    Database::open(dir, &module(), options).expect("the database opens")
}

/// Commits one transaction inserting player `id`; what the database answered.
fn insert(database: &Database, id: u32) -> Result<Committed, DurabilityError> {
    let mut tx = database.begin_mut();
    tx.insert(PLAYER, &mut player(id, &format!("p{id}"), 1))
        .expect("the insert");
    database.commit(tx, CommitMeta::host())
}

fn players(database: &Database) -> Vec<Vec<u8>> {
    all(&database.begin_read(), PLAYER)
}

fn segment_bytes(dir: &Path) -> u64 {
    fs::read_dir(dir)
        .expect("the directory")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wlog"))
        .map(|path| fs::metadata(path).expect("a segment").len())
        .sum()
}

#[test]
fn after_a_failed_write_every_commit_is_refused_unapplied_and_a_restart_finds_the_answered_ones() {
    for mode in [Mode::Fsync, Mode::Group] {
        let dir = tempfile::tempdir().expect("a directory");
        let faults = Faults::default().failing_writes_after(3);
        let answered_bytes;
        {
            let database = open(
                dir.path(),
                Options::default().with_mode(mode).with_faults(faults),
            );
            for id in 1..=3 {
                let committed = insert(&database, id).expect("logged");
                committed.durable.wait().expect("durable");
            }
            answered_bytes = segment_bytes(dir.path());
            assert_eq!(database.log_failure(), None, "{mode}");

            // The fourth write fails: its commit is told so, and the log has failed.
            let failed = insert(&database, 4).expect("queued before the failure");
            let error = failed.durable.wait().expect_err("the write fails");
            assert!(
                error.to_string().contains("no space left"),
                "{mode}: {error}"
            );
            let reason = database.log_failure().expect("the log has failed");
            assert!(reason.contains("no space left"), "{mode}: {reason}");

            // From now on nothing is applied: refused, rolled back, no offset taken.
            let before = (players(&database), database.next_offset());
            for id in 5..=7 {
                match insert(&database, id) {
                    Err(DurabilityError::Failed(why)) => assert_eq!(why, reason, "{mode}"),
                    other => panic!("{mode}: commit {id} was not refused: {other:?}"),
                }
            }
            assert_eq!(
                (players(&database), database.next_offset()),
                before,
                "{mode}"
            );
            // Only the commit that met the failure is in memory beyond the durable ones.
            assert_eq!(players(&database).len(), 4, "{mode}");
            // The half-written record was cut off again.
            assert_eq!(segment_bytes(dir.path()), answered_bytes, "{mode}");
        }
        let database = open(dir.path(), Options::default().with_mode(mode));
        let recovery = database.recovery().expect("recovered from the log");
        assert_eq!(recovery.transactions, 3, "{mode}");
        assert_eq!(
            recovery.torn_tail, None,
            "{mode}: the failed write was cut off"
        );
        let expected: Vec<Vec<u8>> = (1..=3).map(|id| player(id, &format!("p{id}"), 1)).collect();
        assert_eq!(players(&database), expected, "{mode}");
        // And the log takes commits again.
        insert(&database, 8)
            .expect("logged")
            .durable
            .wait()
            .expect("durable");
    }
}
