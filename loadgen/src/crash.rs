//! Issue 33's measurement: subscribers reconnecting after `wasmod serve` is killed with
//! SIGKILL, resumed (`resume_from`, only what changed) against full rows.
//!
//! After a crash every client reconnects at once, which is when resuming matters most: a
//! full answer resends a subscriber's every row, a resumed one only what changed while it
//! was away. One run, on one data directory:
//!
//! 1. `wasmod serve` (durability `group`); the quickstart's `message` table filled with
//!    [`Plan::rows`] rows; [`Plan::subscribers`] clients subscribe to it, and one more
//!    message brings every one of them to the same last offset;
//! 2. SIGKILL with every subscriber connected; a restart on the same directory (its start
//!    disconnects every connection the kill left open, one commit each); every subscriber
//!    reconnects as the same identity and subscribes again with `resume_from` = its offset;
//! 3. SIGKILL again with them connected, a restart, and every subscriber subscribes again with
//!    `resume_from: null`: the full rows.
//!
//! For each reconnection: the bytes of the answers (`SubscribeRows` and `SubscribeApplied`,
//! binary, uncompressed, as sent), the time from the first reconnection to the last answer,
//! how many answers said `resumed`, and how long the restart took (spawn to listening, the
//! start's own commits included). A resumed reconnection whose answers are not all `resumed`
//! fails the run: that is the bug the issue was about.

use crate::caller::{self, Caller};
use crate::client;
use crate::process::{self, raise_open_files, Served};
use crate::sample::{QUERY_SET, TABLE};
use crate::Paths;
use anyhow::{anyhow, bail, Context, Result};
use futures_util::future::try_join_all;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use wasmod_client::socket::{Connection, Received};
use wasmod_protocol::ws::{BinaryServerMessage, ClientMessage, ServerMessage};

/// The connections that fill the table.
const FILLERS: usize = 4;

/// Reconnections in flight at once: a thousand at the same instant overflow the listen
/// backlog, and the kernel's SYN retries (a second) would be what the time measures.
const CONNECTING: usize = 64;

/// How long one subscriber's answer, or its catching up, may take.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

/// Descriptors beyond the subscribers: the runtime, the callers, the server's own.
const SPARE_DESCRIPTORS: u64 = 512;

/// The sizes of a run.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Subscribers connected at each kill.
    pub subscribers: usize,
    /// Rows in the subscribed table.
    pub rows: u64,
}

/// One reconnection of every subscriber after a kill.
#[derive(Clone, Copy, Debug)]
pub struct Reconnection {
    /// Bytes of every answer, as the server sent them.
    pub bytes: u64,
    /// From the first reconnection to the last answer.
    pub time: Duration,
    /// Answers that said `resumed`.
    pub resumed: usize,
    /// From spawning the server to its listening, after the kill.
    pub restart: Duration,
}

/// One run's result.
#[derive(Clone, Copy, Debug)]
pub struct Outcome {
    /// Reconnecting with `resume_from`.
    pub resumed: Reconnection,
    /// Reconnecting without.
    pub full: Reconnection,
}

/// A subscriber: its socket, its token (to come back as the same identity), and the last
/// offset it applied.
struct Subscriber {
    connection: Connection,
    token: String,
    applied: u64,
}

/// What a subscription's answer was.
struct Answer {
    bytes: u64,
    resumed: bool,
}

/// Runs [`Plan`] once (see the module docs).
pub async fn measure(paths: &Paths, plan: Plan) -> Result<Outcome> {
    let needed = plan.subscribers as u64 + SPARE_DESCRIPTORS;
    let limit = raise_open_files(needed)?;
    if limit < needed {
        bail!(
            "{} subscribers need {needed} open files per process, and the hard limit is \
             {limit}: raise it (`ulimit -Hn`) or ask for fewer subscribers",
            plan.subscribers
        );
    }
    let data = tempfile::tempdir().context("a data directory")?;
    let served = start(paths, data.path()).await?;
    let url = subscribe_url(&served);
    fill(&url, plan.rows).await?;
    let new = vec![(None, None); plan.subscribers];
    let (mut subscribers, _) = connect_all(&url, new)
        .await
        .context("subscribing before the kill")?;
    // One more message: every subscriber applies it, so all hold the same last offset.
    let mut writer = Caller::open(&url).await?;
    let soon = Instant::now() + ANSWER_TIMEOUT;
    let calls = caller::call_all(std::slice::from_mut(&mut writer), 1, soon).await?;
    if !calls.all_committed() {
        bail!("the last message before the kill: {calls:?}");
    }
    try_join_all(subscribers.iter_mut().map(Subscriber::catch_up))
        .await
        .context("waiting for the last message before the kill")?;

    let (resumed, served, subscribers) =
        kill_and_reconnect(paths, data.path(), served, subscribers, true).await?;
    drop(writer);
    if resumed.resumed != plan.subscribers {
        bail!(
            "only {} of {} subscribers resumed after the kill",
            resumed.resumed,
            plan.subscribers
        );
    }
    let (full, _served, _subscribers) =
        kill_and_reconnect(paths, data.path(), served, subscribers, false).await?;
    Ok(Outcome { resumed, full })
}

/// `wasmod serve` over `data`.
async fn start(paths: &Paths, data: &Path) -> Result<Served> {
    process::wasmod_serve(&paths.wasmod, &paths.module, data, &[]).await
}

/// The WebSocket endpoint of `served`.
fn subscribe_url(served: &Served) -> String {
    format!("{}/v1/subscribe", served.ws_base)
}

/// Fills the table with `rows` messages.
async fn fill(url: &str, rows: u64) -> Result<()> {
    let mut fillers = try_join_all((0..FILLERS).map(|_| Caller::open(url))).await?;
    let far = Instant::now() + Duration::from_secs(3600);
    let calls = caller::call_all(&mut fillers, rows, far).await?;
    if !calls.all_committed() {
        bail!("filling {TABLE} with {rows} rows: {calls:?}");
    }
    Ok(())
}

/// Kills `served` with `subscribers` connected, starts the server again on `data`, and has
/// every subscriber reconnect as the same identity, resuming from its offset if `resume`;
/// returns the reconnection, the new server and the subscribers connected to it.
async fn kill_and_reconnect(
    paths: &Paths,
    data: &Path,
    served: Served,
    subscribers: Vec<Subscriber>,
    resume: bool,
) -> Result<(Reconnection, Served, Vec<Subscriber>)> {
    // SIGKILL: no shutdown code runs, every connection is left open in the data.
    drop(served);
    let back = subscribers
        .into_iter()
        .map(|subscriber| {
            let resume_from = resume.then_some(subscriber.applied);
            (Some(subscriber.token), resume_from)
        })
        .collect();
    let spawned = Instant::now();
    let served = start(paths, data).await?;
    let restart = spawned.elapsed();
    let started = Instant::now();
    let (subscribers, answers) = connect_all(&subscribe_url(&served), back)
        .await
        .with_context(|| format!("reconnecting after the kill (resuming: {resume})"))?;
    let reconnection = Reconnection {
        bytes: answers.iter().map(|answer| answer.bytes).sum(),
        time: started.elapsed(),
        resumed: answers.iter().filter(|answer| answer.resumed).count(),
        restart,
    };
    Ok((reconnection, served, subscribers))
}

/// Connects a subscriber per `(token, resume_from)` (a new identity without a token), at
/// most [`CONNECTING`] at once; returns them, subscribed, and their answers.
async fn connect_all(
    url: &str,
    who: Vec<(Option<String>, Option<u64>)>,
) -> Result<(Vec<Subscriber>, Vec<Answer>)> {
    let slots = Arc::new(Semaphore::new(CONNECTING));
    let connecting = who.into_iter().map(|(token, resume_from)| {
        let slots = slots.clone();
        async move {
            let _slot = slots.acquire().await.context("the connecting slots")?;
            Subscriber::connect(url, token, resume_from).await
        }
    });
    Ok(try_join_all(connecting).await?.into_iter().unzip())
}

impl Subscriber {
    /// Connects to `url` as `token`'s identity (a new one without), subscribes to the table
    /// resuming from `resume_from`, and reads the answer.
    async fn connect(
        url: &str,
        token: Option<String>,
        resume_from: Option<u64>,
    ) -> Result<(Self, Answer)> {
        let url = match &token {
            Some(token) => format!("{url}?token={token}"),
            None => url.to_owned(),
        };
        let mut connection = client::connect(&url).await?;
        let token = connection.session().token.clone();
        let subscribe = ClientMessage::Subscribe {
            query_set_id: QUERY_SET,
            queries: vec![format!("SELECT * FROM {TABLE}")],
            resume_from,
        };
        connection.send(&subscribe).await?;
        let mut subscriber = Self {
            connection,
            token,
            applied: 0,
        };
        let mut bytes = 0;
        loop {
            let message = subscriber.next().await?;
            bytes += message.to_bytes().len() as u64;
            match message {
                ServerMessage::SubscribeRows { .. } => {}
                ServerMessage::SubscribeApplied {
                    offset, resumed, ..
                } => {
                    subscriber.applied = offset;
                    return Ok((subscriber, Answer { bytes, resumed }));
                }
                ServerMessage::SubscriptionError { message, .. } => {
                    bail!("the subscription was refused: {message}")
                }
                // Updates of other connections' comings and goings are not for this table.
                _ => bytes = 0,
            }
        }
    }

    /// Reads until the subscriber has applied a message of the table.
    async fn catch_up(&mut self) -> Result<()> {
        loop {
            if let ServerMessage::TransactionUpdate(update) = self.next().await? {
                self.applied = update.offset;
                return Ok(());
            }
        }
    }

    /// The next message, within [`ANSWER_TIMEOUT`].
    async fn next(&mut self) -> Result<BinaryServerMessage> {
        let received = tokio::time::timeout(ANSWER_TIMEOUT, self.connection.next())
            .await
            .map_err(|_| anyhow!("no message within {ANSWER_TIMEOUT:?}"))??;
        match received {
            Received::Message(message) => Ok(message),
            Received::Closed(closed) => bail!("a subscriber's socket: {closed}"),
        }
    }
}
