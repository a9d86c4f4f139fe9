//! The role task: a node follows the replicated log as a standby, takes the lease when it is
//! free, becomes the primary, keeps the lease, and says when it is deposed.
//!
//! One task does all of it, in that order, so that nothing applies the log while the node is
//! promoted and nothing is promoted twice:
//!
//! 1. **Standby** ([`Cluster::follow`]): from the first message that holds a commit the local
//!    tables lack ([`log::find_start`]), an ordered consumer of the stream hands over each
//!    batch, which is applied to the tables and logged locally at its offsets. Every
//!    [`POLL`] the task reads the lease; every [`PROGRESS_EVERY`] it says how far it has
//!    applied, and reads where the log ends.
//! 2. **Promotion** ([`Cluster::promote`]), once this node created the lease: it applies the
//!    log to its end, appends its term's marker naming that end (refused if another message
//!    came meanwhile: it applies that one too and marks again), and only then does the
//!    database take commits of its own, each batch appended by an [`Appender`]. The module
//!    then takes over (`init` on an empty deployment, `client_disconnected` for the last
//!    primary's connections) and the scheduler starts.
//! 3. **Primary** ([`Cluster::lead`]): renews the lease four times a lease; reads how far
//!    the standbys are. Deposed if the lease is lost (another node holds it, or it ran out
//!    before a renewal got through) or the log failed (an append refused).
//!
//! The task never changes a deposed node back: its memory may hold commits that were never
//! replicated. Its transport starts it again from the local log ([`Deposed`]).

use super::engine::Engine;
use super::lease::{Held, Lease, Renewal};
use super::log::{self, Appender, Refused, Span};
use super::status::{ClusterRole, PrimaryNode, SharedStatus, StandbyProgress};
use super::ClusterSettings;
use crate::build::CurrentBuild;
use crate::replication::Publisher;
use crate::schedule::Scheduling;
use crate::worker::Worker;
use async_nats::jetstream::consumer::{pull, DeliverPolicy};
use bytes::Bytes;
use futures_util::StreamExt;
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use wasmod_host::datastore::durability::decode_records;
use wasmod_host::datastore::{Commit, CommitMeta, Database, ReplicaError};

/// How often a standby reads the lease.
const POLL: Duration = Duration::from_millis(100);

/// How often the progress of a standby is written for its primary to read, and the log's end
/// read for its status.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// How long to wait before trying the engine again after a failure.
const RETRY: Duration = Duration::from_millis(500);

/// The subject prefix of standbys' progress in the lease stream.
const PROGRESS: &str = "standby.";

/// Renews `held`: `Err` with why once it is lost (another node holds it, or it ran out before
/// a renewal got through); a renewal that failed while the lease still holds is only logged.
async fn keep(lease: &Lease, held: &Held) -> Result<(), String> {
    match lease.renew(held).await {
        Ok(()) => Ok(()),
        Err(Renewal::Lost) => Err("another node holds the lease".into()),
        Err(Renewal::Failed(reason)) if !held.holds() => Err(format!(
            "the lease ran out: it could not be renewed ({reason})"
        )),
        Err(Renewal::Failed(reason)) => {
            tracing::warn!("renewing the lease failed ({reason}); it holds until it runs out");
            Ok(())
        }
    }
}

/// The parts of the node a promotion sets going.
#[derive(Debug)]
pub(crate) struct NodeParts {
    /// The tables.
    pub database: Arc<Database>,
    /// The module's thread, on which the module takes over.
    pub worker: Worker,
    /// The build serving, whose schedules the scheduler follows.
    pub build: CurrentBuild,
    /// The scheduler, started on promotion only.
    pub scheduling: Arc<Scheduling>,
}

/// The role task of one node ([`Cluster::run`]).
#[derive(Debug)]
pub struct Cluster {
    settings: ClusterSettings,
    parts: NodeParts,
    /// The publisher of commits to edges' stream, if the deployment has edges, until the
    /// promotion starts it. It learns where the stream stands from the stream itself, so the
    /// next primary goes on where the last one stopped, at the same offsets.
    publisher: Mutex<Option<Publisher>>,
    /// What stops the node's replication tasks, for the publisher started on promotion.
    stop: Option<watch::Receiver<bool>>,
    status: Arc<SharedStatus>,
    deposed: watch::Sender<Option<String>>,
}

/// Completes when a node was deposed, with why: its transport then starts it again as a
/// standby. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Deposed(watch::Receiver<Option<String>>);

impl Deposed {
    /// Waits until the node is deposed; why. Never completes for a node that stops first.
    pub async fn wait(&mut self) -> String {
        let reason = self
            .0
            .wait_for(Option::is_some)
            .await
            .map(|reason| reason.clone());
        match reason {
            Ok(reason) => reason.unwrap_or_default(),
            Err(_) => std::future::pending().await,
        }
    }
}

impl Cluster {
    /// The role task of a node whose tables are `parts.database` (a standby), in the
    /// deployment `settings` names, with the `publisher` it starts if it is promoted; with the
    /// status it keeps and what says it was deposed.
    pub(crate) fn new(
        settings: ClusterSettings,
        parts: NodeParts,
        publisher: Option<Publisher>,
    ) -> (Self, Arc<SharedStatus>, Deposed) {
        let status = Arc::new(SharedStatus::new(&settings.node));
        let (deposed, receiver) = watch::channel(None);
        let cluster = Self {
            settings,
            publisher: Mutex::new(publisher),
            parts,
            stop: None,
            status: status.clone(),
            deposed,
        };
        (cluster, status, Deposed(receiver))
    }

    /// Plays the node's part until `stop` becomes `true` or the node is deposed. A primary
    /// that stops gives its lease up, so that a standby takes its place at once rather than
    /// once the lease runs out (what the node commits while it shuts down, its connections'
    /// `client_disconnected`, is then refused: the next primary runs them).
    pub async fn run(mut self, mut stop: watch::Receiver<bool>) {
        self.stop = Some(stop.clone());
        let leading = Mutex::new(None);
        let stopping = async move {
            let _ = stop.wait_for(|stop| *stop).await;
        };
        tokio::select! {
            () = stopping => {}
            () = self.play(&leading) => {}
        }
        let held = leading.lock().take();
        if let Some((lease, held)) = held {
            lease.release(&held).await;
            tracing::info!(term = held.term, "stopped: the lease is given up");
        }
    }

    /// Connects, follows, takes over and leads, each step tried again until it works; the
    /// lease, once this node leads, in `leading`.
    async fn play(&self, leading: &Mutex<Option<(Lease, Held)>>) {
        let engine = self
            .retry("connecting to the engine", || {
                Engine::connect(&self.settings)
            })
            .await;
        let lease = Lease::new(
            &engine,
            PrimaryNode {
                node: self.settings.node.clone(),
                url: self.settings.advertise.clone(),
            },
            self.settings.lease,
        );
        self.status
            .update(|status| status.role = ClusterRole::Standby);
        let held = loop {
            match self.follow(&engine, &lease).await {
                Ok((held, applied)) => match self.promote(&engine, &lease, &held, applied).await {
                    Ok(()) => break held,
                    Err(reason) => {
                        // Not promoted: the database still refuses commits of its own.
                        tracing::warn!("the promotion failed ({reason}); following again");
                        lease.release(&held).await;
                    }
                },
                Err(reason) => self.trouble(reason).await,
            }
        };
        *leading.lock() = Some((lease.clone(), held.clone()));
        let reason = self.lead(&engine, &lease, &held).await;
        leading.lock().take();
        tracing::error!("deposed: {reason}");
        self.status.update(|status| {
            status.role = ClusterRole::Deposed;
            status.problem = Some(reason.clone());
        });
        self.deposed.send_replace(Some(reason));
    }

    /// Follows the log until this node takes the lease; returns it, with the sequence of the
    /// last message applied.
    async fn follow(&self, engine: &Engine, lease: &Lease) -> Result<(Held, u64), String> {
        let database = &self.parts.database;
        let start = log::find_start(engine, database.next_offset()).await?;
        let consumer = engine
            .stream
            .create_consumer(pull::OrderedConfig {
                deliver_policy: DeliverPolicy::ByStartSequence {
                    start_sequence: start,
                },
                filter_subject: engine.subject.clone(),
                ..Default::default()
            })
            .await
            .map_err(|error| format!("following the replicated log: {error}"))?;
        let mut messages = consumer
            .messages()
            .await
            .map_err(|error| format!("following the replicated log: {error}"))?;
        let mut poll = tokio::time::interval(POLL);
        let mut progress = tokio::time::interval(PROGRESS_EVERY);
        let mut applied = start - 1;
        loop {
            tokio::select! {
                message = messages.next() => {
                    let message = message
                        .ok_or("the replicated log's consumer ended")?
                        .map_err(|error| format!("following the replicated log: {error}"))?;
                    let sequence = message
                        .info()
                        .map_err(|error| format!("a message of the replicated log: {error}"))?
                        .stream_sequence;
                    self.apply(message.headers.as_ref(), message.payload.clone()).await?;
                    applied = sequence;
                }
                _ = poll.tick() => {
                    self.clear_problem();
                    if let Some(held) = self.watch_lease(lease).await? {
                        return Ok((held, applied));
                    }
                }
                _ = progress.tick() => self.report_progress(engine).await,
            }
        }
    }

    /// Reads who holds the lease; takes it if nobody does.
    async fn watch_lease(&self, lease: &Lease) -> Result<Option<Held>, String> {
        let holder = lease.holder().await?;
        self.status.update(|status| {
            status.primary = holder.clone();
            status.applied = self.parts.database.next_offset();
        });
        if holder.is_some() {
            return Ok(None);
        }
        lease.try_take().await
    }

    /// Applies the commits of one message of the log (those the tables lack), off the
    /// runtime; notes its term.
    async fn apply(
        &self,
        headers: Option<&async_nats::HeaderMap>,
        payload: Bytes,
    ) -> Result<(), String> {
        let span = Span::of(headers)?;
        let database = self.parts.database.clone();
        let next = tokio::task::spawn_blocking(move || {
            for (offset, changes) in decode_records(&payload).map_err(|reason| {
                format!("a message of the replicated log is malformed: {reason}")
            })? {
                let commit = Commit {
                    offset,
                    meta: CommitMeta::recovered(),
                    changes,
                };
                match database.apply_replicated(commit) {
                    Ok(_) => {}
                    // Held already: the message began before the commit needed next.
                    Err(ReplicaError::OutOfOrder { expected, given }) if given < expected => {}
                    Err(error) => return Err(error.to_string()),
                }
            }
            Ok(database.next_offset())
        })
        .await
        .map_err(|error| format!("applying the replicated log failed: {error}"))??;
        self.status.update(|status| {
            status.term = status.term.max(span.term);
            status.applied = next;
            status.log_end = status.log_end.max(span.next);
        });
        Ok(())
    }

    /// Makes this node, holder of `held`, the primary: applies the log to its end, marks the
    /// term, then lets the database, the module and the scheduler write.
    async fn promote(
        &self,
        engine: &Engine,
        lease: &Lease,
        held: &Held,
        mut applied: u64,
    ) -> Result<(), String> {
        let database = &self.parts.database;
        let mut renewed = Instant::now();
        let appender = loop {
            let last = engine.last_sequence().await?;
            for sequence in applied + 1..=last {
                // A long way to the log's end must not cost the lease on the way.
                if renewed.elapsed() >= lease.renew_every() {
                    keep(lease, held).await?;
                    renewed = Instant::now();
                }
                let message = engine
                    .stream
                    .get_raw_message(sequence)
                    .await
                    .map_err(|error| format!("reading message {sequence} of the log: {error}"))?;
                self.apply(Some(&message.headers), message.payload).await?;
                applied = sequence;
            }
            let appender = Arc::new(Appender::new(engine.clone(), held.clone(), last));
            match appender.mark(database.next_offset()).await {
                Ok(_) => break appender,
                // Another message came after the end just read: the last primary's. Apply it.
                Err(Refused::Fenced) => continue,
                Err(refused) => return Err(refused.to_string()),
            }
        };
        database
            .promote(appender)
            .map_err(|error| format!("the tables did not take the promotion: {error}"))?;
        self.parts
            .worker
            .run_when_room(|module| module.take_over())
            .await
            .map_err(|error| format!("the module could not take over: {error}"))?
            .map_err(|outcome| format!("the module's init failed: {outcome}"))?;
        self.parts
            .scheduling
            .start(self.parts.build.get().module.clone())
            .await;
        if let (Some(publisher), Some(stop)) = (self.publisher.lock().take(), &self.stop) {
            tokio::spawn(publisher.run(stop.clone()));
        }
        let primary = PrimaryNode {
            node: self.settings.node.clone(),
            url: self.settings.advertise.clone(),
        };
        self.status.update(|status| {
            status.role = ClusterRole::Primary;
            status.term = held.term;
            status.primary = Some(primary);
            status.promotions += 1;
            status.applied = database.next_offset();
            status.problem = None;
        });
        tracing::info!(
            term = held.term,
            next = database.next_offset(),
            "this node is the primary"
        );
        Ok(())
    }

    /// Keeps the lease while the log works; returns why it stopped.
    async fn lead(&self, engine: &Engine, lease: &Lease, held: &Held) -> String {
        let mut renew = tokio::time::interval(lease.renew_every());
        loop {
            renew.tick().await;
            if let Some(failure) = self.parts.database.log_failure() {
                lease.release(held).await;
                return format!("the commit log failed: {failure}");
            }
            if let Err(reason) = keep(lease, held).await {
                return reason;
            }
            let standbys = self.standbys(engine).await;
            let applied = self.parts.database.next_offset();
            self.status.update(|status| {
                status.standbys = standbys;
                status.applied = applied;
                status.log_end = applied;
            });
        }
    }

    /// Writes how far this standby has applied, for its primary, and notes where the log
    /// ends and its last term, for its own status.
    async fn report_progress(&self, engine: &Engine) {
        let last = engine
            .stream
            .get_last_raw_message_by_subject(&engine.subject)
            .await
            .ok()
            .and_then(|last| Span::of(Some(&last.headers)).ok());
        if let Some(last) = last {
            self.status.update(|status| {
                status.log_end = last.next;
                status.term = status.term.max(last.term);
            });
        }
        let subject = engine.lease_subject(&format!("{PROGRESS}{}", self.settings.node));
        let applied = self.parts.database.next_offset().to_string();
        let sent = match engine.jetstream.publish(subject, applied.into()).await {
            Ok(pending) => pending.await.map(drop),
            Err(error) => Err(error),
        };
        if let Err(error) = sent {
            tracing::debug!("reporting this standby's progress failed: {error}");
        }
    }

    /// The standbys' progress, as they last wrote it (a standby silent for a lease is gone
    /// from the stream, and from this list).
    async fn standbys(&self, engine: &Engine) -> Vec<StandbyProgress> {
        let prefix = engine.lease_subject(PROGRESS);
        let Ok(subjects) = engine.leases.info_with_subjects(format!("{prefix}>")).await else {
            return Vec::new();
        };
        let subjects: Vec<String> = subjects
            .filter_map(|subject| async move { subject.ok().map(|(subject, _)| subject) })
            .collect()
            .await;
        let mut standbys = Vec::new();
        let own = engine.lease_subject(&format!("{PROGRESS}{}", self.settings.node));
        for subject in subjects.into_iter().filter(|subject| *subject != own) {
            let Ok(message) = engine
                .leases
                .get_last_raw_message_by_subject(&subject)
                .await
            else {
                continue;
            };
            if let Ok(applied) = std::str::from_utf8(&message.payload).unwrap_or("").parse() {
                standbys.push(StandbyProgress {
                    node: subject[prefix.len()..].to_owned(),
                    applied,
                });
            }
        }
        standbys.sort_by(|a, b| a.node.cmp(&b.node));
        standbys
    }

    /// Tries `step` until it works, noting each failure.
    async fn retry<T, F, Fut>(&self, what: &str, mut step: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, String>>,
    {
        loop {
            match step().await {
                Ok(value) => {
                    self.clear_problem();
                    return value;
                }
                Err(reason) => self.trouble(format!("{what}: {reason}")).await,
            }
        }
    }

    /// Notes `reason` as the node's problem, logs it, and waits before the next try.
    async fn trouble(&self, reason: String) {
        tracing::warn!("{reason}; trying again in {RETRY:?}");
        self.status.update(|status| status.problem = Some(reason));
        tokio::time::sleep(RETRY).await;
    }

    /// The node works again.
    fn clear_problem(&self) {
        self.status.update(|status| status.problem = None);
    }
}
