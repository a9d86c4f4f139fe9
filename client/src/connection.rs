//! The connection task: it owns the socket, sends the handle's commands, applies what the
//! server sends to the cache, answers calls, and reconnects.
//!
//! Everything that must happen in the order of the messages happens here, in one task: a
//! transaction's changes are applied to the cache as a whole, then its row callbacks run
//! (with no lock held, so they can read the cache), then the call it answers resolves. Those
//! three are one delivery (`delivery.rs`), run here or queued for the application's frame
//! tick; the task's own bookkeeping (calls waiting, query sets applied, the last offset) is
//! updated as each message arrives either way.
//!
//! When the socket is lost, calls waiting for an answer fail with
//! [`Error::Disconnected`] (whether a reducer ran is unknown), and, unless reconnection is
//! off, the task connects again as the same identity (the session's latest token, or the
//! token provider's: `credentials.rs`; to the next of the servers, when it has several:
//! `servers.rs`), and subscribes every query set again with `resume_from` = the
//! offset of the last transaction it applied: the server then sends only the net changes (or
//! all rows, which replace the query set's in the cache; the cache reports only the
//! difference either way).
//!
//! A call the server refused as `not_primary` (a replicated deployment's standby: it never
//! ran) is not failed but kept for the next server; the task leaves the server once no other
//! call is out on it, and sends those calls, with those it held meanwhile, once connected
//! again.
//!
//! A query set that a new build of the module ended is subscribed again, when the new build
//! can serve it, as `new_build.rs` describes.

use crate::apply::{self, RowsPart};
use crate::credentials::Credentials;
use crate::delivery::Shared;
use crate::description;
use crate::error::Error;
use crate::id_map::IdMap;
use crate::new_build::{self, NewBuild, RowTypes};
use crate::platform;
use crate::servers::Servers;
use crate::socket::{self, Received};
use crate::state::ConnectionState;
use crate::sync::Mutex;
use crate::HashMap;
use bytes::Bytes;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};
use wasmod_protocol::description::ModuleDescription;
use wasmod_protocol::errors::{ApiError, ErrorCode};
use wasmod_protocol::ws::{
    BinaryClientMessage, BinaryServerMessage, ClientMessage, RowList, ServerMessage, TableRows,
    TransactionUpdate, UpdateStatus,
};

/// How long to wait between attempts to reconnect: `first`, then twice as long each time, up
/// to `max`. A client of several servers tries each of them in turn at every attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// The wait before the first attempt.
    pub first: Duration,
    /// The longest wait.
    pub max: Duration,
}

impl Default for Backoff {
    /// 100 ms, doubling up to 5 s.
    fn default() -> Self {
        Self {
            first: Duration::from_millis(100),
            max: Duration::from_secs(5),
        }
    }
}

impl Backoff {
    /// The waits, one per attempt.
    fn delays(self) -> impl Iterator<Item = Duration> {
        std::iter::successors(Some(self.first), move |delay| {
            Some((*delay * 2).min(self.max))
        })
    }
}

/// What the handle asks of the connection task.
pub(crate) enum Command {
    /// Send a call, its frame written where it was made
    /// ([`BinaryClientMessage::call_frame`]; the task gives it its request id), and answer
    /// `pending` with its answer.
    Call { frame: Vec<u8>, pending: Pending },
    /// Run a one-off query.
    OneOff {
        query: String,
        answer: oneshot::Sender<Result<Vec<TableRows<RowList>>, Error>>,
    },
    /// Subscribe a new query set.
    Subscribe {
        query_set_id: u32,
        queries: Vec<String>,
        handlers: Handlers,
        state: watch::Sender<SubscriptionState>,
        resumed: Arc<AtomicBool>,
    },
    /// End a query set.
    Unsubscribe { query_set_id: u32 },
    /// Settle `settle` once the cache holds every change up to commit `offset`.
    Sync { offset: u64, settle: Settle },
    /// Close the socket and end the task.
    Disconnect { done: oneshot::Sender<()> },
    /// Send the call `request_id` again, which the server answered `busy` (it never ran).
    Retry { request_id: u32 },
    /// The description of the build serving now, read for `query_sets`, which a new build
    /// ended (or why it could not be read): from the task's own read ([`Connection::describe`]).
    Described {
        query_sets: Vec<u32>,
        description: Result<ModuleDescription, String>,
    },
}

/// The answer to a reducer call that committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReducerOutcome {
    /// The commit's transaction offset; for a call that changed nothing, the last commit
    /// before its answer.
    pub offset: u64,
}

/// Called once, when a query set's rows are first in the cache.
pub(crate) type AppliedCallback = Box<dyn FnOnce() + Send>;

/// Called when the server refuses a query set, with its message.
pub(crate) type ErrorCallback = Box<dyn FnOnce(&str) + Send>;

/// Called with what became of a query set that a new build ended, each time one does.
pub(crate) type NewBuildCallback = Arc<Mutex<dyn FnMut(&NewBuild) + Send>>;

/// What a query set tells the application, as [`crate::SubscriptionBuilder`] set it.
#[derive(Default)]
pub(crate) struct Handlers {
    pub(crate) on_applied: Option<AppliedCallback>,
    pub(crate) on_error: Option<ErrorCallback>,
    pub(crate) on_new_build: Option<NewBuildCallback>,
}

/// Where a query set stands.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SubscriptionState {
    /// Sent, not answered yet.
    Pending,
    /// Its rows are in the cache, and its updates are being applied.
    Applied,
    /// The server refused it (the message says why); it holds nothing.
    Failed(String),
    /// Unsubscribed, or the client is gone.
    Ended,
}

/// What runs once the cache holds every change up to an offset (or the wait failed).
pub(crate) type Settle = Box<dyn FnOnce(Result<(), Error>) + Send>;

/// A call waiting for its answer.
pub(crate) enum Pending {
    /// A reducer's: its `TransactionUpdate`.
    Reducer(oneshot::Sender<Result<ReducerOutcome, Error>>),
    /// A procedure's or view's: its `CallResult`. A procedure's value is handed over once
    /// the cache holds what it wrote (`writes`).
    Value {
        answer: oneshot::Sender<Result<Vec<u8>, Error>>,
        writes: bool,
    },
    /// A one-off query's: its `OneOffQueryResult`.
    Query(oneshot::Sender<Result<Vec<TableRows<RowList>>, Error>>),
    /// A `WaitFor`'s: its `CaughtUp`.
    Sync(Settle),
}

impl Pending {
    fn fail(self, error: Error) {
        match self {
            Self::Reducer(answer) => drop(answer.send(Err(error))),
            Self::Value { answer, .. } => drop(answer.send(Err(error))),
            Self::Query(answer) => drop(answer.send(Err(error))),
            Self::Sync(settle) => settle(Err(error)),
        }
    }
}

/// A query set the client holds, across reconnections.
struct QuerySet {
    queries: Vec<String>,
    handlers: Handlers,
    state: watch::Sender<SubscriptionState>,
    /// Whether its rows last came resumed ([`crate::SubscriptionHandle::resumed`]).
    resumed: Arc<AtomicBool>,
    /// Whether the cache holds its rows (so that a reconnection can resume it).
    applied: bool,
    /// The parts of its rows received so far (`SubscribeRows`), applied with the
    /// `SubscribeApplied` that ends them.
    parts: Vec<RowsPart>,
    /// Set while the query set, ended by a new build, is on its way back.
    rebuild: Option<Rebuild>,
}

/// A query set that a new build ended, on its way back: its old rows are still in the cache.
struct Rebuild {
    /// Why the server ended it: its message.
    ended: String,
    /// Whether it was subscribed again; until then it waits for the new build's description.
    sent: bool,
}

impl QuerySet {
    /// A query set asked for, whose rows the cache does not hold yet.
    fn new(
        queries: Vec<String>,
        handlers: Handlers,
        state: watch::Sender<SubscriptionState>,
        resumed: Arc<AtomicBool>,
    ) -> Self {
        Self {
            queries,
            handlers,
            state,
            resumed,
            applied: false,
            parts: Vec::new(),
            rebuild: None,
        }
    }

    /// Whether it waits for the new build's description before it is subscribed again.
    fn waits_for_description(&self) -> bool {
        matches!(self.rebuild, Some(Rebuild { sent: false, .. }))
    }
}

/// The most calls the server lets one connection have in flight (queued or running): past
/// it, it answers a call `busy` without running it. The client keeps at most this many out
/// and holds the rest, in order, until answers make room: an application may start as many
/// calls at once as it likes without ever being refused for it.
pub const MAX_CALLS_IN_FLIGHT: usize = 16;

/// The most `WaitFor` requests the server lets one connection have waiting for a commit it
/// has not evaluated yet; the client keeps at most this many out and holds the rest.
pub const MAX_WAITS: usize = 16;

/// How often a call answered `busy` (it never ran: the server, or an edge's way to its
/// primary, had no room) is sent again before `busy` is its answer; the waits between double
/// from [`BUSY_FIRST_WAIT`]: 25 ms, 50 ms, … 1.6 s, about 3 s in all.
pub const BUSY_RETRIES: u32 = 7;

/// The wait before a call answered `busy` is sent again the first time.
const BUSY_FIRST_WAIT: Duration = Duration::from_millis(25);

/// How often a call answered `not_primary` (a standby of a replicated deployment refused it:
/// it never ran) is sent to the next server before `not_primary` is its answer. A server
/// that takes a connection is the primary, so a call meets a standby only when the primary
/// it was sent to steps down; more than once means the deployment has no primary for long.
pub const NOT_PRIMARY_RETRIES: u32 = 3;

/// A call held until fewer than [`MAX_CALLS_IN_FLIGHT`] are out.
struct HeldCall {
    /// Its frame, its request id not set yet (or the one it was last sent with).
    frame: Vec<u8>,
    pending: Pending,
    /// How often a server answered it `not_primary`.
    refused: u32,
}

/// A call sent and not answered yet: its frame (shared bytes, not a copy), to send it again,
/// and how often it was answered `busy` and `not_primary`.
struct CallOut {
    frame: Bytes,
    busy: u32,
    refused: u32,
}

/// The connection task's state.
pub(crate) struct Connection {
    /// Where to connect, and which server the socket is open to.
    servers: Servers,
    /// As whom it connects: the session's token, or the token provider's.
    credentials: Credentials,
    /// What a `wss://` socket and an `https://` description trust, on every reconnection.
    tls: platform::Tls,
    socket: Option<socket::Connection>,
    shared: Arc<Shared>,
    reconnect: Option<Backoff>,
    next_request_id: u32,
    pending: HashMap<u32, Pending>,
    /// Calls sent and not answered yet (among `pending`, which has queries too).
    calls_out: usize,
    /// The calls out, by request id: sent again after a wait when answered `busy`
    /// ([`BUSY_RETRIES`]), to the next server when answered `not_primary`.
    frames_out: HashMap<u32, CallOut>,
    /// Calls not sent yet, oldest first.
    held_calls: VecDeque<HeldCall>,
    /// Calls answered `not_primary`, oldest first, for the next server: kept when the socket
    /// is lost, failed only when the task ends.
    elsewhere: Vec<HeldCall>,
    /// Whether the server is not the primary (it answered a call `not_primary`): no call is
    /// sent to it any more, and it is left once none is out.
    leaving: bool,
    /// `WaitFor` requests sent and not answered yet.
    waits_out: usize,
    /// Waits not sent yet, oldest first: each offset and what settles it.
    held_waits: VecDeque<(u64, Settle)>,
    query_sets: IdMap<QuerySet>,
    /// The offset of the last transaction whose changes the cache holds.
    last_offset: Option<u64>,
    /// The row types the application reads, by table: what a new build must still send.
    row_types: RowTypes,
    /// The task's own commands, for what it starts to report back (a description read);
    /// weak, so that the task still ends when the application drops its last handle.
    commands: mpsc::WeakUnboundedSender<Command>,
    /// Whether a read of the module's description is under way.
    describing: bool,
    /// Messages to send once the message being handled is (a query set subscribed again).
    outbox: Vec<BinaryClientMessage>,
}

/// How a turn of the task's loop ended.
enum Turn {
    Continue,
    /// The socket is gone (closed, failed, or sent what is not a message).
    Lost,
    /// The application disconnected, or dropped every handle.
    Stop,
}

impl Connection {
    /// The task's state over `socket`, the first connection to one of `servers` (the
    /// current one). `row_types` are the tables' row types the application reads;
    /// `commands`, the sender of the task's commands.
    #[allow(
        clippy::too_many_arguments,
        reason = "the task's parts, each from its own step of `ClientBuilder::connect`"
    )]
    pub(crate) fn new(
        servers: Servers,
        credentials: Credentials,
        tls: platform::Tls,
        socket: socket::Connection,
        shared: Arc<Shared>,
        reconnect: Option<Backoff>,
        row_types: RowTypes,
        commands: &mpsc::UnboundedSender<Command>,
    ) -> Self {
        Self {
            servers,
            credentials,
            tls,
            socket: Some(socket),
            shared,
            reconnect,
            next_request_id: 1,
            pending: HashMap::default(),
            frames_out: HashMap::default(),
            calls_out: 0,
            held_calls: VecDeque::new(),
            elsewhere: Vec::new(),
            leaving: false,
            waits_out: 0,
            held_waits: VecDeque::new(),
            query_sets: IdMap::default(),
            last_offset: None,
            row_types,
            commands: commands.downgrade(),
            describing: false,
            outbox: Vec::new(),
        }
    }
}

/// Runs the connection until the application disconnects or, with reconnection off, the
/// socket is lost.
pub(crate) async fn run(
    mut connection: Connection,
    mut commands: mpsc::UnboundedReceiver<Command>,
) {
    loop {
        let turn = match connection.socket.as_mut() {
            Some(socket) => tokio::select! {
                command = commands.recv() => match command {
                    Some(command) => connection.command(command).await,
                    None => Turn::Stop,
                },
                received = socket.next() => match connection.received(received).await {
                    Turn::Continue => connection.send_held().await,
                    other => other,
                },
            },
            None => connection.reconnect(&mut commands).await,
        };
        match turn {
            Turn::Continue => {}
            Turn::Lost => {
                connection.lost();
                if connection.reconnect.is_none() {
                    break;
                }
                connection
                    .shared
                    .connection
                    .set(ConnectionState::Reconnecting);
            }
            Turn::Stop => {
                if let Some(socket) = connection.socket.take() {
                    // A close frame, without waiting for the answer: the task ends now.
                    socket.split().0.close().await;
                }
                break;
            }
        }
    }
    connection.end();
}

impl Connection {
    /// Carries out one of the handle's commands on the open socket.
    async fn command(&mut self, command: Command) -> Turn {
        let message = match command {
            Command::Call { frame, pending } => {
                self.held_calls.push_back(HeldCall {
                    frame,
                    pending,
                    refused: 0,
                });
                return self.send_held().await;
            }
            Command::OneOff { query, answer } => {
                let request_id = self.request_id();
                self.pending.insert(request_id, Pending::Query(answer));
                ClientMessage::OneOffQuery { request_id, query }
            }
            Command::Subscribe {
                query_set_id,
                queries,
                handlers,
                state,
                resumed,
            } => {
                let message = ClientMessage::Subscribe {
                    query_set_id,
                    queries: queries.clone(),
                    resume_from: None,
                };
                self.query_sets.insert(
                    query_set_id,
                    QuerySet::new(queries, handlers, state, resumed),
                );
                message
            }
            Command::Unsubscribe { query_set_id } => {
                self.forget_query_set(query_set_id);
                ClientMessage::Unsubscribe { query_set_id }
            }
            Command::Sync { offset, settle } => {
                self.sync(offset, settle);
                return self.send_held().await;
            }
            Command::Retry { request_id } => {
                // Gone if the socket was lost meanwhile: the call failed with it.
                let Some(call) = self.frames_out.get(&request_id) else {
                    return Turn::Continue;
                };
                let frame = call.frame.clone();
                return self.send_frame(frame).await;
            }
            Command::Disconnect { done } => {
                let _ = done.send(());
                return Turn::Stop;
            }
            Command::Described {
                query_sets,
                description,
            } => {
                self.described(query_sets, description);
                return self.flush().await;
            }
        };
        self.send(&message).await
    }

    /// Settles `settle` once the cache holds every change up to commit `offset`: after the
    /// deliveries queued if the updates received already reach it (they come in commit
    /// order), else once the server says they do (`WaitFor`, sent by [`Self::send_held`]).
    fn sync(&mut self, offset: u64, settle: Settle) {
        if self.last_offset.is_some_and(|last| last >= offset) {
            self.deliver(move |_| settle(Ok(())));
        } else {
            self.held_waits.push_back((offset, settle));
        }
    }

    /// Sends the calls and waits held, oldest first, while fewer than their bounds are out.
    async fn send_held(&mut self) -> Turn {
        if let Turn::Lost = self.send_held_calls().await {
            return Turn::Lost;
        }
        while self.waits_out < MAX_WAITS {
            let Some((offset, settle)) = self.held_waits.pop_front() else {
                break;
            };
            let request_id = self.request_id();
            self.pending.insert(request_id, Pending::Sync(settle));
            self.waits_out += 1;
            let message = ClientMessage::WaitFor { request_id, offset };
            if let Turn::Lost = self.send(&message).await {
                return Turn::Lost;
            }
        }
        Turn::Continue
    }

    /// Sends the calls held, oldest first, while fewer than [`MAX_CALLS_IN_FLIGHT`] are out;
    /// or, on a server that is not the primary, leaves it once no call is out.
    async fn send_held_calls(&mut self) -> Turn {
        if self.leaving {
            return if self.calls_out == 0 {
                self.leave().await
            } else {
                Turn::Continue
            };
        }
        while self.calls_out < MAX_CALLS_IN_FLIGHT {
            let Some(HeldCall {
                mut frame,
                pending,
                refused,
            }) = self.held_calls.pop_front()
            else {
                break;
            };
            let request_id = self.request_id();
            self.pending.insert(request_id, pending);
            self.calls_out += 1;
            BinaryClientMessage::set_call_request_id(&mut frame, request_id);
            let frame = Bytes::from(frame);
            let call = CallOut {
                frame: frame.clone(),
                busy: 0,
                refused,
            };
            self.frames_out.insert(request_id, call);
            if let Turn::Lost = self.send_frame(frame).await {
                return Turn::Lost;
            }
        }
        Turn::Continue
    }

    /// Sends the messages handling the last message or command queued.
    async fn flush(&mut self) -> Turn {
        for message in std::mem::take(&mut self.outbox) {
            if let Turn::Lost = self.send(&message).await {
                return Turn::Lost;
            }
        }
        Turn::Continue
    }

    /// The call, query or wait `request_id` is answered: what waits for its answer.
    fn answered(&mut self, request_id: u32) -> Option<Pending> {
        let pending = self.pending.remove(&request_id)?;
        match pending {
            Pending::Reducer(_) | Pending::Value { .. } => {
                self.calls_out = self.calls_out.saturating_sub(1);
                self.frames_out.remove(&request_id);
            }
            Pending::Sync(_) => self.waits_out = self.waits_out.saturating_sub(1),
            Pending::Query(_) => {}
        }
        Some(pending)
    }

    /// Sends `message`; a failure to send is a lost socket.
    async fn send(&mut self, message: &BinaryClientMessage) -> Turn {
        self.send_frame(message.to_bytes().into()).await
    }

    /// Sends a message's binary `frame`; a failure to send is a lost socket.
    async fn send_frame(&mut self, frame: Bytes) -> Turn {
        let Some(socket) = self.socket.as_mut() else {
            return Turn::Lost;
        };
        match socket.send_frame(frame).await {
            Ok(()) => Turn::Continue,
            Err(_) => Turn::Lost,
        }
    }

    /// Handles what the socket read.
    async fn received(&mut self, received: Result<Received<BinaryServerMessage>, Error>) -> Turn {
        match received {
            Ok(Received::Message(message)) => {
                self.message(message);
                self.flush().await
            }
            Ok(Received::Closed(closed)) => {
                tracing::info!(%closed, "the socket closed");
                Turn::Lost
            }
            Err(error) => {
                tracing::warn!(%error, "dropping the connection");
                Turn::Lost
            }
        }
    }

    /// Applies one server message.
    fn message(&mut self, message: BinaryServerMessage) {
        match message {
            ServerMessage::IdentityToken { .. } => {
                tracing::warn!("a second IdentityToken on one connection, ignored");
            }
            ServerMessage::SubscribeApplied {
                query_set_id,
                offset,
                tables,
                deletes,
                resumed,
            } => {
                let last = RowsPart { tables, deletes };
                self.subscribe_applied(query_set_id, offset, last, resumed);
            }
            ServerMessage::SubscribeRows {
                query_set_id,
                tables,
                deletes,
            } => {
                if let Some(query_set) = self.query_sets.get_mut(&query_set_id) {
                    query_set.parts.push(RowsPart { tables, deletes });
                }
            }
            ServerMessage::TransactionUpdate(update) => self.transaction(update),
            ServerMessage::CallResult {
                request_id,
                offset,
                result,
            } => self.call_result(request_id, offset, result),
            ServerMessage::CaughtUp { request_id, offset } => {
                self.advance(offset);
                match self.answered(request_id) {
                    Some(Pending::Sync(settle)) => self.deliver(move |_| settle(Ok(()))),
                    Some(other) => {
                        other.fail(Error::Protocol("a call answered with CaughtUp".into()))
                    }
                    None => tracing::warn!(request_id, "a CaughtUp answering no WaitFor"),
                }
            }
            ServerMessage::OneOffQueryResult { request_id, result } => {
                let pending = self.answered(request_id);
                self.deliver(move |_| match pending {
                    Some(Pending::Query(answer)) => {
                        let _ = answer.send(result.map_err(Error::Query));
                    }
                    Some(other) => other.fail(Error::Protocol(
                        "a call answered with a query result".into(),
                    )),
                    None => tracing::warn!(request_id, "an answer to no query"),
                });
            }
            ServerMessage::SubscriptionError {
                query_set_id,
                message,
            } => self.subscription_error(query_set_id, message),
            other => tracing::warn!(?other, "a message this client does not know"),
        }
    }

    /// The answer to call (or wait) `request_id`, when the server's last commit was `offset`:
    /// a view's value at once, a procedure's once the cache holds what it wrote.
    fn call_result(&mut self, request_id: u32, offset: u64, result: Result<Vec<u8>, ApiError>) {
        let retried = match &result {
            Err(error) if error.code == ErrorCode::Busy => self.retry_later(request_id),
            Err(error) if error.code == ErrorCode::NotPrimary => self.retry_elsewhere(request_id),
            _ => false,
        };
        if retried {
            return;
        }
        match self.answered(request_id) {
            Some(Pending::Value {
                answer,
                writes: true,
            }) if result.is_ok() => {
                let settle: Settle = Box::new(move |synced| {
                    let _ = answer.send(synced.and(result.map_err(Error::Api)));
                });
                self.sync(offset, settle);
            }
            Some(Pending::Value { answer, .. }) => {
                self.deliver(move |_| drop(answer.send(result.map_err(Error::Api))));
            }
            // Answered by a `TransactionUpdate` or a `CaughtUp`: a `CallResult` refuses them.
            Some(pending @ (Pending::Reducer(_) | Pending::Sync(_))) => {
                let refusal = result.err().map_or_else(
                    || Error::Protocol("a reducer call or a WaitFor answered with a value".into()),
                    Error::Api,
                );
                self.deliver(move |_| pending.fail(refusal));
            }
            Some(other) => other.fail(Error::Protocol(
                "a one-off query answered with a call result".into(),
            )),
            None => tracing::warn!(request_id, "an answer to no call"),
        }
    }

    /// Sends call `request_id`, answered `busy`, again after a wait that doubles with each
    /// `busy` ([`BUSY_RETRIES`] times at most); `false` if it has been retried enough (or is no
    /// call out), and the `busy` is its answer. Its slot among the calls out stays taken
    /// meanwhile, so later calls do not overtake it by more than the window did.
    fn retry_later(&mut self, request_id: u32) -> bool {
        let Some(CallOut { busy, .. }) = self.frames_out.get_mut(&request_id) else {
            return false;
        };
        if *busy >= BUSY_RETRIES {
            return false;
        }
        let wait = BUSY_FIRST_WAIT * 2u32.pow(*busy);
        *busy += 1;
        tracing::debug!(request_id, ?wait, "a call answered busy is sent again");
        let commands = self.commands.clone();
        platform::spawn(async move {
            platform::sleep(wait).await;
            if let Some(commands) = commands.upgrade() {
                let _ = commands.send(Command::Retry { request_id });
            }
        });
        true
    }

    /// Keeps call `request_id`, answered `not_primary`, for the next server
    /// ([`NOT_PRIMARY_RETRIES`] times at most), and starts leaving this one; `false` if it has
    /// been refused enough (or is no call out), or the client does not reconnect, and the
    /// refusal is its answer.
    fn retry_elsewhere(&mut self, request_id: u32) -> bool {
        let (frame, refused) = match self.frames_out.get(&request_id) {
            Some(call) if self.reconnect.is_some() && call.refused < NOT_PRIMARY_RETRIES => {
                (call.frame.clone(), call.refused + 1)
            }
            _ => return false,
        };
        let Some(pending) = self.answered(request_id) else {
            return false;
        };
        tracing::info!(
            request_id,
            "a call the server refused as not the primary waits for the next server"
        );
        self.elsewhere.push(HeldCall {
            frame: frame.into(),
            pending,
            refused,
        });
        self.leaving = true;
        true
    }

    /// Leaves a server that is not the primary, no call being out on it: the calls held go
    /// to the next server with those it refused, and the socket is closed (the task then
    /// reconnects, as after a loss).
    async fn leave(&mut self) -> Turn {
        tracing::info!("the server is not the primary: connecting to the next");
        self.elsewhere.extend(self.held_calls.drain(..));
        if let Some(socket) = self.socket.take() {
            socket.split().0.close().await;
        }
        Turn::Lost
    }

    /// A query set's rows, the parts received before and `last`: all of them (replacing what
    /// the cache holds for it), or, resumed, the changes since `resume_from`.
    fn subscribe_applied(&mut self, query_set_id: u32, offset: u64, last: RowsPart, resumed: bool) {
        let Some(query_set) = self.query_sets.get_mut(&query_set_id) else {
            return;
        };
        tracing::debug!(query_set_id, offset, resumed, "query set applied");
        query_set.applied = true;
        let on_applied = query_set.handlers.on_applied.take();
        let new_build = query_set.rebuild.take().map(|rebuild| {
            let event = NewBuild::Resubscribed {
                ended: rebuild.ended,
            };
            (query_set.handlers.on_new_build.clone(), event)
        });
        let state = query_set.state.clone();
        let resumed_flag = query_set.resumed.clone();
        let mut parts = std::mem::take(&mut query_set.parts);
        parts.push(last);
        self.advance(offset);
        self.deliver(move |shared| {
            apply::query_set_rows(
                &shared.cache,
                &shared.listeners,
                query_set_id,
                &parts,
                resumed,
            );
            resumed_flag.store(resumed, Ordering::Release);
            state.send_replace(SubscriptionState::Applied);
            if let Some(on_applied) = on_applied {
                on_applied();
            }
            if let Some((Some(on_new_build), event)) = new_build {
                (on_new_build.lock())(&event);
            }
        });
    }

    /// A transaction: its changes to the query sets the cache holds, then its callbacks, then
    /// the answer to the call that made it.
    fn transaction(&mut self, mut update: TransactionUpdate<RowList>) {
        update.changes.retain(|change| {
            self.query_sets
                .get(&change.query_set_id)
                .is_some_and(|query_set| query_set.applied)
        });
        if update.status == UpdateStatus::Committed {
            self.advance(update.offset);
        }
        let answer = update.request_id.map(|request_id| {
            let outcome = match &update.status {
                UpdateStatus::Committed => Ok(ReducerOutcome {
                    offset: update.offset,
                }),
                UpdateStatus::Failed { message } => Err(Error::Failed(message.clone())),
                UpdateStatus::Aborted { reason } => Err(Error::Aborted(reason.clone())),
                _ => Err(Error::Protocol(
                    "a transaction status this client does not know".to_owned(),
                )),
            };
            (request_id, self.answered(request_id), outcome)
        });
        self.deliver(move |shared| {
            apply::transaction(&shared.cache, &shared.listeners, &update.changes);
            match answer {
                Some((_, Some(Pending::Reducer(answer)), outcome)) => {
                    let _ = answer.send(outcome);
                }
                Some((_, Some(other), _)) => other.fail(Error::Protocol(
                    "a procedure, view or query answered with a transaction".into(),
                )),
                Some((request_id, None, _)) => {
                    tracing::warn!(request_id, "an update answering no call");
                }
                None => {}
            }
        });
    }

    /// The server refused a query set (or an unsubscribe of one it no longer has), or a new
    /// build ended it.
    fn subscription_error(&mut self, query_set_id: u32, message: String) {
        let Some(query_set) = self.query_sets.get_mut(&query_set_id) else {
            return;
        };
        if query_set.applied {
            // The server ends a query set whose rows the cache holds only at a new build.
            tracing::info!(query_set_id, %message, "a new build ended a query set");
            query_set.applied = false;
            query_set.rebuild = Some(Rebuild {
                ended: message,
                sent: false,
            });
            let tables = new_build::tables_read(&query_set.queries);
            if tables
                .iter()
                .any(|table| self.row_types.contains_key(table))
            {
                self.describe();
            } else {
                self.resubscribe_ended(query_set_id);
            }
            return;
        }
        let Some(mut query_set) = self.query_sets.remove(&query_set_id) else {
            return;
        };
        if let Some(rebuild) = query_set.rebuild.take() {
            self.stay_ended(query_set_id, query_set, rebuild.ended, message);
            return;
        }
        self.release(query_set_id);
        let on_error = query_set.handlers.on_error.take();
        self.deliver(move |_| {
            query_set
                .state
                .send_replace(SubscriptionState::Failed(message.clone()));
            if let Some(on_error) = on_error {
                on_error(&message);
            }
        });
    }

    /// Reads the module's description for the query sets that wait for it, unless a read is
    /// under way: the sets a swap ends come one after the other, and those that come during
    /// a read wait for the next one, which reads the build serving then.
    fn describe(&mut self) {
        if self.describing {
            return;
        }
        let waiting: Vec<u32> = self
            .query_sets
            .iter()
            .filter(|(_, query_set)| query_set.waits_for_description())
            .map(|(&query_set_id, _)| query_set_id)
            .collect();
        if waiting.is_empty() {
            return;
        }
        self.describing = true;
        let url = self.servers.current().to_owned();
        let tls = self.tls.clone();
        let commands = self.commands.clone();
        platform::spawn(async move {
            let description = description::fetch(&url, &tls).await;
            if let Some(commands) = commands.upgrade() {
                let _ = commands.send(Command::Described {
                    query_sets: waiting,
                    description,
                });
            }
        });
    }

    /// The new build's description came for `query_sets` (those still waiting for it are
    /// subscribed again, or stay ended if the client cannot read their rows in it).
    fn described(&mut self, query_sets: Vec<u32>, description: Result<ModuleDescription, String>) {
        self.describing = false;
        for query_set_id in query_sets {
            let Some(query_set) = self.query_sets.get(&query_set_id) else {
                continue;
            };
            if !query_set.waits_for_description() {
                continue;
            }
            let unreadable = match &description {
                Ok(description) => new_build::unreadable(
                    &self.row_types,
                    description,
                    &new_build::tables_read(&query_set.queries),
                ),
                Err(error) => Some(format!(
                    "the new build's description could not be read: {error}"
                )),
            };
            match unreadable {
                None => self.resubscribe_ended(query_set_id),
                Some(reason) => {
                    if let Some(mut query_set) = self.query_sets.remove(&query_set_id) {
                        let ended = query_set
                            .rebuild
                            .take()
                            .map(|r| r.ended)
                            .unwrap_or_default();
                        self.stay_ended(query_set_id, query_set, ended, reason);
                    }
                }
            }
        }
        self.describe();
    }

    /// Subscribes query set `query_set_id`, which a new build ended, again, from scratch (its
    /// rows then replace those it holds); sent once the message being handled is.
    fn resubscribe_ended(&mut self, query_set_id: u32) {
        let Some(query_set) = self.query_sets.get_mut(&query_set_id) else {
            return;
        };
        if let Some(rebuild) = &mut query_set.rebuild {
            rebuild.sent = true;
        }
        tracing::info!(
            query_set_id,
            "subscribing again to a query set a new build ended"
        );
        self.outbox.push(ClientMessage::Subscribe {
            query_set_id,
            queries: query_set.queries.clone(),
            resume_from: None,
        });
    }

    /// Query set `query_set_id` (removed), which a new build ended (`ended`), is not coming
    /// back, for `reason`: its rows leave the cache and the application hears why.
    fn stay_ended(
        &mut self,
        query_set_id: u32,
        query_set: QuerySet,
        ended: String,
        reason: String,
    ) {
        tracing::info!(query_set_id, %reason, "a query set a new build ended stays ended");
        self.release(query_set_id);
        let on_new_build = query_set.handlers.on_new_build;
        let state = query_set.state;
        self.deliver(move |_| {
            state.send_replace(SubscriptionState::Failed(reason.clone()));
            if let Some(on_new_build) = on_new_build {
                (on_new_build.lock())(&NewBuild::Ended { ended, reason });
            }
        });
    }

    /// Drops a query set and its rows (with their delete callbacks).
    fn forget_query_set(&mut self, query_set_id: u32) {
        if let Some(query_set) = self.query_sets.remove(&query_set_id) {
            self.release(query_set_id);
            self.deliver(move |_| {
                query_set.state.send_replace(SubscriptionState::Ended);
            });
        }
    }

    /// Removes the rows query set `query_set_id` holds from the cache, with their callbacks.
    fn release(&mut self, query_set_id: u32) {
        self.deliver(move |shared| {
            apply::release(&shared.cache, &shared.listeners, query_set_id);
        });
    }

    /// Runs what a message does that the application sees, now or at the next frame tick.
    fn deliver(&self, delivery: impl FnOnce(&Shared) + Send + 'static) {
        self.shared.deliveries.deliver(&self.shared, delivery);
    }

    /// The cache now holds the transactions up to `offset`.
    fn advance(&mut self, offset: u64) {
        self.last_offset = Some(self.last_offset.map_or(offset, |last| last.max(offset)));
    }

    fn request_id(&mut self) -> u32 {
        let id = self.next_request_id;
        self.next_request_id = self.next_request_id.wrapping_add(1).max(1);
        id
    }

    /// The socket is gone: the calls waiting for it fail (but those kept for the next
    /// server), and the parts of rows it brought are void.
    fn lost(&mut self) {
        self.socket = None;
        self.leaving = false;
        self.outbox.clear();
        for query_set in self.query_sets.values_mut() {
            query_set.parts.clear();
        }
        for (_, pending) in self.pending.drain() {
            pending.fail(Error::Disconnected);
        }
        self.calls_out = 0;
        self.frames_out.clear();
        for call in self.held_calls.drain(..) {
            call.pending.fail(Error::Disconnected);
        }
        self.waits_out = 0;
        for (_, settle) in self.held_waits.drain(..) {
            settle(Err(Error::Disconnected));
        }
    }

    /// Connects again with the credentials (`credentials.rs`), after each of the backoff's
    /// waits a round of the servers from the next one, then subscribes every query set again and sends the
    /// calls kept for the next server. Commands that come meanwhile are handled without a
    /// socket: calls fail at once, subscriptions are kept for when it is back.
    async fn reconnect(&mut self, commands: &mut mpsc::UnboundedReceiver<Command>) -> Turn {
        let Some(backoff) = self.reconnect else {
            return Turn::Stop;
        };
        for delay in backoff.delays() {
            let mut sleep = std::pin::pin!(platform::sleep(delay));
            loop {
                tokio::select! {
                    () = &mut sleep => break,
                    command = commands.recv() => match command {
                        Some(command) => {
                            if let Turn::Stop = self.offline(command) {
                                return Turn::Stop;
                            }
                        }
                        None => return Turn::Stop,
                    },
                }
            }
            match self.credentials.open(&mut self.servers, &self.tls).await {
                Ok(socket) => {
                    tracing::info!(url = self.servers.current(), "reconnected");
                    *self.shared.session.lock() = socket.session().clone();
                    self.socket = Some(socket);
                    self.shared.connection.set(ConnectionState::Connected);
                    if let Turn::Lost = self.resubscribe().await {
                        return Turn::Lost;
                    }
                    self.held_calls.extend(self.elsewhere.drain(..));
                    return self.send_held().await;
                }
                Err(error) => tracing::info!(%error, ?delay, "reconnecting failed"),
            }
        }
        Turn::Stop
    }

    /// A command while there is no socket.
    fn offline(&mut self, command: Command) -> Turn {
        match command {
            Command::Call { pending, .. } => pending.fail(Error::Disconnected),
            Command::OneOff { answer, .. } => drop(answer.send(Err(Error::Disconnected))),
            Command::Sync { settle, .. } => settle(Err(Error::Disconnected)),
            // The call failed when the socket was lost.
            Command::Retry { .. } => {}
            Command::Subscribe {
                query_set_id,
                queries,
                handlers,
                state,
                resumed,
            } => {
                self.query_sets.insert(
                    query_set_id,
                    QuerySet::new(queries, handlers, state, resumed),
                );
            }
            Command::Unsubscribe { query_set_id } => self.forget_query_set(query_set_id),
            Command::Disconnect { done } => {
                let _ = done.send(());
                return Turn::Stop;
            }
            Command::Described {
                query_sets,
                description,
            } => {
                // The sets it subscribes again are subscribed once the socket is back.
                self.described(query_sets, description);
                self.outbox.clear();
            }
        }
        Turn::Continue
    }

    /// Subscribes every query set again on the new socket: those the cache holds from the
    /// last offset applied, the others from scratch (but for those a new build ended that
    /// wait for its description).
    async fn resubscribe(&mut self) -> Turn {
        let messages: Vec<BinaryClientMessage> = self
            .query_sets
            .iter()
            .filter(|(_, query_set)| !query_set.waits_for_description())
            .map(|(&query_set_id, query_set)| ClientMessage::Subscribe {
                query_set_id,
                queries: query_set.queries.clone(),
                resume_from: if query_set.applied {
                    self.last_offset
                } else {
                    None
                },
            })
            .collect();
        for message in &messages {
            if let Turn::Lost = self.send(message).await {
                return Turn::Lost;
            }
        }
        Turn::Continue
    }

    /// The task is ending: every call and subscription hears of it.
    fn end(&mut self) {
        self.lost();
        for call in self.elsewhere.drain(..) {
            call.pending.fail(Error::Disconnected);
        }
        self.shared.connection.set(ConnectionState::Disconnected);
        let query_sets = std::mem::take(&mut self.query_sets);
        // After the deliveries still queued for a frame tick, which may apply them first.
        self.deliver(move |_| {
            for query_set in query_sets.into_values() {
                query_set.state.send_replace(SubscriptionState::Ended);
            }
        });
    }
}
