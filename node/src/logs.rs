//! The module's recent logs, kept for the operator and streamed live.
//!
//! The host hands every log line that reaches its log (a module's within its budget, and the
//! host's own lines about a call) to the node's [`LogFeed`], a [`LogTap`] on the module's
//! environment. The feed keeps the last [`LogFeed::capacity`] records in a ring, for a reader
//! that comes late, and broadcasts each one to the live readers (the console's feed, `wasmod
//! logs`).
//!
//! The feed is the node's, as the module is: it lives as long as the module's thread, a new
//! build published to the node logs into it too, and every transport reads the same one
//! ([`crate::NodeHandle::logs`]). It is made before the node only when the lines of the
//! module's `init` are wanted, which runs as the module is loaded: then it is set on the
//! module's environment before loading and handed to the node ([`crate::NodeBuilder::logs`]).
//!
//! The module's thread must never wait for a reader: the broadcast channel is bounded, a
//! record is sent without waiting, and a reader that falls more than its capacity behind
//! loses the oldest records it had not read. It learns how many (a [`FeedEvent::Dropped`]),
//! and they are counted ([`LogFeed::dropped`]) for the operator.

use serde::Serialize;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::broadcast;
use wasmod_abi::Timestamp;
use wasmod_host::{LogLevel, LogRecord, LogTap};

/// One log record as the operator sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FeedRecord {
    /// Its number: records are numbered from 1 in the order they were logged.
    pub seq: u64,
    /// When it was logged, in microseconds since the Unix epoch.
    pub time_us: i64,
    /// Its level: `error`, `warn`, `info`, `debug`, `trace`, or `panic`.
    pub level: &'static str,
    /// The module path or target it came from (`wasmod::host` for the host's own).
    #[serde(serialize_with = "shared_text")]
    pub target: Arc<str>,
    /// The source file.
    #[serde(serialize_with = "shared_text")]
    pub file: Arc<str>,
    /// The line in the source file.
    pub line: u32,
    /// The message, as the module wrote it (the host's log escapes it; JSON does here).
    pub message: String,
}

/// Writes shared text as a string.
fn shared_text<S: serde::Serializer>(text: &Arc<str>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(text)
}

/// How severe a level is: `0` the most.
fn severity(level: LogLevel) -> u8 {
    match level {
        LogLevel::Panic | LogLevel::Error => 0,
        LogLevel::Warn => 1,
        LogLevel::Info => 2,
        LogLevel::Debug => 3,
        LogLevel::Trace => 4,
    }
}

/// The name of a level, as records and the `level` filter write it.
fn level_name(level: LogLevel) -> &'static str {
    match level {
        LogLevel::Error => "error",
        LogLevel::Warn => "warn",
        LogLevel::Info => "info",
        LogLevel::Debug => "debug",
        LogLevel::Trace => "trace",
        LogLevel::Panic => "panic",
    }
}

/// Which records a reader wants: those at least as severe as a level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelFilter(u8);

impl LevelFilter {
    /// Every record.
    pub const ALL: Self = Self(u8::MAX);

    /// The filter named `text` (`error`, `warn`, `info`, `debug`, `trace`).
    pub fn parse(text: &str) -> Option<Self> {
        let level = match text {
            "error" | "panic" => LogLevel::Error,
            "warn" => LogLevel::Warn,
            "info" => LogLevel::Info,
            "debug" => LogLevel::Debug,
            "trace" => LogLevel::Trace,
            _ => return None,
        };
        Some(Self(severity(level)))
    }

    /// Whether `record` passes.
    pub fn admits(self, record: &FeedRecord) -> bool {
        let level = LevelFilter::parse(record.level).map_or(0, |filter| filter.0);
        level <= self.0
    }
}

/// What a live reader receives next.
#[derive(Debug)]
pub enum FeedEvent {
    /// A record.
    Record(Arc<FeedRecord>),
    /// The reader fell behind: this many records were dropped for it.
    Dropped(u64),
    /// The feed has ended (the node is going away).
    Closed,
}

/// A live reader of the feed.
#[derive(Debug)]
pub struct FeedReader {
    live: broadcast::Receiver<Arc<FeedRecord>>,
    feed: Arc<LogFeed>,
}

impl FeedReader {
    /// The next record, waiting for it.
    pub async fn next(&mut self) -> FeedEvent {
        match self.live.recv().await {
            Ok(record) => FeedEvent::Record(record),
            Err(broadcast::error::RecvError::Lagged(count)) => {
                self.feed.dropped.fetch_add(count, Ordering::Relaxed);
                FeedEvent::Dropped(count)
            }
            Err(broadcast::error::RecvError::Closed) => FeedEvent::Closed,
        }
    }
}

/// The ring of recent records and the live broadcast.
#[derive(Debug)]
pub struct LogFeed {
    recent: Mutex<VecDeque<Arc<FeedRecord>>>,
    capacity: usize,
    live: broadcast::Sender<Arc<FeedRecord>>,
    next_seq: AtomicU64,
    dropped: AtomicU64,
}

impl LogFeed {
    /// A feed that keeps the last 1000 records, and lets a live reader fall 1024 behind: what
    /// a node keeps unless it is given a feed ([`crate::NodeBuilder::logs`]).
    pub fn with_defaults() -> Arc<Self> {
        Self::new(1000, 1024)
    }

    /// A feed that keeps the last `capacity` records, and lets a live reader fall `lag`
    /// records behind before it loses some (each at least one).
    pub fn new(capacity: usize, lag: usize) -> Arc<Self> {
        let (live, _) = broadcast::channel(lag.max(1));
        Arc::new(Self {
            recent: Mutex::new(VecDeque::with_capacity(capacity.max(1))),
            capacity: capacity.max(1),
            live,
            next_seq: AtomicU64::new(1),
            dropped: AtomicU64::new(0),
        })
    }

    /// How many records the ring keeps.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Records dropped for live readers that fell behind, in all.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Readers of the live feed now.
    pub fn readers(&self) -> usize {
        self.live.receiver_count()
    }

    /// The records of the ring that pass `filter`, oldest first.
    pub fn recent(&self, filter: LevelFilter) -> Vec<Arc<FeedRecord>> {
        let recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        recent
            .iter()
            .filter(|record| filter.admits(record))
            .cloned()
            .collect()
    }

    /// A live reader, and the records of the ring (passing `filter`) logged before its first.
    pub fn subscribe(self: &Arc<Self>, filter: LevelFilter) -> (Vec<Arc<FeedRecord>>, FeedReader) {
        // Under the ring's lock, so that no record is in both or in neither.
        let recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        let live = self.live.subscribe();
        let backlog = recent
            .iter()
            .filter(|record| filter.admits(record))
            .cloned()
            .collect();
        drop(recent);
        let reader = FeedReader {
            live,
            feed: self.clone(),
        };
        (backlog, reader)
    }
}

impl LogTap for LogFeed {
    fn record(&self, record: &LogRecord) {
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        let record = Arc::new(FeedRecord {
            seq: self.next_seq.fetch_add(1, Ordering::Relaxed),
            time_us: Timestamp::now().to_micros_since_unix_epoch(),
            level: level_name(record.level),
            target: record.target.clone(),
            file: record.file.clone(),
            line: record.line,
            message: record.message.clone(),
        });
        if recent.len() == self.capacity {
            recent.pop_front();
        }
        recent.push_back(record.clone());
        // Never waits; with no reader there is nobody to send to.
        let _ = self.live.send(record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(level: LogLevel, message: &str) -> LogRecord {
        LogRecord {
            level,
            target: "chat".into(),
            file: "lib.rs".into(),
            line: 7,
            message: message.into(),
        }
    }

    #[test]
    fn the_ring_keeps_the_latest_records_numbered_in_order() {
        let feed = LogFeed::new(3, 8);
        for n in 0..5 {
            feed.record(&line(LogLevel::Info, &format!("line {n}")));
        }
        let recent = feed.recent(LevelFilter::ALL);
        let kept: Vec<(u64, &str)> = recent.iter().map(|r| (r.seq, r.message.as_str())).collect();
        assert_eq!(kept, [(3, "line 2"), (4, "line 3"), (5, "line 4")]);
    }

    #[test]
    fn a_level_filter_keeps_what_is_at_least_as_severe() {
        let feed = LogFeed::new(10, 8);
        for level in [
            LogLevel::Trace,
            LogLevel::Debug,
            LogLevel::Info,
            LogLevel::Warn,
            LogLevel::Error,
            LogLevel::Panic,
        ] {
            feed.record(&line(level, "x"));
        }
        let levels =
            |filter| -> Vec<&'static str> { feed.recent(filter).iter().map(|r| r.level).collect() };
        assert_eq!(
            levels(LevelFilter::parse("warn").unwrap()),
            ["warn", "error", "panic"]
        );
        assert_eq!(levels(LevelFilter::parse("info").unwrap()).len(), 4);
        assert_eq!(levels(LevelFilter::ALL).len(), 6);
        assert_eq!(LevelFilter::parse("loud"), None);
    }

    #[tokio::test]
    async fn a_reader_that_lags_loses_the_oldest_and_never_holds_the_logger_up() {
        let feed = LogFeed::new(4, 16);
        feed.record(&line(LogLevel::Info, "before"));
        let (backlog, mut reader) = feed.subscribe(LevelFilter::ALL);
        assert_eq!(backlog.len(), 1);
        // The reader reads nothing while 10,000 records are logged: none of them waits.
        for n in 0..10_000 {
            feed.record(&line(LogLevel::Info, &format!("{n}")));
        }
        match reader.next().await {
            FeedEvent::Dropped(count) => assert_eq!(count, 10_000 - 16),
            other => panic!("expected a drop, got {other:?}"),
        }
        match reader.next().await {
            FeedEvent::Record(record) => assert_eq!(record.message, format!("{}", 10_000 - 16)),
            other => panic!("expected a record, got {other:?}"),
        }
        assert_eq!(feed.dropped(), 10_000 - 16);
        assert_eq!(feed.readers(), 1);
    }
}
