//! A quickstart server on a loopback socket, and WebSocket clients of `GET /v1/subscribe` in
//! either encoding, for the tests of the real-time side.

use crate::support::server;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use wasmod_abi::encoding::to_vec;
use wasmod_host::datastore::Database;
use wasmod_host::AllowList;
use wasmod_protocol::ws::{BinaryClientMessage, BinaryServerMessage, BIN_PROTOCOL, JSON_PROTOCOL};
use wasmod_server::{Server, ServerConfig};

/// How long a test waits for a message that should come.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// A server being served on a loopback port; stops when dropped (or by [`Live::stop`]).
pub struct Live {
    pub addr: SocketAddr,
    /// The module's database (its feed shows the lifecycle reducers' commits).
    pub database: Arc<Database>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

impl Live {
    /// A fresh quickstart with `config`, served on a free loopback port.
    pub async fn start(config: ServerConfig) -> Self {
        Self::serve(server(config, AllowList::new())).await
    }

    /// `server`, served on a free loopback port.
    pub async fn serve(server: Server) -> Self {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(std::env::var("WASMOD_TEST_LOG").unwrap_or_else(|_| "off".into()))
            .with_test_writer()
            .try_init();
        let database = server.database().clone();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.serve(listener, async {
            let _ = stopped.await;
        }));
        Self {
            addr,
            database,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Stops the server like [`Live::stop`], then waits until nothing but the returned handle
    /// holds its database: `serve` has returned, but the closed sockets' last tasks may hold
    /// the database, and with it the commit log's lock, for a moment (on a loaded machine, as
    /// CI's instrumented build, the next start found the directory locked). For a test that
    /// starts another server on the same data next.
    pub async fn stop_releasing(self) -> Arc<Database> {
        let database = self.database.clone();
        self.stop().await;
        let released = async {
            while Arc::strong_count(&database) > 1 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        };
        tokio::time::timeout(PATIENCE, released)
            .await
            .expect("the stopped server releases its database");
        database
    }

    /// Shuts the server down and waits for `serve` to return.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(PATIENCE, task)
                .await
                .expect("the server stops")
                .expect("the server task")
                .expect("serve");
        }
    }

    /// Waits until the server answers over its socket (`GET /health`, whatever the status):
    /// by then `serve` has started the node (its scheduler has read the schedule tables).
    pub async fn answering(&self) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let addr = self.addr;
        let answered = async move {
            loop {
                if let Ok(mut stream) = TcpStream::connect(addr).await {
                    let request =
                        b"GET /health HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n";
                    let mut head = [0; 8];
                    if stream.write_all(request).await.is_ok()
                        && stream.read_exact(&mut head).await.is_ok()
                        && &head == b"HTTP/1.1"
                    {
                        return;
                    }
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        tokio::time::timeout(PATIENCE, answered)
            .await
            .expect("the server answers");
    }

    /// The text of `GET /metrics`.
    pub async fn metrics(&self) -> String {
        let url = format!("http://{}/metrics", self.addr);
        tokio::task::spawn_blocking(move || {
            let agent: ureq::Agent = ureq::Agent::config_builder()
                .timeout_global(Some(PATIENCE))
                .build()
                .into();
            agent
                .get(&url)
                .call()
                .expect("an answer")
                .body_mut()
                .read_to_string()
                .expect("a body")
        })
        .await
        .expect("joined")
    }

    /// `POST {path}` with the JSON `body` (and `token` as a bearer, if any): the status, the
    /// `X-Wasmod-Offset` header if any, and the body parsed as JSON (`null` if it is not).
    pub async fn post(
        &self,
        path: &str,
        token: Option<&str>,
        body: &str,
    ) -> (u16, Option<u64>, Value) {
        let url = format!("http://{}{path}", self.addr);
        let (token, body) = (token.map(str::to_owned), body.to_owned());
        tokio::task::spawn_blocking(move || {
            let mut request = http_agent()
                .post(&url)
                .header("content-type", "application/json");
            if let Some(token) = token {
                request = request.header("authorization", format!("Bearer {token}"));
            }
            let mut answer = request.send(body).expect("an answer");
            let offset = answer
                .headers()
                .get("x-wasmod-offset")
                .and_then(|value| value.to_str().ok()?.parse().ok());
            let text = answer.body_mut().read_to_string().expect("a body");
            let json = serde_json::from_str(&text).unwrap_or(Value::Null);
            (answer.status().as_u16(), offset, json)
        })
        .await
        .expect("joined")
    }

    /// The subscribe URL, with `query` (`?token=..`) if not empty.
    pub fn url(&self, query: &str) -> String {
        format!("ws://{}/v1/subscribe{query}", self.addr)
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A blocking HTTP client that answers within [`PATIENCE`] and gives every status as an
/// answer, not an error.
pub fn http_agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(PATIENCE))
        .http_status_as_error(false)
        .build()
        .into()
}

/// The two encodings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Binary,
    Json,
}

/// A WebSocket client that reads every server message as JSON (binary messages are decoded,
/// then rendered as JSON with their rows as byte arrays).
pub struct Client {
    pub encoding: Encoding,
    socket: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

/// How a client connects.
#[derive(Default)]
pub struct Connect<'a> {
    pub query: &'a str,
    pub bearer: Option<&'a str>,
    /// A small receive buffer, for a client that stops reading.
    pub small_buffer: bool,
    /// The loopback address to connect from (`127.0.0.2`, …), for a client of another source
    /// address; the system's choice if `None`.
    pub from: Option<std::net::IpAddr>,
}

impl Client {
    /// Connects to `live` in `encoding`.
    pub async fn connect(live: &Live, encoding: Encoding, how: Connect<'_>) -> Self {
        let mut request = live
            .url(how.query)
            .into_client_request()
            .expect("a request");
        let protocol = match encoding {
            Encoding::Binary => BIN_PROTOCOL,
            Encoding::Json => JSON_PROTOCOL,
        };
        let headers = request.headers_mut();
        headers.insert(
            "Sec-WebSocket-Protocol",
            protocol.parse().expect("a header"),
        );
        if let Some(token) = how.bearer {
            let value = format!("Bearer {token}").parse().expect("a header");
            headers.insert("Authorization", value);
        }
        let socket = TcpSocket::new_v4().expect("a socket");
        if how.small_buffer {
            socket.set_recv_buffer_size(4096).expect("a small buffer");
        }
        if let Some(from) = how.from {
            socket
                .bind(std::net::SocketAddr::new(from, 0))
                .expect("a loopback address");
        }
        let stream = socket.connect(live.addr).await.expect("connected");
        // A request sent right after another is not held back for the first one's ACK.
        stream.set_nodelay(true).expect("no delay");
        let (socket, _) = tokio_tungstenite::client_async(request, MaybeTlsStream::Plain(stream))
            .await
            .expect("the handshake");
        Self { encoding, socket }
    }

    /// Sends a JSON message, or its binary twin: `args` of calls as a JSON array of strings
    /// in JSON, encoded as the product of those strings in binary.
    pub async fn send(&mut self, message: Value) {
        self.try_send(message).await.expect("sent");
    }

    /// [`Client::send`], or how it failed (a socket the server closed, say).
    pub async fn try_send(
        &mut self,
        message: Value,
    ) -> Result<(), tokio_tungstenite::tungstenite::Error> {
        let frame = match self.encoding {
            Encoding::Json => Message::text(message.to_string()),
            Encoding::Binary => Message::binary(binary(&message).to_bytes()),
        };
        self.socket.send(frame).await
    }

    /// Sends a raw frame.
    pub async fn send_frame(&mut self, frame: Message) {
        self.try_send_frame(frame).await.expect("sent");
    }

    /// Sends a raw frame, or fails as the socket does (closed by the server, say).
    pub async fn try_send_frame(
        &mut self,
        frame: Message,
    ) -> Result<(), tokio_tungstenite::tungstenite::Error> {
        self.socket.send(frame).await
    }

    /// The next message, as JSON; panics after [`PATIENCE`] or on a close.
    pub async fn recv(&mut self) -> Value {
        match self.next(PATIENCE).await {
            Some(Ok(message)) => message,
            Some(Err(close)) => panic!("closed: {close:?}"),
            None => panic!("no message within {PATIENCE:?}"),
        }
    }

    /// The next message of kind `kind` (skipping others), its payload.
    pub async fn recv_kind(&mut self, kind: &str) -> Value {
        loop {
            let message = self.recv().await;
            if let Some(payload) = message.get(kind) {
                return payload.clone();
            }
        }
    }

    /// The next message within `wait`: `None` if none came, `Err` with the close code and
    /// reason if the socket closed.
    pub async fn next(&mut self, wait: Duration) -> Option<Result<Value, (u16, String)>> {
        loop {
            let frame = tokio::time::timeout(wait, self.socket.next()).await.ok()?;
            let frame = match frame {
                None => return Some(Err((CloseCode::Abnormal.into(), String::new()))),
                Some(Err(error)) => {
                    return Some(Err((CloseCode::Abnormal.into(), error.to_string())))
                }
                Some(Ok(frame)) => frame,
            };
            return Some(Ok(match frame {
                Message::Text(text) => serde_json::from_str(&text).expect("JSON"),
                Message::Binary(bytes) => {
                    let message = BinaryServerMessage::from_bytes(&bytes).expect("a message");
                    binary_json(&message)
                }
                Message::Close(close) => {
                    let (code, reason) = close
                        .map(|close| (close.code.into(), close.reason.to_string()))
                        .unwrap_or((CloseCode::Status.into(), String::new()));
                    return Some(Err((code, reason)));
                }
                _ => continue,
            }));
        }
    }

    /// The next binary frame's bytes, as they came (compression byte included), skipping
    /// other frames; panics after [`PATIENCE`].
    pub async fn binary_frame(&mut self) -> Vec<u8> {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let frame = tokio::time::timeout_at(deadline, self.socket.next())
                .await
                .expect("a frame in time")
                .expect("the socket is open")
                .expect("a frame");
            match frame {
                Message::Binary(bytes) => return bytes.to_vec(),
                Message::Close(close) => panic!("closed: {close:?}"),
                _ => continue,
            }
        }
    }

    /// The raw bytes of the next binary `TransactionUpdate`, skipping other messages.
    pub async fn update_frame(&mut self) -> Vec<u8> {
        loop {
            let frame = self.binary_frame().await;
            let message = BinaryServerMessage::from_bytes(&frame).expect("a message");
            if matches!(
                message,
                wasmod_protocol::ws::ServerMessage::TransactionUpdate(_)
            ) {
                return frame;
            }
        }
    }

    /// Reads until the socket closes, within [`PATIENCE`]: its close code and reason.
    pub async fn closed(&mut self) -> (u16, String) {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.next(left).await {
                Some(Ok(_)) => continue,
                Some(Err(close)) => return close,
                None => panic!("not closed within {PATIENCE:?}"),
            }
        }
    }

    /// Sends a ping and waits (within [`PATIENCE`]) for its pong, skipping other messages.
    pub async fn ping(&mut self, payload: &[u8]) {
        if let Err(close) = self.ping_or_close(payload).await {
            panic!("closed instead of a pong: {close:?}");
        }
    }

    /// Sends a ping and waits (within [`PATIENCE`]) for its pong, or for the socket's close
    /// (its code and reason), skipping other messages.
    pub async fn ping_or_close(&mut self, payload: &[u8]) -> Result<(), (u16, String)> {
        let ping = Message::Ping(payload.to_vec().into());
        self.socket.send(ping).await.expect("sent");
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let frame = tokio::time::timeout_at(deadline, self.socket.next())
                .await
                .expect("a pong in time")
                .expect("the socket is open")
                .expect("a frame");
            match frame {
                Message::Pong(answer) => {
                    assert_eq!(&answer[..], payload);
                    return Ok(());
                }
                Message::Close(close) => {
                    return Err(close
                        .map(|close| (close.code.into(), close.reason.to_string()))
                        .unwrap_or((CloseCode::Status.into(), String::new())));
                }
                _ => {}
            }
        }
    }

    /// Closes the socket cleanly.
    pub async fn close(mut self) {
        let _ = self.socket.close(None).await;
        while let Ok(Some(Ok(_))) = tokio::time::timeout(PATIENCE, self.socket.next()).await {}
    }

    /// The identity token message, first of every connection: `(identity, token, connection id)`.
    pub async fn hello(&mut self) -> (String, String, String) {
        let hello = self.recv_kind("IdentityToken").await;
        let field = |name: &str| hello[name].as_str().expect(name).to_owned();
        (field("identity"), field("token"), field("connection_id"))
    }
}

/// Whether the JSON rows `rows` hold one whose text (in JSON) or bytes (in binary) include
/// `text`.
pub fn has_text(rows: &Value, text: &str) -> bool {
    rows.as_array().expect("rows").iter().any(|row| match row {
        Value::Object(row) => row.get("text").and_then(Value::as_str) == Some(text),
        Value::Array(bytes) => {
            let bytes: Vec<u8> = bytes
                .iter()
                .map(|byte| byte.as_u64().unwrap_or(0) as u8)
                .collect();
            bytes
                .windows(text.len())
                .any(|window| window == text.as_bytes())
        }
        _ => false,
    })
}

/// `{"Subscribe": ..}`.
pub fn subscribe(query_set_id: u32, queries: &[&str]) -> Value {
    json!({"Subscribe": {"query_set_id": query_set_id, "queries": queries, "resume_from": null}})
}

/// `{"Subscribe": ..}` of a client that resumes from offset `resume_from`.
pub fn resubscribe(query_set_id: u32, queries: &[&str], resume_from: u64) -> Value {
    json!({"Subscribe": {"query_set_id": query_set_id, "queries": queries, "resume_from": resume_from}})
}

/// `{"OneOffQuery": ..}`.
pub fn one_off(request_id: u32, query: &str) -> Value {
    json!({"OneOffQuery": {"request_id": request_id, "query": query}})
}

/// `{"WaitFor": ..}`.
pub fn wait_for(request_id: u32, offset: u64) -> Value {
    json!({"WaitFor": {"request_id": request_id, "offset": offset}})
}

/// `{"CallReducer": ..}` with string arguments.
pub fn call_reducer(request_id: u32, name: &str, args: &[&str]) -> Value {
    call("CallReducer", request_id, name, args)
}

/// `{kind: ..}`, a call (`CallReducer`, `CallProcedure`, `CallView`) with string arguments.
pub fn call(kind: &str, request_id: u32, name: &str, args: &[&str]) -> Value {
    json!({kind: {"request_id": request_id, "name": name, "args": args}})
}

/// The binary twin of a JSON client message.
fn binary(message: &Value) -> BinaryClientMessage {
    let (kind, body) = message
        .as_object()
        .and_then(|object| object.iter().next())
        .expect("{kind: body}");
    let number = |name: &str| body[name].as_u64().expect(name) as u32;
    let text = |name: &str| body[name].as_str().expect(name).to_owned();
    let args = || {
        let strings: Vec<String> = body["args"]
            .as_array()
            .expect("args")
            .iter()
            .map(|arg| arg.as_str().expect("a string argument").to_owned())
            .collect();
        strings.iter().flat_map(to_vec).collect()
    };
    match kind.as_str() {
        "Subscribe" => BinaryClientMessage::Subscribe {
            query_set_id: number("query_set_id"),
            queries: serde_json::from_value(body["queries"].clone()).expect("queries"),
            resume_from: body["resume_from"].as_u64(),
        },
        "OneOffQuery" => BinaryClientMessage::OneOffQuery {
            request_id: number("request_id"),
            query: text("query"),
        },
        "Unsubscribe" => BinaryClientMessage::Unsubscribe {
            query_set_id: number("query_set_id"),
        },
        "WaitFor" => BinaryClientMessage::WaitFor {
            request_id: number("request_id"),
            offset: body["offset"].as_u64().expect("offset"),
        },
        "CallReducer" => BinaryClientMessage::CallReducer {
            request_id: number("request_id"),
            name: text("name"),
            args: args(),
        },
        "CallProcedure" => BinaryClientMessage::CallProcedure {
            request_id: number("request_id"),
            name: text("name"),
            args: args(),
        },
        "CallView" => BinaryClientMessage::CallView {
            request_id: number("request_id"),
            name: text("name"),
            args: args(),
        },
        other => panic!("no binary twin for {other}"),
    }
}

/// A binary server message as JSON: rows as arrays of byte arrays, for the tests to look at.
fn binary_json(message: &BinaryServerMessage) -> Value {
    use wasmod_protocol::ws::{RowList, ServerMessage, TableRows};
    let rows = |list: &RowList| -> Value { list.iter().map(|row| row.to_vec()).collect() };
    let hex = |bytes: &[u8]| -> String { bytes.iter().map(|byte| format!("{byte:02x}")).collect() };
    let listed = |tables: &[TableRows<RowList>]| -> Vec<Value> {
        tables
            .iter()
            .map(|table| json!({"table": table.table, "rows": rows(&table.rows)}))
            .collect()
    };
    match message {
        ServerMessage::IdentityToken {
            identity,
            token,
            connection_id,
        } => json!({"IdentityToken": {
            "identity": hex(&identity.to_bytes()),
            "token": token,
            "connection_id": hex(&connection_id.to_bytes()),
        }}),
        ServerMessage::SubscribeApplied {
            query_set_id,
            offset,
            tables,
            deletes,
            resumed,
        } => json!({"SubscribeApplied": {
            "query_set_id": query_set_id,
            "offset": offset,
            "tables": listed(tables),
            "deletes": listed(deletes),
            "resumed": resumed,
        }}),
        ServerMessage::SubscribeRows {
            query_set_id,
            tables,
            deletes,
        } => json!({"SubscribeRows": {
            "query_set_id": query_set_id,
            "tables": listed(tables),
            "deletes": listed(deletes),
        }}),
        ServerMessage::TransactionUpdate(update) => json!({"TransactionUpdate": {
            "offset": update.offset,
            "request_id": update.request_id,
            "status": format!("{:?}", update.status),
            "entry_point": {"name": update.entry_point.name},
            "changes": update.changes.iter().map(|set| json!({
                "query_set_id": set.query_set_id,
                "tables": set.tables.iter().map(|table| json!({
                    "table": table.table,
                    "inserts": rows(&table.inserts),
                    "deletes": rows(&table.deletes),
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        }}),
        ServerMessage::CallResult {
            request_id,
            offset,
            result,
        } => json!({"CallResult": {
            "request_id": request_id,
            "offset": offset,
            "result": match result {
                Ok(bytes) => json!({"ok": bytes}),
                Err(error) => json!({"err": {"code": error.code.as_str(), "message": error.message}}),
            },
        }}),
        ServerMessage::SubscriptionError {
            query_set_id,
            message,
        } => json!({"SubscriptionError": {"query_set_id": query_set_id, "message": message}}),
        ServerMessage::CaughtUp { request_id, offset } => {
            json!({"CaughtUp": {"request_id": request_id, "offset": offset}})
        }
        ServerMessage::OneOffQueryResult { request_id, result } => json!({"OneOffQueryResult": {
            "request_id": request_id,
            "result": match result {
                Ok(tables) => json!({"ok": tables.iter().map(|table| json!({
                    "table": table.table,
                    "rows": rows(&table.rows),
                })).collect::<Vec<_>>()}),
                Err(message) => json!({"err": message}),
            },
        }}),
        other => panic!("unexpected message {other:?}"),
    }
}
