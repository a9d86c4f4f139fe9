//! What the commands that follow a server print on stdout: JSON lines (one JSON text per
//! line) and text, flushed as written, so that a pipe (`| jq`, `| while read`) sees each
//! message when it arrives.
//!
//! A reader that goes away (`| head -n 3`) is the end of the output, not an error: the writes
//! say so ([`Printed::Closed`]) and the command stops as it would at its natural end (for
//! `subscribe`, with a close frame).
//!
//! The JSON texts printed come from the server or from the JSON mapping, which write no line
//! breaks; a JSON text can only hold one as whitespace between tokens (a string escapes its
//! own), so replacing any with a space keeps the text's meaning and the one-per-line shape
//! whatever the writer did.

use crate::failure::{Failure, Result};
use std::borrow::Cow;
use std::io::{ErrorKind, Write};

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

/// Writes `text` on stdout and flushes it.
pub fn text(text: &str) -> Result<Printed> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(Printed::Written),
        Err(error) if error.kind() == ErrorKind::BrokenPipe => Ok(Printed::Closed),
        Err(error) => Err(Failure::usage(format!("writing to stdout: {error}"))),
    }
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
