//! Segments: the log's files, their names and their header.
//!
//! The log is a sequence of append-only files in one directory, each named after the offset of
//! its first transaction (`00000000000000000042.wlog`), so sorting the names sorts the log.
//! Starting a new file past a size keeps each one small enough to read at once on recovery and
//! lets whole files be dropped once a snapshot covers them.
//!
//! Each segment starts with a header: a magic, the format version, the hash of the module's
//! tables (so a log is never replayed into a different schema) and its first offset (so a
//! renamed or missing file is noticed).

use super::DurabilityError;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use wasmod_abi::encoding::to_vec;
use wasmod_abi::{AlgebraicType, ModuleDef};

/// The first bytes of every segment.
const MAGIC: &[u8; 8] = b"WASMODLG";
/// The format this code writes and reads.
const VERSION: u32 = 1;
/// The header's size: magic, version, schema hash, first offset.
pub(crate) const HEADER_LEN: usize = 8 + 4 + 32 + 8;
/// A segment file's extension.
const EXTENSION: &str = "wlog";

/// The hash of what the stored data depends on: the named types the tables use (by index,
/// with everything they use in turn), and for each table its name, its
/// columns' names and types, its primary key, indexes and auto-increment columns (rows are
/// checked against the columns on replay, indexes are rebuilt, sequences are kept per column).
///
/// What the data does not depend on is left out, so that changing it never forces the data to
/// be carried over into a new snapshot: entry points (and the types only they use), whether a table is public, its
/// visibility filter and schedule, and the columns' defaults (which only matter when a column
/// is added, and are then part of the upgrade, not of the rows stored after it).
pub(crate) fn schema_hash(def: &ModuleDef) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for index in used_types(def) {
        hasher.update(index.to_le_bytes());
        hasher.update(to_vec(&def.typespace.types[index as usize]));
    }
    hasher.update(to_vec(&(def.tables.len() as u32)));
    for table in &def.tables {
        hasher.update(to_vec(&table.name));
        hasher.update(to_vec(&table.row_type));
        hasher.update(to_vec(&(table.columns.len() as u32)));
        for column in &table.columns {
            hasher.update(to_vec(&column.name));
            hasher.update(to_vec(&column.ty));
        }
        hasher.update(to_vec(&table.primary_key));
        hasher.update(to_vec(&table.indexes));
        hasher.update(to_vec(&table.auto_inc));
    }
    hasher.finalize().into()
}

/// The indexes of the named types the tables' rows use, directly or through other named
/// types, in order. A reference that does not resolve is left out (such a description is
/// refused when its tables are created).
fn used_types(def: &ModuleDef) -> BTreeSet<u32> {
    let mut used = BTreeSet::new();
    let mut pending: Vec<&AlgebraicType> = def
        .tables
        .iter()
        .flat_map(|table| {
            std::iter::once(&table.row_type).chain(table.columns.iter().map(|column| &column.ty))
        })
        .collect();
    while let Some(ty) = pending.pop() {
        match ty {
            AlgebraicType::Ref(index) => {
                if let Some(named) = def.typespace.types.get(*index as usize) {
                    if used.insert(*index) {
                        pending.push(&named.ty);
                    }
                }
            }
            AlgebraicType::Array(inner)
            | AlgebraicType::Option(inner)
            | AlgebraicType::FixedArray(inner, _) => pending.push(inner),
            AlgebraicType::Result(ok, error) => pending.extend([&**ok, &**error]),
            AlgebraicType::Product(fields) | AlgebraicType::Sum(fields) => {
                pending.extend(fields.iter().map(|field| &field.ty));
            }
            _ => {}
        }
    }
    used
}

/// A segment's header.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Header {
    /// The schema the rows were written for.
    pub(crate) schema: [u8; 32],
    /// The offset of the segment's first transaction.
    pub(crate) start: u64,
}

impl Header {
    /// The header's bytes.
    pub(crate) fn encode(&self) -> [u8; HEADER_LEN] {
        let mut out = [0; HEADER_LEN];
        out[..8].copy_from_slice(MAGIC);
        out[8..12].copy_from_slice(&VERSION.to_le_bytes());
        out[12..44].copy_from_slice(&self.schema);
        out[44..].copy_from_slice(&self.start.to_le_bytes());
        out
    }

    /// Reads the header at the start of `bytes`, the contents of `file`.
    pub(crate) fn parse(file: &Path, bytes: &[u8]) -> Result<Self, DurabilityError> {
        let bad = |reason: String| DurabilityError::Corrupt {
            file: file.to_owned(),
            offset: 0,
            reason,
        };
        let header = bytes
            .get(..HEADER_LEN)
            .ok_or_else(|| bad("the segment header is cut short".into()))?;
        if &header[..8] != MAGIC {
            return Err(bad("this is not a wasmod log segment (wrong magic)".into()));
        }
        let version = u32::from_le_bytes(header[8..12].try_into().unwrap_or_default());
        if version != VERSION {
            return Err(bad(format!(
                "the segment has format version {version}; this wasmod reads version {VERSION}"
            )));
        }
        let mut schema = [0; 32];
        schema.copy_from_slice(&header[12..44]);
        let start = u64::from_le_bytes(header[44..].try_into().unwrap_or_default());
        Ok(Self { schema, start })
    }
}

/// The path of the segment whose first offset is `start`.
pub(crate) fn path(dir: &Path, start: u64) -> PathBuf {
    dir.join(format!("{start:020}.{EXTENSION}"))
}

/// The segments in `dir`, by increasing first offset (from their names).
pub(crate) fn list(dir: &Path) -> Result<Vec<(u64, PathBuf)>, DurabilityError> {
    let io = |error| DurabilityError::io(dir, "listing the log directory", error);
    let mut segments = Vec::new();
    for entry in fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.extension().and_then(|ext| ext.to_str()) != Some(EXTENSION) {
            continue;
        }
        let start = path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .and_then(|stem| stem.parse::<u64>().ok())
            .ok_or_else(|| DurabilityError::Corrupt {
                file: path.clone(),
                offset: 0,
                reason: "a segment's name is not its first offset".into(),
            })?;
        segments.push((start, path));
    }
    segments.sort();
    Ok(segments)
}

/// Creates the segment starting at `start` with its header, durably (file and directory
/// synced), and returns it open for appending.
pub(crate) fn create(dir: &Path, schema: [u8; 32], start: u64) -> io::Result<File> {
    let path = path(dir, start);
    let mut file = super::private::file_options()
        .create_new(true)
        .append(true)
        .open(&path)?;
    file.write_all(&Header { schema, start }.encode())?;
    file.sync_all()?;
    sync_dir(dir)?;
    Ok(file)
}

/// Makes the creation, removal or renaming of files in `dir` durable.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_round_trips_and_is_checked() {
        let header = Header {
            schema: [5; 32],
            start: 77,
        };
        let bytes = header.encode();
        let file = Path::new("x.wlog");
        assert_eq!(Header::parse(file, &bytes).ok(), Some(header));
        assert!(Header::parse(file, &bytes[..10]).is_err());
        let mut other = bytes;
        other[0] = b'X';
        assert!(Header::parse(file, &other).is_err());
        let mut newer = bytes;
        newer[8] = 9;
        let error = Header::parse(file, &newer).unwrap_err().to_string();
        assert!(error.contains("version 9"), "{error}");
    }
}
