//! Snapshots: the committed state in one file, so recovery need not replay the whole log.
//!
//! A snapshot is a file in the log's format, `<offset>.wsnap`: the segment header (whose first
//! offset is the number of transactions the snapshot covers), one or more records "insert
//! these rows", made with the same framing and codec as the log's, each at most
//! [`CHUNK_BYTES`] (and at most [`Options::max_frame_bytes`]), and a last frame of where each
//! auto-increment sequence stands: the rows alone cannot say which values went to rows since
//! deleted, and those must not be given again. (A snapshot written before sequences were kept
//! has one record and no such frame; its sequences start past its rows. One written before
//! records were split has one record before its sequences: the same layout.) Recovery loads
//! the newest snapshot and replays only the records from its offset on.
//!
//! Taking one ([`take`]) holds the datastore for reading (commits wait) only while it seals
//! the log (writes what is buffered, starts a new segment at the snapshot's offset) and
//! gathers the rows, which are shared pointers. It then writes `<offset>.wsnap.tmp` record by
//! record (one record's bytes in memory at a time, never the whole file), syncs it, **reads
//! it back** frame by frame and checks that it holds exactly the rows and sequences it was
//! written from, and only then renames it into place and syncs the directory, so a crash
//! leaves either the old snapshot or the new one, never half of one, and a snapshot the disk
//! damaged is never trusted. Only then are the segments before the new one (all of their
//! records are in the snapshot) and older snapshots removed. A snapshot that fails to write
//! or to verify removes its temporary file and changes nothing else.

use super::segment::{self, Header, HEADER_LEN};
use super::stream::Frames;
use super::writer::Writer;
use super::{frame, DurabilityError, Options};
use crate::tx::{SequenceState, TableChanges, TxData};
use crate::{Datastore, Tables};
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The most bytes of rows one record of a snapshot holds (less if
/// [`Options::max_frame_bytes`] is lower): what writing, verifying and loading a snapshot hold
/// in memory at a time, besides the rows themselves.
pub(crate) const CHUNK_BYTES: u64 = 16 << 20;

/// A snapshot file's extension.
const EXTENSION: &str = "wsnap";

/// What a snapshot holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotInfo {
    /// The file.
    pub file: PathBuf,
    /// How many transactions it covers: the log is replayed from this offset on.
    pub offset: u64,
    /// How many rows it holds.
    pub rows: u64,
}

/// Takes a snapshot of `datastore`, whose commits `writer` logs, and removes what it covers.
pub(crate) fn take(
    writer: &Writer,
    datastore: &Datastore,
) -> Result<SnapshotInfo, DurabilityError> {
    let (offset, state) = {
        let read = datastore.begin_read();
        let offset = writer.seal()?;
        (offset, contents(&read, datastore.table_count()))
    };
    let info = write(
        writer.dir(),
        writer.schema(),
        offset,
        &state,
        writer.options(),
    )?;
    remove_covered(writer.dir(), offset)?;
    Ok(info)
}

/// What a snapshot holds: the rows, as one transaction inserting them, and the sequences.
#[derive(Debug)]
pub(crate) struct Contents {
    /// Every row.
    pub(crate) rows: TxData,
    /// Where each auto-increment sequence stands.
    pub(crate) sequences: Vec<SequenceState>,
}

/// The contents of the `count` tables of `read`.
pub(crate) fn contents(read: &Tables, count: usize) -> Contents {
    Contents {
        rows: rows(read, count),
        sequences: read.sequences(),
    }
}

/// Every row of the `count` tables of `read`, as one transaction inserting them.
fn rows(read: &Tables, count: usize) -> TxData {
    let tables = (0..count as u32)
        .filter_map(|table| {
            let rows = read.scan(table).ok()?;
            (!rows.is_empty()).then_some(TableChanges {
                table,
                inserted: rows,
                deleted: Vec::new(),
            })
        })
        .collect();
    TxData { tables }
}

/// Writes the snapshot of `state`, covering `offset` transactions of tables hashing to
/// `schema`, into `dir`, atomically, in records as `options` allow, and verifies it before it
/// takes the place of anything.
pub(crate) fn write(
    dir: &Path,
    schema: [u8; 32],
    offset: u64,
    state: &Contents,
    options: &Options,
) -> Result<SnapshotInfo, DurabilityError> {
    let rows = state
        .rows
        .tables
        .iter()
        .map(|t| t.inserted.len() as u64)
        .sum();
    let file = path(dir, offset);
    let temporary = temporary_path(&file);
    let written = write_records(&temporary, schema, offset, state, options).and_then(|()| {
        if options.faults.corrupt_snapshots {
            super::faults::corrupt(&temporary)
                .map_err(|error| DurabilityError::io(&temporary, "damaging a snapshot", error))?;
        }
        verify(&temporary, schema, offset, state)
    });
    if let Err(error) = written {
        // Best effort: a leftover temporary file is ignored (and overwritten) anyway.
        let _ = fs::remove_file(&temporary);
        return Err(error);
    }
    fs::rename(&temporary, &file).map_err(|error| {
        DurabilityError::io(&temporary, "renaming a snapshot into place", error)
    })?;
    segment::sync_dir(dir)
        .map_err(|error| DurabilityError::io(dir, "syncing the directory", error))?;
    Ok(SnapshotInfo { file, offset, rows })
}

/// The temporary file a snapshot is written to before it is renamed to `file`.
fn temporary_path(file: &Path) -> PathBuf {
    let mut temporary = file.as_os_str().to_owned();
    temporary.push(".tmp");
    PathBuf::from(temporary)
}

/// Writes the header, the rows' records and the sequences' frame of the snapshot to `file`,
/// one record in memory at a time, and syncs it.
fn write_records(
    file: &Path,
    schema: [u8; 32],
    offset: u64,
    state: &Contents,
    options: &Options,
) -> Result<(), DurabilityError> {
    let io = |what, error| DurabilityError::io(file, what, error);
    let out = super::private::file_options()
        .write(true)
        .create(true)
        .truncate(true)
        .open(file)
        .map_err(|error| io("creating a snapshot", error))?;
    let mut out = BufWriter::new(out);
    let limit = options.frame_limit();
    let mut payload = Vec::new();
    let put = |out: &mut BufWriter<fs::File>, payload: &[u8]| {
        let header = frame::header(payload).ok_or(DurabilityError::TooLarge {
            bytes: payload.len() as u64,
            limit,
        })?;
        out.write_all(&header)
            .and_then(|()| out.write_all(payload))
            .map_err(|error| io("writing a snapshot", error))
    };
    out.write_all(
        &Header {
            schema,
            start: offset,
        }
        .encode(),
    )
    .map_err(|error| io("writing a snapshot", error))?;
    for_each_record(&state.rows, limit.min(CHUNK_BYTES), |record| {
        payload.clear();
        super::record::encode(&mut payload, offset, record);
        check_size(&payload, limit)?;
        put(&mut out, &payload)
    })?;
    payload.clear();
    super::record::encode_sequences(&mut payload, &state.sequences);
    check_size(&payload, limit)?;
    put(&mut out, &payload)?;
    let out = out
        .into_inner()
        .map_err(|error| io("writing a snapshot", error.into_error()))?;
    out.sync_all()
        .map_err(|error| io("syncing a snapshot", error))
}

/// `Err(TooLarge)` if `payload` is longer than `limit`.
fn check_size(payload: &[u8], limit: u64) -> Result<(), DurabilityError> {
    let bytes = payload.len() as u64;
    if bytes > limit {
        return Err(DurabilityError::TooLarge { bytes, limit });
    }
    Ok(())
}

/// Hands `rows` to `record` in consecutive pieces, in order, each encoding to at most `target`
/// bytes unless a single row needs more (that record is then as large as the row makes it,
/// for the caller to refuse past the frame limit); at least one, empty if there are no rows.
fn for_each_record(
    rows: &TxData,
    target: u64,
    mut record: impl FnMut(&TxData) -> Result<(), DurabilityError>,
) -> Result<(), DurabilityError> {
    // What a record costs besides its rows: its offset and table count, then per table its
    // id and its two row counts.
    const RECORD: u64 = 12;
    const TABLE: u64 = 12;
    let mut piece = TxData::default();
    let mut size = RECORD;
    for table in &rows.tables {
        for row in &table.inserted {
            let cost = 4 + row.len() as u64;
            let same_table = piece.tables.last().is_some_and(|t| t.table == table.table);
            let added = cost + if same_table { 0 } else { TABLE };
            if !piece.is_empty() && size + added > target {
                record(&piece)?;
                piece.tables.clear();
                size = RECORD;
            }
            match piece.tables.last_mut() {
                Some(last) if last.table == table.table => last.inserted.push(row.clone()),
                _ => {
                    piece.tables.push(TableChanges {
                        table: table.table,
                        inserted: vec![row.clone()],
                        deleted: Vec::new(),
                    });
                    size += TABLE;
                }
            }
            size += cost;
        }
    }
    record(&piece)
}

/// Reads the snapshot `file` back and checks that it is the snapshot of `state` at `offset`
/// for `schema`: every frame intact, and exactly the rows, in order, and the sequences.
fn verify(
    file: &Path,
    schema: [u8; 32],
    offset: u64,
    state: &Contents,
) -> Result<(), DurabilityError> {
    let mismatch = |reason: &str| DurabilityError::Corrupt {
        file: file.to_owned(),
        offset: 0,
        reason: format!("the snapshot just written does not read back as written: {reason}"),
    };
    let mut expected = state
        .rows
        .tables
        .iter()
        .flat_map(|table| table.inserted.iter().map(|row| (table.table, row)));
    let mut sequences = None;
    read(file, schema, offset, |read| {
        match read {
            Read::Rows(rows) => {
                for table in &rows.tables {
                    for row in &table.inserted {
                        if expected.next() != Some((table.table, row)) {
                            return Err(mismatch("its rows differ"));
                        }
                    }
                }
            }
            Read::Sequences(read) => sequences = Some(read),
        }
        Ok(())
    })?;
    if expected.next().is_some() {
        return Err(mismatch("rows are missing"));
    }
    if sequences.as_ref() != Some(&state.sequences) {
        return Err(mismatch("its sequences differ"));
    }
    Ok(())
}

/// Writes `bytes` to `file` through a synced temporary file and a rename.
pub(crate) fn write_atomically(
    dir: &Path,
    file: &Path,
    bytes: &[u8],
) -> Result<(), DurabilityError> {
    let temporary = temporary_path(file);
    let io = |what, error| DurabilityError::io(&temporary, what, error);
    let mut out = super::private::file_options()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&temporary)
        .map_err(|error| io("creating a snapshot", error))?;
    out.write_all(bytes)
        .and_then(|()| out.sync_all())
        .map_err(|error| io("writing a snapshot", error))?;
    fs::rename(&temporary, file).map_err(|error| io("renaming a snapshot into place", error))?;
    segment::sync_dir(dir).map_err(|error| DurabilityError::io(dir, "syncing the directory", error))
}

/// Removes the segments before `offset` and the snapshots older than the one at `offset`.
pub(crate) fn remove_covered(dir: &Path, offset: u64) -> Result<(), DurabilityError> {
    let covered = segment::list(dir)?
        .into_iter()
        .filter(|(start, _)| *start < offset)
        .chain(list(dir)?.into_iter().filter(|(at, _)| *at < offset));
    for (_, path) in covered {
        fs::remove_file(&path)
            .map_err(|error| DurabilityError::io(&path, "removing a covered file", error))?;
    }
    segment::sync_dir(dir).map_err(|error| DurabilityError::io(dir, "syncing the directory", error))
}

fn path(dir: &Path, offset: u64) -> PathBuf {
    dir.join(format!("{offset:020}.{EXTENSION}"))
}

/// The snapshots in `dir`, by increasing offset; leftover temporary files are ignored.
fn list(dir: &Path) -> Result<Vec<(u64, PathBuf)>, DurabilityError> {
    let io = |error| DurabilityError::io(dir, "listing the log directory", error);
    let mut snapshots = Vec::new();
    for entry in fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.extension().and_then(|ext| ext.to_str()) != Some(EXTENSION) {
            continue;
        }
        if let Some(offset) = path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .and_then(|stem| stem.parse::<u64>().ok())
        {
            snapshots.push((offset, path));
        }
    }
    snapshots.sort();
    Ok(snapshots)
}

/// The newest snapshot in `dir`, written for tables hashing to `schema`: its offset and
/// contents. A snapshot is renamed into place whole, so any damage is an error.
pub(crate) fn latest(
    dir: &Path,
    schema: [u8; 32],
) -> Result<Option<(u64, Contents)>, DurabilityError> {
    let Some((offset, file)) = list(dir)?.pop() else {
        return Ok(None);
    };
    let mut rows = TxData::default();
    let mut sequences = Vec::new();
    let start = read(&file, schema, offset, |read| {
        match read {
            Read::Rows(piece) => {
                for table in piece.tables {
                    match rows.tables.last_mut() {
                        Some(last) if last.table == table.table => {
                            last.inserted.extend(table.inserted)
                        }
                        _ => rows.tables.push(table),
                    }
                }
            }
            Read::Sequences(read) => sequences = read,
        }
        Ok(())
    })?;
    Ok(Some((start, Contents { rows, sequences })))
}

/// What [`read`] found in one frame of a snapshot.
enum Read {
    /// A record of rows, in order.
    Rows(TxData),
    /// The sequences (the last frame; absent from the oldest snapshots).
    Sequences(Vec<SequenceState>),
}

/// Reads the snapshot `file`, named for `offset`, frame by frame, handing each frame's
/// contents to `each` in order; returns its offset. Errors: another schema, damage, or
/// contents that disagree with the header.
fn read(
    file: &Path,
    schema: [u8; 32],
    offset: u64,
    mut each: impl FnMut(Read) -> Result<(), DurabilityError>,
) -> Result<u64, DurabilityError> {
    let (mut frames, header) = Frames::open(file, HEADER_LEN)?;
    let header = Header::parse(file, &header)?;
    if header.schema != schema {
        return Err(DurabilityError::SchemaMismatch {
            file: file.to_owned(),
        });
    }
    let corrupt = |reason: &str| DurabilityError::Corrupt {
        file: file.to_owned(),
        offset: HEADER_LEN as u64,
        reason: format!("the snapshot is damaged: {reason}"),
    };
    if header.start != offset {
        return Err(corrupt("its name and header disagree on the offset"));
    }
    // Every frame but the last is a record of rows; the last holds the sequences, unless it
    // is the only one (a snapshot from before sequences were kept).
    let Some(mut held) = frames.next()? else {
        return Err(corrupt("it has no record"));
    };
    let mut records = 0u64;
    while let Some(next) = frames.next()? {
        let (at, rows) = super::record::decode(&held).map_err(corrupt)?;
        if at != header.start {
            return Err(corrupt("a record and the header disagree on the offset"));
        }
        each(Read::Rows(rows))?;
        records += 1;
        held = next;
    }
    if records == 0 {
        let (at, rows) = super::record::decode(&held).map_err(corrupt)?;
        if at != header.start {
            return Err(corrupt("its record and header disagree on the offset"));
        }
        each(Read::Rows(rows))?;
    } else {
        let sequences = super::record::decode_sequences(&held).map_err(corrupt)?;
        each(Read::Sequences(sequences))?;
    }
    Ok(header.start)
}

/// The schema hash in the header of the newest snapshot in `dir`, if there is one.
pub(crate) fn latest_schema(dir: &Path) -> Result<Option<[u8; 32]>, DurabilityError> {
    let Some((_, file)) = list(dir)?.pop() else {
        return Ok(None);
    };
    let (_, header) = Frames::open(&file, HEADER_LEN)?;
    Ok(Some(Header::parse(&file, &header)?.schema))
}
