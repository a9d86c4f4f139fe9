//! The writer: records appended in commit order, written and synced in groups, and the
//! tickets commits wait on.
//!
//! Appending only copies the framed record into a buffer under a short lock, so it can run
//! while the datastore's write lock is held (which fixes the log order to the commit order)
//! without holding that lock during I/O. Writing and syncing happen under a second lock, the
//! file's, which appenders never take: commits keep arriving while a sync runs, and the next
//! sync covers all of them. That is group commit, and it falls out of the two locks:
//!
//! - [`Mode::Fsync`]: the committing thread, in [`Ticket::wait`], writes whatever is buffered
//!   and syncs. Concurrent committers still share syncs; a lone one syncs once per commit.
//! - [`Mode::Group`]: a flusher thread writes and syncs whatever is buffered, in a loop (after
//!   an optional window that lets more commits join); waiters sleep until their record is
//!   covered.
//! - [`Mode::Off`]: the flusher writes without syncing, every [`OFF_WINDOW`] at most, and
//!   tickets are ready at once.
//! - [`Mode::Replicated`]: as group, but the flusher hands each batch to the replica first and
//!   writes it without syncing once the replica holds it (`replicated`).
//!
//! An I/O error poisons the log: the segment is cut back to where the failed write began (so
//! that, as far as the file system lets us, no commit that was told of the failure comes back
//! after a restart), the waiting commits fail, and every later append is refused before its
//! transaction is applied ([`Writer::append`] returns `Err`, and the [`Database`] rolls the
//! transaction back), since what is in memory can no longer be made durable in order. The
//! host is expected to report itself degraded and be restarted.
//!
//! [`Database`]: crate::Database

use super::{segment, DurabilityError, Mode, Options, Replica};
use crate::tx::TxData;
use parking_lot::{Condvar, Mutex};
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// How long the flusher gathers records before a write with durability off, where nobody
/// waits for the write: one `write` per commit (and a wake of the flusher per commit) cost
/// more than the commits themselves. A crash of the process loses at most this much more.
const OFF_WINDOW: std::time::Duration = std::time::Duration::from_millis(2);

/// The state appenders and flushers share.
struct State {
    /// Framed records not yet handed to the file.
    pending: Vec<u8>,
    /// The offset the next record gets; records below it are appended.
    next: u64,
    /// Records below this offset are durable (written, and synced unless the mode is off).
    durable: u64,
    /// Why the log stopped, if it did.
    failed: Option<String>,
    /// Set when the last handle goes: the flusher writes what is left and ends.
    closing: bool,
}

impl State {
    /// The offset the next record gets, or why the log failed.
    fn next_offset(&self) -> Result<u64, DurabilityError> {
        match &self.failed {
            Some(reason) => Err(DurabilityError::Failed(reason.clone())),
            None => Ok(self.next),
        }
    }
}

/// The file side: the open segment, touched only under its own lock.
pub(crate) struct SegmentFile {
    /// The segment's path, for errors.
    pub(crate) path: PathBuf,
    /// The segment, open for appending.
    pub(crate) file: File,
    /// The segment's size, to know when to start the next one.
    pub(crate) len: u64,
}

/// What the writer's handles share.
pub(crate) struct Shared {
    dir: PathBuf,
    /// The hash of the tables the log is for; it changes only when a new build takes over
    /// ([`Writer::rebase`]), under the file's lock.
    schema: Mutex<[u8; 32]>,
    options: Options,
    state: Mutex<State>,
    /// Signalled when `durable` moves or the log fails.
    advanced: Condvar,
    /// Signalled when records are appended or the log closes (for the flusher).
    appended: Condvar,
    file: Mutex<SegmentFile>,
    /// Where batches go before they are durable, in [`Mode::Replicated`] once set.
    replica: Mutex<Option<Arc<dyn Replica>>>,
    syncs: AtomicU64,
    /// How many writes were made to the segments, for [`Faults`](super::Faults).
    writes: AtomicU64,
}

/// The log writer; ends its flusher (after a last flush) when dropped.
pub(crate) struct Writer {
    shared: Arc<Shared>,
    flusher: Option<JoinHandle<()>>,
}

/// A commit's place in the log, to wait on until it is durable. Records become durable in
/// order, so once a ticket's wait returns `Ok`, every earlier commit is durable too.
#[must_use = "a commit is not durable until its ticket's wait returns Ok"]
pub struct Ticket {
    wait: Wait,
}

/// What a [`Ticket`] waits for.
enum Wait {
    /// Nothing: the commit was not logged.
    Ready,
    /// The record at `offset` of the log: it is durable once `durable` exceeds `offset`.
    Log { shared: Arc<Shared>, offset: u64 },
    /// Nothing any more: the commit could not be logged, for this reason.
    Refused(String),
}

impl Writer {
    /// A writer appending to the open segment `file` from offset `next` on.
    pub(crate) fn start(
        dir: PathBuf,
        schema: [u8; 32],
        options: Options,
        file: SegmentFile,
        next: u64,
    ) -> Result<Self, DurabilityError> {
        let shared = Arc::new(Shared {
            dir,
            schema: Mutex::new(schema),
            options,
            state: Mutex::new(State {
                pending: Vec::new(),
                next,
                durable: next,
                failed: None,
                closing: false,
            }),
            advanced: Condvar::new(),
            appended: Condvar::new(),
            file: Mutex::new(file),
            replica: Mutex::new(None),
            syncs: AtomicU64::new(0),
            writes: AtomicU64::new(0),
        });
        let flusher = match options.mode {
            Mode::Fsync => None,
            Mode::Group | Mode::Off | Mode::Replicated => {
                let flushing = shared.clone();
                let thread = std::thread::Builder::new()
                    .name("wasmod-log-flusher".into())
                    .spawn(move || flushing.flush_loop())
                    .map_err(|error| {
                        DurabilityError::io(&shared.dir, "starting the log flusher", error)
                    })?;
                Some(thread)
            }
        };
        Ok(Self { shared, flusher })
    }

    /// Appends the record of `changes`; call it while the transaction still holds the
    /// datastore, so the log order is the commit order, and apply the transaction only if it
    /// returns `Ok`. A transaction that changed nothing is not logged and its ticket is ready.
    /// Errors, with nothing appended: [`DurabilityError::Failed`] once the log has failed,
    /// [`DurabilityError::TooLarge`] (the log goes on) for a record larger than a frame holds.
    pub(crate) fn append(&self, changes: &TxData) -> Result<Ticket, DurabilityError> {
        if changes.is_empty() {
            return Ok(Ticket::ready());
        }
        let (bytes, limit) = (
            super::record::encoded_len(changes),
            self.shared.options.frame_limit(),
        );
        if bytes > limit {
            return Err(DurabilityError::TooLarge { bytes, limit });
        }
        let mut state = self.shared.state.lock();
        let offset = state.next_offset()?;
        let mut payload = Vec::with_capacity(bytes as usize);
        super::record::encode(&mut payload, offset, changes);
        if !super::frame::write(&mut state.pending, &payload) {
            return Err(DurabilityError::TooLarge { bytes, limit });
        }
        state.next += 1;
        drop(state);
        self.shared.appended.notify_one();
        Ok(self.ticket(offset))
    }

    /// The wait for the record at `offset` (appended already) to be durable.
    pub(crate) fn ticket(&self, offset: u64) -> Ticket {
        Ticket {
            wait: Wait::Log {
                shared: self.shared.clone(),
                offset,
            },
        }
    }

    /// Hands every later batch to `replica` before it is durable, once what is buffered is
    /// written (see [`Replica`]).
    pub(crate) fn replicate_to(&self, replica: Arc<dyn Replica>) -> Result<(), DurabilityError> {
        if self.shared.options.mode != Mode::Replicated {
            return Err(DurabilityError::Failed(format!(
                "a log in mode {} has no replica",
                self.shared.options.mode
            )));
        }
        // The file's lock keeps the flusher out while the replica changes: no batch goes half
        // to the old and half to the new.
        self.shared.flush();
        let _file = self.shared.file.lock();
        self.shared.state.lock().next_offset()?;
        *self.shared.replica.lock() = Some(replica);
        Ok(())
    }

    /// Why the log failed, if it did: from then on it refuses every commit.
    pub(crate) fn failure(&self) -> Option<String> {
        self.shared.state.lock().failed.clone()
    }

    /// How many syncs the log has made.
    pub(crate) fn syncs(&self) -> u64 {
        self.shared.syncs.load(Ordering::Relaxed)
    }

    /// How many transactions the log holds or has buffered.
    pub(crate) fn appended(&self) -> u64 {
        self.shared.state.lock().next
    }

    /// How many transactions are durable: every one below this offset.
    pub(crate) fn durable(&self) -> u64 {
        self.shared.state.lock().durable
    }

    /// Writes what is buffered and starts a new segment at the next offset (unless the open
    /// one is still empty), so that every earlier segment holds only earlier transactions;
    /// returns that offset. The caller must keep commits out meanwhile (hold the datastore).
    pub(crate) fn seal(&self) -> Result<u64, DurabilityError> {
        self.shared.flush();
        let mut file = self.shared.file.lock();
        let next = self.shared.state.lock().next_offset()?;
        if file.len > segment::HEADER_LEN as u64 {
            self.shared.rotate(&mut file, next)?;
        }
        Ok(next)
    }

    /// The log's directory.
    pub(crate) fn dir(&self) -> &std::path::Path {
        &self.shared.dir
    }

    /// How the log is written.
    pub(crate) fn options(&self) -> &Options {
        &self.shared.options
    }

    /// The hash of the tables the log is for.
    pub(crate) fn schema(&self) -> [u8; 32] {
        *self.shared.schema.lock()
    }

    /// Writes what is buffered to the open segment; returns the offset of the next record,
    /// or why the log failed.
    pub(crate) fn write_buffered(&self) -> Result<u64, DurabilityError> {
        self.shared.flush();
        self.shared.state.lock().next_offset()
    }

    /// Fails the log for `reason`: every waiting and later commit is refused, as after a
    /// failed write.
    pub(crate) fn fail(&self, reason: String) {
        let mut state = self.shared.state.lock();
        if state.failed.is_none() {
            tracing::error!(target: "wasmod::durability", "the commit log failed: {reason}");
            state.failed = Some(reason);
        }
        drop(state);
        self.shared.advanced.notify_all();
    }

    /// Makes the log one for the tables hashing to `schema` from the next offset on: the open
    /// segment, which holds only earlier transactions (or nothing), is replaced by a new one
    /// for `schema`; returns that offset. For a new build taking over a running log, once a
    /// snapshot for it covers every earlier transaction ([`Writer::write_buffered`] first).
    /// The caller must keep commits out meanwhile.
    pub(crate) fn rebase(&self, schema: [u8; 32]) -> Result<u64, DurabilityError> {
        self.shared.flush();
        let mut file = self.shared.file.lock();
        let next = self.shared.state.lock().next_offset()?;
        *self.shared.schema.lock() = schema;
        if file.len == segment::HEADER_LEN as u64 {
            // An empty segment starts at the next offset: it is made again for `schema`.
            std::fs::remove_file(&file.path).map_err(|error| {
                DurabilityError::io(&file.path, "replacing an empty log segment", error)
            })?;
        }
        self.shared.rotate(&mut file, next)?;
        Ok(next)
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.shared.state.lock().closing = true;
        self.shared.appended.notify_all();
        match self.flusher.take() {
            Some(flusher) => {
                if flusher.join().is_err() {
                    tracing::error!(target: "wasmod::durability", "the log flusher panicked");
                }
            }
            None => self.shared.flush(),
        }
    }
}

impl Shared {
    /// The flusher thread: flush whenever records are waiting, until closed.
    fn flush_loop(&self) {
        loop {
            let mut state = self.state.lock();
            while state.pending.is_empty() && !state.closing {
                self.appended.wait(&mut state);
            }
            let closing = state.closing;
            drop(state);
            let window = match self.options.mode {
                Mode::Off => self.options.group_window.max(OFF_WINDOW),
                Mode::Group | Mode::Fsync | Mode::Replicated => self.options.group_window,
            };
            if !closing && !window.is_zero() {
                std::thread::sleep(window);
            }
            self.flush();
            if closing {
                return;
            }
        }
    }

    /// Hands every buffered record to the replica if there is one, writes them, syncs if the
    /// mode says so, starts the next segment if this one is full, and marks the records
    /// durable. On error, cuts the segment back to where the write began and poisons the log;
    /// a batch the replica refused is not written at all.
    fn flush(&self) {
        let mut file = self.file.lock();
        let (batch, first, upto) = {
            let mut state = self.state.lock();
            if state.failed.is_some() || state.pending.is_empty() {
                return;
            }
            (
                std::mem::take(&mut state.pending),
                state.durable,
                state.next,
            )
        };
        let replica = self.replica.lock().clone();
        if let Some(replica) = replica {
            if let Err(reason) = replica.hold(first, upto, &batch) {
                let reason = format!("the replica did not hold commits {first}..{upto}: {reason}");
                tracing::error!(target: "wasmod::durability", "the commit log failed: {reason}");
                self.state.lock().failed = Some(reason);
                self.advanced.notify_all();
                return;
            }
        }
        let (path, before) = (file.path.clone(), file.len);
        let result = self.write(&mut file, &batch, upto);
        let mut state = self.state.lock();
        match result {
            Ok(()) => state.durable = upto,
            Err(error) => {
                let message = error.to_string();
                tracing::error!(target: "wasmod::durability", "the commit log failed: {message}");
                state.failed = Some(message);
                drop(state);
                cut_back(&mut file, &path, before);
                self.advanced.notify_all();
                return;
            }
        }
        drop(state);
        self.advanced.notify_all();
    }

    fn write(
        &self,
        file: &mut SegmentFile,
        batch: &[u8],
        upto: u64,
    ) -> Result<(), DurabilityError> {
        let current = file.path.clone();
        let io = |what, error| DurabilityError::io(&current, what, error);
        let write = self.writes.fetch_add(1, Ordering::Relaxed);
        if self.options.faults.write_fails(write) {
            let half = &batch[..batch.len() / 2];
            let written = file
                .file
                .write_all(half)
                .and(Err(super::faults::no_space()));
            return written.map_err(|error| io("appending to the log", error));
        }
        file.file
            .write_all(batch)
            .map_err(|error| io("appending to the log", error))?;
        file.len += batch.len() as u64;
        let rotate = file.len >= self.options.max_segment_bytes;
        if self.options.mode.syncs_writes() || rotate {
            file.file
                .sync_data()
                .map_err(|error| io("syncing the log", error))?;
            self.syncs.fetch_add(1, Ordering::Relaxed);
        }
        if rotate {
            self.rotate(file, upto)?;
        }
        Ok(())
    }

    /// Replaces the open segment by a new one starting at offset `start`.
    fn rotate(&self, file: &mut SegmentFile, start: u64) -> Result<(), DurabilityError> {
        let path = segment::path(&self.dir, start);
        let schema = *self.schema.lock();
        let next = segment::create(&self.dir, schema, start)
            .map_err(|error| DurabilityError::io(&path, "starting a new log segment", error))?;
        *file = SegmentFile {
            path,
            file: next,
            len: segment::HEADER_LEN as u64,
        };
        Ok(())
    }
}

/// Cuts `file` (at `path`) back to `len` bytes after a failed write, so that the records of
/// commits told of the failure do not come back on the next start; if even that fails, the
/// next start treats what is left as a torn tail (or refuses damage), as after a crash.
fn cut_back(file: &mut SegmentFile, path: &std::path::Path, len: u64) {
    match file.file.set_len(len).and_then(|()| file.file.sync_data()) {
        Ok(()) => file.len = len,
        Err(error) => tracing::error!(
            target: "wasmod::durability",
            "could not cut the failed write off {} at byte {len}: {error}",
            path.display()
        ),
    }
}

impl std::fmt::Debug for Ticket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut debug = f.debug_struct("Ticket");
        match &self.wait {
            Wait::Ready => debug.field("offset", &None::<u64>),
            Wait::Log { offset, .. } => debug.field("offset", offset),
            Wait::Refused(reason) => debug.field("refused", reason),
        };
        debug.finish()
    }
}

impl Ticket {
    /// A ticket for nothing to wait for.
    pub(crate) fn ready() -> Self {
        Self { wait: Wait::Ready }
    }

    /// A ticket whose wait fails with [`DurabilityError::Failed`] and `reason`: for a host
    /// that defers the wait for a call's commits and must report one the log refused (see
    /// [`Database::commit`](crate::Database::commit)) through the same path.
    pub fn refused(reason: String) -> Self {
        Self {
            wait: Wait::Refused(reason),
        }
    }

    /// The commit's offset in the log: the number of transactions logged before it. `None`
    /// for a ticket of a commit that was not logged (it changed nothing, or was refused).
    pub fn offset(&self) -> Option<u64> {
        match self.wait {
            Wait::Log { offset, .. } => Some(offset),
            Wait::Ready | Wait::Refused(_) => None,
        }
    }

    /// Whether [`Ticket::wait`] would return at once: the commit is durable as its log's mode
    /// promises (always, with the mode off), or the log failed.
    pub fn is_settled(&self) -> bool {
        match &self.wait {
            Wait::Ready | Wait::Refused(_) => true,
            Wait::Log { shared, offset } => {
                if shared.options.mode == Mode::Off {
                    return true;
                }
                let state = shared.state.lock();
                state.failed.is_some() || state.durable > *offset
            }
        }
    }

    /// Waits until the commit is durable as its log's mode promises; `Err` if the log failed
    /// first (the commit is then in memory only, and every later one is refused).
    pub fn wait(self) -> Result<(), DurabilityError> {
        let (shared, offset) = match self.wait {
            Wait::Ready => return Ok(()),
            Wait::Refused(reason) => return Err(DurabilityError::Failed(reason)),
            Wait::Log { shared, offset } => (shared, offset),
        };
        if shared.options.mode == Mode::Fsync {
            if shared.state.lock().durable <= offset {
                shared.flush();
            }
        } else if shared.options.mode == Mode::Off {
            let failed = shared.state.lock().failed.clone();
            return failed.map_or(Ok(()), |reason| Err(DurabilityError::Failed(reason)));
        }
        let mut state = shared.state.lock();
        loop {
            if let Some(reason) = &state.failed {
                return Err(DurabilityError::Failed(reason.clone()));
            }
            if state.durable > offset {
                return Ok(());
            }
            shared.advanced.wait(&mut state);
        }
    }
}
