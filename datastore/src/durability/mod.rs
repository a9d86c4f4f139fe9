//! Durability: a commit log of our own, so acknowledged transactions survive a crash.
//!
//! Why our own log rather than an embedded store: the datastore already keeps every table in
//! memory, and a transaction's changes ([`TxData`]) are already encoded rows. Durability then
//! needs only an ordered, checksummed record of those changes and a way to replay it: an
//! append-only log of a few hundred lines, with no second copy of the data in another engine's
//! format and no second transaction manager to keep in step (`docs/durability.md`).
//!
//! [`open`] recovers a directory's log into a fresh [`Datastore`] and returns it with the
//! [`Durability`] handle to log later commits through. A commit goes:
//!
//! 1. [`MutTx::commit_with`](crate::MutTx::commit_with) with [`Durability::append`]: the record
//!    is queued while the transaction still holds the tables, so the log order is the commit
//!    order;
//! 2. the tables are released, and [`Ticket::wait`] waits until the record is durable;
//! 3. only then is the commit acknowledged.
//!
//! Readers may see a commit between 1 and 3; a crash then loses a commit nobody was told of.
//!
//! [`Durability::snapshot`] writes the whole committed state to one file and removes the log
//! it covers, so recovery loads the snapshot and replays only what came after.
//!
//! Files, one job each: `frame` (length and checksum around each record), `record`
//! (a transaction as bytes), `segment` (the files, their header and names), `writer`
//! (appending, group commit, the flusher), `reader` (transactions read back by offset while the
//! log is written), `recovery` (replay, torn tails), `recent` (the last commits kept for
//! clients that resume), `snapshot`
//! (taking and loading snapshots), `upgrade` (a new module build over older data).

mod faults;
mod frame;
mod private;
mod reader;
pub(crate) mod recent;
mod record;
mod recovery;
mod replicated;
mod segment;
mod snapshot;
mod stream;
mod upgrade;
mod writer;

pub use faults::Faults;
pub use private::create_dir as create_private_dir;
pub use replicated::{decode_records, split_records, Part, Replica};
pub(crate) use segment::schema_hash;
pub use snapshot::SnapshotInfo;
pub use upgrade::{check, UpgradeCheck};
pub use writer::Ticket;

use crate::tx::TxData;
use crate::{Datastore, SchemaError};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use wasmod_abi::ModuleDef;
use writer::{SegmentFile, Writer};

/// The bytes of transaction `offset`, which made `changes`, as the log's records hold them
/// (the row bytes length-prefixed, per table): for whoever ships commits elsewhere in the
/// log's own encoding.
pub fn encode_changes(offset: u64, changes: &TxData) -> Vec<u8> {
    let mut out = Vec::with_capacity(12 + changes.tables.len() * 12);
    record::encode(&mut out, offset, changes);
    out
}

/// The offset and changes of bytes made by [`encode_changes`]; `Err` says what is malformed.
pub fn decode_changes(bytes: &[u8]) -> Result<(u64, TxData), &'static str> {
    record::decode(bytes)
}

/// When a commit counts as durable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// Each commit waits for a sync of its own record (commits that are waiting together
    /// still share one).
    Fsync,
    /// A flusher thread syncs whatever has been appended since its last sync; each commit
    /// waits for the sync that covers it. Same guarantee as [`Mode::Fsync`], fewer syncs.
    #[default]
    Group,
    /// Records are written in the background and never synced, and commits do not wait: a
    /// crash loses the last moments (records are written every 2 ms at most). For tests and
    /// benchmarks.
    Off,
    /// A commit is durable once the [`Replica`] set with [`Durability::replicate_to`] holds it
    /// (a quorum of a consensus engine); the flusher hands it each batch, then writes the batch
    /// to the local log without syncing (`replicated`). Until a replica is set the log is a
    /// standby's: the [`Database`](crate::Database) takes only commits replicated from
    /// elsewhere.
    Replicated,
}

impl Mode {
    /// Whether each write to the local log is synced: not when durability is off, nor when it
    /// is the replica's.
    fn syncs_writes(self) -> bool {
        matches!(self, Self::Fsync | Self::Group)
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "fsync" => Ok(Self::Fsync),
            "group" => Ok(Self::Group),
            "off" => Ok(Self::Off),
            "replicated" => Ok(Self::Replicated),
            _ => Err(format!(
                "`{text}` is not a durability mode (fsync, group, off or replicated)"
            )),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Fsync => "fsync",
            Self::Group => "group",
            Self::Off => "off",
            Self::Replicated => "replicated",
        })
    }
}

/// How a log is written.
///
/// Start from [`Options::default`] and set the fields that differ (more may be added, so the
/// struct cannot be written out whole outside this crate), or chain the `with_*` methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// When a commit is durable. Default: [`Mode::Group`].
    pub mode: Mode,
    /// In [`Mode::Group`], how long the flusher lets commits gather before a sync. Zero syncs
    /// at once: the commits that arrive during one sync share the next. Default: zero.
    pub group_window: Duration,
    /// The size past which the log starts a new segment file. Default: 64 MiB.
    pub max_segment_bytes: u64,
    /// Take a snapshot in the background once this many transactions were logged since the
    /// last one (see [`Durability::snapshot_if_due`]); `None` for never. Default: every
    /// 100,000 transactions.
    pub snapshot_every: Option<u64>,
    /// How many of the last transactions recovery keeps (their changes, in
    /// [`Recovered::recent`]), for a server whose clients resume from an offset they saw
    /// before a restart; at most [`Options::recent_bytes`] of rows. A
    /// [`Database`](crate::Database) keeps as many of the last ones, those it commits after
    /// opening included, until [`Database::take_recent`](crate::Database::take_recent).
    /// Default: 0.
    pub recent_commits: usize,
    /// The most bytes of rows those transactions may hold. Default: 64 MiB.
    pub recent_bytes: usize,
    /// The largest payload of one frame of the log or of a snapshot, at most (and by default)
    /// 4 GiB less a byte, what a frame's length field holds. A commit whose record would be
    /// larger is refused before it is applied ([`DurabilityError::TooLarge`]); a snapshot is
    /// split into frames no larger.
    pub max_frame_bytes: u64,
    /// Failures to inject, for tests of what a failing disk does. Default: none.
    #[doc(hidden)]
    pub faults: Faults,
}

impl Options {
    /// These options with durability `mode`.
    pub fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// These options keeping, on recovery, the last `commits` transactions (at most `bytes`
    /// of rows) in [`Recovered::recent`].
    pub fn with_recent(mut self, commits: usize, bytes: usize) -> Self {
        self.recent_commits = commits;
        self.recent_bytes = bytes;
        self
    }

    /// The largest frame payload these options allow: [`Options::max_frame_bytes`], at most
    /// what a frame holds.
    pub(crate) fn frame_limit(&self) -> u64 {
        self.max_frame_bytes.min(frame::MAX_PAYLOAD)
    }

    /// These options injecting `faults` (for tests).
    #[doc(hidden)]
    pub fn with_faults(mut self, faults: Faults) -> Self {
        self.faults = faults;
        self
    }
}

impl Default for Options {
    fn default() -> Self {
        Self {
            mode: Mode::default(),
            group_window: Duration::ZERO,
            max_segment_bytes: 64 << 20,
            snapshot_every: Some(100_000),
            recent_commits: 0,
            recent_bytes: 64 << 20,
            max_frame_bytes: frame::MAX_PAYLOAD,
            faults: Faults::default(),
        }
    }
}

/// Why a log could not be opened, recovered or written.
#[derive(Debug)]
#[non_exhaustive]
pub enum DurabilityError {
    /// A file operation failed.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done.
        what: &'static str,
        /// The system's error.
        source: io::Error,
    },
    /// The log is damaged where acknowledged transactions may follow: nothing was changed.
    Corrupt {
        /// The segment.
        file: PathBuf,
        /// The byte offset of the damage in it.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// The log was written for different tables.
    SchemaMismatch {
        /// The segment whose header says so.
        file: PathBuf,
    },
    /// The module's tables cannot take the data of the ones the log was written for.
    Incompatible {
        /// Which table, and what changed.
        reason: String,
    },
    /// A file of the data directory other than the log cannot be read: written by another
    /// version of wasmod, or damaged. Nothing was changed.
    Unreadable {
        /// The file.
        file: PathBuf,
        /// Why, and what to do.
        reason: String,
    },
    /// Another process (or handle) has the directory open.
    Locked {
        /// The directory.
        dir: PathBuf,
    },
    /// The module's tables are invalid.
    Schema(SchemaError),
    /// The log failed earlier; this commit is in memory only (or, refused by
    /// [`Durability::append`], was not applied).
    Failed(String),
    /// A commit's record is larger than one frame holds ([`Options::max_frame_bytes`]): it was
    /// refused before anything was written, and the log goes on.
    TooLarge {
        /// The record's size.
        bytes: u64,
        /// The most a frame holds.
        limit: u64,
    },
    /// The database is a standby: its commits are another node's, replicated to it, and it
    /// takes none of its own until it is promoted. Nothing was changed.
    Standby,
}

impl DurabilityError {
    fn io(path: &Path, what: &'static str, source: io::Error) -> Self {
        Self::Io {
            path: path.to_owned(),
            what,
            source,
        }
    }
}

impl fmt::Display for DurabilityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { path, what, source } => {
                write!(f, "{what} ({}): {source}", path.display())
            }
            Self::Corrupt {
                file,
                offset,
                reason,
            } => write!(
                f,
                "the commit log is damaged in {} at byte {offset}: {reason}; nothing was \
                 truncated (restore the file or move the data directory aside)",
                file.display()
            ),
            Self::SchemaMismatch { file } => write!(
                f,
                "the commit log {} was written for different tables (another module, or an \
                 incompatible change to this one's tables): refusing to replay it",
                file.display()
            ),
            Self::Incompatible { reason } => write!(
                f,
                "the module's tables are incompatible with the stored data: {reason}; nothing \
                 was changed (make the build compatible, or move the data directory aside)"
            ),
            Self::Unreadable { file, reason } => {
                write!(f, "{} cannot be read: {reason}", file.display())
            }
            Self::Locked { dir } => write!(
                f,
                "the data directory {} is in use by another wasmod process",
                dir.display()
            ),
            Self::Schema(error) => error.fmt(f),
            Self::Failed(reason) => write!(
                f,
                "the commit log failed earlier ({reason}): commits are no longer durable; \
                 restart to recover"
            ),
            Self::TooLarge { bytes, limit } => write!(
                f,
                "the transaction's record would be {bytes} bytes, more than the {limit} one \
                 frame of the commit log holds: it was refused, and nothing was changed"
            ),
            Self::Standby => f.write_str(
                "this node is a standby: it takes no writes of its own until it becomes the \
                 primary, and nothing was changed (send writes to the primary)",
            ),
        }
    }
}

impl std::error::Error for DurabilityError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What recovery found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecoveryReport {
    /// How many transactions were replayed; zero for a new (or empty) log.
    pub transactions: u64,
    /// How many segment files were read.
    pub segments: usize,
    /// The torn tail cut off the log, if there was one.
    pub torn_tail: Option<TornTail>,
    /// How long recovery took.
    pub duration: Duration,
    /// Whether the stored rows were an older build's, carried over into this build's tables at
    /// this start (`upgrade`). The upgrade replaces the log with a snapshot, so no transaction
    /// from before it is kept in [`Recovered::recent`].
    pub upgraded: bool,
    /// Whether that upgrade changed how the stored rows are encoded (a column added at the
    /// end): the rows a client holds from before are then in the older build's row types, and
    /// it cannot resume from an offset before this start. False when the rows encode as they
    /// did (only tables or indexes added or removed, say), and when nothing was upgraded.
    pub rows_reencoded: bool,
}

/// Records a crash left unfinished at the end of the log, removed on recovery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TornTail {
    /// The segment.
    pub file: PathBuf,
    /// Where the first bad record started (the file's new length).
    pub offset: u64,
    /// How many bytes were cut.
    pub bytes: u64,
    /// What was wrong with the first bad record.
    pub reason: String,
}

impl fmt::Display for TornTail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the commit log {} ends in {} bytes of unfinished records at byte {} ({})",
            self.file.display(),
            self.bytes,
            self.offset,
            self.reason
        )
    }
}

/// The handle commits are logged through. Clones share the log; when the last goes, what is
/// buffered is written (and synced, unless the mode is off) and the flusher ends.
#[derive(Clone)]
pub struct Durability {
    writer: Arc<Writer>,
    schedule: Arc<Schedule>,
    /// Held for the directory lock's sake.
    _lock: Arc<File>,
}

impl Durability {
    /// Queues the record of a commit that made `changes`; call it from
    /// [`MutTx::try_commit_with`](crate::MutTx::try_commit_with), so that a refused record
    /// rolls the transaction back, and acknowledge the commit only once the returned ticket's
    /// [`wait`](Ticket::wait) returns `Ok`. Errors, with nothing queued:
    /// [`DurabilityError::Failed`] once the log has failed, [`DurabilityError::TooLarge`] for a
    /// record larger than a frame holds.
    pub fn append(&self, changes: &TxData) -> Result<Ticket, DurabilityError> {
        self.writer.append(changes)
    }

    /// Makes the log hand every later batch to `replica` before it counts as durable (see
    /// [`Replica`]), once what is buffered is written: for a standby that becomes the primary.
    /// Fails if the log's mode is not [`Mode::Replicated`], or the log has failed.
    pub fn replicate_to(
        &self,
        replica: std::sync::Arc<dyn Replica>,
    ) -> Result<(), DurabilityError> {
        self.writer.replicate_to(replica)
    }

    /// Why the log failed, if it did (a write or a sync of a segment failed): from then on it
    /// refuses every commit, and only a restart recovers what it holds.
    pub fn failure(&self) -> Option<String> {
        self.writer.failure()
    }

    /// The wait for transaction `offset`, appended already, to be durable (every earlier one
    /// is once it is): for whoever learns of a commit some other way than its own ticket.
    pub fn ticket(&self, offset: u64) -> Ticket {
        self.writer.ticket(offset)
    }

    /// How many times the log has been synced: commits divided by syncs is the group size.
    pub fn syncs(&self) -> u64 {
        self.writer.syncs()
    }

    /// How many transactions the log holds (recovered ones included).
    pub fn transactions(&self) -> u64 {
        self.writer.appended()
    }

    /// How many transactions are durable: those at offsets below this one, which a crash can
    /// no longer lose (see [`Ticket::wait`] for what durable means in each mode).
    pub fn durable_transactions(&self) -> u64 {
        self.writer.durable()
    }

    /// The durable transactions at offsets `from..until`, read back from the files, oldest
    /// first: an unbroken run from `from` that stops early at the durable end (or where the
    /// files end), empty if `from` is not durable yet; `None` if the log no longer holds
    /// `from` (a snapshot covered it). For a replication publisher that fell behind.
    pub fn read(
        &self,
        from: u64,
        until: u64,
    ) -> Result<Option<Vec<(u64, TxData)>>, DurabilityError> {
        let until = until.min(self.durable_transactions());
        if from >= until {
            return Ok(Some(Vec::new()));
        }
        reader::read(self.writer.dir(), self.writer.schema(), from, until)
    }

    /// Snapshots `datastore` (the one this log was opened with) and removes the log files
    /// and older snapshots it covers. Commits wait while the rows are gathered (not while
    /// they are written). Safe to call from a background thread.
    pub fn snapshot(&self, datastore: &Datastore) -> Result<SnapshotInfo, DurabilityError> {
        let info = snapshot::take(&self.writer, datastore)?;
        self.schedule.last.store(info.offset, Ordering::Relaxed);
        Ok(info)
    }

    /// Makes the log one for the tables of `def` from the next transaction on, with
    /// `datastore` (holding `def`'s tables) as its state there: for a new build that takes over
    /// a running log ([`Database::replace`](crate::Database::replace)). Returns the snapshot
    /// that records the state.
    ///
    /// The steps are those of an upgrade at start, so that a crash at any point is finished
    /// by the next start with the new build (`upgrade`): the buffered records are written; a
    /// snapshot of `datastore` for `def`'s tables, covering every transaction so far, is
    /// renamed into place (from then on the new build's tables are decided); the open segment
    /// is replaced by one for the new tables; the files the snapshot covers are removed; and
    /// `def` is recorded as the description the log is written for. A background snapshot in
    /// progress is waited for first. The caller must keep commits out meanwhile.
    ///
    /// Fails with nothing changed if the log had failed or the snapshot cannot be written. A
    /// failure after the snapshot is in place fails the log (every later commit is refused):
    /// the directory now belongs to the new build, whose next start finishes the move.
    pub fn rebase(
        &self,
        def: &ModuleDef,
        datastore: &Datastore,
    ) -> Result<SnapshotInfo, DurabilityError> {
        while self.schedule.running.swap(true, Ordering::AcqRel) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let rebased = self.rebase_exclusively(def, datastore);
        self.schedule.running.store(false, Ordering::Release);
        let info = rebased?;
        self.schedule.last.store(info.offset, Ordering::Relaxed);
        Ok(info)
    }

    /// [`Durability::rebase`], once no background snapshot runs.
    fn rebase_exclusively(
        &self,
        def: &ModuleDef,
        datastore: &Datastore,
    ) -> Result<SnapshotInfo, DurabilityError> {
        let dir = self.writer.dir();
        let schema = segment::schema_hash(def);
        let offset = self.writer.write_buffered()?;
        let state = snapshot::contents(&datastore.begin_read(), datastore.table_count());
        let info = snapshot::write(dir, schema, offset, &state, self.writer.options())?;
        // The snapshot decides for the new tables: the next start finishes what fails now, and
        // until then nothing may be appended for the old ones.
        let finished = self
            .writer
            .rebase(schema)
            .and_then(|_| snapshot::remove_covered(dir, offset))
            .and_then(|()| upgrade::record(dir, def));
        if let Err(error) = &finished {
            self.writer.fail(format!(
                "moving the log to the new build's tables failed ({error}); the next start \
                 with the new build finishes it"
            ));
        }
        finished.map(|()| info)
    }

    /// Starts [`Durability::snapshot`] on a background thread if
    /// [`Options::snapshot_every`] transactions were logged since the last snapshot and none
    /// is running. Call it after a commit, outside the transaction. A failed snapshot is
    /// logged and changes nothing: the log still holds everything. The thread holds the log
    /// (and its directory lock) until the snapshot is written.
    pub fn snapshot_if_due(&self, datastore: &Arc<Datastore>) {
        let Some(every) = self.schedule.every else {
            return;
        };
        let due = self.transactions() >= self.schedule.last.load(Ordering::Relaxed) + every;
        if !due || self.schedule.running.swap(true, Ordering::AcqRel) {
            return;
        }
        let (log, datastore) = (self.clone(), datastore.clone());
        let spawned = std::thread::Builder::new()
            .name("wasmod-snapshot".into())
            .spawn(move || {
                match log.snapshot(&datastore) {
                    Ok(info) => tracing::info!(
                        target: "wasmod::durability",
                        offset = info.offset,
                        rows = info.rows,
                        "snapshot taken"
                    ),
                    Err(error) => {
                        tracing::warn!(target: "wasmod::durability", "snapshot failed: {error}")
                    }
                }
                log.schedule.running.store(false, Ordering::Release);
            });
        if let Err(error) = spawned {
            tracing::warn!(target: "wasmod::durability", "cannot start a snapshot: {error}");
            self.schedule.running.store(false, Ordering::Release);
        }
    }
}

impl fmt::Debug for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Durability")
            .field("transactions", &self.transactions())
            .field("syncs", &self.syncs())
            .finish()
    }
}

/// When the next background snapshot is due.
struct Schedule {
    /// [`Options::snapshot_every`].
    every: Option<u64>,
    /// The offset of the last snapshot.
    last: AtomicU64,
    /// Whether a snapshot is being taken.
    running: AtomicBool,
}

/// A datastore recovered from its log, and the handle to log further commits through.
#[derive(Debug)]
pub struct Recovered {
    /// The tables, as the log left them.
    pub datastore: Datastore,
    /// The log.
    pub durability: Durability,
    /// What recovery found.
    pub report: RecoveryReport,
    /// The last transactions replayed, oldest first, with their offsets: as many as
    /// [`Options::recent_commits`] and [`Options::recent_bytes`] allow, in an unbroken run
    /// that ends with the last one.
    pub recent: Vec<(u64, TxData)>,
}

/// Opens (creating it if needed) the log in `dir` for the module described by `def`,
/// replays it into a new datastore, and returns both.
///
/// Fails without changing anything if the log is damaged anywhere but its tail, was written
/// for tables that `def`'s cannot take (see `upgrade`: new tables and indexes are fine), or the
/// directory is open elsewhere; a torn tail is truncated and reported in
/// [`Recovered::report`].
pub fn open(dir: &Path, def: &ModuleDef, options: Options) -> Result<Recovered, DurabilityError> {
    private::create_dir(dir)
        .map_err(|error| DurabilityError::io(dir, "creating the log directory", error))?;
    let lock_path = dir.join("LOCK");
    let lock = private::file_options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|error| DurabilityError::io(&lock_path, "opening the lock file", error))?;
    if lock.try_lock().is_err() {
        return Err(DurabilityError::Locked {
            dir: dir.to_owned(),
        });
    }
    let datastore = Datastore::new(def).map_err(DurabilityError::Schema)?;
    let schema = segment::schema_hash(def);
    let upgrade = upgrade::prepare(dir, def, schema, &options)?;
    let mut replayed =
        recovery::replay(dir, schema, &datastore, &options, recovery::Tail::Truncate)?;
    replayed.report.upgraded = upgrade != upgrade::Prepared::Unchanged;
    replayed.report.rows_reencoded = upgrade == upgrade::Prepared::Reencoded;
    let file = match replayed.tail {
        Some((path, len)) => {
            let file = OpenOptions::new()
                .append(true)
                .open(&path)
                .map_err(|error| DurabilityError::io(&path, "opening the log", error))?;
            SegmentFile { path, file, len }
        }
        None => {
            let path = segment::path(dir, replayed.next);
            let file = segment::create(dir, schema, replayed.next)
                .map_err(|error| DurabilityError::io(&path, "creating the log", error))?;
            SegmentFile {
                path,
                file,
                len: segment::HEADER_LEN as u64,
            }
        }
    };
    let writer = Writer::start(dir.to_owned(), schema, options, file, replayed.next)?;
    let schedule = Schedule {
        every: options.snapshot_every,
        last: AtomicU64::new(replayed.snapshot),
        running: AtomicBool::new(false),
    };
    Ok(Recovered {
        datastore,
        durability: Durability {
            writer: Arc::new(writer),
            schedule: Arc::new(schedule),
            _lock: Arc::new(lock),
        },
        report: replayed.report,
        recent: replayed.recent.into(),
    })
}
