//! The writers of the failover run, and the ledger of what they sent and what was
//! acknowledged.
//!
//! Each write is a call of the quickstart's `send` with a text never sent before, so that the
//! table says which writes happened, and how many times. A write the deployment refused with
//! `not_primary` surely did not happen (a standby runs nothing); any other failure leaves its
//! outcome unknown (a primary killed or deposed with the call in flight: the commit may be in
//! the next primary's history or not), and the next write is a new text, never the same one
//! again: sending it twice could commit it twice, and the check would rightly call that a
//! duplicate.

use super::nodes::Nodes;
use super::{Alarm, Plan};
use crate::http::Http;
use anyhow::{bail, Result};
use bytes::Bytes;
use hyper::StatusCode;
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use wasmod_client::{Error, ErrorCode};

/// How long a write may go unanswered before its outcome counts as unknown: more than a
/// lease, so that a primary waiting on the engine (a stream leader's election takes 4 to 9 s)
/// is not given up too soon, and not so long that a writer stuck on a paused primary stops
/// writing for long.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// How long connecting to a node may take over loopback (a paused one's kernel accepts).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// The pause after a round of nodes none of which took a write (no primary at the moment),
/// or after a WebSocket call failed (the client is between servers): the deployment is given
/// a moment rather than a flood. It bounds how precisely a failover is timed.
const RETRY_PAUSE: Duration = Duration::from_millis(20);

/// Every write of the run.
#[derive(Default)]
pub struct Ledger {
    /// Every text sent.
    pub sent: HashSet<String>,
    /// The texts acknowledged (committed).
    pub acknowledged: HashSet<String>,
    /// When each acknowledged write was sent, and when its acknowledgement came.
    pub acks: Vec<(Instant, Instant)>,
    /// Writes refused with `not_primary` (nothing ran).
    pub refused: u64,
    /// Writes whose outcome is unknown, by reason.
    pub unknown: BTreeMap<String, u64>,
}

/// What the writes came to, for the report.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Texts sent.
    pub sent: usize,
    /// Acknowledged.
    pub acknowledged: usize,
    /// Refused with `not_primary` (over the WebSocket, after the client's own retries; over
    /// HTTP the writer sends the same text to the next node, and counts each refusal).
    pub refused: u64,
    /// Unknown outcome, by reason.
    pub unknown: BTreeMap<String, u64>,
}

impl Ledger {
    /// What the writes came to.
    pub fn tally(&self) -> Tally {
        Tally {
            sent: self.sent.len(),
            acknowledged: self.acknowledged.len(),
            refused: self.refused,
            unknown: self.unknown.clone(),
        }
    }
}

/// The ledger, written by every writer.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Ledger>>);

impl Shared {
    fn with<T>(&self, change: impl FnOnce(&mut Ledger) -> T) -> T {
        change(
            &mut self
                .0
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        )
    }

    fn sending(&self, text: &str) {
        self.with(|ledger| ledger.sent.insert(text.to_owned()));
    }

    fn acknowledged(&self, text: String, sent: Instant) {
        self.with(|ledger| {
            ledger.acks.push((sent, Instant::now()));
            ledger.acknowledged.insert(text);
        });
    }

    fn refused(&self) {
        self.with(|ledger| ledger.refused += 1);
    }

    fn unknown(&self, reason: String) {
        self.with(|ledger| *ledger.unknown.entry(reason).or_default() += 1);
    }
}

/// The writers, running.
pub struct Writers {
    stop: Arc<AtomicBool>,
    tasks: Vec<JoinHandle<()>>,
    ledger: Shared,
}

impl Writers {
    /// Starts [`Plan::http_writers`] and [`Plan::socket_writers`] writers against `nodes`;
    /// a writer that cannot go on raises `alarm`.
    pub fn start(nodes: &Nodes, plan: &Plan, alarm: &Alarm) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let ledger = Shared::default();
        let mut tasks = Vec::new();
        for writer in 0..plan.http_writers {
            let (addresses, stop, ledger) =
                (nodes.addresses().to_vec(), stop.clone(), ledger.clone());
            let alarm = alarm.clone();
            tasks.push(tokio::spawn(async move {
                if let Err(error) = http_writer(&addresses, writer, &ledger, &stop).await {
                    alarm.raise(format!("HTTP writer {writer}: {error:#}"));
                }
            }));
        }
        for writer in 0..plan.socket_writers {
            let (urls, stop, ledger) = (nodes.urls(), stop.clone(), ledger.clone());
            let alarm = alarm.clone();
            tasks.push(tokio::spawn(async move {
                if let Err(error) = socket_writer(&urls, writer, &ledger, &stop).await {
                    alarm.raise(format!("WebSocket writer {writer}: {error:#}"));
                }
            }));
        }
        Self {
            stop,
            tasks,
            ledger,
        }
    }

    /// Stops the writers, waits for their last writes (each bounded by [`CALL_TIMEOUT`]);
    /// their ledger.
    pub async fn stop(self) -> Ledger {
        self.stop.store(true, Ordering::Relaxed);
        for task in self.tasks {
            let _ = task.await;
        }
        self.ledger.with(std::mem::take)
    }
}

/// What became of one attempt of a write.
enum Attempt {
    /// Committed.
    Acknowledged,
    /// Surely not run: the node refused it as a standby, or could not be reached.
    NotRun,
    /// Unknown, for this reason.
    Unknown(String),
}

/// Writes over HTTP until `stop`: each text to the node that took the last one, else to the
/// next in turn (the same text again after a `not_primary`: it did not run), one connection
/// per node, as one identity.
async fn http_writer(
    addresses: &[String],
    writer: usize,
    ledger: &Shared,
    stop: &AtomicBool,
) -> Result<()> {
    let token = identity(addresses, stop).await?;
    let mut connections: Vec<Option<Http>> = addresses.iter().map(|_| None).collect();
    let (mut node, mut misses, mut count) = (0, 0, 0u64);
    let mut pending: Option<String> = None;
    while !stop.load(Ordering::Relaxed) {
        let text = pending.take().unwrap_or_else(|| {
            count += 1;
            format!("http {writer} {count}")
        });
        ledger.sending(&text);
        let sent = Instant::now();
        match attempt(&mut connections[node], &addresses[node], &token, &text).await {
            Attempt::Acknowledged => {
                ledger.acknowledged(text, sent);
                misses = 0;
                continue;
            }
            Attempt::NotRun => pending = Some(text),
            Attempt::Unknown(reason) => ledger.unknown(format!("HTTP: {reason}")),
        }
        node = (node + 1) % addresses.len();
        misses += 1;
        if misses % addresses.len() == 0 {
            tokio::time::sleep(RETRY_PAUSE).await;
        }
    }
    Ok(())
}

/// A new identity's token from whichever node gives one first (every node signs with the
/// deployment's secret).
async fn identity(addresses: &[String], stop: &AtomicBool) -> Result<String> {
    let started = Instant::now();
    while !stop.load(Ordering::Relaxed) && started.elapsed() < super::PATIENCE {
        for address in addresses {
            let asked = async { Http::connect(address).await?.new_identity().await };
            if let Ok(Ok(token)) = tokio::time::timeout(CALL_TIMEOUT, asked).await {
                return Ok(token);
            }
        }
        tokio::time::sleep(RETRY_PAUSE).await;
    }
    bail!("no node gave an identity")
}

/// Sends `text` to the node at `address` over `connection` (opened if there is none, dropped
/// when it fails).
async fn attempt(connection: &mut Option<Http>, address: &str, token: &str, text: &str) -> Attempt {
    let http = match connection {
        Some(http) => http,
        None => match tokio::time::timeout(CONNECT_TIMEOUT, Http::connect(address)).await {
            Ok(Ok(http)) => connection.insert(http),
            _ => return Attempt::NotRun,
        },
    };
    http.call_as(token);
    let body = Bytes::from(serde_json::json!([text]).to_string());
    match tokio::time::timeout(CALL_TIMEOUT, http.post("/v1/reducers/send", body)).await {
        Ok(Ok((status, body))) => answer(status, &body),
        Ok(Err(_)) => {
            *connection = None;
            Attempt::Unknown("the connection failed".into())
        }
        Err(_) => {
            *connection = None;
            Attempt::Unknown(format!("no answer within {CALL_TIMEOUT:?}"))
        }
    }
}

/// How an answer to `POST /v1/reducers/send` reads.
fn answer(status: StatusCode, body: &[u8]) -> Attempt {
    let json: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    if status == StatusCode::OK && json["status"] == "committed" {
        return Attempt::Acknowledged;
    }
    match json["error"]["code"].as_str() {
        Some("not_primary") => Attempt::NotRun,
        Some(code) => Attempt::Unknown(code.to_owned()),
        None => Attempt::Unknown(status.to_string()),
    }
}

/// Writes over the WebSocket until `stop`, one call at a time, with the Rust client given
/// every node's URL.
async fn socket_writer(
    urls: &[String],
    writer: usize,
    ledger: &Shared,
    stop: &AtomicBool,
) -> Result<()> {
    let connection = super::connect(urls).await?;
    let reducers = connection.reducers();
    let mut count = 0u64;
    while !stop.load(Ordering::Relaxed) {
        count += 1;
        let text = format!("socket {writer} {count}");
        ledger.sending(&text);
        let sent = Instant::now();
        match tokio::time::timeout(CALL_TIMEOUT, reducers.send(&text)).await {
            Ok(Ok(_)) => ledger.acknowledged(text, sent),
            Ok(Err(Error::Api(error))) if error.code == ErrorCode::NotPrimary => ledger.refused(),
            Ok(Err(error)) => {
                ledger.unknown(format!("WebSocket: {}", reason(&error)));
                tokio::time::sleep(RETRY_PAUSE).await;
            }
            Err(_) => ledger.unknown(format!("WebSocket: no answer within {CALL_TIMEOUT:?}")),
        }
    }
    connection.client().disconnect().await;
    Ok(())
}

/// A short name for why a call over the WebSocket failed.
fn reason(error: &Error) -> String {
    match error {
        Error::Api(error) => error.code.as_str().to_owned(),
        Error::Disconnected => "disconnected".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_by_status_and_code() {
        let committed = br#"{"duration_us":12,"offset":41,"status":"committed"}"#;
        assert!(matches!(
            answer(StatusCode::OK, committed),
            Attempt::Acknowledged
        ));
        let standby = br#"{"error":{"code":"not_primary","message":"n1 is a standby"}}"#;
        assert!(matches!(
            answer(StatusCode::SERVICE_UNAVAILABLE, standby),
            Attempt::NotRun
        ));
        let degraded = br#"{"error":{"code":"degraded","message":"the outcome may be unknown"}}"#;
        assert!(
            matches!(answer(StatusCode::SERVICE_UNAVAILABLE, degraded), Attempt::Unknown(code) if code == "degraded")
        );
        assert!(matches!(
            answer(StatusCode::BAD_GATEWAY, b"<html>"),
            Attempt::Unknown(_)
        ));
    }
}
