//! Values that the imports of `docs/abi.md` exchange, shared by the module side (the runtime's
//! `sys` layer) and the host side (its implementation of the imports), so both read the same
//! numbers the same way.

/// The level of a log line, as the `console_log` import numbers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u32)]
pub enum LogLevel {
    /// `0`: an error.
    Error = 0,
    /// `1`: a warning.
    Warn = 1,
    /// `2`: information.
    Info = 2,
    /// `3`: debugging detail.
    Debug = 3,
    /// `4`: tracing detail.
    Trace = 4,
    /// `5`: the message of a panic about to abort the call.
    Panic = 5,
}

impl LogLevel {
    /// The level numbered `code` by the ABI, if there is one.
    pub const fn from_code(code: u32) -> Option<Self> {
        Some(match code {
            0 => Self::Error,
            1 => Self::Warn,
            2 => Self::Info,
            3 => Self::Debug,
            4 => Self::Trace,
            5 => Self::Panic,
            _ => return None,
        })
    }

    /// The level's number in the ABI.
    pub const fn code(self) -> u32 {
        self as u32
    }
}

/// What one call of `row_iter_advance` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advance {
    /// `written` bytes of whole rows were written; more rows remain.
    More {
        /// Bytes written.
        written: usize,
    },
    /// `written` bytes of whole rows were written, and they were the last: the iterator is
    /// closed.
    Exhausted {
        /// Bytes written.
        written: usize,
    },
    /// Not even the next row fits: it needs `needed` bytes. Nothing was written.
    BufferTooSmall {
        /// The next row's size.
        needed: usize,
    },
}
