//! Frames read from a file one at a time, for files too large to read at once (snapshots).
//!
//! The log's segments are bounded ([`Options::max_segment_bytes`](super::Options)) and read
//! whole; a snapshot holds every row and may be larger than memory can hold twice. Reading it
//! frame by frame keeps one frame's payload in memory besides what the caller keeps. A length
//! that runs past the end of the file is damage, found before a buffer is allocated for it.

use super::frame::FRAME_OVERHEAD;
use super::DurabilityError;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

/// The shortest payload of a snapshot's frames: the sequences' frame of a module without
/// any is its count alone. (A length of zero, as a run of zeros reads, is damage.)
const MIN_PAYLOAD: usize = 4;

/// A file's frames, from a given byte on.
pub(crate) struct Frames {
    path: PathBuf,
    file: BufReader<File>,
    /// Where the next frame starts.
    at: u64,
    /// The file's length.
    len: u64,
}

impl Frames {
    /// The file at `path`, whose first `skip` bytes (a header) are returned for the caller to
    /// check; frames follow them.
    pub(crate) fn open(path: &Path, skip: usize) -> Result<(Self, Vec<u8>), DurabilityError> {
        let io = |error| DurabilityError::io(path, "reading a snapshot", error);
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let mut file = BufReader::new(file);
        let mut header = vec![0; skip];
        let read = read_up_to(&mut file, &mut header).map_err(io)?;
        header.truncate(read);
        let frames = Self {
            path: path.to_owned(),
            file,
            at: read as u64,
            len,
        };
        Ok((frames, header))
    }

    /// The payload of the next frame, checked against its checksum; `None` at the end of the
    /// file. Errors: a frame cut short or damaged ([`DurabilityError::Corrupt`], at its byte).
    pub(crate) fn next(&mut self) -> Result<Option<Vec<u8>>, DurabilityError> {
        let start = self.at;
        let corrupt = |reason: &str| DurabilityError::Corrupt {
            file: self.path.clone(),
            offset: start,
            reason: format!("the snapshot is damaged: {reason}"),
        };
        let io = |error| DurabilityError::io(&self.path, "reading a snapshot", error);
        let mut header = [0; FRAME_OVERHEAD];
        match read_up_to(&mut self.file, &mut header).map_err(io)? {
            0 => return Ok(None),
            FRAME_OVERHEAD => {}
            _ => return Err(corrupt("a frame header is cut short")),
        }
        let [l0, l1, l2, l3, c0, c1, c2, c3] = header;
        let len = u32::from_le_bytes([l0, l1, l2, l3]);
        let crc = u32::from_le_bytes([c0, c1, c2, c3]);
        let end = start + FRAME_OVERHEAD as u64 + u64::from(len);
        if (len as usize) < MIN_PAYLOAD {
            return Err(corrupt("a frame's length is too small for its contents"));
        }
        if end > self.len {
            return Err(corrupt("a frame runs past the end of the file"));
        }
        let mut payload = vec![0; len as usize];
        self.file.read_exact(&mut payload).map_err(io)?;
        if crc32fast::hash(&payload) != crc {
            return Err(corrupt("a frame's checksum does not match"));
        }
        self.at = end;
        Ok(Some(payload))
    }
}

/// Fills as much of `buffer` as the reader has; how many bytes that was.
fn read_up_to(reader: &mut impl Read, buffer: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match reader.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(filled)
}
