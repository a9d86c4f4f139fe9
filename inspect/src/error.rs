//! Why an inspection can fail.
//!
//! Only two things stop an inspection: bytes that are not a valid WebAssembly module, and a
//! module without function names. Everything else, including a dispatch export of an
//! unexpected shape, is a finding and goes into the [`Report`](crate::Report).

use std::fmt;

/// Why [`inspect`](crate::inspect) could not produce a report.
#[derive(Debug)]
#[non_exhaustive]
pub enum InspectError {
    /// The bytes are not a valid WebAssembly module; the message is the parser's or the
    /// validator's, with the byte offset where it stopped.
    Malformed(wasmparser::BinaryReaderError),
    /// The module has no function names (no `name` custom section, or one without function
    /// names): the binary was stripped, so entry points and runtime code cannot be told apart.
    /// Build without `strip = true` / `strip = "symbols"` (`strip = "debuginfo"` keeps names).
    NoNames,
}

impl fmt::Display for InspectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed(error) => write!(f, "not a valid WebAssembly module: {error}"),
            Self::NoNames => f.write_str(
                "the module has no function names (its `name` section was stripped); \
                 build it without `strip = \"symbols\"` so that it can be inspected",
            ),
        }
    }
}

impl std::error::Error for InspectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Malformed(error) => Some(error),
            Self::NoNames => None,
        }
    }
}

impl From<wasmparser::BinaryReaderError> for InspectError {
    fn from(error: wasmparser::BinaryReaderError) -> Self {
        Self::Malformed(error)
    }
}
