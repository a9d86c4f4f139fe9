//! The commit log: round trips, group commit, torn tails, damage, another schema.

use crate::fixtures::{all, module, player, PLAYER};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use wasmod_abi::AlgebraicType;
use wasmod_datastore::durability::{self, DurabilityError, Mode, Options, Recovered};

fn options(mode: Mode) -> Options {
    Options::default().with_mode(mode)
}

fn open(dir: &Path, mode: Mode) -> Recovered {
    durability::open(dir, &module(), options(mode)).expect("the log opens")
}

/// Commits one transaction inserting player `id` and waits until it is durable.
fn commit_player(recovered: &Recovered, id: u32) {
    let mut tx = recovered.datastore.begin_mut();
    tx.insert(PLAYER, &mut player(id, &format!("p{id}"), u64::from(id)))
        .expect("the insert");
    let ticket = tx
        .try_commit_with(|changes| recovered.durability.append(&changes))
        .expect("the log takes the record");
    ticket.wait().expect("durable");
}

fn players(recovered: &Recovered) -> Vec<Vec<u8>> {
    all(&recovered.datastore.begin_read(), PLAYER)
}

fn expected(ids: std::ops::RangeInclusive<u32>) -> Vec<Vec<u8>> {
    ids.map(|id| player(id, &format!("p{id}"), u64::from(id)))
        .collect()
}

/// The only segment of the log in `dir`.
fn segment(dir: &Path) -> PathBuf {
    let mut segments: Vec<PathBuf> = fs::read_dir(dir)
        .expect("the directory")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wlog"))
        .collect();
    assert_eq!(segments.len(), 1, "{segments:?}");
    segments.remove(0)
}

/// A log of `count` committed players, closed; the segment and each record's start.
fn log_of(dir: &Path, count: u32) -> (PathBuf, Vec<u64>) {
    let recovered = open(dir, Mode::Fsync);
    let path = segment(dir);
    let mut starts = Vec::new();
    for id in 1..=count {
        starts.push(fs::metadata(&path).expect("the segment").len());
        commit_player(&recovered, id);
    }
    (path, starts)
}

#[test]
fn commits_survive_a_reopen_in_every_mode() {
    for mode in [Mode::Fsync, Mode::Group, Mode::Off] {
        let dir = tempfile::tempdir().expect("a directory");
        {
            let recovered = open(dir.path(), mode);
            assert_eq!(recovered.report.transactions, 0);
            for id in 1..=20 {
                commit_player(&recovered, id);
            }
            // An update and a delete replay too.
            let mut tx = recovered.datastore.begin_mut();
            tx.update_by_unique(PLAYER, 0, &player(3, "three", 33))
                .expect("the update");
            tx.delete_rows(PLAYER, &player(4, "p4", 4))
                .expect("the delete");
            let ticket = tx
                .try_commit_with(|changes| recovered.durability.append(&changes))
                .expect("the log takes the record");
            ticket.wait().expect("durable");
        }
        let recovered = open(dir.path(), mode);
        assert_eq!(recovered.report.transactions, 21, "{mode}");
        assert_eq!(recovered.report.torn_tail, None);
        let rows = players(&recovered);
        assert_eq!(rows.len(), 19, "{mode}");
        assert!(rows.contains(&player(3, "three", 33)));
        assert!(!rows.contains(&player(4, "p4", 4)));
        // The sequence moved past the replayed ids: a generated id is new.
        let mut tx = recovered.datastore.begin_mut();
        let mut row = player(0, "new", 1);
        tx.insert(PLAYER, &mut row).expect("a generated id");
        assert_eq!(row, player(21, "new", 1));
    }
}

#[test]
fn a_directory_is_opened_once() {
    let dir = tempfile::tempdir().expect("a directory");
    let _first = open(dir.path(), Mode::Off);
    let second = durability::open(dir.path(), &module(), options(Mode::Off));
    assert!(matches!(second, Err(DurabilityError::Locked { .. })));
}

#[test]
fn group_commit_acknowledges_after_a_shared_sync() {
    let dir = tempfile::tempdir().expect("a directory");
    let recovered = Arc::new(open(dir.path(), Mode::Group));
    let threads = 8;
    let per_thread = 25;
    let start = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads as u32)
        .map(|thread| {
            let recovered = recovered.clone();
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                for n in 0..per_thread {
                    let before = recovered.durability.syncs();
                    commit_player(&recovered, 1 + thread * 1000 + n);
                    // Acknowledged only after a sync that began after the append.
                    assert!(recovered.durability.syncs() > before);
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().expect("a committer");
    }
    let commits = threads as u64 * u64::from(per_thread);
    let syncs = recovered.durability.syncs();
    assert_eq!(recovered.durability.transactions(), commits);
    assert_eq!(
        recovered.durability.durable_transactions(),
        commits,
        "every acknowledged commit is durable"
    );
    assert!(syncs <= commits, "{syncs} syncs for {commits} commits");
    drop(recovered);
    let reopened = open(dir.path(), Mode::Group);
    assert_eq!(reopened.report.transactions, commits);
}

#[test]
fn a_ticket_is_settled_once_its_wait_would_not_block() {
    for mode in [Mode::Fsync, Mode::Group, Mode::Off] {
        let dir = tempfile::tempdir().expect("a directory");
        let recovered = open(dir.path(), mode);
        let mut tx = recovered.datastore.begin_mut();
        tx.insert(PLAYER, &mut player(1, "p1", 1))
            .expect("the insert");
        let ticket = tx
            .try_commit_with(|changes| recovered.durability.append(&changes))
            .expect("the log takes the record");
        match mode {
            // Nobody has synced yet: a lone fsync committer syncs in its wait.
            Mode::Fsync => assert!(!ticket.is_settled()),
            // Nobody waits for a write with durability off.
            Mode::Off => assert!(ticket.is_settled()),
            // The flusher settles it soon.
            _ => {}
        }
        let same = recovered
            .durability
            .ticket(ticket.offset().expect("logged"));
        ticket.wait().expect("durable");
        assert!(same.is_settled(), "{mode}: durable, so settled");
    }
}

#[test]
fn a_torn_tail_is_cut_at_every_byte_and_earlier_commits_kept() {
    let dir = tempfile::tempdir().expect("a directory");
    let (path, starts) = log_of(dir.path(), 3);
    let whole = fs::read(&path).expect("the segment");
    let last = starts[2] as usize;
    for cut in last..whole.len() {
        fs::write(&path, &whole[..cut]).expect("the cut");
        let recovered = open(dir.path(), Mode::Off);
        assert_eq!(recovered.report.transactions, 2, "cut at {cut}");
        assert_eq!(players(&recovered), expected(1..=2));
        let torn = recovered.report.torn_tail.as_ref();
        assert_eq!(torn.is_some(), cut > last, "cut at {cut}");
        if let Some(torn) = torn {
            assert_eq!(torn.offset, last as u64);
            assert_eq!(torn.bytes, (cut - last) as u64);
        }
        drop(recovered);
        assert_eq!(fs::metadata(&path).expect("the segment").len(), last as u64);
    }
}

#[test]
fn the_log_continues_after_a_torn_tail() {
    let dir = tempfile::tempdir().expect("a directory");
    let (path, _) = log_of(dir.path(), 2);
    let len = fs::metadata(&path).expect("the segment").len();
    fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|file| file.set_len(len - 3))
        .expect("the cut");
    {
        let recovered = open(dir.path(), Mode::Fsync);
        assert_eq!(recovered.report.transactions, 1);
        commit_player(&recovered, 2);
        commit_player(&recovered, 3);
    }
    let recovered = open(dir.path(), Mode::Fsync);
    assert_eq!(recovered.report.torn_tail, None);
    assert_eq!(players(&recovered), expected(1..=3));
}

#[test]
fn a_flipped_byte_in_the_last_record_is_reported_and_cut() {
    let dir = tempfile::tempdir().expect("a directory");
    let (path, starts) = log_of(dir.path(), 3);
    let whole = fs::read(&path).expect("the segment");
    for at in starts[2] as usize..whole.len() {
        let mut damaged = whole.clone();
        damaged[at] ^= 0x10;
        fs::write(&path, &damaged).expect("the damage");
        let recovered = open(dir.path(), Mode::Off);
        assert_eq!(recovered.report.transactions, 2, "flip at {at}");
        let torn = recovered.report.torn_tail.clone().expect("a torn tail");
        assert_eq!(torn.offset, starts[2]);
        assert_eq!(players(&recovered), expected(1..=2));
        drop(recovered);
        fs::write(&path, &whole).expect("the repair");
    }
}

#[test]
fn damage_in_the_middle_refuses_the_start_and_keeps_the_file() {
    let dir = tempfile::tempdir().expect("a directory");
    let (path, starts) = log_of(dir.path(), 3);
    let mut damaged = fs::read(&path).expect("the segment");
    let at = starts[1] as usize + 10;
    damaged[at] ^= 0x01;
    fs::write(&path, &damaged).expect("the damage");
    let error = durability::open(dir.path(), &module(), options(Mode::Off))
        .expect_err("the start is refused");
    let DurabilityError::Corrupt { file, offset, .. } = &error else {
        panic!("not a corruption error: {error}");
    };
    assert_eq!((file, *offset), (&path, starts[1]));
    let message = error.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(
        message.contains(&format!("byte {}", starts[1])),
        "{message}"
    );
    assert_eq!(
        fs::read(&path).expect("the segment"),
        damaged,
        "nothing truncated"
    );
}

#[test]
fn a_log_of_other_tables_is_refused() {
    let dir = tempfile::tempdir().expect("a directory");
    log_of(dir.path(), 1);
    let mut other = module();
    other.tables.pop();
    let error = durability::open(dir.path(), &other, options(Mode::Off))
        .expect_err("another schema is refused");
    assert!(
        matches!(error, DurabilityError::Incompatible { .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("table `counter` was removed"),
        "{error}"
    );
    // Nothing changed: the old module still opens its data.
    assert_eq!(open(dir.path(), Mode::Off).report.transactions, 1);
}

#[test]
fn a_segment_of_other_tables_is_refused() {
    let dir = tempfile::tempdir().expect("a directory");
    let (path, _) = log_of(dir.path(), 1);
    let other = tempfile::tempdir().expect("a directory");
    let mut def = module();
    def.tables.pop();
    drop(durability::open(other.path(), &def, options(Mode::Off)).expect("a log"));
    // A segment of the other module's log, copied beside this one's.
    fs::copy(
        other.path().join("00000000000000000000.wlog"),
        dir.path().join("00000000000000000001.wlog"),
    )
    .expect("the copy");
    let error = durability::open(dir.path(), &module(), options(Mode::Off))
        .expect_err("another schema is refused");
    assert!(
        matches!(error, DurabilityError::SchemaMismatch { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("different tables"), "{error}");
    assert!(path.exists());
}

/// The fixture module with one more table, `extra (k: u32 pk)`, first, so every old table
/// moves to a new id.
fn with_extra_table() -> wasmod_abi::ModuleDef {
    let mut def = module();
    let extra = crate::fixtures::table(
        &mut def.typespace,
        "extra",
        &[("k", AlgebraicType::U32)],
        Some(0),
        &[("extra_k", &[0], true)],
        &[],
    );
    def.tables.insert(0, extra);
    def
}

#[test]
fn a_compatible_upgrade_keeps_the_data() {
    let dir = tempfile::tempdir().expect("a directory");
    log_of(dir.path(), 3);
    let upgraded = with_extra_table();
    let player_now = PLAYER + 1;
    {
        let recovered =
            durability::open(dir.path(), &upgraded, options(Mode::Fsync)).expect("the upgrade");
        assert_eq!(recovered.report.transactions, 3);
        assert!(recovered.report.upgraded);
        assert!(
            !recovered.report.rows_reencoded,
            "a table was added: every stored row is as it was"
        );
        let read = recovered.datastore.begin_read();
        assert_eq!(all(&read, player_now), expected(1..=3));
        drop(read);
        let mut tx = recovered.datastore.begin_mut();
        tx.insert(player_now, &mut player(0, "p4", 4))
            .expect("an insert");
        tx.insert(0, &mut wasmod_abi::encoding::to_vec(&7u32))
            .expect("an insert into the new table");
        let ticket = tx
            .try_commit_with(|changes| recovered.durability.append(&changes))
            .expect("the log takes the record");
        ticket.wait().expect("durable");
    }
    let recovered =
        durability::open(dir.path(), &upgraded, options(Mode::Fsync)).expect("a reopen");
    assert_eq!(recovered.report.transactions, 4);
    let read = recovered.datastore.begin_read();
    assert_eq!(all(&read, player_now), expected(1..=4));
    assert_eq!(read.row_count(0).expect("the new table"), 1);
    drop(read);
    drop(recovered);
    // Going back would drop a table: refused.
    let error = durability::open(dir.path(), &module(), options(Mode::Off))
        .expect_err("a downgrade is refused");
    assert!(
        error.to_string().contains("table `extra` was removed"),
        "{error}"
    );
}

fn files(dir: &Path, extension: &str) -> usize {
    fs::read_dir(dir)
        .expect("the directory")
        .filter(|entry| {
            entry
                .as_ref()
                .is_ok_and(|entry| entry.path().extension().is_some_and(|ext| ext == extension))
        })
        .count()
}

#[test]
fn a_snapshot_replaces_the_log_it_covers() {
    for mode in [Mode::Fsync, Mode::Group, Mode::Off] {
        let dir = tempfile::tempdir().expect("a directory");
        {
            let recovered = open(dir.path(), mode);
            for id in 1..=10 {
                commit_player(&recovered, id);
            }
            let info = recovered
                .durability
                .snapshot(&recovered.datastore)
                .expect("a snapshot");
            assert_eq!((info.offset, info.rows), (10, 10));
            for id in 11..=15 {
                commit_player(&recovered, id);
            }
            let info = recovered
                .durability
                .snapshot(&recovered.datastore)
                .expect("a second snapshot");
            assert_eq!((info.offset, info.rows), (15, 15));
            commit_player(&recovered, 16);
        }
        assert_eq!(
            files(dir.path(), "wsnap"),
            1,
            "{mode}: older snapshots removed"
        );
        assert_eq!(
            files(dir.path(), "wlog"),
            1,
            "{mode}: covered segments removed"
        );
        let recovered = open(dir.path(), mode);
        assert_eq!(recovered.report.transactions, 16, "{mode}");
        assert_eq!(players(&recovered), expected(1..=16), "{mode}");
        // Sequences continue past the snapshot's rows.
        let mut tx = recovered.datastore.begin_mut();
        let mut row = player(0, "new", 1);
        tx.insert(PLAYER, &mut row).expect("a generated id");
        assert_eq!(row, player(17, "new", 1));
    }
}

#[test]
fn segments_a_crash_left_behind_a_snapshot_are_skipped() {
    let dir = tempfile::tempdir().expect("a directory");
    let (path, _) = log_of(dir.path(), 5);
    let old = fs::read(&path).expect("the segment");
    {
        let recovered = open(dir.path(), Mode::Fsync);
        recovered
            .durability
            .snapshot(&recovered.datastore)
            .expect("a snapshot");
        commit_player(&recovered, 6);
    }
    // As if the crash came between the snapshot's rename and the removal of the old log.
    fs::write(&path, &old).expect("the old segment back");
    let recovered = open(dir.path(), Mode::Fsync);
    assert_eq!(recovered.report.transactions, 6);
    assert_eq!(players(&recovered), expected(1..=6));
}

#[test]
fn a_damaged_snapshot_refuses_the_start() {
    let dir = tempfile::tempdir().expect("a directory");
    {
        let recovered = open(dir.path(), Mode::Fsync);
        commit_player(&recovered, 1);
        recovered
            .durability
            .snapshot(&recovered.datastore)
            .expect("a snapshot");
    }
    let snapshot = fs::read_dir(dir.path())
        .expect("the directory")
        .map(|entry| entry.expect("an entry").path())
        .find(|path| path.extension().is_some_and(|ext| ext == "wsnap"))
        .expect("the snapshot");
    let mut bytes = fs::read(&snapshot).expect("the snapshot");
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    fs::write(&snapshot, &bytes).expect("the damage");
    let error = durability::open(dir.path(), &module(), options(Mode::Off))
        .expect_err("the start is refused");
    assert!(error.to_string().contains("snapshot is damaged"), "{error}");
}

#[test]
fn snapshots_are_taken_in_the_background_when_due() {
    let dir = tempfile::tempdir().expect("a directory");
    let mut every = Options::default().with_mode(Mode::Group);
    every.snapshot_every = Some(4);
    {
        let recovered = durability::open(dir.path(), &module(), every).expect("the log");
        let datastore = Arc::new(recovered.datastore);
        for id in 1..=9 {
            let mut tx = datastore.begin_mut();
            tx.insert(PLAYER, &mut player(id, &format!("p{id}"), u64::from(id)))
                .expect("the insert");
            let ticket = tx
                .try_commit_with(|changes| recovered.durability.append(&changes))
                .expect("the log takes the record");
            ticket.wait().expect("durable");
            recovered.durability.snapshot_if_due(&datastore);
        }
        let waited = std::time::Instant::now();
        while files(dir.path(), "wsnap") == 0 {
            assert!(waited.elapsed().as_secs() < 10, "no snapshot was taken");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    // The snapshot's thread holds the log until it has finished.
    let waited = std::time::Instant::now();
    let recovered = loop {
        match durability::open(dir.path(), &module(), every) {
            Err(DurabilityError::Locked { .. }) if waited.elapsed().as_secs() < 10 => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            opened => break opened.expect("the log"),
        }
    };
    assert_eq!(recovered.report.transactions, 9);
    assert_eq!(players(&recovered), expected(1..=9));
}

#[test]
fn recovery_keeps_the_last_transactions_it_is_asked_for() {
    let dir = tempfile::tempdir().expect("a directory");
    drop(log_of(dir.path(), 10));
    let reopen = |commits, bytes| {
        let options = options(Mode::Fsync).with_recent(commits, bytes);
        durability::open(dir.path(), &module(), options).expect("the log opens")
    };
    let offsets = |recovered: &Recovered| -> Vec<u64> {
        recovered.recent.iter().map(|(offset, _)| *offset).collect()
    };
    let none = reopen(0, usize::MAX);
    assert!(none.recent.is_empty(), "none asked for");
    drop(none);

    let last = reopen(4, usize::MAX);
    assert_eq!(offsets(&last), vec![6, 7, 8, 9]);
    for (offset, changes) in &last.recent {
        let id = *offset as u32 + 1;
        assert_eq!(changes.tables.len(), 1);
        assert_eq!(changes.tables[0].table, PLAYER);
        let inserted: Vec<&[u8]> = changes.tables[0]
            .inserted
            .iter()
            .map(|row| &row[..])
            .collect();
        assert_eq!(
            inserted,
            vec![&player(id, &format!("p{id}"), u64::from(id))[..]]
        );
    }
    drop(last);

    let row = player(10, "p10", 10).len();
    let by_bytes = reopen(100, 3 * row);
    assert_eq!(offsets(&by_bytes), vec![7, 8, 9], "three rows' worth");
}

/// The log's directory (and missing parents) are `0700`, its segments, lock file and
/// snapshots `0600`, whatever the process's umask: another local user reads nothing.
#[cfg(unix)]
#[test]
fn the_log_is_private_to_its_owner() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("a directory");
    let log = dir.path().join("nested").join("log");
    let recovered = open(&log, Mode::Fsync);
    commit_player(&recovered, 1);
    recovered
        .durability
        .snapshot(&recovered.datastore)
        .expect("a snapshot");
    commit_player(&recovered, 2);
    let mode = |path: &Path| fs::metadata(path).expect("exists").permissions().mode() & 0o777;
    assert_eq!(mode(&log), 0o700);
    assert_eq!(mode(&dir.path().join("nested")), 0o700);
    let entries: Vec<PathBuf> = fs::read_dir(&log)
        .expect("the log's directory")
        .map(|entry| entry.expect("an entry").path())
        .collect();
    assert!(entries
        .iter()
        .any(|path| path.extension().is_some_and(|e| e == "wlog")));
    assert!(entries
        .iter()
        .any(|path| path.extension().is_some_and(|e| e == "wsnap")));
    for path in &entries {
        assert_eq!(mode(path), 0o600, "{}", path.display());
    }
}

/// The next generated id of `recovered`'s player table, by inserting a player with id `0`
/// (rolled back).
fn next_player_id(recovered: &Recovered, table: u32) -> Vec<u8> {
    let mut tx = recovered.datastore.begin_mut();
    let mut row = player(0, "next", 0);
    tx.insert(table, &mut row).expect("a generated id");
    tx.rollback();
    row
}

/// Ids given to rows that were deleted since are not given again after a restart from a
/// snapshot (which holds only the live rows), nor after an upgrade (which starts from one).
#[test]
fn generated_ids_of_deleted_rows_are_not_given_again_after_a_snapshot_or_an_upgrade() {
    let dir = tempfile::tempdir().expect("a directory");
    {
        let recovered = open(dir.path(), Mode::Fsync);
        for id in 1..=5 {
            commit_player(&recovered, id);
        }
        let mut tx = recovered.datastore.begin_mut();
        let mut doomed = player(4, "p4", 4);
        doomed.extend(player(5, "p5", 5));
        assert_eq!(tx.delete_rows(PLAYER, &doomed).expect("deleted"), 2);
        let ticket = tx
            .try_commit_with(|changes| recovered.durability.append(&changes))
            .expect("the log takes the record");
        ticket.wait().expect("durable");
        recovered
            .durability
            .snapshot(&recovered.datastore)
            .expect("a snapshot");
    }
    assert_eq!(files(dir.path(), "wlog"), 1, "the log before it is gone");
    let recovered = open(dir.path(), Mode::Fsync);
    assert_eq!(players(&recovered), expected(1..=3));
    assert_eq!(next_player_id(&recovered, PLAYER), player(6, "next", 0));
    drop(recovered);

    let upgraded = with_extra_table();
    let recovered =
        durability::open(dir.path(), &upgraded, options(Mode::Fsync)).expect("the upgrade");
    assert_eq!(next_player_id(&recovered, PLAYER + 1), player(6, "next", 0));
}

/// The players a run of transactions read back from the log inserted, in order.
fn inserted(run: &[(u64, wasmod_datastore::TxData)]) -> Vec<Vec<u8>> {
    run.iter()
        .flat_map(|(_, changes)| changes.tables.iter())
        .flat_map(|table| table.inserted.iter().map(|row| row.to_vec()))
        .collect()
}

#[test]
fn durable_transactions_are_read_back_by_offset_across_segments() {
    let dir = tempfile::tempdir().expect("a directory");
    let mut options = options(Mode::Group);
    options.max_segment_bytes = 256;
    let recovered = durability::open(dir.path(), &module(), options).expect("the log opens");
    for id in 1..=30 {
        commit_player(&recovered, id);
    }
    assert!(
        files(dir.path(), "wlog") > 2,
        "the test needs several segments"
    );
    let log = &recovered.durability;
    let run = log.read(4, 25).expect("read").expect("in the log");
    let offsets: Vec<u64> = run.iter().map(|(offset, _)| *offset).collect();
    assert_eq!(offsets, (4..25).collect::<Vec<_>>());
    assert_eq!(inserted(&run), expected(5..=25));
    // Past the durable end: the run stops there; from it, nothing yet.
    assert_eq!(
        log.read(28, 100).expect("read").expect("in the log").len(),
        2
    );
    assert_eq!(log.read(30, 100).expect("read"), Some(Vec::new()));
    // A snapshot covers the first 30 and removes their segments.
    log.snapshot(&recovered.datastore).expect("the snapshot");
    assert_eq!(log.read(0, 10).expect("read"), None);
    commit_player(&recovered, 31);
    let after = log.read(30, 31).expect("read").expect("in the log");
    assert_eq!(inserted(&after), expected(31..=31));
}

#[test]
fn encoded_changes_round_trip() {
    let dir = tempfile::tempdir().expect("a directory");
    let recovered = open(dir.path(), Mode::Fsync);
    commit_player(&recovered, 7);
    let run = recovered
        .durability
        .read(0, 1)
        .expect("read")
        .expect("in the log");
    let bytes = durability::encode_changes(0, &run[0].1);
    assert_eq!(
        durability::decode_changes(&bytes),
        Ok((0, run[0].1.clone()))
    );
    assert!(durability::decode_changes(&bytes[..bytes.len() - 1]).is_err());
}
