//! Faults a test can inject into the log's own file operations, to see what a full disk or a
//! damaged snapshot does to the whole system (the datastore, the host, the server) without a
//! full disk: the failure comes from the same place a real one would, and everything above it
//! runs unchanged.
//!
//! The default injects nothing; `wasmod serve` never sets them.

use std::io;

/// The faults to inject ([`Options::faults`](super::Options::faults)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Faults {
    /// After this many writes of the log succeeded, every later one writes half its bytes and
    /// fails with "no space left on device" (ENOSPC), as a disk that fills up does.
    pub fail_writes_after: Option<u64>,
}

impl Faults {
    /// These faults with every log write after the first `writes` failing.
    pub fn failing_writes_after(mut self, writes: u64) -> Self {
        self.fail_writes_after = Some(writes);
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
