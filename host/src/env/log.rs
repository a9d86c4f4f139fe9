//! Module logs: emitted through `tracing`, and kept for the caller of the last call.
//!
//! Every line a module logs becomes a `tracing` event (target `wasmod::module`, with the
//! module's own target, file and line as fields), so it reaches whatever subscriber the host
//! runs. The lines of the current call are also kept, up to a cap, so that a test (or a CLI)
//! can show what one call logged.

use super::InstanceEnv;
use std::collections::VecDeque;
pub use wasmod_abi::imports::LogLevel;

impl InstanceEnv {
    /// `console_log`: emits `record` through `tracing` and keeps it with the call's logs. Its
    /// message, target and file are cut to [`Limits::max_log_line_bytes`](super::Limits).
    pub fn console_log(&mut self, mut record: LogRecord) {
        let cap = self.limits.max_log_line_bytes;
        for text in [&mut record.message, &mut record.target, &mut record.file] {
            cut(text, cap);
        }
        record.emit();
        self.logs.push(record);
    }

    /// Logs a line on the host's behalf into the call's logs (target `wasmod::host`), for
    /// refusals a module author should see next to their own lines.
    pub(crate) fn host_log(&mut self, level: LogLevel, message: String) {
        self.console_log(LogRecord {
            level,
            target: "wasmod::host".into(),
            file: String::new(),
            line: 0,
            message,
        });
    }
}

/// Cuts `text` to at most `cap` bytes, at a character boundary, marked with `…`.
fn cut(text: &mut String, cap: usize) {
    if text.len() <= cap {
        return;
    }
    let mut end = cap;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push('…');
}

/// One logged line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRecord {
    /// Its level.
    pub level: LogLevel,
    /// The module path or target the line came from.
    pub target: String,
    /// The source file.
    pub file: String,
    /// The line in the source file.
    pub line: u32,
    /// The message.
    pub message: String,
}

impl LogRecord {
    /// Emits the record as a `tracing` event.
    pub(crate) fn emit(&self) {
        let Self {
            level,
            target,
            file,
            line,
            message,
        } = self;
        macro_rules! event {
            ($macro:ident $(, $extra:ident = $value:expr)?) => {
                tracing::$macro!(
                    target: "wasmod::module",
                    module_target = %target,
                    file = %file,
                    line = *line,
                    $($extra = $value,)?
                    "{message}"
                )
            };
        }
        match level {
            LogLevel::Error => event!(error),
            LogLevel::Warn => event!(warn),
            LogLevel::Info => event!(info),
            LogLevel::Debug => event!(debug),
            LogLevel::Trace => event!(trace),
            LogLevel::Panic => event!(error, panic = true),
        }
    }
}

/// The lines of the current call, oldest dropped first past the cap.
#[derive(Debug)]
pub(crate) struct LogBuffer {
    records: VecDeque<LogRecord>,
    capacity: usize,
    dropped: usize,
}

impl LogBuffer {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            records: VecDeque::new(),
            capacity,
            dropped: 0,
        }
    }

    pub(crate) fn push(&mut self, record: LogRecord) {
        if self.capacity == 0 {
            self.dropped += 1;
            return;
        }
        if self.records.len() == self.capacity {
            self.records.pop_front();
            self.dropped += 1;
        }
        self.records.push_back(record);
    }

    pub(crate) fn clear(&mut self) {
        self.records.clear();
        self.dropped = 0;
    }

    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = &LogRecord> {
        self.records.iter()
    }

    pub(crate) fn dropped(&self) -> usize {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(message: &str) -> LogRecord {
        LogRecord {
            level: LogLevel::Info,
            target: "t".into(),
            file: "f.rs".into(),
            line: 1,
            message: message.into(),
        }
    }

    #[test]
    fn the_buffer_keeps_the_latest_lines() {
        let mut buffer = LogBuffer::new(2);
        for message in ["a", "b", "c"] {
            buffer.push(record(message));
        }
        let kept: Vec<_> = buffer.iter().map(|r| r.message.clone()).collect();
        assert_eq!(kept, ["b", "c"]);
        assert_eq!(buffer.dropped(), 1);
        buffer.clear();
        assert_eq!(buffer.iter().len(), 0);
    }

    #[test]
    fn long_texts_are_cut_at_a_character_boundary() {
        let mut text = "aéé".to_owned();
        cut(&mut text, 2);
        assert_eq!(text, "a…");
        let mut short = "abc".to_owned();
        cut(&mut short, 3);
        assert_eq!(short, "abc");
    }

    #[test]
    fn levels_follow_the_abi_numbers() {
        assert_eq!(LogLevel::from_code(0), Some(LogLevel::Error));
        assert_eq!(LogLevel::from_code(5), Some(LogLevel::Panic));
        assert_eq!(LogLevel::from_code(6), None);
    }
}
