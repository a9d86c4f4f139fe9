//! The two encodings of the protocol behind one trait, [`Wire`], so that the session, the
//! calls and the writer are written once: [`Binary`] (`v1.bin.wasmod`) and [`Json`]
//! (`v1.json.wasmod`). The messages are the protocol's ([`wasmod_protocol::ws`]); what differs
//! is how a call's arguments, rows and returned values travel, and whether frames may be
//! compressed: binary frames of at least [`COMPRESSION_THRESHOLD`] bytes are, in the
//! compression the client chose; JSON frames are text and never are (the handshake refuses a
//! compression for JSON).

use super::close::{self, Close};
use super::frame::Frame;
use super::limits::COMPRESSION_THRESHOLD;
use super::rows::{QueryRows, SharedJson};
use crate::invocation::{Args, Invocation};
use serde_json::value::RawValue;
use wasmod_abi::ModuleDef;
use wasmod_protocol::errors::ApiError;
use wasmod_protocol::ws::{
    BinaryClientMessage, BinaryServerMessage, ClientMessage, Compression, JsonClientMessage,
    RowList, ServerMessage,
};

/// One encoding of the protocol.
pub trait Wire: Send + Sync + 'static {
    /// How a call's arguments travel.
    type Args: Send + 'static;
    /// How rows travel.
    type Rows: Send;
    /// How a returned value travels.
    type Value: Send + 'static;

    /// The client message in a data frame; a close (unsupported data, invalid message) for a
    /// frame that is not one.
    fn decode(frame: Frame) -> Result<ClientMessage<Self::Args>, Close>;

    /// A call's arguments, for the call pipeline to encode.
    fn args(args: Self::Args) -> Args;

    /// The value `bytes` that the call `invocation` returned.
    fn value(invocation: &Invocation, bytes: Vec<u8>) -> Result<Self::Value, ApiError>;

    /// A query's rows: what entered its result, and what left it.
    fn rows(module: &ModuleDef, rows: &QueryRows) -> Result<(Self::Rows, Self::Rows), String>;

    /// How many times their binary size rows are expected to take once rendered for this
    /// encoding ([`Wire::prepare`]): what a one-off answer or a table page is charged before it
    /// is rendered ([`crate::memory`]), then settled to what it took (more, for rows of small
    /// values under long column names). A byte of a string whose characters JSON escapes takes
    /// six (`\u0001`), a `u8` up to four (`255,`).
    const EXPANSION: usize;

    /// Renders ahead what [`Wire::rows`] will need of `rows` (their JSON; nothing in binary),
    /// so that a caller off the runtime's threads spares the writer's task the work.
    fn prepare(module: &ModuleDef, rows: &QueryRows) -> Result<(), String>;

    /// The form of this encoding's frames for a client that chose `compression`.
    fn form(compression: Compression) -> Form;

    /// The frame of `message`, compressed with `compression` where the encoding compresses.
    fn encode(message: &ServerMessage<Self::Rows, Self::Value>, compression: Compression) -> Frame;
}

/// What a frame looks like to its receiver: its encoding and, in binary, its compression.
/// Connections of one form receive the same bytes for the same message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// A JSON text frame.
    Json,
    /// A binary frame in the given compression.
    Binary(Compression),
}

impl Form {
    /// How many forms [`Form::slot`] numbers.
    pub const COUNT: usize = 1 + Compression::ALL.len();

    /// A number below [`Form::COUNT`] for each form, to keep one frame per form.
    pub fn slot(self) -> usize {
        match self {
            Self::Json => 0,
            Self::Binary(compression) => 1 + usize::from(compression.tag()),
        }
    }
}

/// `v1.bin.wasmod`: binary frames in the wasmod value encoding.
#[derive(Clone, Copy, Debug)]
pub enum Binary {}

/// `v1.json.wasmod`: text frames in the JSON mapping.
#[derive(Clone, Copy, Debug)]
pub enum Json {}

impl Wire for Binary {
    const EXPANSION: usize = 1;
    type Args = Vec<u8>;
    type Rows = RowList;
    type Value = Vec<u8>;

    fn decode(frame: Frame) -> Result<ClientMessage<Vec<u8>>, Close> {
        match frame {
            Frame::Binary(bytes) => BinaryClientMessage::from_bytes(&bytes)
                .map_err(|error| Close::new(close::INVALID_MESSAGE, error.to_string())),
            _ => Err(Close::new(
                close::UNSUPPORTED_DATA,
                "the binary protocol takes binary frames only",
            )),
        }
    }

    fn args(args: Vec<u8>) -> Args {
        Args::Encoded(args)
    }

    fn value(_: &Invocation, bytes: Vec<u8>) -> Result<Vec<u8>, ApiError> {
        Ok(bytes)
    }

    fn rows(_: &ModuleDef, rows: &QueryRows) -> Result<(RowList, RowList), String> {
        Ok((rows.inserts.clone(), rows.deletes.clone()))
    }

    fn prepare(_: &ModuleDef, _: &QueryRows) -> Result<(), String> {
        Ok(())
    }

    fn form(compression: Compression) -> Form {
        Form::Binary(compression)
    }

    fn encode(message: &BinaryServerMessage, compression: Compression) -> Frame {
        Frame::Binary(message.to_frame(compression, COMPRESSION_THRESHOLD).into())
    }
}

impl Wire for Json {
    const EXPANSION: usize = 6;
    type Args = serde_json::Value;
    type Rows = SharedJson;
    type Value = Box<RawValue>;

    fn decode(frame: Frame) -> Result<ClientMessage<serde_json::Value>, Close> {
        match frame {
            Frame::Text(text) => std::str::from_utf8(&text)
                .map_err(|error| error.to_string())
                .and_then(|text| {
                    JsonClientMessage::from_json(text).map_err(|error| error.to_string())
                })
                .map_err(|error| Close::new(close::INVALID_MESSAGE, error)),
            _ => Err(Close::new(
                close::UNSUPPORTED_DATA,
                "the JSON protocol takes text frames only",
            )),
        }
    }

    fn args(args: serde_json::Value) -> Args {
        Args::Json(args)
    }

    fn value(invocation: &Invocation, bytes: Vec<u8>) -> Result<Box<RawValue>, ApiError> {
        invocation.value(&bytes)
    }

    fn rows(module: &ModuleDef, rows: &QueryRows) -> Result<(SharedJson, SharedJson), String> {
        let json = rows.json(module)?;
        Ok((json.inserts.clone(), json.deletes.clone()))
    }

    fn prepare(module: &ModuleDef, rows: &QueryRows) -> Result<(), String> {
        rows.json(module).map(drop)
    }

    fn form(_: Compression) -> Form {
        Form::Json
    }

    /// Text frames, never compressed: the handshake refuses a compression for JSON.
    fn encode(message: &ServerMessage<SharedJson, Box<RawValue>>, _: Compression) -> Frame {
        // Every part is valid JSON with string keys: serialising cannot fail.
        Frame::Text(serde_json::to_string(message).unwrap_or_default().into())
    }
}
