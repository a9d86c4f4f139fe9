//! Faults a test can inject into the log's own file operations, to see what a full disk or a
//! damaged snapshot does to the whole system (the datastore, the host, the server) without a
//! full disk: the failure comes from the same place a real one would, and everything above it
//! runs unchanged.
//!
//! The default injects nothing; `wasmod serve` never sets them.

use std::fs::OpenOptions;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// The faults to inject ([`Options::faults`](super::Options::faults)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Faults {
    /// After this many writes of the log succeeded, every later one writes half its bytes and
    /// fails with "no space left on device" (ENOSPC), as a disk that fills up does.
    pub fail_writes_after: Option<u64>,
    /// Every snapshot is damaged (a byte in its middle flipped) after it is written and
    /// synced, before it is read back, as a disk that corrupts data at rest would.
    pub corrupt_snapshots: bool,
}

impl Faults {
    /// These faults with every log write after the first `writes` failing.
    pub fn failing_writes_after(mut self, writes: u64) -> Self {
        self.fail_writes_after = Some(writes);
        self
    }

    /// These faults with every snapshot damaged before it is verified.
    pub fn corrupting_snapshots(mut self) -> Self {
        self.corrupt_snapshots = true;
        self
    }

    /// Whether log write number `write` (from 0) fails.
    pub(crate) fn write_fails(&self, write: u64) -> bool {
        self.fail_writes_after.is_some_and(|after| write >= after)
    }
}

/// The error an injected write failure returns.
pub(crate) fn no_space() -> io::Error {
    io::Error::new(
        io::ErrorKind::StorageFull,
        "no space left on device (injected by Faults::fail_writes_after)",
    )
}

/// Flips a byte in the middle of the file at `path`, and syncs it.
pub(crate) fn corrupt(path: &Path) -> io::Result<()> {
    let mut file = OpenOptions::new().read(true).write(true).open(path)?;
    let middle = file.metadata()?.len() / 2;
    let mut byte = [0];
    file.seek(SeekFrom::Start(middle))?;
    file.read_exact(&mut byte)?;
    file.seek(SeekFrom::Start(middle))?;
    file.write_all(&[byte[0] ^ 0x55])?;
    file.sync_all()
}
