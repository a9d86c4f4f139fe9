//! Opening the WebSocket and reading its frames as messages.
//!
//! Kept apart from the connection task so that what can go wrong on the wire (a refused
//! handshake, a first message that is not `IdentityToken`, a frame that is not a message)
//! becomes an [`Error`] in one place, and so that the frame decoding can be tested without a
//! socket.
//!
//! The socket itself is the platform's (`platform/`); a message may be at most
//! [`MAX_MESSAGE`] bytes, compressed or not. The compression the client chose is a query
//! parameter of the URL, so a reconnection asks for it again; whatever a frame's compression
//! byte says, its [`FrameDecoder`] reads it, with state kept from one frame to the next.

use crate::error::Error;
pub(crate) use crate::platform::Socket;
use crate::platform::{self, Incoming};
use std::time::Duration;
use wasmod_abi::{ConnectionId, Identity};
use wasmod_protocol::ws::compression::Decompressor;
use wasmod_protocol::ws::{BinaryClientMessage, BinaryServerMessage, Compression, ServerMessage};

/// How long the handshake and the first message may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest message (and frame) the client reads, compressed or once decompressed: four
/// times the most a default server queues for one client (`outbound_bytes`, 16 MiB; a
/// subscription's rows come in parts of 1 MiB), so that a server configured for larger
/// commits still fits. A larger one ends the connection.
pub(crate) const MAX_MESSAGE: usize = 64 << 20;

/// Who the connection runs as: the server's `IdentityToken`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Session {
    /// The connection's identity.
    pub(crate) identity: Identity,
    /// A token for it, freshly issued: keep it to connect again as the same identity.
    pub(crate) token: String,
    /// This connection's id (a new one on each reconnection).
    pub(crate) connection_id: ConnectionId,
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

/// Opens the binary protocol's WebSocket at `url` (a [`subscribe_url`]) as `token`'s identity
/// (a new one without), and reads the connection's `IdentityToken`.
pub(crate) async fn open(url: &str, token: Option<&str>) -> Result<(Socket, Session), Error> {
    platform::timeout(HANDSHAKE_TIMEOUT, open_unbounded(url, token))
        .await
        .ok_or_else(|| Error::Connect(format!("no answer within {HANDSHAKE_TIMEOUT:?}")))?
}

async fn open_unbounded(url: &str, token: Option<&str>) -> Result<(Socket, Session), Error> {
    let mut socket = Socket::connect(url, token).await?;
    loop {
        let frame = socket
            .next()
            .await
            .ok_or_else(|| Error::Connect("the socket ended before the first message".into()))?;
        match FrameDecoder::default().decode(frame) {
            Ok(Frame::Message(ServerMessage::IdentityToken {
                identity,
                token,
                connection_id,
            })) => {
                let session = Session {
                    identity,
                    token,
                    connection_id,
                };
                return Ok((socket, session));
            }
            Ok(Frame::Message(other)) => {
                return Err(Error::Connect(format!(
                    "the first message was not IdentityToken: {other:?}"
                )))
            }
            Ok(Frame::Control) => {}
            Ok(Frame::Closed(reason)) => {
                return Err(Error::Connect(format!(
                    "the server closed the socket: {reason}"
                )))
            }
            Err(error) => return Err(Error::Connect(error.to_string())),
        }
    }
}

/// Sends one client message.
pub(crate) async fn send(socket: &mut Socket, message: &BinaryClientMessage) -> Result<(), Error> {
    socket.send(message.to_bytes()).await
}

/// A frame as the connection sees it.
#[derive(Debug)]
pub(crate) enum Frame {
    /// A server message.
    Message(BinaryServerMessage),
    /// A ping or pong (answered by the library) or a raw frame: nothing to do.
    Control,
    /// The server closed the socket, for this reason (its code and text).
    Closed(String),
}

/// Reads frames as messages, keeping the decompressor's state from one frame to the next.
#[derive(Debug)]
pub(crate) struct FrameDecoder {
    decompressor: Decompressor,
}

impl Default for FrameDecoder {
    /// Refusing messages of more than [`MAX_MESSAGE`] bytes once decompressed.
    fn default() -> Self {
        Self {
            decompressor: Decompressor::new(MAX_MESSAGE as u64),
        }
    }
}

impl FrameDecoder {
    /// What `frame` is; an error for a text frame (the binary protocol has none) or bytes
    /// that are not a server message.
    pub(crate) fn decode(&mut self, frame: Incoming) -> Result<Frame, Error> {
        match frame {
            Incoming::Binary(bytes) => Ok(Frame::Message(BinaryServerMessage::from_frame(
                &bytes,
                &mut self.decompressor,
            )?)),
            Incoming::Text => Err(Error::Protocol(
                "a text frame on the binary protocol".into(),
            )),
            Incoming::Closed(reason) => Ok(Frame::Closed(reason)),
            Incoming::Control => Ok(Frame::Control),
        }
    }
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

    fn binary(bytes: Vec<u8>) -> Incoming {
        Incoming::Binary(bytes.into())
    }

    fn decode_frame(frame: Incoming) -> Result<Frame, Error> {
        FrameDecoder::default().decode(frame)
    }

    #[test]
    fn a_whole_message_decodes() {
        let bytes = applied().to_bytes();
        match decode_frame(binary(bytes)) {
            Ok(Frame::Message(message)) => assert_eq!(message, applied()),
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
        let mut decoder = FrameDecoder::default();
        for _ in 0..3 {
            for compression in Compression::ALL {
                let frame = large.to_frame(compression, 0);
                assert_eq!(frame[0], compression.tag());
                match decoder.decode(binary(frame)) {
                    Ok(Frame::Message(message)) => assert_eq!(message, large),
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
    fn a_text_frame_is_an_error() {
        assert!(matches!(
            decode_frame(Incoming::Text),
            Err(Error::Protocol(_))
        ));
    }
}
