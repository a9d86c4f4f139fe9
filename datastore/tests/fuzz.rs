//! Property tests of the decoders that read the commit log's files: records
//! ([`durability::decode_changes`]) and recovery ([`durability::open`]) over segments and
//! snapshots whose bytes were damaged at rest.
//!
//! Records get valid encodings (which must round-trip), mutated ones (bit flips, cuts,
//! counts set to huge values) and arbitrary bytes, within an allocation bound. Recovery gets
//! a log of a few commits whose segment or snapshot is mutated: as raw bytes (the frame's
//! checksum must catch the damage), or one record's payload mutated and framed again with a
//! matching checksum (so that the record decoder and the row checks are what stand between
//! the damage and the tables). Recovery must never panic, must load only rows that are values
//! of their table's type, must leave a log that opens again to the same rows, and must
//! recover a log cut anywhere (a torn tail) to exactly the commits before the cut.
//! `WASMOD_FUZZ_CASES` sets the number of cases (see `docs/testing.md`).

use proptest::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};
use wasmod_abi::{AlgebraicType, IndexDef, ModuleDef, Reader, TableDef, Typespace, Value};
use wasmod_datastore::durability::{self, Mode, Options, Recovered};
use wasmod_datastore::{Row, TableChanges, TxData};
use wasmod_fuzzing::alloc::{allocated, is_counting, Counting};
use wasmod_fuzzing::{config, mutate, mutations, Mutation};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A segment's header: magic, version, schema hash, first offset (`docs/durability.md`).
const SEGMENT_HEADER: usize = 8 + 4 + 32 + 8;

/// A frame's header: the payload's length and its CRC-32.
const FRAME_HEADER: usize = 8;

/// The most bytes decoding a record of `n` bytes may request: 32 per byte (each row takes
/// at least its 4-byte length, and costs a slot in its vector and an allocation of its own;
/// each table at least 12 bytes, and its 56-byte entry in a vector grown by doubling), and
/// 128 KiB for the first tables the decoder reserves room for whatever the bytes say.
fn record_allocation_bound(n: usize) -> usize {
    32 * n + (128 << 10)
}

fn changes() -> impl Strategy<Value = TxData> {
    let rows = || {
        prop::collection::vec(prop::collection::vec(any::<u8>(), 0..24), 0..4)
            .prop_map(|rows| rows.iter().map(|row| Row::from(&row[..])).collect())
    };
    let table =
        (any::<u32>(), rows(), rows()).prop_map(|(table, inserted, deleted)| TableChanges {
            table,
            inserted,
            deleted,
        });
    prop::collection::vec(table, 0..4).prop_map(|tables| TxData { tables })
}

/// Decodes `bytes` as a record within its allocation bound; a record that decodes encodes
/// back to exactly `bytes` (the encoding has one form, and trailing bytes are refused).
fn check_record_decoder(bytes: &[u8]) -> Option<(u64, TxData)> {
    let (decoded, requested) = allocated(|| durability::decode_changes(bytes));
    let bound = record_allocation_bound(bytes.len());
    assert!(
        requested <= bound,
        "decoding a record of {} bytes requested {requested} bytes (bound {bound})",
        bytes.len()
    );
    let (offset, changes) = decoded.ok()?;
    assert_eq!(durability::encode_changes(offset, &changes), bytes);
    Some((offset, changes))
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn records_round_trip(offset in any::<u64>(), changes in changes()) {
        let bytes = durability::encode_changes(offset, &changes);
        prop_assert_eq!(check_record_decoder(&bytes), Some((offset, changes)));
    }

    #[test]
    fn mutated_records_are_refused_or_re_encode(
        offset in any::<u64>(),
        changes in changes(),
        damage in mutations(),
    ) {
        check_record_decoder(&mutate(&durability::encode_changes(offset, &changes), &damage));
    }

    #[test]
    fn arbitrary_bytes_are_refused_or_re_encode(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        check_record_decoder(&bytes);
    }
}

/// One table `item (id: u64 primary key, auto-increment; name: String; tags: Vec<u8>;
/// score: Option<i32>)`.
fn module() -> ModuleDef {
    use AlgebraicType as T;
    let mut typespace = Typespace::default();
    let columns = [
        ("id", T::U64),
        ("name", T::String),
        ("tags", T::Array(Box::new(T::U8))),
        ("score", T::Option(Box::new(T::I32))),
    ];
    let table = TableDef {
        primary_key: Some(0),
        indexes: vec![IndexDef {
            name: "item_id".to_owned(),
            columns: vec![0],
            unique: true,
        }],
        auto_inc: vec![0],
        ..TableDef::of_columns(&mut typespace, "Item", "item", &columns)
    };
    ModuleDef {
        typespace,
        tables: vec![table],
        ..ModuleDef::default()
    }
}

/// A row of `item`: its id, a name, tags and a score.
#[derive(Clone, Debug)]
struct Item {
    id: u64,
    name: String,
    tags: Vec<u8>,
    score: Option<i32>,
}

impl Item {
    fn encode(&self) -> Vec<u8> {
        wasmod_abi::encoding::to_vec(&(self.id, self.name.clone(), self.tags.clone(), self.score))
    }
}

fn item() -> impl Strategy<Value = Item> {
    (
        1..64u64,
        "[a-zé]{0,8}",
        prop::collection::vec(any::<u8>(), 0..8),
        any::<Option<i32>>(),
    )
        .prop_map(|(id, name, tags, score)| Item {
            id,
            name,
            tags,
            score,
        })
}

/// One commit: rows to insert, and whether to delete the oldest row left first.
fn commits() -> impl Strategy<Value = Vec<(bool, Vec<Item>)>> {
    prop::collection::vec((any::<bool>(), prop::collection::vec(item(), 1..3)), 1..6)
}

fn open(dir: &Path) -> Result<Recovered, durability::DurabilityError> {
    durability::open(dir, &module(), Options::default().with_mode(Mode::Off))
}

/// The rows of `item`, sorted.
fn rows(recovered: &Recovered) -> Vec<Vec<u8>> {
    let tx = recovered.datastore.begin_read();
    let mut rows: Vec<Vec<u8>> = tx
        .scan(0)
        .expect("the table")
        .iter()
        .map(|row| row.to_vec())
        .collect();
    rows.sort();
    rows
}

/// Writes a log of `commits` into `dir`, taking a snapshot after the first `snapshot_after`
/// of them if given; returns the rows after each commit that wrote a record (the state
/// before any first), and closes the log.
fn write_log(
    dir: &Path,
    commits: &[(bool, Vec<Item>)],
    snapshot_after: Option<usize>,
) -> Vec<Vec<Vec<u8>>> {
    let recovered = open(dir).expect("a new log opens");
    let mut states = vec![rows(&recovered)];
    for (index, (delete, items)) in commits.iter().enumerate() {
        let mut tx = recovered.datastore.begin_mut();
        if *delete {
            if let Some(oldest) = states.last().and_then(|rows| rows.first()) {
                tx.delete_rows(0, oldest).expect("the delete");
            }
        }
        for item in items {
            // Ids repeat across commits: a duplicate is refused and leaves the row out.
            let _ = tx.insert(0, &mut item.encode());
        }
        let logged = tx.try_commit_with(|changes| {
            let logged = !changes.is_empty();
            recovered
                .durability
                .append(&changes)?
                .wait()
                .map(|()| logged)
        });
        // A commit that changed nothing writes no record.
        if logged.expect("the commit is written") {
            states.push(rows(&recovered));
        }
        if snapshot_after == Some(index + 1) {
            recovered
                .durability
                .snapshot(&recovered.datastore)
                .expect("the snapshot");
        }
    }
    states
}

/// The files of `dir` with extension `extension`.
fn files(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .expect("the directory")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == extension))
        .collect();
    files.sort();
    files
}

/// The frames of a segment or snapshot's bytes after its header: each one's start and end.
fn frames(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut frames = Vec::new();
    let mut at = SEGMENT_HEADER;
    while let Some(header) = bytes.get(at..at + FRAME_HEADER) {
        let len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let end = at + FRAME_HEADER + len;
        if end > bytes.len() {
            break;
        }
        frames.push((at, end));
        at = end;
    }
    frames
}

/// `bytes` with the payload of frame `which` (of `frames`) mutated by `damage` and framed
/// again with its length and a matching checksum.
fn reframed(bytes: &[u8], which: usize, damage: &[Mutation]) -> Vec<u8> {
    let found = frames(bytes);
    let Some(&(start, end)) = found.get(which % found.len().max(1)) else {
        return bytes.to_vec();
    };
    let payload = mutate(&bytes[start + FRAME_HEADER..end], damage);
    let mut out = bytes[..start].to_vec();
    out.extend_from_slice(
        &u32::try_from(payload.len())
            .unwrap_or(u32::MAX)
            .to_le_bytes(),
    );
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out.extend_from_slice(&bytes[end..]);
    out
}

/// Whatever recovery makes of `dir`, it must not panic; if it opens the log, every row it
/// loaded is a value of the row type, and opening the log again (after any torn tail was
/// cut) gives the same rows and finds nothing more to cut. Returns the rows, if it opened.
fn check_recovery(dir: &Path) -> Option<Vec<Vec<u8>>> {
    let recovered = open(dir).ok()?;
    let def = module();
    let row_type = &def.tables[0].row_type;
    let first = rows(&recovered);
    for row in &first {
        let mut reader = Reader::new(row);
        let decoded = Value::decode(row_type, &def.typespace, &mut reader);
        assert!(
            decoded.is_ok() && reader.remaining() == 0,
            "recovery loaded a row that is not an item: {row:?}"
        );
    }
    drop(recovered);
    let again = open(dir).expect("a log that opened once opens again");
    assert_eq!(
        again.report.torn_tail, None,
        "the torn tail was cut the first time"
    );
    assert_eq!(rows(&again), first, "the same rows the second time");
    Some(first)
}

/// The one segment in `dir`, read.
fn segment(dir: &Path) -> (PathBuf, Vec<u8>) {
    let segments = files(dir, "wlog");
    assert_eq!(segments.len(), 1, "{segments:?}");
    let bytes = fs::read(&segments[0]).expect("the segment");
    (segments[0].clone(), bytes)
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn a_log_cut_anywhere_recovers_the_commits_before_the_cut(commits in commits(), cut in any::<u16>()) {
        let dir = tempfile::tempdir().expect("a directory");
        let states = write_log(dir.path(), &commits, None);
        let (path, bytes) = segment(dir.path());
        let cut = SEGMENT_HEADER + usize::from(cut) % (bytes.len() - SEGMENT_HEADER + 1);
        fs::write(&path, &bytes[..cut]).expect("the cut");
        let whole = frames(&bytes).iter().filter(|(_, end)| *end <= cut).count();
        prop_assert_eq!(check_recovery(dir.path()), Some(states[whole].clone()));
    }

    #[test]
    fn a_damaged_segment_is_refused_or_recovered(commits in commits(), damage in mutations()) {
        let dir = tempfile::tempdir().expect("a directory");
        write_log(dir.path(), &commits, None);
        let (path, bytes) = segment(dir.path());
        fs::write(&path, mutate(&bytes, &damage)).expect("the damage");
        check_recovery(dir.path());
    }

    #[test]
    fn a_damaged_record_with_a_valid_checksum_is_refused_or_recovered(
        commits in commits(),
        which in any::<usize>(),
        damage in mutations(),
    ) {
        let dir = tempfile::tempdir().expect("a directory");
        write_log(dir.path(), &commits, None);
        let (path, bytes) = segment(dir.path());
        fs::write(&path, reframed(&bytes, which, &damage)).expect("the damage");
        check_recovery(dir.path());
    }

    #[test]
    fn arbitrary_bytes_after_a_segment_header_are_refused_or_recovered(
        commits in commits(),
        tail in prop::collection::vec(any::<u8>(), 0..128),
    ) {
        let dir = tempfile::tempdir().expect("a directory");
        write_log(dir.path(), &commits, None);
        let (path, bytes) = segment(dir.path());
        let mut damaged = bytes[..SEGMENT_HEADER].to_vec();
        damaged.extend_from_slice(&tail);
        fs::write(&path, damaged).expect("the damage");
        check_recovery(dir.path());
    }

    #[test]
    fn a_damaged_snapshot_is_refused_or_recovered(
        commits in commits(),
        which in any::<usize>(),
        damage in mutations(),
        checksummed in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().expect("a directory");
        let states = write_log(dir.path(), &commits, Some(1));
        let snapshots = files(dir.path(), "wsnap");
        prop_assert_eq!(snapshots.len(), 1);
        let bytes = fs::read(&snapshots[0]).expect("the snapshot");
        let damaged = if checksummed {
            reframed(&bytes, which, &damage)
        } else {
            mutate(&bytes, &damage)
        };
        fs::write(&snapshots[0], &damaged).expect("the damage");
        if let Some(recovered) = check_recovery(dir.path()) {
            // Damage the checks cannot see (a row's bytes changed into another valid row)
            // may change the rows; an untouched snapshot must give the last state.
            if damaged == bytes {
                prop_assert_eq!(&recovered, states.last().expect("a state"));
            }
        }
    }
}

#[test]
fn the_allocator_counts() {
    assert!(is_counting(), "the bounds above would hold vacuously");
}
