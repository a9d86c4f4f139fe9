//! The WebSocket protocol's messages, in its two encodings.
//!
//! A client picks an encoding by the WebSocket subprotocol it asks for: [`BIN_PROTOCOL`]
//! (`v1.bin.wasmod`), the wasmod value encoding of `docs/abi.md`, compact and what the SDKs
//! speak; or [`JSON_PROTOCOL`] (`v1.json.wasmod`), for clients without the SDK and for people
//! reading the traffic. Both carry the same messages, one Rust type each:
//! [`ClientMessage`] (client → server) and [`ServerMessage`] (server → client).
//!
//! What differs between the encodings is how the module's own values travel, so the message
//! types take them as type parameters:
//!
//! | | binary | JSON |
//! |---|---|---|
//! | a call's arguments | their encoding (`Vec<u8>`) | a JSON array or object, as the HTTP API takes |
//! | rows | a [`RowList`]: encoded rows sharing one buffer | a JSON array of values of the row type |
//! | a returned value | its encoding (`Vec<u8>`) | its JSON |
//!
//! The aliases [`BinaryClientMessage`], [`JsonClientMessage`], [`BinaryServerMessage`] and
//! [`JsonServerMessage`] name the four instances. The JSON of values is the JSON mapping
//! ([`crate::json`]); a binary row list is rendered as JSON from its bytes by
//! [`RowList::to_json`] (or [`RowTypes`], which finds a table's row type by name), without
//! decoding rows into trees.
//!
//! # Framing
//!
//! A binary message is one WebSocket binary frame. A server message starts with a
//! compression byte ([`Compression`]), then the message, compressed or not: `0` none, `1`
//! brotli, `2` gzip ([`compression`]). [`BinaryServerMessage::to_frame`] compresses a message
//! when asked to and when it is at least the given threshold long (and compressing makes it
//! smaller); [`BinaryServerMessage::from_frame`] reads all three, keeping a
//! [`compression::Decompressor`]'s state across frames, and its row lists borrow the frame's
//! buffer. A client message has no compression byte. A JSON message is one text frame:
//! `{"CallReducer": {..}}`, written the way the value mapping writes values (enums as
//! `{"Variant": payload}` or a unit variant's name, results as `{"ok": ..}` or `{"err": ..}`,
//! identities as hex, timestamps as microseconds), except that the protocol's own integers
//! (ids, offsets) are always numbers.
//!
//! Decoding never panics: bytes or text that are not a message give a [`MessageError`].

mod call_frame;
mod client;
pub mod compression;
mod fields;
mod rows;
mod server;

pub use crate::call::CallKind;
pub use client::ClientMessage;
pub use compression::Compression;
pub use rows::{RowList, RowTypes};
pub use server::{
    EntryPointName, QuerySetUpdate, ServerMessage, TableRows, TableUpdate, TransactionUpdate,
    UpdateStatus,
};

use bytes::Bytes;
use serde_json::value::RawValue;
use std::fmt;
use wasmod_abi::encoding::{from_shared, from_slice, to_vec};
use wasmod_abi::DecodeError;

/// The WebSocket subprotocol of binary messages.
pub const BIN_PROTOCOL: &str = "v1.bin.wasmod";

/// The WebSocket subprotocol of JSON messages.
pub const JSON_PROTOCOL: &str = "v1.json.wasmod";

/// A client message of the binary protocol.
pub type BinaryClientMessage = ClientMessage<Vec<u8>>;

/// A client message of the JSON protocol.
pub type JsonClientMessage = ClientMessage<serde_json::Value>;

/// A server message of the binary protocol.
pub type BinaryServerMessage = ServerMessage<RowList, Vec<u8>>;

/// A server message of the JSON protocol.
pub type JsonServerMessage = ServerMessage<Box<RawValue>, Box<RawValue>>;

/// Why bytes or text are not a message.
#[derive(Debug)]
#[non_exhaustive]
pub enum MessageError {
    /// A binary message that does not decode.
    Binary(DecodeError),
    /// A JSON message that does not parse as one.
    Json(serde_json::Error),
    /// A binary server message whose compression byte is none this version knows.
    Compression(u8),
    /// A compressed binary server message that does not decompress.
    Decompression(Compression, std::io::Error),
    /// A binary server message without its compression byte.
    Empty,
}

impl fmt::Display for MessageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Binary(error) => write!(f, "not a binary message: {error}"),
            Self::Json(error) => write!(f, "not a JSON message: {error}"),
            Self::Compression(tag) => write!(f, "unknown compression {tag}"),
            Self::Decompression(compression, error) => write!(
                f,
                "the message does not decompress as {}: {error}",
                compression.name()
            ),
            Self::Empty => {
                f.write_str("an empty message (a server message starts with its compression byte)")
            }
        }
    }
}

impl std::error::Error for MessageError {}

impl BinaryClientMessage {
    /// The message as one binary frame.
    pub fn to_bytes(&self) -> Vec<u8> {
        to_vec(self)
    }

    /// The message in a binary frame.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, MessageError> {
        from_slice(bytes).map_err(MessageError::Binary)
    }
}

impl BinaryServerMessage {
    /// The message as one binary frame, uncompressed: the compression byte `0`, then the
    /// message.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(1 + wasmod_abi::Encode::encoded_len(self));
        out.push(Compression::None.tag());
        wasmod_abi::Encode::encode(self, &mut out);
        out
    }

    /// The message as one binary frame, compressed with `compression` if its encoding is at
    /// least `threshold` bytes long, compressing makes it smaller and this build supports
    /// the compression; otherwise as [`to_bytes`](Self::to_bytes) writes it.
    pub fn to_frame(&self, compression: Compression, threshold: usize) -> Vec<u8> {
        let plain = self.to_bytes();
        let message = &plain[1..];
        if compression == Compression::None || message.len() < threshold {
            return plain;
        }
        let mut out = Vec::with_capacity(1 + message.len() / 2);
        out.push(compression.tag());
        if compression::compress(compression, message, &mut out) && out.len() < plain.len() {
            out
        } else {
            plain
        }
    }

    /// The message in a binary frame, after its compression byte (any of the three); its
    /// row lists hold a copy of the frame.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, MessageError> {
        Self::from_frame(
            &Bytes::copy_from_slice(bytes),
            &mut compression::Decompressor::default(),
        )
    }

    /// The message in a binary frame, decompressed (if it is) by `decompressor`, whose state
    /// a reader of many frames keeps from one to the next. Its row lists borrow the frame's
    /// buffer (or, compressed, the buffer it decompressed to): no row is copied.
    pub fn from_frame(
        frame: &Bytes,
        decompressor: &mut compression::Decompressor,
    ) -> Result<Self, MessageError> {
        let &tag = frame.first().ok_or(MessageError::Empty)?;
        let message = match Compression::from_tag(tag) {
            Some(Compression::None) => frame.slice(1..),
            Some(compression) => decompressor
                .decompress(compression, &frame[1..])
                .map(Bytes::from)
                .map_err(|error| MessageError::Decompression(compression, error))?,
            None => return Err(MessageError::Compression(tag)),
        };
        from_shared(&message).map_err(MessageError::Binary)
    }
}

impl JsonClientMessage {
    /// The message as one text frame.
    pub fn to_json(&self) -> String {
        json_text(self)
    }

    /// The message in a text frame.
    pub fn from_json(text: &str) -> Result<Self, MessageError> {
        serde_json::from_str(text).map_err(MessageError::Json)
    }
}

impl JsonServerMessage {
    /// The message as one text frame.
    pub fn to_json(&self) -> String {
        json_text(self)
    }

    /// The message in a text frame.
    pub fn from_json(text: &str) -> Result<Self, MessageError> {
        serde_json::from_str(text).map_err(MessageError::Json)
    }
}

/// A message's JSON text. Messages have string keys only and their values are valid JSON, so
/// serialising cannot fail.
fn json_text(message: &impl serde::Serialize) -> String {
    serde_json::to_string(message).unwrap_or_default()
}
