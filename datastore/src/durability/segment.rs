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
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use wasmod_abi::encoding::to_vec;
use wasmod_abi::ModuleDef;

/// The first bytes of every segment.
const MAGIC: &[u8; 8] = b"WASMODLG";
/// The format this code writes and reads.
const VERSION: u32 = 1;
/// The header's size: magic, version, schema hash, first offset.
pub(crate) const HEADER_LEN: usize = 8 + 4 + 32 + 8;
/// A segment file's extension.
const EXTENSION: &str = "wlog";

/// The hash of what decides how rows are read: the tables and the types they refer to.
/// Entry points are not part of it, so adding a reducer does not orphan the data.
pub(crate) fn schema_hash(def: &ModuleDef) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(to_vec(&def.typespace));
    hasher.update(to_vec(&def.tables));
    hasher.finalize().into()
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
