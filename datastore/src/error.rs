//! Errors: an ABI error code for the module, and a sentence for the people debugging it.
//!
//! Every failing operation reports an [`Errno`], which is all a module ever sees, together with
//! a message naming the table, index or column involved, which a host logs.

use std::fmt;
use wasmod_abi::Errno;

/// Why a datastore operation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    errno: Errno,
    message: String,
}

impl Error {
    /// An error with code `errno`, explained by `message`.
    pub fn new(errno: Errno, message: impl Into<String>) -> Self {
        Self {
            errno,
            message: message.into(),
        }
    }

    /// The error code the module receives.
    pub fn errno(&self) -> Errno {
        self.errno
    }

    /// What went wrong, naming the table, index or column involved.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.errno.name())
    }
}

impl std::error::Error for Error {}

impl From<Error> for Errno {
    fn from(error: Error) -> Self {
        error.errno
    }
}

/// Why a module description cannot be turned into tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    message: String,
}

impl SchemaError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// What is wrong with the description, naming the table, column or index.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid module description: {}", self.message)
    }
}

impl std::error::Error for SchemaError {}
