//! A WebSocket frame as the node reads and writes it, whatever library carries the socket.
//!
//! The node decides what a socket says (its messages, their encoding and compression, when it
//! pings and why it closes) but does not own the socket: the transport (the server's axum
//! WebSocket) turns its frames into [`Frame`]s for the reader ([`super::socket::serve`]) and
//! the writer's [`Frame`]s into its own. So the node depends on no WebSocket library, and the
//! bytes a broadcast encodes once are handed to every member's socket as they are (a
//! [`Bytes`] clone, not a copy).

use super::close::{Close, MAX_REASON};
use bytes::Bytes;

/// One WebSocket frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A text frame: UTF-8 bytes (the JSON protocol's messages).
    Text(Bytes),
    /// A binary frame (the binary protocol's messages).
    Binary(Bytes),
    /// A ping, with its payload.
    Ping(Bytes),
    /// A pong, with its payload.
    Pong(Bytes),
    /// A close frame, with its code and reason if it has them.
    Close(Option<Close>),
}

impl Frame {
    /// The close frame of `close`, its reason cut at a character boundary to fit.
    pub fn closing(close: &Close) -> Self {
        let mut end = close.reason.len().min(MAX_REASON);
        while !close.reason.is_char_boundary(end) {
            end -= 1;
        }
        Self::Close(Some(Close::new(close.code, &close.reason[..end])))
    }

    /// The bytes of the frame's payload (a close frame's count as none).
    pub fn len(&self) -> usize {
        match self {
            Self::Text(bytes) | Self::Binary(bytes) | Self::Ping(bytes) | Self::Pong(bytes) => {
                bytes.len()
            }
            Self::Close(_) => 0,
        }
    }

    /// Whether the frame's payload is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
