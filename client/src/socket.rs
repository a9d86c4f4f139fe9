//! The client's WebSocket, a layer below [`Client`](crate::Client): a [`Connection`] opens
//! the socket of a server's `GET /v1/subscribe`, sends client messages and yields the server's
//! messages decoded, and nothing more (no cache, no calls waiting, no reconnection).
//!
//! It is public because it is the tree's one WebSocket client: the [`Client`](crate::Client)'s
//! connection task is built on it, and so are the `wasmod` command (`subscribe` and `sql`
//! print the server's JSON messages as it sent them) and the load generator (which reads
//! every message of thousands of sockets and must not pay for a cache). One handshake, one
//! set of limits and one reading of frames and of refused upgrades, whoever connects.
//!
//! - A connection speaks one [`Subprotocol`] of `docs/protocol.md`, its type parameter:
//!   [`Binary`] (`v1.bin.wasmod`, whose frames may be compressed: a [`Binary`] reader keeps
//!   its decompressor from one frame to the next) or [`Json`] (`v1.json.wasmod`, whose
//!   messages come with their text).
//! - [`Connection::open`] does the handshake and reads the first message, the server's
//!   `IdentityToken` ([`Session`]), so that a connection starts accepted (its
//!   `client_connected` ran); what can go wrong before that is an [`OpenError`] that says
//!   which step failed (a refused upgrade carries the server's status and error).
//! - [`Connection::next`] is the next server message or the socket's close ([`Received`]);
//!   pings are answered as frames are read. [`Connection::split`] gives a [`Sender`] and a
//!   [`Receiver`], for one task to send while another reads.
//!
//! The socket itself is the platform's (`platform/`). The compression a client asks for is a
//! query parameter of the URL, so a reconnection asks for it again.

use crate::error::Error;
use crate::platform::{self, Incoming, Reader, Writer};
pub use crate::transport::{Closed, OpenError, Payload};
use bytes::Bytes;
use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;
use wasmod_abi::{ConnectionId, Identity};
use wasmod_protocol::ws::compression::Decompressor;
use wasmod_protocol::ws::{
    BinaryClientMessage, BinaryServerMessage, Compression, JsonClientMessage, JsonServerMessage,
    ServerMessage, BIN_PROTOCOL, JSON_PROTOCOL,
};

/// How long the handshake and the first message may take, unless the caller says otherwise:
/// the [`Client`](crate::Client)'s bound.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long [`Connection::close`] waits for the server to answer its close frame.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// The largest binary message (and frame) the client reads, compressed or once decompressed:
/// four times the most a default server queues for one client (`outbound_bytes`, 16 MiB; a
/// subscription's rows come in parts of 1 MiB), so that a server configured for larger
/// commits still fits. A larger one ends the connection.
pub(crate) const MAX_MESSAGE: usize = 64 << 20;

/// The largest JSON message (and frame) the client reads: the server bounds the rows it
/// queues for a client by their binary size, and the same rows in JSON are a few times
/// larger, so the bound is well above the binary one.
const MAX_JSON_MESSAGE: usize = 256 << 20;

/// Who a connection runs as: the server's `IdentityToken`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    /// The connection's identity.
    pub identity: Identity,
    /// A token for it, freshly issued: keep it to connect again as the same identity.
    pub token: String,
    /// This connection's id (a new one on each connection).
    pub connection_id: ConnectionId,
}

impl Session {
    /// The session `message` announces, if it is an `IdentityToken`.
    fn of<Rows, Value>(message: &ServerMessage<Rows, Value>) -> Option<Self> {
        match message {
            ServerMessage::IdentityToken {
                identity,
                token,
                connection_id,
            } => Some(Self {
                identity: *identity,
                token: token.clone(),
                connection_id: *connection_id,
            }),
            _ => None,
        }
    }
}

mod sealed {
    /// Keeps [`Subprotocol`](super::Subprotocol) to the protocol's own two, so that it can
    /// change with them.
    pub trait Sealed {}
}

/// One of the protocol's two subprotocols: its name, its limit, and how its messages become
/// frames and frames messages. A value of it is a connection's reader state.
pub trait Subprotocol: sealed::Sealed + Default + Send + 'static {
    /// Its name, asked for in `Sec-WebSocket-Protocol` (and which the server must agree to).
    const NAME: &'static str;
    /// The largest message (and frame) read, compressed or not.
    const MAX_MESSAGE: usize;
    /// A client message.
    type ClientMessage;
    /// A server message, as a connection yields it.
    type Message: fmt::Debug;

    /// `message` as the payload of one frame.
    fn encode(message: &Self::ClientMessage) -> Payload;

    /// The server message in `payload`; an [`Error::Protocol`] for a frame of the other kind
    /// or bytes that are not a message.
    fn decode(&mut self, payload: Payload) -> Result<Self::Message, Error>;

    /// The session `message` announces, if it is an `IdentityToken`.
    fn session(message: &Self::Message) -> Option<Session>;

    /// The name of `message`'s kind (`IdentityToken`, `TransactionUpdate`, ...), for errors
    /// about a message that was not expected.
    fn kind(message: &Self::Message) -> &'static str;
}

/// The binary subprotocol, `v1.bin.wasmod`: messages in the value encoding, each frame's
/// first byte saying how it is compressed (any of the three is read, whatever the URL asked
/// for). Its reader state is the decompressor, kept from one frame to the next.
#[derive(Debug)]
pub struct Binary {
    decompressor: Decompressor,
}

impl Default for Binary {
    /// Refusing messages of more than [`Binary::MAX_MESSAGE`](Subprotocol::MAX_MESSAGE) bytes
    /// once decompressed.
    fn default() -> Self {
        Self {
            decompressor: Decompressor::new(MAX_MESSAGE as u64),
        }
    }
}

impl sealed::Sealed for Binary {}

impl Subprotocol for Binary {
    const NAME: &'static str = BIN_PROTOCOL;
    const MAX_MESSAGE: usize = MAX_MESSAGE;
    type ClientMessage = BinaryClientMessage;
    type Message = BinaryServerMessage;

    fn encode(message: &BinaryClientMessage) -> Payload {
        Payload::Binary(message.to_bytes().into())
    }

    /// The message's row lists borrow the frame's buffer (or, compressed, the buffer it
    /// decompressed to): no row is copied.
    fn decode(&mut self, payload: Payload) -> Result<BinaryServerMessage, Error> {
        match payload {
            Payload::Binary(bytes) => Ok(BinaryServerMessage::from_frame(
                &bytes,
                &mut self.decompressor,
            )?),
            Payload::Text(_) => Err(Error::Protocol(
                "a text frame on the binary protocol".into(),
            )),
        }
    }

    fn session(message: &BinaryServerMessage) -> Option<Session> {
        Session::of(message)
    }

    fn kind(message: &BinaryServerMessage) -> &'static str {
        message.kind()
    }
}

/// The JSON subprotocol, `v1.json.wasmod`: one message per text frame, rows and values in the
/// JSON mapping. Its messages come with their text ([`JsonMessage`]), for tools that pass
/// them on as the server wrote them.
#[derive(Debug, Default)]
pub struct Json;

/// A message of the JSON subprotocol.
#[derive(Debug)]
pub struct JsonMessage {
    /// The text frame, as the server sent it.
    pub text: String,
    /// The frame, parsed.
    pub message: JsonServerMessage,
}

impl sealed::Sealed for Json {}

impl Subprotocol for Json {
    const NAME: &'static str = JSON_PROTOCOL;
    const MAX_MESSAGE: usize = MAX_JSON_MESSAGE;
    type ClientMessage = JsonClientMessage;
    type Message = JsonMessage;

    fn encode(message: &JsonClientMessage) -> Payload {
        Payload::Text(message.to_json())
    }

    fn decode(&mut self, payload: Payload) -> Result<JsonMessage, Error> {
        match payload {
            Payload::Text(text) => match JsonServerMessage::from_json(&text) {
                Ok(message) => Ok(JsonMessage { text, message }),
                Err(error) => Err(Error::Protocol(format!("{error}: {text}"))),
            },
            Payload::Binary(_) => Err(Error::Protocol(
                "a binary frame on the JSON protocol".into(),
            )),
        }
    }

    fn session(message: &JsonMessage) -> Option<Session> {
        Session::of(&message.message)
    }

    fn kind(message: &JsonMessage) -> &'static str {
        message.message.kind()
    }
}

/// What a connection reads next.
#[derive(Debug)]
pub enum Received<M> {
    /// A server message.
    Message(M),
    /// The socket is closed; every later read says so again.
    Closed(Closed),
}

/// An open connection, past its `IdentityToken`, speaking subprotocol `P`. Dropping it drops
/// the socket; [`Connection::close`] closes it cleanly.
pub struct Connection<P: Subprotocol = Binary> {
    sender: Sender<P>,
    receiver: Receiver<P>,
    session: Session,
}

/// The sending half of a [`Connection`].
pub struct Sender<P: Subprotocol = Binary> {
    writer: Writer,
    protocol: PhantomData<fn(P)>,
}

/// The reading half of a [`Connection`]: the socket, and `P`'s reader state.
pub struct Receiver<P: Subprotocol = Binary> {
    reader: Reader,
    decoder: P,
    /// How the socket closed, once it did.
    closed: Option<Closed>,
}

impl<P: Subprotocol> fmt::Debug for Connection<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("subprotocol", &P::NAME)
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl<P: Subprotocol> fmt::Debug for Sender<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender")
            .field("subprotocol", &P::NAME)
            .finish_non_exhaustive()
    }
}

impl<P: Subprotocol> fmt::Debug for Receiver<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver")
            .field("subprotocol", &P::NAME)
            .field("closed", &self.closed)
            .finish_non_exhaustive()
    }
}

impl<P: Subprotocol> Connection<P> {
    /// Opens the socket at `url` (the server's `ws://host:port/v1/subscribe`, with its
    /// `compression` parameter if any) as `token`'s identity (a new one without), and reads
    /// its `IdentityToken`, all within `timeout` (the SDK's is [`HANDSHAKE_TIMEOUT`]).
    /// A `wss://` socket trusts the platform's root certificates ([`Tls`](crate::Tls)'s
    /// default); [`open_with_tls`](Self::open_with_tls) says what else to trust.
    pub async fn open(
        url: &str,
        token: Option<&str>,
        timeout: Duration,
    ) -> Result<Self, OpenError> {
        Self::open_trusting(url, token, timeout, &platform::Tls::default()).await
    }

    /// [`open`](Self::open), a `wss://` socket trusting `tls`.
    #[cfg(not(target_arch = "wasm32"))]
    pub async fn open_with_tls(
        url: &str,
        token: Option<&str>,
        timeout: Duration,
        tls: &crate::Tls,
    ) -> Result<Self, OpenError> {
        Self::open_trusting(url, token, timeout, tls).await
    }

    pub(crate) async fn open_trusting(
        url: &str,
        token: Option<&str>,
        timeout: Duration,
        tls: &platform::Tls,
    ) -> Result<Self, OpenError> {
        platform::timeout(timeout, Self::open_unbounded(url, token, tls))
            .await
            .ok_or(OpenError::TimedOut(timeout))?
    }

    async fn open_unbounded(
        url: &str,
        token: Option<&str>,
        tls: &platform::Tls,
    ) -> Result<Self, OpenError> {
        let (writer, reader) = platform::connect(url, token, P::NAME, P::MAX_MESSAGE, tls).await?;
        let mut receiver = Receiver {
            reader,
            decoder: P::default(),
            closed: None,
        };
        let first = match receiver.next().await {
            Ok(Received::Message(message)) => message,
            Ok(Received::Closed(closed)) => return Err(OpenError::Closed(closed)),
            Err(error) => return Err(OpenError::FirstMessage(error.to_string())),
        };
        let session = P::session(&first).ok_or_else(|| {
            OpenError::FirstMessage(format!(
                "the first message was not IdentityToken but {}",
                P::kind(&first)
            ))
        })?;
        Ok(Self {
            sender: Sender {
                writer,
                protocol: PhantomData,
            },
            receiver,
            session,
        })
    }

    /// Whom the connection runs as.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Sends `message`; [`Error::Disconnected`] if the socket is gone.
    pub async fn send(&mut self, message: &P::ClientMessage) -> Result<(), Error> {
        self.sender.send(message).await
    }

    /// The next server message, or the socket's close (see [`Receiver::next`]).
    pub async fn next(&mut self) -> Result<Received<P::Message>, Error> {
        self.receiver.next().await
    }

    /// The connection's two halves, for one task to send while another reads; the socket
    /// stays open until both are dropped.
    pub fn split(self) -> (Sender<P>, Receiver<P>) {
        (self.sender, self.receiver)
    }

    /// Closes the socket with a normal close frame (`1000`) and waits (at most 5 s) for the
    /// server's answer, so that the server has seen a clean close when it returns (a command
    /// about to exit wants that); the messages that come meanwhile are dropped. Not to wait,
    /// [`split`](Self::split) and [`Sender::close`].
    pub async fn close(mut self) {
        self.sender.close().await;
        let answered = async { while let Ok(Received::Message(_)) = self.receiver.next().await {} };
        if platform::timeout(CLOSE_GRACE, answered).await.is_none() {
            tracing::warn!("the server did not answer the close frame");
        }
    }
}

impl Connection<Binary> {
    /// Sends a binary message's `frame` as it is (see [`Sender::send_frame`]).
    pub async fn send_frame(&mut self, frame: Bytes) -> Result<(), Error> {
        self.sender.send_frame(frame).await
    }
}

impl<P: Subprotocol> Sender<P> {
    /// Sends `message` in one frame; [`Error::Disconnected`] if the socket is gone.
    pub async fn send(&mut self, message: &P::ClientMessage) -> Result<(), Error> {
        self.writer.send(P::encode(message)).await
    }

    /// Sends a normal close frame (`1000`), without waiting for the server's answer (its
    /// close frame is read by the [`Receiver`], if it still reads).
    pub async fn close(&mut self) {
        self.writer.close().await;
    }
}

impl Sender<Binary> {
    /// Sends `frame`, a binary message already encoded (a call's frame, written with its
    /// arguments in one pass by [`BinaryClientMessage::call_frame`]), as it is.
    pub async fn send_frame(&mut self, frame: Bytes) -> Result<(), Error> {
        self.writer.send(Payload::Binary(frame)).await
    }
}

impl<P: Subprotocol> Receiver<P> {
    /// The next server message, or the socket's close (and the same close on every later
    /// read); an error for a frame that is not a message of `P`, after which the connection
    /// should be dropped. Pings are answered as frames are read. Cancel-safe: a message is
    /// never lost by dropping the future before it is ready.
    pub async fn next(&mut self) -> Result<Received<P::Message>, Error> {
        loop {
            if let Some(closed) = &self.closed {
                return Ok(Received::Closed(closed.clone()));
            }
            match self.reader.next().await {
                Incoming::Data(payload) => {
                    return self.decoder.decode(payload).map(Received::Message);
                }
                Incoming::Closed(closed) => self.closed = Some(closed),
                Incoming::Control => {}
                Incoming::Malformed(why) => return Err(Error::Protocol(why)),
            }
        }
    }
}

/// The subscribe endpoint under `base`: `http(s)://` becomes `ws(s)://`, `/v1/subscribe` is
/// appended unless the URL already ends with it, then the `compression` parameter unless it
/// is none.
pub(crate) fn subscribe_url(base: &str, compression: Compression) -> Result<String, Error> {
    let base = base.trim_end_matches('/');
    let url = if let Some(rest) = base.strip_prefix("http://") {
        format!("ws://{rest}")
    } else if let Some(rest) = base.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if base.starts_with("ws://") || base.starts_with("wss://") {
        base.to_owned()
    } else {
        return Err(Error::Connect(format!(
            "`{base}` is not an http, https, ws or wss URL"
        )));
    };
    let endpoint = if url.ends_with("/v1/subscribe") {
        url
    } else {
        format!("{url}/v1/subscribe")
    };
    Ok(match compression {
        Compression::None => endpoint,
        compression => format!("{endpoint}?compression={}", compression.name()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_protocol::ws::{RowList, TableRows};

    fn applied() -> BinaryServerMessage {
        let rows = RowList::from_rows([&b"row one"[..], b"row two"]).expect("small");
        ServerMessage::SubscribeApplied {
            query_set_id: 3,
            offset: 9,
            tables: vec![TableRows {
                table: "message".into(),
                rows,
            }],
            deletes: vec![],
            resumed: false,
        }
    }

    #[test]
    fn urls_become_the_subscribe_endpoint() {
        let url = |base| subscribe_url(base, Compression::None).ok();
        assert_eq!(
            url("http://127.0.0.1:3000/").as_deref(),
            Some("ws://127.0.0.1:3000/v1/subscribe")
        );
        assert_eq!(
            url("https://example.org").as_deref(),
            Some("wss://example.org/v1/subscribe")
        );
        assert_eq!(
            url("ws://h/v1/subscribe").as_deref(),
            Some("ws://h/v1/subscribe")
        );
        assert!(matches!(
            subscribe_url("ftp://h", Compression::None),
            Err(Error::Connect(_))
        ));
    }

    #[test]
    fn a_compression_is_the_query_parameter() {
        for (compression, query) in [
            (Compression::Brotli, "?compression=brotli"),
            (Compression::Gzip, "?compression=gzip"),
        ] {
            assert_eq!(
                subscribe_url("http://h:1", compression).ok(),
                Some(format!("ws://h:1/v1/subscribe{query}"))
            );
        }
    }

    fn binary(bytes: Vec<u8>) -> Payload {
        Payload::Binary(bytes.into())
    }

    fn decode_frame(frame: Payload) -> Result<BinaryServerMessage, Error> {
        Binary::default().decode(frame)
    }

    #[test]
    fn a_whole_message_decodes() {
        let bytes = applied().to_bytes();
        match decode_frame(binary(bytes)) {
            Ok(message) => assert_eq!(message, applied()),
            other => panic!("not the message: {other:?}"),
        }
    }

    #[test]
    fn one_decoder_reads_frames_of_every_compression_in_turn() {
        let text = b"a row that compresses well, repeated ".repeat(4);
        let rows = RowList::from_rows((0..50).map(|_| &text[..])).expect("small");
        let large = ServerMessage::SubscribeApplied {
            query_set_id: 1,
            offset: 2,
            tables: vec![TableRows {
                table: "message".into(),
                rows,
            }],
            deletes: vec![],
            resumed: false,
        };
        let mut decoder = Binary::default();
        for _ in 0..3 {
            for compression in Compression::ALL {
                let frame = large.to_frame(compression, 0);
                assert_eq!(frame[0], compression.tag());
                match decoder.decode(binary(frame)) {
                    Ok(message) => assert_eq!(message, large),
                    other => panic!("{compression:?}: not the message: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn every_truncation_of_a_message_is_an_error() {
        let bytes = applied().to_bytes();
        for len in 0..bytes.len() {
            let frame = binary(bytes[..len].to_vec());
            assert!(
                matches!(decode_frame(frame), Err(Error::Protocol(_))),
                "{len} of {} bytes",
                bytes.len()
            );
        }
    }

    #[test]
    fn corrupted_messages_are_errors_or_messages_never_panics() {
        let bytes = applied().to_bytes();
        for index in 0..bytes.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut corrupted = bytes.clone();
                corrupted[index] ^= flip;
                let _ = decode_frame(binary(corrupted));
            }
        }
        let mut bad_tag = bytes.clone();
        bad_tag[1] = 0xee;
        assert!(matches!(
            decode_frame(binary(bad_tag)),
            Err(Error::Protocol(_))
        ));
        let mut compressed = bytes;
        compressed[0] = 1;
        assert!(matches!(
            decode_frame(binary(compressed)),
            Err(Error::Protocol(_))
        ));
    }

    #[test]
    fn json_messages_keep_their_text_and_other_frames_are_errors() {
        let text = r#"{"SubscribeApplied":{"query_set_id":3,"offset":9,"tables":[],"deletes":[],"resumed":false}}"#;
        let decoded = Json
            .decode(Payload::Text(text.to_owned()))
            .expect("a message");
        assert_eq!(decoded.text, text);
        assert!(matches!(
            decoded.message,
            ServerMessage::SubscribeApplied {
                query_set_id: 3,
                offset: 9,
                ..
            }
        ));
        assert!(matches!(
            Json.decode(Payload::Text("{\"Nothing\":1}".into())),
            Err(Error::Protocol(why)) if why.contains("Nothing")
        ));
        assert!(matches!(
            Json.decode(Payload::Binary(applied().to_bytes().into())),
            Err(Error::Protocol(_))
        ));
    }

    #[test]
    fn a_text_frame_is_an_error() {
        assert!(matches!(
            decode_frame(Payload::Text(String::new())),
            Err(Error::Protocol(_))
        ));
    }
}
