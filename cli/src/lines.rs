//! JSON lines on stdout: one JSON text per line, flushed as it is written, so that a pipe
//! (`| jq`, `| while read`) sees each message when it arrives.
//!
//! The texts printed come from the server or from the JSON mapping, which write no line breaks;
//! a JSON text can only hold one as whitespace between tokens (a string escapes its own), so
//! replacing any with a space keeps the text's meaning and the one-per-line shape whatever the
//! writer did.

use crate::failure::{Context, Result};
use std::borrow::Cow;
use std::io::Write;

/// Writes `json` on one line of stdout and flushes it.
pub fn print(json: &str) -> Result {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", one_line(json)).context("writing to stdout")?;
    out.flush().context("writing to stdout")
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
