//! A log whose disk fails, and payloads larger than a frame: what is refused, what memory
//! keeps, what a restart finds. The failures are injected at the log's own file operations
//! (`durability::Faults`), so everything above them, the writer, snapshots, the database and
//! recovery, runs as with a full or damaging disk; the frame limit is lowered
//! (`Options::max_frame_bytes`) instead of writing 4 GiB.

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

/// The files of `dir` with `extension`, sorted.
fn files(dir: &Path, extension: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = fs::read_dir(dir)
        .expect("the directory")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.to_string_lossy().ends_with(extension))
        .collect();
    files.sort();
    files
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

fn limited(bytes: u64) -> Options {
    let mut options = Options::default().with_mode(Mode::Fsync);
    options.max_frame_bytes = bytes;
    options
}

#[test]
fn a_commit_too_large_for_a_frame_is_refused_before_anything_is_written_and_the_log_goes_on() {
    let dir = tempfile::tempdir().expect("a directory");
    {
        let database = open(dir.path(), limited(200));
        let before = segment_bytes(dir.path());
        let mut tx = database.begin_mut();
        tx.insert(PLAYER, &mut player(1, &"x".repeat(300), 1))
            .expect("the insert");
        match database.commit(tx, CommitMeta::host()) {
            Err(DurabilityError::TooLarge { bytes, limit: 200 }) => assert!(bytes > 300),
            other => panic!("not refused: {other:?}"),
        }
        assert!(
            players(&database).is_empty(),
            "the refused commit is not applied"
        );
        assert_eq!(database.next_offset(), 0);
        assert_eq!(segment_bytes(dir.path()), before, "nothing was written");
        assert_eq!(database.log_failure(), None, "the log is not poisoned");
        insert(&database, 2)
            .expect("logged")
            .durable
            .wait()
            .expect("durable");
    }
    let database = open(dir.path(), Options::default());
    assert_eq!(players(&database), vec![player(2, "p2", 1)]);
    assert_eq!(database.recovery().expect("recovered").torn_tail, None);
}

/// The payload lengths of the frames of the snapshot `file`.
fn snapshot_frames(file: &Path) -> Vec<u64> {
    let bytes = fs::read(file).expect("the snapshot");
    let mut at = 52;
    let mut lengths = Vec::new();
    while at < bytes.len() {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("a length"));
        lengths.push(u64::from(len));
        at += 8 + len as usize;
    }
    assert_eq!(at, bytes.len(), "whole frames");
    lengths
}

#[test]
fn a_snapshot_larger_than_a_frame_is_split_into_frames_and_recovers_whole() {
    let dir = tempfile::tempdir().expect("a directory");
    {
        let database = open(dir.path(), limited(256));
        for id in 1..=50 {
            insert(&database, id)
                .expect("logged")
                .durable
                .wait()
                .expect("durable");
        }
        let log = database.log().expect("a log");
        let info = log.snapshot(&database.datastore()).expect("the snapshot");
        assert_eq!(info.rows, 50);
        let frames = snapshot_frames(&info.file);
        assert!(frames.len() > 4, "split: {frames:?}");
        assert!(frames.iter().all(|len| *len <= 256), "{frames:?}");
        assert!(files(dir.path(), ".wsnap.tmp").is_empty());
    }
    for options in [limited(256), Options::default()] {
        let database = open(dir.path(), options);
        let expected: Vec<Vec<u8>> = (1..=50)
            .map(|id| player(id, &format!("p{id}"), 1))
            .collect();
        assert_eq!(players(&database), expected);
        assert_eq!(database.recovery().expect("recovered").transactions, 50);
    }
}

#[test]
fn a_snapshot_that_does_not_read_back_as_written_deletes_nothing_and_the_data_still_opens() {
    let dir = tempfile::tempdir().expect("a directory");
    let commit = |database: &Database, ids: std::ops::RangeInclusive<u32>| {
        for id in ids {
            insert(database, id)
                .expect("logged")
                .durable
                .wait()
                .expect("durable");
        }
    };
    {
        let database = open(dir.path(), Options::default());
        commit(&database, 1..=5);
        let log = database.log().expect("a log");
        log.snapshot(&database.datastore())
            .expect("a good snapshot");
        commit(&database, 6..=10);
    }
    let kept = (files(dir.path(), ".wsnap"), files(dir.path(), ".wlog"));
    {
        let faults = Faults::default().corrupting_snapshots();
        let database = open(dir.path(), Options::default().with_faults(faults));
        commit(&database, 11..=12);
        let log = database.log().expect("a log");
        let error = log
            .snapshot(&database.datastore())
            .expect_err("the damaged snapshot is refused");
        assert!(matches!(error, DurabilityError::Corrupt { .. }), "{error}");
        // Nothing was deleted: the old snapshot and every segment, sealed or open, are there,
        // and the damaged file is gone.
        let (snapshots, segments) = (files(dir.path(), ".wsnap"), files(dir.path(), ".wlog"));
        assert_eq!(snapshots, kept.0);
        assert!(
            kept.1.iter().all(|segment| segments.contains(segment)),
            "{segments:?}"
        );
        assert!(files(dir.path(), ".wsnap.tmp").is_empty());
        // The log goes on.
        commit(&database, 13..=13);
    }
    let database = open(dir.path(), Options::default());
    let expected: Vec<Vec<u8>> = (1..=13)
        .map(|id| player(id, &format!("p{id}"), 1))
        .collect();
    assert_eq!(players(&database), expected);
}

#[test]
fn a_snapshot_of_tables_without_sequences_opens_again() {
    // Its sequences' frame is four bytes (a count of zero), shorter than any log record.
    let mut def = module();
    for table in &mut def.tables {
        table.auto_inc.clear();
    }
    let dir = tempfile::tempdir().expect("a directory");
    {
        let database = Database::open(dir.path(), &def, Options::default()).expect("opens");
        insert(&database, 1)
            .expect("logged")
            .durable
            .wait()
            .expect("durable");
        let log = database.log().expect("a log");
        log.snapshot(&database.datastore()).expect("the snapshot");
    }
    let database = Database::open(dir.path(), &def, Options::default()).expect("opens again");
    assert_eq!(players(&database), vec![player(1, "p1", 1)]);
}
