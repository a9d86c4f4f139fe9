//! Everything the commands print on stdout goes through here: JSON lines (one JSON text per
//! line) and text, flushed as written, so that a pipe (`| jq`, `| while read`) sees each
//! message when it arrives.
//!
//! A reader that goes away (`| head -n 3`) is the end of the output, not an error (`println!`
//! would panic on it): the writes say so ([`Printed::Closed`]) and a command that follows a
//! server stops as it would at its natural end (for `subscribe`, with a close frame); a command
//! that prints its result once ([`print`]) finishes quietly with its usual status.
//!
//! One thing goes to stderr instead: the token of an identity a command made up for lack of
//! `--token` ([`new_identity`]), so that the identity, and the rows a module keeps for it, can
//! be used again, while stdout stays the command's result alone.
//!
//! The JSON texts printed come from the server or from the JSON mapping, which write no line
//! breaks; a JSON text can only hold one as whitespace between tokens (a string escapes its
//! own), so replacing any with a space keeps the text's meaning and the one-per-line shape
//! whatever the writer did.

use crate::failure::{Failure, Result};
use std::borrow::Cow;
use std::io::{ErrorKind, Write};
use wasmod_abi::Identity;

/// Whether stdout took what was printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a closed stdout ends the output"]
pub enum Printed {
    /// It was written.
    Written,
    /// Nobody reads stdout any more.
    Closed,
}

/// Writes `json` on one line of stdout and flushes it.
pub fn json_line(json: &str) -> Result<Printed> {
    text(&format!("{}\n", one_line(json)))
}

/// Writes `text` on stdout for a command that prints its result and ends: a reader that went
/// away has taken all it wanted, so that is not an error.
pub fn print(text: impl AsRef<str>) -> Result {
    self::text(text.as_ref()).map(|_: Printed| ())
}

/// Writes `text` on stdout and flushes it.
pub fn text(text: &str) -> Result<Printed> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(Printed::Written),
        Err(error) if error.kind() == ErrorKind::BrokenPipe => Ok(Printed::Closed),
        Err(error) => Err(Failure::usage(format!("writing to stdout: {error}"))),
    }
}

/// Tells the user, on stderr, the identity the server made for a command run without
/// `--token`, with its token and how to reuse it.
pub fn new_identity(identity: &Identity, token: &str) {
    eprintln!(
        "wasmod: connected as a new identity, {identity}; its token (reuse it with --token or WASMOD_TOKEN): {token}"
    );
}

/// `json` with its line breaks (whitespace between tokens) made spaces.
fn one_line(json: &str) -> Cow<'_, str> {
    if json.contains(['\n', '\r']) {
        Cow::Owned(json.replace(['\n', '\r'], " "))
    } else {
        Cow::Borrowed(json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_json_becomes_one_line_of_the_same_value() {
        let pretty = "{\n  \"text\": \"a\\nb\",\r\n  \"n\": 1\n}";
        let line = one_line(pretty);
        assert!(!line.contains(['\n', '\r']), "{line}");
        let before: serde_json::Value = serde_json::from_str(pretty).expect("json");
        let after: serde_json::Value = serde_json::from_str(&line).expect("json");
        assert_eq!(before, after);
        assert!(matches!(one_line("{\"n\":1}"), Cow::Borrowed(_)));
    }
}
