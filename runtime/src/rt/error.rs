//! The error a dispatch reports to the host: a code and a message, built without `core::fmt`.

use crate::Errno;

/// A failed call: the code the export returns and the message it writes to the error sink.
///
/// Messages are assembled by concatenating static and owned strings; nothing here formats, so
/// reporting an error adds no indirect call to the dispatch path.
#[derive(Debug, PartialEq, Eq)]
pub struct CallError {
    code: Errno,
    message: String,
}

impl CallError {
    /// An error with `code` and `message`.
    pub fn new(code: Errno, message: String) -> Self {
        Self { code, message }
    }

    /// The arguments of `kind` `name` did not decode at parameter `param`.
    #[cold]
    #[inline(never)]
    pub fn bad_argument(
        kind: &str,
        name: &str,
        param: &str,
        error: wasmod_abi::DecodeError,
    ) -> Self {
        Self::new(
            Errno::BAD_ARGUMENTS,
            concat(&[
                kind,
                " `",
                name,
                "`: argument `",
                param,
                "`: ",
                error.message(),
            ]),
        )
    }

    /// The arguments of `kind` `name` had bytes left after the last parameter.
    #[cold]
    #[inline(never)]
    pub fn trailing_arguments(kind: &str, name: &str) -> Self {
        Self::new(
            Errno::BAD_ARGUMENTS,
            concat(&[
                kind,
                " `",
                name,
                "`: bytes were left after the last argument",
            ]),
        )
    }

    /// The entry point returned an error with `message`.
    #[cold]
    #[inline(never)]
    pub fn failed(message: String) -> Self {
        Self::new(Errno::ENTRY_FAILED, message)
    }

    /// A host call made on the way failed.
    #[cold]
    #[inline(never)]
    pub fn host(errno: Errno) -> Self {
        Self::new(
            errno,
            concat(&["a host call failed: ", errno.name(), ": ", errno.message()]),
        )
    }

    /// The code.
    pub fn code(&self) -> Errno {
        self.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Joins string pieces into one `String`.
fn concat(pieces: &[&str]) -> String {
    let mut out = String::with_capacity(pieces.iter().map(|piece| piece.len()).sum());
    for piece in pieces {
        out.push_str(piece);
    }
    out
}
