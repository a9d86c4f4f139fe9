//! One socket's life: the connection opened (the module's `client_connected`), its identity
//! sent, its frames read until it ends, and the connection closed (the module's
//! `client_disconnected`, once).
//!
//! The task that runs [`serve`] is the socket's reader. It spawns the writer
//! ([`super::writer`]) and the task that answers calls in order ([`super::calls`]), decodes
//! each frame and hands it on: calls to the module's thread, subscriptions to the evaluation
//! task. It never writes a frame itself: a frame that is not a message asks the writer to
//! close the socket with a close code that says why ([`super::close`]).
//!
//! Everything that answers from the module's description takes the build serving it when the
//! message is read ([`crate::build::CurrentBuild::get`]): a call finds its entry point there, a
//! subscription's queries are bound against its tables (and refused by the evaluation task if
//! a newer build took over before it got there), a one-off query reads its tables.
//!
//! Pings are answered by the WebSocket library as it reads, before any queue. A client that
//! sends nothing for a ping interval is pinged (by the writer); one that then stays silent for
//! another interval, not even answering, is closed with [`close::IDLE`]: a peer that vanished
//! without closing (a laptop closed, a network gone) does not hold its connection forever.

use super::calls::{self, Calls};
use super::close::{self, Close};
use super::fanout::{Request, Subscribing};
use super::frame::Frame;
use super::limits::{CLOSE_TIMEOUT, MAX_REQUESTS_QUEUED, PINGS, PING_EVERY};
use super::outbox::{self, Introduction, OneOffRows, Outbound, Outbox};
use super::rows::QueryRows;
use super::session::Wait;
use super::stats::Dropped;
use super::wire::Wire;
use super::writer::{self, Renderer};
use super::Realtime;
use crate::call::Caller;
use crate::memory::{Charge, Holder};
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use std::collections::HashSet;
use std::fmt::Display;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;
use wasmod_abi::{ConnectionId, Identity};
use wasmod_host::Claims;
use wasmod_protocol::call::CallKind;
use wasmod_protocol::errors::ErrorCode;
use wasmod_protocol::ws::{ClientMessage, Compression};
use wasmod_subscription::{BoundQuery, Budget, BudgetError, Catalog, Query};

/// The encoding of a socket's messages: the WebSocket subprotocol the client chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// `v1.bin.wasmod`: binary frames, compressed as the client asked.
    Binary,
    /// `v1.json.wasmod`: text frames of JSON, never compressed.
    Json,
}

/// Who a socket serves, and how.
#[derive(Debug)]
pub struct Socket {
    /// The encoding of its messages.
    pub encoding: Encoding,
    /// The client's identity.
    pub identity: Identity,
    /// The identity's token, sent to the client first.
    pub token: String,
    /// How its binary frames are compressed.
    pub compression: Compression,
    /// The address it came from, if the transport knows it: what the client makes the node
    /// hold is counted against it too (`crate::memory`).
    pub source: Option<IpAddr>,
    /// The claims of the client's verified token, if it had any: the module reads them in
    /// `client_connected` (which may refuse the connection by them), in every call over the
    /// socket, and in `client_disconnected`.
    pub claims: Option<Claims>,
}

/// Serves `socket` in the encoding `W`: reads the frames of `stream`, writes frames into
/// `sink` (the transport's two halves of the socket, [`super::frame`]).
pub async fn serve<W, S, R, E>(mut sink: S, mut stream: R, realtime: Arc<Realtime>, socket: Socket)
where
    W: Wire,
    S: Sink<Frame> + Unpin + Send + 'static,
    S::Error: Send,
    R: Stream<Item = Result<Frame, E>> + Unpin,
    E: Display,
{
    let Socket {
        encoding: _,
        identity,
        token,
        compression,
        source,
        claims,
    } = socket;
    let _counted = realtime.socket_guard();
    let connection = match realtime.connections.connect(identity, claims.clone()).await {
        Ok(connection) => connection,
        Err(error) => {
            tracing::info!(identity = %identity, "a WebSocket connection was refused: {}", error.message);
            let code = match error.code {
                ErrorCode::NotPrimary => close::NOT_PRIMARY,
                _ => close::REFUSED,
            };
            let refused = Close::new(code, error.message);
            let _ = tokio::time::timeout(CLOSE_TIMEOUT, sink.send(Frame::closing(&refused))).await;
            return;
        }
    };
    let connection_id = connection.id();
    let (outbox, outbound) = outbox::channel(realtime.settings.outbound, realtime.stats.clone());
    let _listed = realtime
        .open
        .register(connection_id, identity, outbox.clone());
    let _ = outbox.push(Outbound::Identity(Box::new(Introduction {
        identity,
        token,
        connection_id,
    })));
    let queued = Arc::new(Semaphore::new(MAX_REQUESTS_QUEUED));
    let opened = Request::Open {
        connection: connection_id,
        identity,
        outbox: outbox.clone(),
        queued: queued.clone(),
    };
    if realtime.fanout.send(opened).await.is_err() {
        outbox.close(Close::new(
            close::INTERNAL,
            "the server's evaluation task has stopped",
        ));
    }
    let (answers, answered) = calls::answers();
    let caller = Caller {
        identity: Some(identity),
        connection: connection_id,
        source,
        claims,
    };
    let (calls, answering) = Calls::<W>::new(
        realtime.pipeline.clone(),
        realtime.database.clone(),
        caller,
        answers,
    );
    let answering = tokio::spawn(answering);
    let renderer = Renderer::<W>::new(
        identity,
        connection_id,
        compression,
        realtime.settings.part_bytes,
    );
    let mut writer = tokio::spawn(writer::run(
        sink,
        outbound,
        answered,
        renderer,
        realtime.shutdown(),
    ));
    let reader = Reader {
        realtime: &realtime,
        calls: &calls,
        outbox: &outbox,
        identity,
        holder: Holder::new(Some(identity), source),
        connection: connection_id,
        queued: &queued,
    };
    tokio::select! {
        () = reader.read(&mut stream) => {
            if tokio::time::timeout(2 * CLOSE_TIMEOUT, &mut writer).await.is_err() {
                writer.abort();
            }
        }
        _ = &mut writer => {}
    }
    let _ = realtime
        .fanout
        .send(Request::Close {
            connection: connection_id,
        })
        .await;
    answering.abort();
    connection.close().await;
}

/// The reading side of one socket.
struct Reader<'a, W: Wire> {
    realtime: &'a Realtime,
    calls: &'a Calls<W>,
    outbox: &'a Outbox,
    identity: Identity,
    /// Who holds what the connection makes the server keep.
    holder: Holder,
    connection: ConnectionId,
    /// The connection's turns of requests to the evaluation task.
    queued: &'a Semaphore,
}

impl<W: Wire> Reader<'_, W> {
    /// Reads frames until the socket ends or one of them is not a message; in both cases the
    /// writer has been asked to close the socket when this returns.
    async fn read<E: Display>(&self, stream: &mut (impl Stream<Item = Result<Frame, E>> + Unpin)) {
        let interval = self.realtime.settings.ping_interval;
        let mut pinged = false;
        let mut pings = PingAllowance::default();
        loop {
            let frame = match tokio::time::timeout(interval, stream.next()).await {
                Err(_silent) if !pinged => {
                    self.outbox.ping();
                    pinged = true;
                    continue;
                }
                Err(_silent) => {
                    let reason = format!(
                        "the client sent nothing, not even a pong, for {:?}",
                        2 * interval
                    );
                    tracing::info!(connection = %self.connection.to_hex(), "{reason}: closing it");
                    self.realtime.stats.dropped(Dropped::Idle, 1);
                    return self.outbox.close(Close::new(close::IDLE, reason));
                }
                Ok(frame) => {
                    pinged = false;
                    frame
                }
            };
            let frame = match frame {
                None => return self.outbox.close(Close::new(close::NORMAL, "")),
                Some(Err(error)) => return self.outbox.close(read_error(&error)),
                Some(Ok(frame)) => frame,
            };
            let message = match frame {
                Frame::Ping(_) if !pings.take() => {
                    let reason = format!(
                        "more than {PINGS} pings at once, or one every {PING_EVERY:?} after them"
                    );
                    tracing::info!(connection = %self.connection.to_hex(), "{reason}: closing it");
                    return self.outbox.close(Close::new(close::POLICY, reason));
                }
                Frame::Ping(_) | Frame::Pong(_) => continue,
                Frame::Close(_) => return self.outbox.close(Close::new(close::NORMAL, "")),
                data => W::decode(data),
            };
            match message {
                Ok(message) => self.handle(message).await,
                Err(close) => {
                    tracing::info!(
                        code = close.code,
                        "a client sent a frame that is not a message: {}",
                        close.reason
                    );
                    return self.outbox.close(close);
                }
            }
        }
    }

    /// Hands one message on.
    async fn handle(&self, message: ClientMessage<W::Args>) {
        match message {
            ClientMessage::CallReducer {
                request_id,
                name,
                args,
            } => {
                self.calls
                    .call(CallKind::Reducer, request_id, name, args)
                    .await
            }
            ClientMessage::CallProcedure {
                request_id,
                name,
                args,
            } => {
                self.calls
                    .call(CallKind::Procedure, request_id, name, args)
                    .await
            }
            ClientMessage::CallView {
                request_id,
                name,
                args,
            } => {
                self.calls
                    .call(CallKind::View, request_id, name, args)
                    .await
            }
            ClientMessage::Subscribe {
                query_set_id,
                queries,
                resume_from,
            } => self.subscribe(query_set_id, queries, resume_from).await,
            ClientMessage::Unsubscribe { query_set_id } => {
                self.request(Request::Unsubscribe {
                    connection: self.connection,
                    query_set_id,
                })
                .await
            }
            ClientMessage::OneOffQuery { request_id, query } => {
                let result = self.one_off(&query).await;
                let _ = self.outbox.push(Outbound::OneOff { request_id, result });
            }
            ClientMessage::WaitFor { request_id, offset } => {
                self.request(Request::WaitFor {
                    connection: self.connection,
                    wait: Wait { request_id, offset },
                })
                .await
            }
            _ => self.outbox.close(Close::new(
                close::UNSUPPORTED_DATA,
                "a message this server does not serve",
            )),
        }
    }

    /// Parses and binds `queries` (all or nothing, each distinct query once: [`distinct`])
    /// against the tables of the build serving the module, and asks the evaluation task to
    /// subscribe them as query set `query_set_id`, resuming from offset `resume_from` if it
    /// can. More queries than a set may hold are refused before any is parsed; the texts kept
    /// are charged to the connection's holder until the set ends ([`crate::memory`]).
    async fn subscribe(&self, query_set_id: u32, queries: Vec<String>, resume_from: Option<u64>) {
        match self.parse_set(queries).await {
            Ok((build, texts, queries, charge)) => {
                self.request(Request::Subscribe(Subscribing {
                    connection: self.connection,
                    query_set_id,
                    texts,
                    queries,
                    build,
                    resume_from,
                    charge,
                }))
                .await
            }
            Err(message) => {
                let _ = self.outbox.push(Outbound::SubscriptionError {
                    query_set_id,
                    message,
                });
            }
        }
    }

    /// The distinct queries of `texts` with their texts, parsed and bound off the runtime's
    /// workers ([`super::parsing`]), the number of the build they were bound against, and
    /// the charge of their texts; or why not.
    async fn parse_set(
        &self,
        texts: Vec<String>,
    ) -> Result<(u64, Vec<String>, Vec<BoundQuery>, Charge), String> {
        let most = self.realtime.settings.subscriptions.queries_per_set;
        if texts.len() > most {
            return Err(format!(
                "the query set has {} queries, more than the {most} one Subscribe may carry \
                 (--max-queries-per-set)",
                texts.len()
            ));
        }
        let build = self.realtime.build.get();
        let number = build.number;
        let identity = self.identity;
        let (texts, queries) = self
            .realtime
            .parsing
            .parse(self.holder, move || {
                distinct(&build.catalog, identity, texts)
            })
            .await??;
        let bytes = texts.iter().map(String::len).sum();
        let charge = self
            .realtime
            .memory
            .charge(self.holder, bytes)
            .map_err(|refused| format!("the query set's texts are not kept: {refused}"))?;
        Ok((number, texts, queries, charge))
    }

    /// The rows of `query` in the committed tables of the build serving the module, read on a
    /// blocking thread, a few queries of all connections at a time ([`Realtime::one_offs`]),
    /// reading at most as many rows as subscriptions may under one read transaction
    /// ([`super::SubscriptionLimits::reads`]), since commits wait while it reads.
    /// Rows that are more than the connection may queue are refused before they are copied;
    /// those that are not are rendered for `W` on that thread too, not on the writer's task.
    async fn one_off(&self, query: &str) -> Result<Box<OneOffRows>, String> {
        let build = self.realtime.build.get();
        let catalog = build.catalog.clone();
        let (identity, query) = (self.identity, query.to_owned());
        let bound = self
            .realtime
            .parsing
            .parse(self.holder, move || {
                Query::parse(&catalog, &query).map(|query| query.bind(identity))
            })
            .await?
            .map_err(|error| error.to_string())?;
        let _turn = self
            .realtime
            .one_offs
            .acquire()
            .await
            .map_err(|_| "the server is shutting down".to_owned())?;
        let most = self.outbox.bounds().bytes;
        let reads = self.realtime.settings.subscriptions.reads;
        let (memory, holder) = (self.realtime.memory.clone(), self.holder);
        let rows = tokio::task::spawn_blocking(move || {
            let mut budget = Budget::new(reads, usize::MAX);
            let rows = bound
                .evaluate_within(&build.datastore.begin_read(), &mut budget)
                .map_err(|error| match error {
                    BudgetError::Reads => format!(
                        "the query takes more than {reads} reads (a read is a row, or a \
                         comparison checked on a row), more than a query may while commits wait \
                         (--max-subscription-reads): narrow it with WHERE on an indexed column"
                    ),
                    error => error.to_string(),
                })?;
            let bytes = rows.iter().map(|row| row.len()).sum::<usize>();
            if bytes > most {
                return Err(too_many_rows(bytes));
            }
            // What rendering may take, charged before it is: then what it took.
            let mut charge = memory
                .charge(holder, bytes.saturating_mul(W::EXPANSION))
                .map_err(|refused| format!("the answer is not rendered: {refused}"))?;
            let table = build
                .module
                .tables
                .get(bound.table() as usize)
                .map_or("", |table| &table.name);
            let rows = QueryRows::new(table, &rows, &[])
                .ok_or_else(|| "the rows are more than one message can carry".to_owned())?;
            W::prepare(&build.module, &rows)?;
            let held = rows.held_bytes();
            if held > most {
                return Err(too_many_rows(held));
            }
            charge
                .settle(held)
                .map_err(|refused| format!("the answer is not kept: {refused}"))?;
            Ok(OneOffRows {
                module: build.module.clone(),
                rows,
                charge,
            })
        })
        .await
        .map_err(|error| format!("the query failed: {error}"))??;
        if !self.outbox.fits(rows.charge.bytes()) {
            return Err(too_many_rows(rows.charge.bytes()));
        }
        Ok(Box::new(rows))
    }

    /// Sends `request` to the evaluation task, once the connection has fewer than
    /// [`MAX_REQUESTS_QUEUED`] waiting there (the task gives the turn back when it has
    /// handled it), and then room in its queue.
    async fn request(&self, request: Request) {
        let queued = match self.queued.acquire().await {
            Ok(turn) => turn,
            Err(_) => return,
        };
        queued.forget();
        if self.realtime.fanout.send(request).await.is_err() {
            self.outbox.close(Close::new(
                close::INTERNAL,
                "the server's evaluation task has stopped",
            ));
        }
    }
}

/// The pings a client may still send ([`PINGS`], [`PING_EVERY`]): a bucket of tokens.
#[derive(Debug)]
struct PingAllowance {
    tokens: u32,
    refilled: Instant,
}

impl Default for PingAllowance {
    fn default() -> Self {
        Self {
            tokens: PINGS,
            refilled: Instant::now(),
        }
    }
}

impl PingAllowance {
    /// Takes one ping's token; `false` if none is left.
    fn take(&mut self) -> bool {
        let earned = self.refilled.elapsed().as_nanos() / PING_EVERY.as_nanos();
        if earned > 0 {
            let earned = u32::try_from(earned).unwrap_or(u32::MAX);
            self.tokens = self.tokens.saturating_add(earned).min(PINGS);
            self.refilled = Instant::now();
        }
        match self.tokens.checked_sub(1) {
            Some(left) => {
                self.tokens = left;
                true
            }
            None => false,
        }
    }
}

/// The distinct queries of `texts`, parsed, checked against `catalog` and bound for
/// `identity`, each with its text: a query repeated (in the same words, or in others that
/// mean the same query) is kept once, at its first place, so that a query set's rows are
/// evaluated, held and sent once per query whatever the client repeats. An error names the
/// first text refused.
fn distinct(
    catalog: &Arc<Catalog>,
    identity: Identity,
    mut texts: Vec<String>,
) -> Result<(Vec<String>, Vec<BoundQuery>), String> {
    let mut seen_texts = HashSet::new();
    let mut seen = HashSet::new();
    let mut kept = Vec::new();
    for (place, text) in texts.iter().enumerate() {
        if !seen_texts.insert(text.as_str()) {
            continue;
        }
        let query = Query::parse(catalog, text)
            .map(|query| query.bind(identity))
            .map_err(|error| format!("{text}: {error}"))?;
        if seen.insert(query.clone()) {
            kept.push((place, query));
        }
    }
    Ok(kept
        .into_iter()
        .map(|(place, query)| (std::mem::take(&mut texts[place]), query))
        .unzip())
}

/// The refusal of a one-off query whose rows are `bytes` bytes (as they would be queued: in
/// the client's encoding), more than its connection may have queued.
fn too_many_rows(bytes: usize) -> String {
    format!(
        "the rows are {bytes} bytes, more than this connection may have queued: narrow the \
         query with WHERE, or read the table in pages with GET /v1/tables/{{name}}"
    )
}

/// The close for a socket whose read failed: `1009` for a message over the size limit, `1000`
/// otherwise (the socket is gone). The transport's error type is its own (axum hides
/// tungstenite's), so the size error is told by its text (`Message too long: …`, pinned by the
/// server's size-limit test).
fn read_error(error: &impl Display) -> Close {
    let text = error.to_string();
    if text.contains("too long") {
        Close::new(close::TOO_BIG, text)
    } else {
        Close::new(close::NORMAL, text)
    }
}
