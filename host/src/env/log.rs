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
//!
//! # What a module may not do to the host's log
//!
//! - **Flood it**: lines reach `tracing` within a budget ([`LogBudget`]) per call and per
//!   second, in lines and bytes (`Limits::max_log_lines_per_call` and the three others); past
//!   it they are dropped from the host's log (the call still keeps its own, capped), and the
//!   call ends with one line saying how many were dropped.
//! - **Forge lines**: a message's control characters are written escaped (`\n`, `\u{1b}`), so
//!   a newline cannot start a line that looks like the host's own, nor an escape sequence
//!   drive the operator's terminal ([`Escaped`]).
//!
//! The lines that reach the host's log also go to a [`LogTap`], if one is set: that is how a
//! server keeps recent logs and streams them live to its operator.

use super::{InstanceEnv, Limits};
use foldhash::fast::FixedState;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};
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
        if self.log_budget.admit(Instant::now(), record.message.len()) {
            self.publish(&record);
        }
        self.logs.push(record);
    }

    /// Logs a line on the host's behalf into the call's logs (target `wasmod::host`), for
    /// refusals a module author should see next to their own lines.
    pub(crate) fn host_log(&mut self, level: LogLevel, message: String) {
        let record = LogRecord {
            level,
            target: "wasmod::host".into(),
            file: "".into(),
            line: 0,
            message,
        };
        self.publish(&record);
        self.logs.push(record);
    }

    /// Emits `record` through `tracing`, and hands it to the log tap, if there is one.
    fn publish(&self, record: &LogRecord) {
        record.emit();
        if let Some(tap) = &self.log_tap {
            tap.record(record);
        }
    }

    /// Ends the call's log budget, saying how many of its lines were dropped, if any.
    pub(super) fn log_budget_spent(&mut self) {
        let Some(dropped) = self.log_budget.end_call() else {
            return;
        };
        let limits = &self.limits;
        let message = format!(
            "{} log lines ({} bytes) of this call were dropped from the host's log: over the \
             budget of {} lines and {} bytes per call, {} lines and {} bytes per second",
            dropped.lines,
            dropped.bytes,
            limits.max_log_lines_per_call,
            limits.max_log_bytes_per_call,
            limits.max_log_lines_per_second,
            limits.max_log_bytes_per_second,
        );
        self.host_log(LogLevel::Warn, message);
    }
}

/// Hears the log lines that reach the host's log, as they are logged
/// ([`InstanceEnv::set_log_tap`]).
///
/// Called on the module's thread, in the middle of a call: it must return at once, never
/// wait for a reader (a server's feed drops records for readers that lag instead).
pub trait LogTap: Send + Sync {
    /// One line, already within the log budget.
    fn record(&self, record: &LogRecord);
}

/// Lines and bytes of log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Spent {
    /// Lines.
    pub(crate) lines: usize,
    /// Bytes of their messages.
    pub(crate) bytes: usize,
}

impl Spent {
    fn add(&mut self, bytes: usize) {
        self.lines += 1;
        self.bytes = self.bytes.saturating_add(bytes);
    }

    /// Whether one more line of `bytes` stays within `lines` lines and `max_bytes` bytes.
    fn fits(self, bytes: usize, lines: usize, max_bytes: usize) -> bool {
        self.lines < lines && self.bytes.saturating_add(bytes) <= max_bytes
    }
}

/// How much of a module's log reaches `tracing`: per call and per second (a window that
/// starts with the first line after the last one ended), in lines and bytes.
#[derive(Debug)]
pub(crate) struct LogBudget {
    per_call: (usize, usize),
    per_second: (usize, usize),
    call: Spent,
    second: Spent,
    second_started: Option<Instant>,
    dropped: Spent,
}

impl LogBudget {
    /// A budget with `limits`' sizes, nothing spent.
    pub(crate) fn new(limits: &Limits) -> Self {
        Self {
            per_call: (limits.max_log_lines_per_call, limits.max_log_bytes_per_call),
            per_second: (
                limits.max_log_lines_per_second,
                limits.max_log_bytes_per_second,
            ),
            call: Spent::default(),
            second: Spent::default(),
            second_started: None,
            dropped: Spent::default(),
        }
    }

    /// Whether a line of `bytes` logged at `now` may reach `tracing`; it is counted as
    /// emitted or as dropped.
    pub(crate) fn admit(&mut self, now: Instant, bytes: usize) -> bool {
        let window_over = self
            .second_started
            .is_none_or(|started| now.saturating_duration_since(started) >= Duration::from_secs(1));
        if window_over {
            self.second = Spent::default();
            self.second_started = Some(now);
        }
        let fits = self.call.fits(bytes, self.per_call.0, self.per_call.1)
            && self
                .second
                .fits(bytes, self.per_second.0, self.per_second.1);
        if fits {
            self.call.add(bytes);
            self.second.add(bytes);
        } else {
            self.dropped.add(bytes);
        }
        fits
    }

    /// Ends a call: what it had dropped, if anything; the next call starts afresh (the second's
    /// window goes on).
    pub(crate) fn end_call(&mut self) -> Option<Spent> {
        self.call = Spent::default();
        let dropped = std::mem::take(&mut self.dropped);
        (dropped.lines > 0).then_some(dropped)
    }
}

/// A module's text as it goes into the host's log: control characters written escaped, as
/// Rust writes them (`\n`, `\t`, `\u{1b}`), everything else as it is.
pub(crate) struct Escaped<'a>(pub(crate) &'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut start = 0;
        for (at, control) in self.0.char_indices().filter(|(_, c)| c.is_control()) {
            f.write_str(&self.0[start..at])?;
            write!(f, "{}", control.escape_debug())?;
            start = at + control.len_utf8();
        }
        f.write_str(&self.0[start..])
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
    /// Emits the record as a `tracing` event, its message escaped ([`Escaped`]).
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
                    "{}",
                    Escaped(message)
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
    fn control_characters_are_escaped_and_the_rest_kept() {
        let escaped = |text: &str| Escaped(text).to_string();
        assert_eq!(escaped("plain ünïcode"), "plain ünïcode");
        assert_eq!(
            escaped("ok\n2026-12-01T00:00:00Z  INFO wasmod::host: forged"),
            "ok\\n2026-12-01T00:00:00Z  INFO wasmod::host: forged"
        );
        assert_eq!(
            escaped("\r\t\u{1b}[31mred\u{7f}"),
            "\\r\\t\\u{1b}[31mred\\u{7f}"
        );
        assert_eq!(escaped(""), "");
    }

    fn budget(per_call: (usize, usize), per_second: (usize, usize)) -> LogBudget {
        LogBudget::new(&Limits {
            max_log_lines_per_call: per_call.0,
            max_log_bytes_per_call: per_call.1,
            max_log_lines_per_second: per_second.0,
            max_log_bytes_per_second: per_second.1,
            ..Limits::default()
        })
    }

    #[test]
    fn a_call_emits_its_budget_of_lines_and_bytes_then_says_what_it_dropped() {
        let now = Instant::now();
        let mut lines = budget((3, 1000), (100, 10_000));
        let admitted: Vec<bool> = (0..5).map(|_| lines.admit(now, 10)).collect();
        assert_eq!(admitted, [true, true, true, false, false]);
        assert_eq!(
            lines.end_call(),
            Some(Spent {
                lines: 2,
                bytes: 20
            })
        );
        assert!(lines.admit(now, 10), "the next call starts afresh");
        assert_eq!(lines.end_call(), None);

        let mut bytes = budget((100, 25), (100, 10_000));
        assert!(bytes.admit(now, 20));
        assert!(!bytes.admit(now, 10), "over the bytes");
        assert!(bytes.admit(now, 5), "a smaller line still fits");
    }

    #[test]
    fn the_second_budget_spans_calls_and_renews_after_a_second() {
        let start = Instant::now();
        let mut budget = budget((100, 10_000), (2, 10_000));
        assert!(budget.admit(start, 1));
        budget.end_call();
        assert!(budget.admit(start + Duration::from_millis(10), 1));
        assert!(!budget.admit(start + Duration::from_millis(20), 1));
        assert_eq!(budget.end_call(), Some(Spent { lines: 1, bytes: 1 }));
        assert!(budget.admit(start + Duration::from_millis(1000), 1));
    }

    #[test]
    fn levels_follow_the_abi_numbers() {
        assert_eq!(LogLevel::from_code(0), Some(LogLevel::Error));
        assert_eq!(LogLevel::from_code(5), Some(LogLevel::Panic));
        assert_eq!(LogLevel::from_code(6), None);
    }
}
