//! Module logs: emitted through `tracing`, and kept for the caller of the last call.
//!
//! Every line a module logs becomes a `tracing` event (target `wasmod::module`, with the
//! module's own target, file and line as fields), so it reaches whatever subscriber the host
//! runs. The lines of the current call are also kept, up to a cap, so that a test (or a CLI)
//! can show what one call logged.
//!
//! A module logs from a handful of places, so the same targets and file names come again and
//! again: they are checked (as UTF-8) and allocated once, and shared by every line that names
//! them ([`Names`]). Only the message is new with each line.

use super::InstanceEnv;
use foldhash::fast::FixedState;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
pub use wasmod_abi::imports::LogLevel;

impl InstanceEnv {
    /// `console_log`: emits the line through `tracing` and keeps it with the call's logs.
    /// Texts that are not UTF-8 have their bad bytes replaced (`U+FFFD`); message, target and
    /// file are cut to [`Limits::max_log_line_bytes`](super::Limits).
    pub fn console_log(
        &mut self,
        level: LogLevel,
        target: &[u8],
        file: &[u8],
        line: u32,
        message: &[u8],
    ) {
        let cap = self.limits.max_log_line_bytes;
        let record = LogRecord {
            level,
            target: self.log_names.get(target, cap),
            file: self.log_names.get(file, cap),
            line,
            message: text(message, cap),
        };
        self.keep_log(record);
    }

    /// Logs a line on the host's behalf into the call's logs (target `wasmod::host`), for
    /// refusals a module author should see next to their own lines.
    pub(crate) fn host_log(&mut self, level: LogLevel, message: String) {
        self.keep_log(LogRecord {
            level,
            target: "wasmod::host".into(),
            file: "".into(),
            line: 0,
            message,
        });
    }

    fn keep_log(&mut self, record: LogRecord) {
        record.emit();
        self.logs.push(record);
    }
}

/// `bytes` as text, bad UTF-8 replaced, cut to `cap` bytes.
fn text(bytes: &[u8], cap: usize) -> String {
    // A character cut in half at `cap` is replaced, then cut off by `cut`.
    let end = bytes.len().min(cap.saturating_add(4));
    let mut text = String::from_utf8_lossy(&bytes[..end]).into_owned();
    cut(&mut text, cap);
    text
}

/// The targets and file names a module has logged from, as shared text.
#[derive(Debug, Default)]
pub(crate) struct Names {
    by_bytes: HashMap<Box<[u8]>, Arc<str>, FixedState>,
}

impl Names {
    /// The most names kept: past it, the cache starts again, so a module that logs from ever
    /// new targets cannot make it grow without end.
    const MAX_NAMES: usize = 256;
    /// Longer names are not kept (they are cut to `cap` and allocated each time).
    const MAX_NAME_BYTES: usize = 1024;

    /// `bytes` as shared text, cut to `cap` bytes: the one made before for the same bytes, if
    /// any. A name longer than [`Names::MAX_NAME_BYTES`] is neither looked up nor kept, so a
    /// module cannot make the host hash more than that of its memory per name.
    fn get(&mut self, bytes: &[u8], cap: usize) -> Arc<str> {
        if bytes.len() > Self::MAX_NAME_BYTES {
            return text(bytes, cap).into();
        }
        if let Some(name) = self.by_bytes.get(bytes) {
            return name.clone();
        }
        let name: Arc<str> = text(bytes, cap).into();
        if self.by_bytes.len() == Self::MAX_NAMES {
            self.by_bytes.clear();
        }
        self.by_bytes.insert(bytes.into(), name.clone());
        name
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
    pub target: Arc<str>,
    /// The source file.
    pub file: Arc<str>,
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
                    module_target = &**target,
                    file = &**file,
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
    fn names_are_shared_and_the_cache_is_bounded() {
        let mut names = Names::default();
        let first = names.get(b"app::chat", 64);
        let again = names.get(b"app::chat", 64);
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(&*names.get(b"bad \xff", 64), "bad \u{fffd}");
        assert_eq!(&*names.get(b"abcdef", 3), "abc…");
        for n in 0..1000 {
            names.get(format!("target {n}").as_bytes(), 64);
            assert!(names.by_bytes.len() <= Names::MAX_NAMES);
        }
        let long = vec![b'x'; Names::MAX_NAME_BYTES + 1];
        let kept = names.by_bytes.len();
        assert_eq!(names.get(&long, usize::MAX).len(), long.len());
        assert_eq!(names.by_bytes.len(), kept, "long names are not kept");
    }

    #[test]
    fn texts_are_cut_and_repaired() {
        assert_eq!(text(b"hello", 64), "hello");
        assert_eq!(text("aé".as_bytes(), 2), "a…");
        assert_eq!(text(b"a\xffb", 64), "a\u{fffd}b");
        let huge = vec![b'y'; 1 << 20];
        assert_eq!(text(&huge, 10).len(), 10 + '…'.len_utf8());
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
