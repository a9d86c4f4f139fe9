//! Many subscribed clients at once, and what they received.
//!
//! Each client connects, waits for its first message, subscribes to the quickstart's
//! `message` table (on a wasmod server; a floor server broadcasts to every socket unasked),
//! then reads every update on its own task and records, in one shared [`Tally`], the
//! delivery and its commit-to-receipt latency: the update's `timestamp` (when the
//! transaction ran, on the same clock) to the moment the client decoded it.

use crate::client;
use crate::latency::Histogram;
use crate::sample::{self, QUERY_SET};
use anyhow::{bail, Result};
use futures_util::{stream, StreamExt};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::task::JoinHandle;
use wasmod_abi::Timestamp;
use wasmod_client::socket::{Connection, Received};
use wasmod_protocol::ws::{BinaryServerMessage, ServerMessage};

/// How many clients connect at once.
const CONNECTING: usize = 64;

/// Whether clients subscribe after their first message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subscribe {
    /// `SELECT * FROM message`, as query set [`QUERY_SET`]: a wasmod server.
    Messages,
    /// Nothing: a floor server sends to every socket.
    Nothing,
}

/// What the clients of an audience received, counted across them all.
#[derive(Debug, Default)]
pub struct Tally {
    /// `TransactionUpdate`s received.
    pub deliveries: AtomicU64,
    /// Rows inserted by them.
    pub rows: AtomicU64,
    /// Commit-to-receipt latency of each.
    pub latency: Histogram,
    /// Messages of another kind (none is expected).
    pub unexpected: AtomicU64,
    /// Sockets closed by the server, or failed.
    pub lost: AtomicU64,
    /// Why the first lost socket was lost.
    pub first_loss: Mutex<Option<String>>,
}

impl Tally {
    /// Counts one lost socket and keeps the first reason.
    fn lose(&self, why: String) {
        self.lost.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut first) = self.first_loss.lock() {
            first.get_or_insert(why);
        }
    }

    /// Why the first socket was lost, if one was.
    pub fn first_loss(&self) -> Option<String> {
        self.first_loss.lock().ok().and_then(|first| first.clone())
    }

    fn record(&self, message: BinaryServerMessage) {
        match message {
            ServerMessage::TransactionUpdate(update) => {
                let rows: usize = update
                    .changes
                    .iter()
                    .flat_map(|set| &set.tables)
                    .map(|table| table.inserts.len())
                    .sum();
                let now = Timestamp::now().to_micros_since_unix_epoch();
                let latency = now.saturating_sub(update.timestamp.to_micros_since_unix_epoch());
                self.latency.record(latency.max(0) as u64);
                self.rows.fetch_add(rows as u64, Ordering::Relaxed);
                self.deliveries.fetch_add(1, Ordering::Relaxed);
            }
            _ => {
                self.unexpected.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Subscribed clients, each reading on its own task (which holds its socket); disconnected
/// on drop.
#[derive(Debug)]
pub struct Audience {
    /// What they received.
    pub tally: Arc<Tally>,
    readers: Vec<JoinHandle<()>>,
}

impl Audience {
    /// Connects `count` clients to `url`, [`CONNECTING`] at a time, each subscribed as
    /// `subscribe` says; fails if any of them cannot connect or subscribe.
    pub async fn join(url: &str, count: usize, subscribe: Subscribe) -> Result<Self> {
        Self::join_over(&[url], count, subscribe).await
    }

    /// Connects `count` clients spread evenly over `urls` (servers of the same data, such as
    /// edge nodes), with one tally, as [`Audience::join`] does.
    pub async fn join_over(urls: &[&str], count: usize, subscribe: Subscribe) -> Result<Self> {
        let tally = Arc::new(Tally::default());
        let joined: Vec<Result<_>> = stream::iter(0..count)
            .map(|index| join_one(urls[index % urls.len()], subscribe))
            .buffer_unordered(CONNECTING)
            .collect()
            .await;
        let mut readers = Vec::with_capacity(count);
        for joined in joined {
            let mut connection = joined?;
            let tally = tally.clone();
            readers.push(tokio::spawn(async move {
                loop {
                    match connection.next().await {
                        Ok(Received::Message(message)) => tally.record(message),
                        Ok(Received::Closed(closed)) => {
                            tally.lose(closed.to_string());
                            return;
                        }
                        Err(error) => {
                            tally.lose(error.to_string());
                            return;
                        }
                    }
                }
            }));
        }
        Ok(Self { tally, readers })
    }

    /// How many clients joined.
    pub fn len(&self) -> usize {
        self.readers.len()
    }
}

impl Drop for Audience {
    fn drop(&mut self) {
        for reader in &self.readers {
            reader.abort();
        }
    }
}

/// One client: connected and, if asked, subscribed.
async fn join_one(url: &str, subscribe: Subscribe) -> Result<Connection> {
    let mut connection = client::connect(url).await?;
    if subscribe == Subscribe::Messages {
        connection.send(&sample::subscribe_to_table()).await?;
        let applied = tokio::time::timeout(client::CONNECT_TIMEOUT, connection.next()).await;
        match applied {
            Ok(Ok(Received::Message(message))) => match message {
                ServerMessage::SubscribeApplied { query_set_id, .. }
                    if query_set_id == QUERY_SET => {}
                other => bail!("the answer to Subscribe was {other:?}"),
            },
            Ok(Ok(Received::Closed(closed))) => bail!("closed instead of subscribed: {closed}"),
            Ok(Err(error)) => return Err(error.into()),
            Err(_) => bail!(
                "no answer to Subscribe within {:?}",
                client::CONNECT_TIMEOUT
            ),
        }
    }
    Ok(connection)
}
