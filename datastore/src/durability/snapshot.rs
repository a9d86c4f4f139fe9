//! Snapshots: the committed state in one file, so recovery need not replay the whole log.
//!
//! A snapshot is a file in the log's format, `<offset>.wsnap`: the segment header (whose first
//! offset is the number of transactions the snapshot covers), one record, "insert every
//! row", made with the same framing and codec as the log's, and one frame of where each
//! auto-increment sequence stands: the rows alone cannot say which values went to rows since
//! deleted, and those must not be given again. (A snapshot written before sequences were kept
//! has no such frame; its sequences start past its rows.) Recovery loads the newest snapshot
//! and replays only the records from its offset on.
//!
//! Taking one ([`take`]) holds the datastore for reading (commits wait) only while it seals
//! the log (writes what is buffered, starts a new segment at the snapshot's offset) and
//! gathers the rows, which are shared pointers. It then writes `<offset>.wsnap.tmp`, syncs it,
//! renames it into place and syncs the directory, so a crash leaves either the old snapshot or
//! the new one, never half of one. Only then are the segments before the new one (all of their
//! records are in the snapshot) and older snapshots removed.

use super::frame::{self, Frame};
use super::segment::{self, Header, HEADER_LEN};
use super::writer::Writer;
use super::DurabilityError;
use crate::tx::{SequenceState, TableChanges, TxData};
use crate::{Datastore, Tables};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

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
    let info = write(writer.dir(), writer.schema(), offset, &state)?;
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
/// `schema`, into `dir`, atomically.
pub(crate) fn write(
    dir: &Path,
    schema: [u8; 32],
    offset: u64,
    state: &Contents,
) -> Result<SnapshotInfo, DurabilityError> {
    let rows = state
        .rows
        .tables
        .iter()
        .map(|t| t.inserted.len() as u64)
        .sum();
    let file = path(dir, offset);
    let mut bytes = Header {
        schema,
        start: offset,
    }
    .encode()
    .to_vec();
    let mut payload = Vec::new();
    super::record::encode(&mut payload, offset, &state.rows);
    frame::write(&mut bytes, &payload);
    payload.clear();
    super::record::encode_sequences(&mut payload, &state.sequences);
    frame::write(&mut bytes, &payload);
    write_atomically(dir, &file, &bytes)?;
    Ok(SnapshotInfo { file, offset, rows })
}

/// Writes `bytes` to `file` through a synced temporary file and a rename.
pub(crate) fn write_atomically(
    dir: &Path,
    file: &Path,
    bytes: &[u8],
) -> Result<(), DurabilityError> {
    let mut temporary = file.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
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
fn remove_covered(dir: &Path, offset: u64) -> Result<(), DurabilityError> {
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
    let Some((_, file)) = list(dir)?.pop() else {
        return Ok(None);
    };
    let bytes =
        fs::read(&file).map_err(|error| DurabilityError::io(&file, "reading a snapshot", error))?;
    let header = Header::parse(&file, &bytes)?;
    if header.schema != schema {
        return Err(DurabilityError::SchemaMismatch { file });
    }
    let corrupt = |reason: &str| DurabilityError::Corrupt {
        file: file.clone(),
        offset: HEADER_LEN as u64,
        reason: format!("the snapshot is damaged: {reason}"),
    };
    let Frame::Record { payload, end } = frame::read(&bytes, HEADER_LEN) else {
        return Err(corrupt("its record is not intact"));
    };
    let (offset, rows) = super::record::decode(payload).map_err(corrupt)?;
    if offset != header.start {
        return Err(corrupt("its record and header disagree on the offset"));
    }
    let sequences = match frame::read(&bytes, end) {
        Frame::End => Vec::new(),
        Frame::Record { payload, end } => {
            if frame::read(&bytes, end) != Frame::End {
                return Err(corrupt("bytes follow its sequences"));
            }
            super::record::decode_sequences(payload).map_err(corrupt)?
        }
        _ => return Err(corrupt("its sequences are not intact")),
    };
    Ok(Some((offset, Contents { rows, sequences })))
}

/// The schema hash in the header of the newest snapshot in `dir`, if there is one.
pub(crate) fn latest_schema(dir: &Path) -> Result<Option<[u8; 32]>, DurabilityError> {
    let Some((_, file)) = list(dir)?.pop() else {
        return Ok(None);
    };
    let bytes =
        fs::read(&file).map_err(|error| DurabilityError::io(&file, "reading a snapshot", error))?;
    Ok(Some(Header::parse(&file, &bytes)?.schema))
}
