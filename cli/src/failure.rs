//! Why a command failed, and the exit status that says so.

use std::fmt::Display;
use std::process::ExitCode;

/// The module or the call failed: an inspection violation, a call that ended in an error.
pub const FAILED: u8 = 1;

/// The command could not run: bad arguments, a failed build, an unreadable file, a server
/// that cannot start.
pub const USAGE: u8 = 2;

/// A failed command: what to tell the user, and the exit status.
#[derive(Debug)]
pub struct Failure {
    message: Option<String>,
    status: u8,
}

/// The result of a command.
pub type Result<T = ()> = std::result::Result<T, Failure>;

impl Failure {
    /// The command could not run because of `message`.
    pub fn usage(message: impl Display) -> Self {
        Self {
            message: Some(message.to_string()),
            status: USAGE,
        }
    }

    /// The module or call failed because of `message`.
    pub fn module(message: impl Display) -> Self {
        Self {
            message: Some(message.to_string()),
            status: FAILED,
        }
    }

    /// The module or call failed; what went wrong has already been printed.
    pub fn failed() -> Self {
        Self {
            message: None,
            status: FAILED,
        }
    }

    /// This failure with `hint` after its message, on a line of its own.
    pub fn hint(mut self, hint: impl Display) -> Self {
        self.message = Some(match self.message {
            Some(message) => format!("{message}\n  hint: {hint}"),
            None => format!("hint: {hint}"),
        });
        self
    }

    /// Prints the message (if any) and returns the exit status.
    pub fn report(self) -> ExitCode {
        if let Some(message) = self.message {
            eprintln!("wasmod: error: {message}");
        }
        ExitCode::from(self.status)
    }
}

/// Turns any displayable error into a [`Failure::usage`] with context: `.context("reading x")?`.
pub trait Context<T> {
    /// This result, its error prefixed with `what`.
    fn context(self, what: impl Display) -> Result<T>;
}

impl<T, E: Display> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl Display) -> Result<T> {
        self.map_err(|error| Failure::usage(format!("{what}: {error}")))
    }
}
